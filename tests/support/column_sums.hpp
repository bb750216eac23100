// Column sums against their definition, for the CPU twin's tests and the GPU's (host only, no CUDA): out[j] must be
// detred::sum<float>(column j, sum_method::tree) bit for bit, the canonical engine's sum of the gathered column, which
// shares no block structure with either column kernel. The widths cross every internal block of columns of both
// backends: the CPU twin's 64 columns, the GPU's column groups of 16 / sizeof(T) and its blocks of 32 .. 512 threads.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "detred/reduce.hpp"

namespace detred::test {

// Widths one below, at and one above every power of two from 4 to 4096 (the blocks of columns above), and 1 .. 9.
inline std::vector<std::uint64_t> column_sum_widths() {
  std::vector<std::uint64_t> w;
  for (std::uint64_t c = 1; c <= 9; ++c) w.push_back(c);
  for (std::uint64_t p = 16; p <= 4096; p *= 2)
    for (std::uint64_t c : {p - 1, p, p + 1}) w.push_back(c);
  return w;
}

// Strides for a width: the dense one and two larger ones (an odd excess, and more than twice the width).
inline std::vector<std::uint64_t> column_sum_strides(std::uint64_t cols) { return {cols, cols + 3, 2 * cols + 5}; }

// Every out[j], j < cols, equals detred::sum of column j of the rows x stride matrix x; counts the mismatches (the
// first few are reported with their column).
template <class T>
std::size_t expect_column_sums_equal_detred_sum(const T* x, std::uint64_t rows, std::uint64_t cols,
                                                std::uint64_t stride, const float* out, const std::string& what) {
  std::size_t mismatches = 0;
  std::vector<T> column(rows);
  for (std::uint64_t j = 0; j < cols; ++j) {
    for (std::uint64_t i = 0; i < rows; ++i) column[i] = x[i * stride + j];
    const float expected = detred::sum<float>(column.data(), rows, sum_method::tree, cpu_options{.threads = 1});
    if (bits_of(out[j]) != bits_of(expected) && ++mismatches <= 5)
      ADD_FAILURE() << what << ": " << rows << " x " << cols << " (stride " << stride << "), column " << j << ": got "
                    << out[j] << ", detred::sum of the column " << expected;
  }
  return mismatches;
}

}  // namespace detred::test
