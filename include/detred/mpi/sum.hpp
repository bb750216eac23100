// Sums of an array distributed over the ranks of an MPI communicator, bitwise identical for every number of ranks and
// every partition (docs/DISTRIBUTED.md).
//
//   double total = detred::mpi::sum(local.data(), local.size(), MPI_COMM_WORLD);                      // canonical tree
//   double exact = detred::mpi::sum(local.data(), local.size(), MPI_COMM_WORLD, detred::sum_method::exact);
//
// The arguments are detred::sum's (data, n, method, cpu_options) with the communicator after the size: host data and
// a host result, so no workspace and no stream; the method is a sum_method, as everywhere in detred.
//
// The array is the concatenation, in rank order, of each rank's local part data[0..n_local) (parts may differ in size
// and may be empty). Every rank gets the same result:
// - sum_method::tree, tree_neumaier: the canonical order (docs/ORDER.md) over the whole array, bit for bit what
//   detred::sum (and detred::cuda::sum) gives for the concatenated array in one process, with its error bound
//   (|error| <= gamma_{h(n)} sum|x_i| for tree). Each rank cuts its range into aligned complete subtrees, computes
//   their roots with the CPU backend, and all ranks join all roots in the canonical order.
// - sum_method::exact: the correctly rounded sum (docs/EXACT.md), by merging exact_accumulator states through
//   exact_state_op() (exact.hpp); the same bits for any partition, also when it is not in rank order.
// Other methods are sequential by definition: invalid_argument. IEEE rules as detred::sum: empty total -0.0, NaN
// results canonical, Inf and overflow as IEEE addition gives them in the stated order.
//
// Collective: every rank of `comm` must call it with the same types and method; a mismatch, or a null `data` with
// n_local > 0 on any rank, throws detred::invalid_argument on every rank (the signatures are all-gathered before any
// data moves), never hangs.
// MPI failures throw mpi_error with MPI's message. Communication: two small all-gathers (tree) or one all-gather and
// one all-reduce of one state (exact); the local work is detred::sum's, multi-threaded per `options`.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "detred/execution.hpp"
#include "detred/mpi/error.hpp"
#include "detred/reduce.hpp"
#include "detred/sum_method.hpp"

namespace detred::mpi {

namespace detail {
template <class A, class T>
A sum_n(const T* data, std::uint64_t n_local, MPI_Comm comm, sum_method method, const cpu_options& options);
}

template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum(const T* data, std::uint64_t n_local,
                                                                               MPI_Comm comm,
                                                                               sum_method method = sum_method::tree,
                                                                               const cpu_options& options = {}) {
  return detail::sum_n<accumulation_for<Acc, T>>(data, n_local, comm, method, options);
}

}  // namespace detred::mpi
