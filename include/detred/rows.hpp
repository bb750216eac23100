// Batch-invariant row and column reductions on the CPU: the twins of the device calls of the same names
// (detred/cuda/rows.hpp), with the same arguments less the workspace and the stream, and the same bits.
//
// Contract. Row r's result is the canonical reduction (docs/ORDER.md) of its own length(r) elements, in the order
// fixed by that length alone, so it is batch-invariant: it does not depend on the number of rows, on the row's
// position, on the other rows, on threads or on the GPU's launch configuration (f(x[:k]) == f(x)[:k], bitwise), and
// the device calls give the same bits (determinism::cpu_gpu). Column j's sum is the canonical sum over the row index i
// of x[i * stride + j]. Inputs half, bfloat16 or float, widened exactly; accumulation and outputs in float. NaN
// results are the canonical NaN (docs/ORDER.md section 5). Shapes are checked as on the device (detred/rows/
// row_shape.hpp); a bad one throws detred::invalid_argument naming the field.
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

// out[r] = sum of row r, canonical order; method tree (plain) or tree_neumaier (compensated): the bits of
// detred::sum of that row with that method. Error: as detred::sum (sum_method.hpp, docs/ACCURACY.md). IEEE: NaN if
// any input is NaN or Inf - Inf occurs, +-Inf on overflow; empty row -0.0. Throws invalid_argument for another method.
template <floating_input T>
void row_sum(const T* x, float* out, const row_shape& shape, sum_method method = sum_method::tree) {
  if (method != sum_method::tree && method != sum_method::tree_neumaier)
    detail::throw_invalid("row_sum", "method must be tree or tree_neumaier");
  detail::check_row_shape(shape, "row_sum");
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

// out[r] = IEEE maximum of row r: exact, so order-independent; NaN if any input is NaN, +0 above -0, -Inf for an
// empty row.
template <floating_input T>
void row_max(const T* x, float* out, const row_shape& shape) {
  using Acc = max_accumulator<float>;
  detail::check_row_shape(shape, "row_max");
  for (std::uint64_t r = 0; r < shape.rows; ++r)
    out[r] = canonical_row_root<Acc>(x + r * shape.stride, shape.length(r), widened_leaf<Acc>{}).result();
}

// mean[r], variance[r] (population: m2 / n) of row r by Chan's merges of Welford states in the canonical order.
// Error: a small multiple of u (log2 n + 2) relative to |mean| and to the mean square (the bound
// tests/rows/test_rows_cpu.cpp asserts against long double). NaN for an empty row or any NaN or Inf input. Rows of at
// most 2^24 elements (the count is a float).
template <floating_input T>
void row_mean_variance(const T* x, float* mean, float* variance, const row_shape& shape) {
  using Acc = welford_accumulator<float>;
  detail::check_row_shape(shape, "row_mean_variance");
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const Acc root = canonical_row_root<Acc>(x + r * shape.stride, shape.length(r), widened_leaf<Acc>{});
    mean[r] = root.result_mean();
    variance[r] = root.result_variance();
  }
}

// The two passes of one row's log-sum-exp (row_accumulators.hpp: the maximum, then the canonical sum of
// exp(x_i - max)) in the accumulation type A, for a row of len elements: the CPU reference that row_logsumexp,
// softmax_forward and log_softmax_forward (norms.hpp) share. The sum is not computed (left -0.0) when the maximum is
// not finite.
template <floating_accumulation A, class T>
logsumexp_parts<A> canonical_row_logsumexp(const T* row, std::uint64_t len) {
  logsumexp_parts<A> parts{minus_infinity<A>(), negative_zero<A>()};
  for (std::uint64_t i = 0; i < len; ++i) parts.max = ieee_maximum(parts.max, widen<A>(row[i]));
  if (is_finite(parts.max))
    parts.sum = canonical_row_root<plain_accumulator<A>>(row, len, shifted_exp_leaf<A>{parts.max}).result();
  return parts;
}

// out[r] = log(sum_i exp(x[r, i])) = m + log(sum_i exp(x[r, i] - m)), m the row's maximum: two passes, the second a
// canonical plain float sum (row_accumulators.hpp; detred::specified's exp and log, the same bits on every backend).
// Error: within 4 u (log2 n + 2) (|lse| + 2) of the exact value (asserted in tests/rows/test_rows_cpu.cpp). -Inf
// for an empty row or only -Inf inputs, +Inf if any input is +Inf (and none NaN), NaN if any is NaN.
template <floating_input T>
void row_logsumexp(const T* x, float* out, const row_shape& shape) {
  detail::check_row_shape(shape, "row_logsumexp");
  for (std::uint64_t r = 0; r < shape.rows; ++r)
    out[r] = canonical_row_logsumexp<float>(x + r * shape.stride, shape.length(r)).result();
}

// out[j] = sum over i in [0, shape.rows) of x[i * shape.stride + j] for j < shape.cols, canonical order over i, plain
// float addition (error as detred::sum of the column, sum_method::tree); NaN and Inf as for row_sum; -0.0 when rows
// is 0. Same bits as detred::cuda::column_sum for every column_options. The shape has
// full rows (lengths and causal_period are rejected).
template <floating_input T>
void column_sum(const T* x, float* out, const row_shape& shape) {
  detail::check_column_shape(shape, "column_sum");
  using Acc = plain_accumulator<float>;
  constexpr std::uint64_t block = 64;
  const std::uint64_t rows = shape.rows, cols = shape.cols, stride = shape.stride;
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
