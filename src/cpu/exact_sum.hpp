// The CPU backend of sum_method::exact (exact_sum.cpp): chunks accumulated in parallel into exact_accumulators, merged
// by integer addition (associative, so the chunking and the thread count never show in a bit), rounded once.
#pragma once

#include <cstddef>

#include "detred/execution.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::detail {

// The correctly rounded sum of data[0..n) in A (docs/EXACT.md). n >= 0; -0.0 for n == 0.
template <class A, class T>
A exact_sum_n(const T* data, std::size_t n, const cpu_options& options);

}  // namespace detred::detail
