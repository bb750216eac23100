// The CPU backend's partial results, for the distributed backends to join (docs/DISTRIBUTED.md): the canonical root
// of a range as an accumulator state (not rounded to a value, so that Neumaier compensations survive the join) and
// the exact accumulator state of a range. Both are what detred::sum computes before its final step: joining them as
// detred::mpi does gives detred::sum's bits.
// Internal: defined by the CPU backend (src/cpu/), used by detred::mpi (src/mpi/); not installed.
#pragma once

#include <cstddef>

#include "detred/accumulators/exact.hpp"
#include "detred/execution.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::detail {

// The canonical reduce of data[0..n) as the accumulator Acc (plain_accumulator<A> or neumaier_accumulator<A>) before
// result(): for n = 2^k, the complete subtree T(0, 2^k). n >= 1. Multi-threaded like detred::sum; the same bits for
// every thread count.
template <class Acc, class T>
Acc canonical_root_n(const T* data, std::size_t n, const cpu_options& options);

// The exact accumulator state of data[0..n) (any n >= 0), before rounding.
template <class T>
exact_accumulator_for<T> exact_state_n(const T* data, std::size_t n, const cpu_options& options);

}  // namespace detred::detail
