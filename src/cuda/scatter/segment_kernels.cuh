// The segmented sums (segment_sum, reduce_by_key): one warp a segment, grid-stride over segments.
//   canonical (sum_method::tree): the canonical order of the segment's length (docs/ORDER.md): the bits of
//     detred::row_sum and of the CPU twin, batch-invariant: canonical_segment_kernel (segment_staged.cuh);
//   exact: each lane adds its elements (lane, lane + 32, ...) into its own exact_accumulator; the 32 normalised
//     states are summed limb by limb (integers, exact) and lane 0 rounds once: correctly rounded.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/accumulators/plain.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/rows.hpp"
#include "src/cuda/scatter/segment_staged.cuh"

namespace detred::cuda::detail {

// Segment s is [offsets[s], offsets[s + 1]).
template <class I>
struct csr_segments {
  const I* offsets;
  __device__ void operator()(std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) const {
    begin = std::uint64_t(offsets[s]);
    end = std::uint64_t(offsets[s + 1]);
  }
};

// Run s is [starts[s], starts[s + 1]), the last run ending at n.
template <class I>
struct run_segments {
  const I* starts;
  const std::uint64_t* count;
  std::uint64_t n;
  __device__ void operator()(std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) const {
    begin = std::uint64_t(starts[s]);
    end = s + 1 < *count ? std::uint64_t(starts[s + 1]) : n;
  }
};

template <class R, class T>
__device__ R exact_warp_sum(const T* x, std::uint64_t len) {
  using A = exact_accumulator<R>;
  const int lane = int(threadIdx.x & 31);
  A acc;
  for (std::uint64_t i = std::uint64_t(lane); i < len; i += 32) acc.add(x[i]);
  acc.normalize();
  std::uint32_t flags = __reduce_or_sync(0xffffffffu, acc.flags());
  A total;
  for (int k = 0; k < A::limb_count; ++k) {
    long long v = acc.limb(k);  // digits in [0, 2^32), the top limb signed: 32 of them stay far inside int64
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    total.set_raw(k, v);
  }
  total.set_count(len, flags, 32);
  return total.template rounded<R>();
}

// `segments`: the count, or (when d_segments is set) an upper bound with the count in device memory.
template <class R, class T, class Bounds>
__global__ void __launch_bounds__(256)
    exact_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments,
                         const std::uint64_t* d_segments, Bounds bounds) {
  const std::uint64_t count = d_segments ? *d_segments : segments;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t s = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; s < count; s += warps) {
    std::uint64_t begin, end;
    bounds(s, begin, end);
    const T* x = values + begin;
    const std::uint64_t len = end - begin;
    const R result = exact_warp_sum<R>(x, len);
    if ((threadIdx.x & 31) == 0) out[s] = result;
  }
}

}  // namespace detred::cuda::detail
