// The all-reduce's local step (src/nccl/combine.cu): each element's values from every rank, combined in rank order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "detred/nccl/all_reduce.hpp"

namespace detred::nccl::detail {

// out[e] = reduce over r = 0 .. ranks-1 of (r == me ? own[e] : staged[r * stride + e]), e < count, in the canonical
// order over ranks (float accumulation) or exactly (all_reduce.hpp states the bits). Asynchronous on `stream`.
template <class T>
void launch_combine(const T* own, const T* staged, std::size_t stride, int ranks, int me, T* out, std::size_t count,
                    all_reduce_mode mode, cudaStream_t stream);

}  // namespace detred::nccl::detail
