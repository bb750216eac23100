// How an axis argument maps an array onto the outputs of a reduction, shared by the CPU and CUDA backends.
#pragma once

#include <cstdint>

#include "arrays.hpp"

namespace detred::python {

// Which elements one output combines.
//   all:   every element (C order); the output is a scalar.
//   last:  axis = -1: row r = the last-axis slice at leading index r (rows = product of the leading dimensions);
//          the batch-invariant row reduction of detred/rows.hpp.
//   first: axis = 0: column j = x[:, j] of the array seen as [shape[0] x rest]; the column reduction.
struct layout {
  enum kind_t { all, last, first } kind = all;
  std::uint64_t rows = 1, cols = 0;  // all: cols = n
  int out_ndim = 0;
  std::int64_t out_shape[max_ndim] = {};
};

// axis None (or any axis of a 0-d/1-d array): all; -1 or ndim-1: last; 0: first; any other axis a ValueError naming
// `axis` (TypeError for a non-int).
layout parse_axis(nb::handle axis, const array_view& v);

inline std::uint64_t reduced_length(const layout& l) { return l.kind == layout::first ? l.rows : l.cols; }
inline std::uint64_t output_count(const layout& l) {
  return l.kind == layout::all ? 1 : l.kind == layout::last ? l.rows : l.cols;
}

enum class extremum { min, max, argmin, argmax };
enum class row_statistic { logsumexp, mean, var };

}  // namespace detred::python
