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
// source rows claim private slots, the first `capacity` to do so (which ones depends on timing, the sums do not).
// hot[r] = -1 (set before) for the others.
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
        hot[r] = int(slot);
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
  const unsigned significand_shift = unsigned(24 - narrow_p);
  // narrow_rows_at_once rows a warp an iteration, their indices loaded one iteration ahead: a row's private slot
  // waits for its index, but its values do not, so an iteration waits for one memory latency, not two in a row.
  constexpr int R = narrow_rows_at_once;
  const std::uint64_t stride = ((std::uint64_t(gridDim.x) * blockDim.x) >> 5) * R;
  std::uint64_t i0 = ((std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5) * R;
  I next[R];
#pragma unroll
  for (int u = 0; u < R; ++u) next[u] = i0 + u < n ? index[i0 + u] : I(-1);
  for (; i0 < n; i0 += stride) {
    std::uint32_t row[R];  // m < 2^32 - 1 where the host allows narrow words
    bool ok[R];
    int slot[R];
#pragma unroll
    for (int u = 0; u < R; ++u) {
      const std::uint64_t i = i0 + std::uint64_t(u);
      const I r = next[u];
      next[u] = i + stride < n ? index[i + stride] : I(-1);
      ok[u] = r >= 0 && std::uint64_t(r) < m;
      if (i < n && !ok[u]) invalid += lane == 0 ? d : 0;
      row[u] = ok[u] ? std::uint32_t(r) : 0u;
    }
    // A claimed row's words in the block's copy (an offset into `local`), -1 for the others.
#pragma unroll
    for (int u = 0; u < R; ++u) {
      const int s = ok[u] ? hot[row[u]] : -1;
      slot[u] = s >= 0 ? s * int(d) : -1;
    }
    for (std::uint64_t c0 = 0; c0 < d; c0 += 32 * rows_unroll) {
      // The terms of rows outside [0, m) and of columns past d are 0 bits: zeros, which add nothing. The values are
      // loaded whatever the index (the rows exist), and dropped after.
      std::uint32_t bits[R][rows_unroll];
      bool special = false;
#pragma unroll
      for (int u = 0; u < R; ++u)
#pragma unroll
        for (int v = 0; v < rows_unroll; ++v) {
          const std::uint64_t c = c0 + 32 * v + std::uint64_t(lane);
          const std::uint32_t loaded = c < d && i0 + u < n ? term_bits<float>(values[(i0 + u) * d + c]) : 0u;
          bits[u][v] = ok[u] ? loaded : 0u;
          special |= ((bits[u][v] >> 23) & 0xffu) == 0xffu;
        }
      if (__any_sync(0xffffffffu, special)) {
        // NaN or infinity somewhere in the warp's terms: the flags, each term tested.
#pragma unroll
        for (int u = 0; u < R; ++u)
#pragma unroll
          for (int v = 0; v < rows_unroll; ++v) {
            const std::uint64_t c = c0 + 32 * v + std::uint64_t(lane);
            const auto parts = detred::detail::split_bits<float>(bits[u][v]);
            if (parts.field > scatter_format<float>::max_field)
              atomicOr(&flags[std::uint64_t(row[u]) * d + c], detred::detail::special_flags<float>(parts));
          }
      }
      // Finite terms: k = +-(m' << shift) (narrow_term's arithmetic on the float bits), the level from the table.
      // A zero, and a NaN or infinity (whose flags are set above), adds nothing.
#pragma unroll
      for (int u = 0; u < R; ++u) {
        // The lane's first column of this pass in the top level (the level nearly every term hits), row u.
        std::int32_t* const top_at =
            words + std::uint64_t(top) * slots + std::uint64_t(row[u]) * d + c0 + std::uint64_t(lane);
#pragma unroll
        for (int v = 0; v < rows_unroll; ++v) {
          const std::uint32_t b = bits[u][v];
          const std::uint32_t field = (b >> 23) & 0xffu;
          const std::uint32_t entry = table[field == 0 ? 1u : field];
          const std::uint32_t significand = ((b & 0x7fffffu) | (field != 0 ? 0x800000u : 0u)) >> significand_shift;
          const std::int32_t magnitude = std::int32_t(significand << (entry & 0xffu));
          const std::int32_t k = (b >> 31) != 0 ? -magnitude : magnitude;
          if (k == 0 || field == 0xffu) continue;
          const int level = int(entry >> 8);
          if (level == top) {
            if (slot[u] >= 0)
              atomicAdd(&local[slot[u] + int(c0) + 32 * v + lane], k);
            else
              atomicAdd(reinterpret_cast<unsigned*>(top_at + 32 * v), unsigned(k));
          } else {
            atomicAdd(reinterpret_cast<unsigned*>(top_at - std::uint64_t(top - level) * slots + 32 * v), unsigned(k));
          }
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
