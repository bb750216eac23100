// detred::baselines::openmp_reduction_sum: the everyday OpenMP parallel sum (cpu.hpp).
#include <omp.h>

#include <cstdint>

#include "detred/baselines/cpu.hpp"

namespace detred::baselines {

template <class A, class T>
A openmp_reduction_sum(std::span<const T> xs, unsigned threads) {
  const std::int64_t n = static_cast<std::int64_t>(xs.size());
  const T* x = xs.data();
  const int team = threads ? static_cast<int>(threads) : omp_get_max_threads();
  A sum = A(0);
#pragma omp parallel for schedule(static) reduction(+ : sum) num_threads(team)
  for (std::int64_t i = 0; i < n; ++i) sum += detred::widen<A>(x[i]);
  return sum;
}

template float openmp_reduction_sum<float, half>(std::span<const half>, unsigned);
template float openmp_reduction_sum<float, bfloat16>(std::span<const bfloat16>, unsigned);
template float openmp_reduction_sum<float, float>(std::span<const float>, unsigned);
template double openmp_reduction_sum<double, double>(std::span<const double>, unsigned);

}  // namespace detred::baselines
