// The ways detred can sum, one documented entry each (in the manner of CUB's BlockReduceAlgorithm).
// u is the unit roundoff of the accumulation type (2^-24 for float, 2^-53 for double), gamma_k = k u / (1 - k u),
// s the exact sum and S = sum|x_i|. Every bound is asserted against an exact reference in tests/ (docs/ACCURACY.md).
#pragma once

#include <string_view>

#include "detred/determinism.hpp"

namespace detred {

enum class sum_method {
  // x_0 + x_1 + ... + x_{n-1}, left to right, one thread. |error| <= gamma_{n-1} S.
  // The order every naive loop uses; the baseline the others are measured against.
  sequential,
  // Recursive pairwise summation split at the midpoint: sum(x[0..n)) = sum(x[0..n/2)) + sum(x[n/2..n)), n/2
  // rounded down; one thread. |error| <= gamma_{ceil(log2 n)} S. Bitwise equal to `tree` when n is a power of two.
  pairwise,
  // Kahan's compensated summation, left to right, one thread. |error| <= (2u + O(n u^2)) S (Knuth); the tests
  // assert (2u + 4 n u^2) S, docs/ACCURACY.md.
  kahan,
  // Neumaier's compensated summation (Sum2), left to right, one thread. |error| <= u|s| + gamma_{n-1}^2 S.
  neumaier,
  // The canonical order (docs/ORDER.md), plain additions: multi-threaded, SIMD, and bit for bit the same on every
  // thread count and, with the CUDA backend, on every GPU. |error| <= gamma_{h(n)} S, h(n) <= 2 log2 n.
  tree,
  // The canonical order with Neumaier merges (an exact TwoSum at every node): the reproducibility of `tree` with the
  // accuracy of a compensated sum. |error| <= u|s| + gamma_{h(n)+1}^2 S.
  tree_neumaier,
  // The exact sum rounded once to the accumulation type (round to nearest, ties to even; subnormal results; +-Inf
  // exactly when |s| >= MAX + ulp(MAX)/2): |error| <= u|s| and at most half the smallest subnormal. The same bits in
  // any order, split, thread count and device (docs/EXACT.md; the state is detred::exact_accumulator).
  exact,
};

inline constexpr sum_method all_sum_methods[] = {
    sum_method::sequential, sum_method::pairwise,      sum_method::kahan, sum_method::neumaier,
    sum_method::tree,       sum_method::tree_neumaier, sum_method::exact};

// Stable names, used by the audit tool's output and accepted by its --algorithms option.
constexpr std::string_view to_string(sum_method method) {
  switch (method) {
    case sum_method::sequential:
      return "sequential";
    case sum_method::pairwise:
      return "pairwise";
    case sum_method::kahan:
      return "kahan";
    case sum_method::neumaier:
      return "neumaier";
    case sum_method::tree:
      return "tree";
    case sum_method::tree_neumaier:
      return "tree_neumaier";
    case sum_method::exact:
      return "exact";
  }
  return "unknown";
}

// The reproducibility each CPU method gives. The single-threaded methods are reproducible on any IEEE 754 machine
// but have no parallel (GPU) twin; the canonical-order methods are the cpu_gpu ones.
constexpr determinism guarantee(sum_method method) {
  switch (method) {
    case sum_method::tree:
    case sum_method::tree_neumaier:
      return determinism::cpu_gpu;
    case sum_method::exact:
      return determinism::exact;
    default:
      return determinism::run_to_run;
  }
}

}  // namespace detred
