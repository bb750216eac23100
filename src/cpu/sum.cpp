// CPU implementations of every sum_method (sum_method.hpp states each one's order, bound and reproducibility).
#include <cstddef>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/detail/cpu_tuning.hpp"
#include "detred/detail/parallel.hpp"
#include "detred/reduce.hpp"
#include "src/cpu/exact_sum.hpp"
#include "src/cpu/subtree_root.hpp"
#include "src/distributed/partial_sums.hpp"

namespace detred::detail {
namespace {

template <class Acc, class T>
typename Acc::value_type accumulate_left_to_right(const T* x, std::size_t n) {
  using A = typename Acc::value_type;
  Acc acc;
  for (std::size_t i = 0; i < n; ++i) acc.add(widen<A>(x[i]));
  return acc.result();
}

// Recursive pairwise summation, split at floor(n/2). n >= 1.
template <class A, class T>
A pairwise_split(const T* x, std::size_t n) {
  if (n == 1) return widen<A>(x[0]);
  const std::size_t half = n / 2;
  return pairwise_split<A>(x, half) + pairwise_split<A>(x + half, n - half);
}

// The canonical order with a mergeable accumulator: full chunks in parallel (each one complete subtree), then the
// tail cut into its aligned power-of-two blocks, all joined by the binary counter in index order.
template <class Acc>
constexpr bool is_plain = std::is_same_v<Acc, plain_accumulator<typename Acc::value_type>>;

// Root of the complete subtree over x[0 .. 2^level), level >= 5, by the fastest kernel for Acc.
template <class Acc, class T>
Acc subtree(const T* x, int level) {
  using A = typename Acc::value_type;
  thread_local std::vector<Acc> scratch;
  scratch.resize((std::size_t{1} << (level - 3)) +
                 (std::size_t{1} << cpu::widen_block_level));  // grows once per thread, then reused
  if constexpr (is_plain<Acc>) {
    return Acc{cpu::plain_subtree_root<A>(x, level, reinterpret_cast<A*>(scratch.data()))};
  } else {
    return cpu::subtree_root<Acc>(x, level, scratch.data());
  }
}

template <class Acc, class T>
Acc canonical_tree(const T* x, std::size_t n, const cpu_options& options) {
  const std::size_t full_chunks = n / cpu_chunk_size;
  std::vector<Acc> chunk_root(full_chunks);
  parallel_for_chunks(full_chunks, options, [&](std::size_t chunk) {
    chunk_root[chunk] = subtree<Acc>(x + chunk * cpu_chunk_size, cpu_chunk_level);
  });
  pairwise_accumulator<Acc> total;
  for (const Acc& root : chunk_root) total.add_subtree(root, cpu_chunk_level);
  std::size_t i = full_chunks * cpu_chunk_size;
  for (int level = cpu_chunk_level - 1; level >= 0; --level) {
    const std::size_t block = std::size_t{1} << level;
    if ((n - i) < block) continue;
    if (level >= 5) {
      total.add_subtree(subtree<Acc>(x + i, level), level);
    } else {
      for (std::size_t k = 0; k < block; ++k) total.add(widen<typename Acc::value_type>(x[i + k]));
    }
    i += block;
  }
  return total.root();
}

}  // namespace

template <class Acc, class T>
Acc canonical_root_n(const T* data, std::size_t n, const cpu_options& options) {
  return canonical_tree<Acc>(data, n, options);
}

template <class A, class T>
A sum_n(const T* data, std::size_t n, sum_method method, const cpu_options& options) {
  if (n == 0) return negative_zero<A>();
  if (method == sum_method::exact) return exact_sum_n<A>(data, n, options);
  A result{};
  switch (method) {
    case sum_method::sequential:
      result = accumulate_left_to_right<plain_accumulator<A>>(data, n);
      break;
    case sum_method::pairwise:
      result = pairwise_split<A>(data, n);
      break;
    case sum_method::kahan:
      result = accumulate_left_to_right<kahan_accumulator<A>>(data, n);
      break;
    case sum_method::neumaier:
      result = accumulate_left_to_right<neumaier_accumulator<A>>(data, n);
      break;
    case sum_method::tree:
      result = canonical_tree<plain_accumulator<A>>(data, n, options).result();
      break;
    case sum_method::tree_neumaier:
      result = canonical_tree<neumaier_accumulator<A>>(data, n, options).result();
      break;
    default:
      throw_invalid("sum", "unknown sum_method");
  }
  return canonicalize_nan(result);
}

#define DETRED_INSTANTIATE_SUM(A, T)                                                                                  \
  template A sum_n<A, T>(const T*, std::size_t, sum_method, const cpu_options&);                                      \
  template plain_accumulator<A> canonical_root_n<plain_accumulator<A>, T>(const T*, std::size_t, const cpu_options&); \
  template neumaier_accumulator<A> canonical_root_n<neumaier_accumulator<A>, T>(const T*, std::size_t,                \
                                                                                const cpu_options&);
DETRED_INSTANTIATE_SUM(float, half)
DETRED_INSTANTIATE_SUM(double, half)
DETRED_INSTANTIATE_SUM(float, bfloat16)
DETRED_INSTANTIATE_SUM(double, bfloat16)
DETRED_INSTANTIATE_SUM(float, float)
DETRED_INSTANTIATE_SUM(double, float)
DETRED_INSTANTIATE_SUM(double, double)
#undef DETRED_INSTANTIATE_SUM

}  // namespace detred::detail
