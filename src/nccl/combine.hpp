// The all-reduce's local step (src/nccl/combine.cu): each element's values from every rank, combined in rank order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace detred::nccl::detail {

// out[e] = sum over r = 0 .. ranks-1 of (r == me ? own[e] : staged[r * stride + e]), e < count, in the canonical
// order over ranks (float accumulation), or correctly rounded when `exact` (all_reduce.hpp states the bits).
// T is float, bfloat16 or half. Asynchronous on `stream`.
template <class T>
void launch_combine(const T* own, const T* staged, std::uint64_t stride, int ranks, int me, T* out, std::uint64_t count,
                    bool exact, cudaStream_t stream);

// out[e] = the canonical reduce (docs/ORDER.md) of in[k * stride + e] over k < rows, in float, e < n. float only.
void launch_reduce_rows(const float* in, std::uint64_t stride, int rows, float* out, std::uint64_t n,
                        cudaStream_t stream);

}  // namespace detred::nccl::detail
