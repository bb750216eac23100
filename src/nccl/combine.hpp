// The all-reduce's local step (src/nccl/combine.cu): each element's values from every rank, combined in rank order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace detred::nccl::detail {

// out[e] = sum over r = 0 .. ranks-1 of (r == me ? own[e] : staged[r * stride + e]), e < count, in the canonical
// order over ranks (float accumulation), or correctly rounded when `exact` (all_reduce.hpp states the bits).
// T is float or bfloat16. Asynchronous on `stream`.
template <class T>
void launch_combine(const T* own, const T* staged, std::uint64_t stride, int ranks, int me, T* out, std::uint64_t count,
                    bool exact, cudaStream_t stream);

}  // namespace detred::nccl::detail
