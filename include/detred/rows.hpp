// Row and column reductions on the CPU: the twins of detred::cuda's (detred/cuda/rows.hpp), the same bits.
//
// Row r's result is the canonical reduction (docs/ORDER.md) of its own length(r) elements, in the order fixed by that
// length alone: it does not depend on the number of rows, on the row's position, on the other rows, on threads or on
// the GPU's launch configuration (batch invariance, by construction). Column j's sum is the canonical sum over the row
// index i of x[i * stride + j]. Inputs half, bfloat16 or float, widened exactly; accumulation in float.
// NaN results are the canonical NaN (docs/ORDER.md section 5).
#pragma once

#include <cstdint>
#include <vector>

#include "detred/accumulators/neumaier.hpp"
#include "detred/accumulators/pairwise.hpp"
#include "detred/accumulators/plain.hpp"
#include "detred/errors.hpp"
#include "detred/rows/row_accumulators.hpp"
#include "detred/rows/row_shape.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

// The canonical root over leaf(row[0], 0), ..., leaf(row[len - 1], len - 1) (Acc{} for len = 0): the CPU reference of
// every row reduction, each leaf pushed into the binary counter of docs/ORDER.md.
template <class Acc, class T, class Leaf>
Acc canonical_row_root(const T* row, std::uint64_t len, const Leaf& leaf) {
  pairwise_accumulator<Acc> acc;
  for (std::uint64_t i = 0; i < len; ++i) acc.add_subtree(leaf(row[i], i), 0);
  return acc.root();
}

// The leaf of an input: Acc::from_value of its exact widening.
template <class Acc>
struct widened_leaf {
  template <class T>
  constexpr DETRED_HD Acc operator()(T x, std::uint64_t) const {
    return Acc::from_value(widen<typename Acc::value_type>(x));
  }
};

// out[r] = sum of row r, canonical order; method tree (plain) or tree_neumaier (compensated). Empty row: -0.0.
// Error: as detred::sum of that row (docs/ACCURACY.md). Throws invalid_argument for another method.
template <floating_input T>
void row_sum(const T* x, const row_shape& shape, float* out, sum_method method = sum_method::tree) {
  if (method != sum_method::tree && method != sum_method::tree_neumaier)
    detail::throw_invalid("row_sum", "method must be tree or tree_neumaier");
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    if (method == sum_method::tree) {
      using Acc = plain_accumulator<float>;
      out[r] = canonicalize_nan(canonical_row_root<Acc>(row, n, widened_leaf<Acc>{}).result());
    } else {
      using Acc = neumaier_accumulator<float>;
      out[r] = canonicalize_nan(canonical_row_root<Acc>(row, n, widened_leaf<Acc>{}).result());
    }
  }
}

// out[r] = IEEE maximum of row r (exact; NaN if any NaN, +0 above -0; -Inf for an empty row).
template <floating_input T>
void row_max(const T* x, const row_shape& shape, float* out) {
  using Acc = max_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r)
    out[r] = canonical_row_root<Acc>(x + r * shape.stride, shape.length(r), widened_leaf<Acc>{}).result();
}

// mean[r], variance[r] (population: m2 / n) of row r by Chan's merges of Welford states in the canonical order;
// NaN for an empty row. Rows of at most 2^24 elements (the count is a float).
template <floating_input T>
void row_mean_variance(const T* x, const row_shape& shape, float* mean, float* variance) {
  using Acc = welford_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const Acc root = canonical_row_root<Acc>(x + r * shape.stride, shape.length(r), widened_leaf<Acc>{});
    mean[r] = root.result_mean();
    variance[r] = root.result_variance();
  }
}

// out[r] = log(sum_i exp(x[r, i])) in one pass (logsumexp_accumulator; detred::specified's exp and log).
template <floating_input T>
void row_logsumexp(const T* x, const row_shape& shape, float* out) {
  using Acc = logsumexp_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r)
    out[r] = canonical_row_root<Acc>(x + r * shape.stride, shape.length(r), widened_leaf<Acc>{}).result();
}

// out[j] = sum over i in [0, rows) of x[i * stride + j], canonical order over i, plain float addition; -0.0 when rows
// is 0. Same bits as detred::cuda::column_sum for every launch configuration (number of row blocks).
template <floating_input T>
void column_sum(const T* x, std::uint64_t rows, std::uint64_t cols, std::uint64_t stride, float* out) {
  using Acc = plain_accumulator<float>;
  constexpr std::uint64_t block = 64;
  std::vector<pairwise_accumulator<Acc>> acc(block);
  for (std::uint64_t j0 = 0; j0 < cols; j0 += block) {
    const std::uint64_t width = cols - j0 < block ? cols - j0 : block;
    for (auto& a : acc) a = pairwise_accumulator<Acc>{};
    for (std::uint64_t i = 0; i < rows; ++i)
      for (std::uint64_t j = 0; j < width; ++j) acc[j].add(widen<float>(x[i * stride + j0 + j]));
    for (std::uint64_t j = 0; j < width; ++j) out[j0 + j] = canonicalize_nan(acc[j].result());
  }
}

}  // namespace detred
