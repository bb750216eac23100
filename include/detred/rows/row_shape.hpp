// The shape of a batch of rows, shared by the CPU twins (detred/rows.hpp, detred/norms.hpp) and the device calls
// (detred/cuda/rows.hpp, detred/cuda/norms.hpp), and the checks every one of them applies to it.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "detred/errors.hpp"

namespace detred {

// `rows` rows of a row-major matrix: row r starts at element r * stride and has length(r) elements, all of them at
// most `stride` apart from the row start. By default every row has `cols` elements; with `lengths` (one int32 per
// row; a host pointer for the CPU twins, a device pointer for detred::cuda) row r has lengths[r]; with
// `causal_period` = T > 0 row r has (r % T) + 1 elements (the rows of a causal attention matrix [.. x T x T]).
// With lengths or causal_period, `cols` is an upper bound of the lengths (the GPU picks its kernel by it; 0 with
// lengths: unknown); with causal_period it must be >= causal_period. Column reductions read the same shape: column j
// is x[i * stride + j] over the `rows` rows, for j < cols.
struct row_shape {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint64_t stride = 0;  // elements between row starts; >= cols
  const std::int32_t* lengths = nullptr;
  std::uint64_t causal_period = 0;

  constexpr DETRED_HD std::uint64_t length(std::uint64_t r) const {
    if (lengths != nullptr) return std::uint64_t(lengths[r]);
    if (causal_period != 0) return r % causal_period + 1;
    return cols;
  }
};

// A dense [rows x cols] matrix (stride = cols).
constexpr row_shape dense_rows(std::uint64_t rows, std::uint64_t cols) { return row_shape{rows, cols, cols}; }

namespace detail {

// The checks of every row reduction (`what` names the call): stride >= cols for full rows, cols >= causal_period for
// causal rows. (The device calls also need rows shorter than 2^32 elements: their own check.)
inline void check_row_shape(const row_shape& shape, const char* what) {
  if (shape.lengths == nullptr && shape.causal_period == 0 && shape.rows > 1 && shape.stride < shape.cols)
    throw_invalid(what, "row_shape.stride must be >= cols");
  if (shape.causal_period != 0 && shape.cols < shape.causal_period)
    throw_invalid(what, "row_shape.cols must be >= causal_period (the longest row)");
}

// The norms' shape: a dense [rows x cols] matrix (dense_rows), every row `cols` long.
inline void check_dense_shape(const row_shape& shape, const char* what) {
  if (shape.lengths != nullptr) throw_invalid(what, "row_shape.lengths must be null (rows of cols elements)");
  if (shape.causal_period != 0) throw_invalid(what, "row_shape.causal_period must be 0 (rows of cols elements)");
  if (shape.stride != shape.cols) throw_invalid(what, "row_shape.stride must equal cols (a dense matrix)");
}

// The column reductions' shape: `rows` full rows of which the first `cols` columns are reduced.
inline void check_column_shape(const row_shape& shape, const char* what) {
  if (shape.lengths != nullptr) throw_invalid(what, "row_shape.lengths must be null (columns read full rows)");
  if (shape.causal_period != 0) throw_invalid(what, "row_shape.causal_period must be 0 (columns read full rows)");
  if (shape.rows > 1 && shape.stride < shape.cols) throw_invalid(what, "row_shape.stride must be >= cols");
}

}  // namespace detail
}  // namespace detred
