// The CPU's everyday parallel sum: an OpenMP `reduction(+:)` over a static split of the input among `threads`
// threads. Each thread sums its contiguous share left to right; libgomp then combines the threads' partial sums in
// the order the threads finish. Guarantee: not_guaranteed (the bits depend on the thread count, and with more than two
// threads on the finishing order). Bound gamma_{n-1} S. threads = 0: OpenMP's default. Accumulation: float for half,
// bfloat16 and float inputs, double for double. The empty sum is +0.0 (OpenMP's identity for +).
// (std::reduce with std::execution::par is not offered: Debian's libstdc++ runs it serially without TBB.)
#pragma once

#include <span>

#include "detred/types/float_traits.hpp"

namespace detred::baselines {

template <class A, class T>
A openmp_reduction_sum(std::span<const T> xs, unsigned threads);

}  // namespace detred::baselines
