// The shape of a batch of rows, shared by the CPU twins (detred/rows.hpp) and the CUDA kernels (detred/cuda/rows.hpp).
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred {

// `rows` rows of a row-major matrix: row r starts at element r * stride and has length(r) elements, all of them at
// most `stride` apart from the row start. By default every row has `cols` elements; with `lengths` (one int32 per
// row; a host pointer for the CPU twins, a device pointer for detred::cuda) row r has lengths[r]; with
// `causal_period` = T > 0 row r has (r % T) + 1 elements (the rows of a causal attention matrix [.. x T x T]).
// With lengths or causal_period, `cols` is an upper bound of the lengths (the GPU picks its kernel by it; 0 with
// lengths: unknown); with causal_period it must be >= causal_period.
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

}  // namespace detred
