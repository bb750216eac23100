// Sums of a GPU-resident array distributed over the ranks of an NCCL communicator, bitwise identical for every number
// of GPUs and every partition, and equal to the single-GPU detred::cuda::sum and the CPU's detred::sum of the
// concatenated array (docs/DISTRIBUTED.md).
//
// The array is the concatenation, in rank order, of each rank's d_in[0..n_local) (device memory of the context's GPU;
// parts may differ in size and may be empty). Every rank gets the same value, returned to the host:
// - sum_method::tree: the canonical order (docs/ORDER.md), |error| <= gamma_{h(n)} sum|x_i|. Each rank cuts its range
//   into aligned complete subtrees, sums each with detred::cuda::sum (a complete subtree is its own canonical sum),
//   and the few roots are all-gathered and joined in the canonical order on every rank.
// - sum_method::exact: the correctly rounded sum (docs/EXACT.md): each rank's exact accumulator state is all-gathered
//   and merged (integer additions) on every rank, then rounded once.
// Other methods: invalid_argument (tree_neumaier has no distributed GPU form yet; detred::mpi has it on the CPU).
// IEEE rules as detred::sum: empty total -0.0, NaN results canonical, Inf and overflow as IEEE addition gives them.
//
// Collective over the communicator: every rank calls it with the same types and method. Each call first all-gathers
// one fixed-size record of its arguments, so a mismatch throws invalid_argument on every rank instead of hanging.
// Communication: tree, that record and then up to 128 roots a rank; exact, one record holding the state (600 bytes a
// rank). Work on `stream`; the call waits for its result. NCCL failures throw nccl_error, CUDA failures cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/nccl/context.hpp"
#include "detred/reduce.hpp"
#include "detred/sum_method.hpp"

namespace detred::nccl {

namespace detail {
template <class A, class T>
A sum_n(context& ctx, const T* d_in, std::uint64_t n_local, cudaStream_t stream, sum_method method);
}

template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum(context& ctx, const T* d_in,
                                                                               std::uint64_t n_local,
                                                                               cudaStream_t stream = nullptr,
                                                                               sum_method method = sum_method::tree) {
  detred::detail::require_data(d_in, n_local, "nccl::sum");
  return detail::sum_n<accumulation_for<Acc, T>>(ctx, d_in, n_local, stream, method);
}

}  // namespace detred::nccl
