// Gradients that do not depend on the number of GPUs: M micro-batch gradients, in one fixed global order, split over
// the P ranks of a communicator, reduced element-wise to the same bits whatever P (docs/DISTRIBUTED.md, "Gradients
// that do not depend on the GPU count").
//
//   // rank r holds micro-batches r * rows .. r * rows + rows - 1 of the M = P * rows, as rows of d_grads
//   detred::nccl::all_reduce_micro_batches(ctx, d_grads, row_stride, rows, d_sum, n, stream);
//
// d_out[e] on every rank = the reduce of the M values d_grads_r[k * row_stride + e] (value g = r * rows + k, rank
// order then row order):
// - sum_method::tree: the canonical order over the M values (docs/ORDER.md), float accumulation, one rounding to the
//   output type: bit for bit detred::sum<float> of the M values in global order. The canonical tree over M depends on M
//   alone, so every P that splits the M micro-batches into whole ranks gives the same bits, P = 1 (one GPU holding all
//   M rows) included. Where rows is a power of two and T is float, each rank first reduces its rows locally (an
//   aligned complete subtree of the canonical tree) and all-reduces one vector; otherwise every row travels.
// - sum_method::exact: the correctly rounded sum of the M values: the same bits for every P and every split.
// Inf, NaN and signed zeros as nccl::all_reduce. Reproducibility: gpu_to_gpu, cpu_gpu, and invariant under P.
//
// d_grads: rows vectors of n elements, row k at d_grads + k * row_stride (row_stride >= n), d_out: n elements, device
// memory of the context's GPU, not overlapping d_grads. rows >= 1, the same on every rank. Options are all_reduce's;
// rows > 1 without the local reduce needs the peer-memory transport (invalid_argument where it is not available).
// Collective, asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/nccl/all_reduce.hpp"
#include "detred/nccl/context.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::nccl {

void all_reduce_micro_batches(context& ctx, const float* d_grads, std::uint64_t row_stride, int rows, float* d_out,
                              std::uint64_t n, cudaStream_t stream = nullptr, const all_reduce_options& options = {});
void all_reduce_micro_batches(context& ctx, const bfloat16* d_grads, std::uint64_t row_stride, int rows,
                              bfloat16* d_out, std::uint64_t n, cudaStream_t stream = nullptr,
                              const all_reduce_options& options = {});
void all_reduce_micro_batches(context& ctx, const half* d_grads, std::uint64_t row_stride, int rows, half* d_out,
                              std::uint64_t n, cudaStream_t stream = nullptr, const all_reduce_options& options = {});

}  // namespace detred::nccl
