// Sums of a GPU-resident array distributed over the ranks of an NCCL communicator, bitwise identical for every number
// of GPUs and every partition, and equal to the single-GPU detred::cuda::sum and the CPU's detred::sum of the
// concatenated array (docs/DISTRIBUTED.md).
//
//   detred::nccl::context ctx(comm);                                    // once per communicator and rank
//   float total = detred::nccl::sum(ctx, d_part, n_part, stream);       // every rank returns the same value
//   double e = detred::nccl::sum<double>(ctx, d_part, n_part, stream, {.method = detred::sum_method::exact});
//
// The call follows detred's device call shape (docs/API.md) with the context in the workspace's place (it owns the
// workspace, grown on demand and kept for the next call) and no output pointer: a collective that ends on the host
// returns its value. The options are cuda::sum's sum_options: the method, and the launch fields, which each rank passes
// to the cuda::sum of its own blocks (speed only, never bits; they may differ between ranks).
//
// The array is the concatenation, in rank order, of each rank's d_in[0..n_local) (device memory of the context's GPU;
// parts may differ in size and may be empty). Every rank gets the same value, returned to the host:
// - sum_method::tree: the canonical order (docs/ORDER.md), |error| <= gamma_{h(n)} sum|x_i|. Each rank cuts its range
//   into aligned complete subtrees, sums each with detred::cuda::sum (a complete subtree is its own canonical sum),
//   and the few roots are all-gathered and joined in the canonical order on every rank. Reproducibility: cpu_gpu.
// - sum_method::exact: the correctly rounded sum (docs/EXACT.md; n_local <= 2^42): each rank's exact accumulator state
//   is all-gathered and merged (integer additions) on every rank, then rounded once. Reproducibility: exact.
// Other methods: invalid_argument (tree_neumaier has no distributed GPU form; detred::mpi has it on the CPU).
// IEEE rules as detred::sum: empty total -0.0, NaN results canonical, Inf and overflow as IEEE addition gives them.
//
// Collective over the communicator: every rank calls it with the same types and method. Each call first all-gathers
// one fixed-size record of its arguments, so a mismatch, or an argument error one rank sees alone (a null d_in with
// n_local > 0, a method or launch field out of range), throws invalid_argument on every rank instead of hanging.
// Communication: tree, that record and then up to 128 roots a rank; exact, one record holding the state (600 bytes a
// rank). Work on `stream`; the call waits for its result. NCCL failures throw nccl_error, CUDA failures cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/cuda/sum.hpp"
#include "detred/nccl/context.hpp"
#include "detred/reduce.hpp"

namespace detred::nccl {

namespace detail {
template <class A, class T>
A sum_n(context& ctx, const T* d_in, std::uint64_t n_local, cudaStream_t stream, const cuda::sum_options& options);
}

template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum(context& ctx, const T* d_in,
                                                                               std::uint64_t n_local,
                                                                               cudaStream_t stream = nullptr,
                                                                               const cuda::sum_options& options = {}) {
  return detail::sum_n<accumulation_for<Acc, T>>(ctx, d_in, n_local, stream, options);
}

}  // namespace detred::nccl
