// index_add of 16-bit rows (bfloat16, half) into float outputs with narrow words (scatter_levels.hpp,
// docs/SCATTER.md "Narrow words"): one int32 a slot a level in the input's own units, so that the level the terms
// mostly hit takes 4 bytes a slot, as a float output does, instead of 8. Besides scatter_kernels.cuh's kernels:
//   count_rows           (inside geometry_kernel) the number of source rows of each output row, lanes with equal
//                        indices combined first;
//   hot_rows_kernel      their maximum (the headroom C), and the output rows past a threshold claim one of a few
//                        private slots;
//   narrow_rows_kernel   one warp a source row, its terms added by 32-bit integer atomics to the global words, or, for
//                        the top level of a claimed row, to the block's copy in shared memory, flushed at the end.
// The clear, finish and signed-zero kernels are scatter_kernels.cuh's; each kernel reads the header and takes the
// narrow or the wide path, the same way (narrow_geometry).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "src/cuda/scatter/scatter_kernels.cuh"

namespace detred::cuda::detail {

// Source rows a warp takes at once in narrow_rows_kernel.
inline constexpr int narrow_rows_at_once = 4;

// The counts' maximum into the header (max_count: the headroom C), and the output rows with at least `threshold`
// source rows claim private slots, the first `capacity` to do so (which ones depends on timing, the sums do not):
// hot[r] = the slot + 1; 0 (set before) for the others.
template <class Count>
__global__ void __launch_bounds__(1024)
    hot_rows_kernel(const Count* __restrict__ counts, std::uint64_t m, int* __restrict__ hot, scatter_header* h,
                    unsigned threshold, int capacity) {
  unsigned most = 0;
  for (std::uint64_t r = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < m;
       r += std::uint64_t(gridDim.x) * blockDim.x) {
    const unsigned c = unsigned(counts[r]);
    most = max(most, c);
    if (capacity > 0 && c >= threshold) {
      const unsigned slot = atomicAdd(&h->hot_rows, 1u);
      if (slot < unsigned(capacity)) {
        hot[r] = int(slot) + 1;
        h->hot_list[slot] = unsigned(r);
      }
    }
  }
  most = __reduce_max_sync(0xffffffffu, most);
  if ((threadIdx.x & 31) == 0 && most != 0) atomicMax(&h->max_count, most);
}

// One warp a source row (d terms into slots index[i] * d + c). Returns at once unless the data take narrow words.
// Dynamic shared memory: the field table, then `capacity` x d int32 (the claimed rows' top-level words).
template <class T, class I>
__global__ void __launch_bounds__(1024)
    narrow_rows_kernel(const T* __restrict__ values, const I* __restrict__ index, std::uint64_t n, std::uint64_t m,
                       std::uint64_t d, scatter_header* h, int narrow_p, int wide_levels,
                       std::int32_t* __restrict__ words, std::uint32_t* __restrict__ flags, const int* __restrict__ hot,
                       int capacity) {
  extern __shared__ __align__(16) unsigned char shared[];
  constexpr int table_bytes = ((scatter_format<float>::max_field + 1) * 2 + 15) / 16 * 16;
  scatter_geometry g;
  if (!narrow_geometry(h, narrow_p, wide_levels, g)) return;  // scatter_kernel's call
  std::uint16_t* table = reinterpret_cast<std::uint16_t*>(shared);
  std::int32_t* local = reinterpret_cast<std::int32_t*>(shared + table_bytes);
  build_table<float>(table, g);
  const int claimed = int(min(h->hot_rows, unsigned(capacity)));
  for (std::uint64_t t = threadIdx.x; t < std::uint64_t(claimed) * d; t += blockDim.x) local[t] = 0;
  __syncthreads();
  const std::uint64_t slots = m * d;
  const int top = g.levels - 1;
  const int lane = int(threadIdx.x & 31);
  unsigned long long invalid = 0;
  // narrow_rows_at_once rows a warp an iteration: their indices, private slots and values are loaded together (each
  // row's chain of dependent loads, index then slot, is a latency the rows share).
  constexpr int R = narrow_rows_at_once;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t i0 = ((std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5) * R; i0 < n; i0 += warps * R) {
    std::uint64_t row[R];
    int slot[R];
#pragma unroll
    for (int u = 0; u < R; ++u) {
      const std::uint64_t i = i0 + std::uint64_t(u);
      const I r = i < n ? index[i] : I(-1);
      const bool ok = r >= 0 && std::uint64_t(r) < m;
      if (i < n && !ok) invalid += lane == 0 ? d : 0;
      row[u] = ok ? std::uint64_t(r) : ~std::uint64_t(0);
    }
#pragma unroll
    for (int u = 0; u < R; ++u) slot[u] = row[u] != ~std::uint64_t(0) ? hot[row[u]] - 1 : -1;
    for (std::uint64_t c0 = 0; c0 < d; c0 += 32 * rows_unroll) {
      std::uint32_t bits[R][rows_unroll];
#pragma unroll
      for (int u = 0; u < R; ++u)
#pragma unroll
        for (int v = 0; v < rows_unroll; ++v) {
          const std::uint64_t c = c0 + 32 * v + std::uint64_t(lane);
          bits[u][v] = c < d && row[u] != ~std::uint64_t(0) ? term_bits<float>(values[(i0 + u) * d + c]) : 0u;
        }
#pragma unroll
      for (int u = 0; u < R; ++u) {
        std::int32_t* mine = slot[u] >= 0 ? local + std::uint64_t(slot[u]) * d : nullptr;
#pragma unroll
        for (int v = 0; v < rows_unroll; ++v) {
          const std::uint64_t c = c0 + 32 * v + std::uint64_t(lane);
          if (c >= d || row[u] == ~std::uint64_t(0)) continue;
          const auto parts = detred::detail::split_bits<float>(bits[u][v]);
          const std::uint64_t at = row[u] * d + c;
          if (parts.field > scatter_format<float>::max_field) {
            atomicOr(&flags[at], detred::detail::special_flags<float>(parts));
            continue;
          }
          if (parts.field == 0 && parts.fraction == 0) continue;  // zeros: the signed-zero rescan's
          const std::uint16_t entry = table[parts.field == 0 ? 1 : parts.field];
          const int level = entry >> 8;
          const std::int32_t k = detred::detail::narrow_term(parts, narrow_p, entry & 0xff);
          if (mine != nullptr && level == top)
            atomicAdd(mine + c, k);
          else
            atomicAdd(reinterpret_cast<unsigned*>(words + std::uint64_t(level) * slots + at), unsigned(k));
        }
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) invalid += __shfl_xor_sync(0xffffffffu, invalid, o);
  if (lane == 0 && invalid != 0) atomicAdd(&h->invalid, invalid);
  __syncthreads();
  // The block's words of the claimed rows: a subset's sum, within the same bound as the slot's.
  for (std::uint64_t t = threadIdx.x; t < std::uint64_t(claimed) * d; t += blockDim.x) {
    const std::int32_t w = local[t];
    if (w != 0) {
      const std::uint64_t row = h->hot_list[t / d], c = t % d;
      atomicAdd(reinterpret_cast<unsigned*>(words + std::uint64_t(top) * slots + row * d + c), unsigned(w));
    }
  }
}

}  // namespace detred::cuda::detail
