// index_add by output row (docs/SCATTER.md, "index_add by output row"): the source rows grouped by their output row
// with a counting sort, then each group's terms summed in registers, in the same fixed-point levels as the atomic path
// (scatter_levels.hpp), and rounded there. Float outputs (half, bfloat16 and float sources) with rows of 32 columns or
// more whose levels do not fit a block's shared memory. Where the atomic path adds every term into level words in
// global memory (8 bytes a slot a level: more than the L2 holds for large outputs), this path reads the source once,
// writes each output once, and adds by atomics only the partial sums of the output rows that cross a chunk boundary.
//   count_rows_kernel      the contributions of each output row (integer atomics, lanes with the same row first
//                          combined by a match), out-of-range indices counted;
//   (cub::DeviceScan::ExclusiveSum of the counts: the first sorted position of each output row)
//   place_rows_kernel      each source row's position among its output row's (any order: the sums are exact);
//   clear_kernel           zeroes the level words and flags of the output rows that cross a chunk boundary;
//   gathered_rows_kernel   one warp a chunk of `chunk` sorted positions, lanes across the columns: each output row's
//                          level words in registers; a row wholly inside the chunk is rounded and written there, a
//                          row crossing a boundary adds its partial words to the global levels by integer atomics;
//   finish_kernel          rounds the crossing rows and writes the rows that received nothing (their prior value
//                          rounded alone: a NaN becomes the canonical NaN, as on the CPU).
// Each kernel reads the geometry and returns at once when the data need more than gathered_levels levels: then the
// atomic path's kernels (launched too) do the work. The flags a chunk collects are the CPU's (every term other than
// -0.0 marks the slot), so an exact zero gets its sign here, without the rescan.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "src/cuda/scatter/scatter_kernels.cuh"

namespace detred::cuda::detail {

// Columns a lane adds at once (strided by 32), and sorted rows loaded before they are added.
inline constexpr int gathered_columns = 4;
inline constexpr int gathered_unroll = 4;

// counts[r] = the number of valid contributions to output row r (counts zeroed beforehand).
template <class I>
__global__ void __launch_bounds__(1024)
    count_rows_kernel(const I* __restrict__ index, std::uint64_t n, std::uint64_t m, scatter_header* h, int width,
                      std::uint32_t* __restrict__ counts) {
  if (!takes_gathered(true, read_geometry<float>(h, width))) return;
  const int lane = int(threadIdx.x & 31);
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  unsigned long long invalid = 0;
  for (std::uint64_t base = std::uint64_t(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
    const std::uint64_t t = base + lane;
    const I r = t < n ? index[t] : I(0);
    const bool valid = t < n && r >= 0 && std::uint64_t(r) < m;
    invalid += t < n && !valid ? 1 : 0;
    const unsigned long long key = valid ? (unsigned long long)(r) : ~0ull - unsigned(lane);
    const unsigned group = __match_any_sync(0xffffffffu, key);
    if (valid && lane == __ffs(group) - 1) atomicAdd(&counts[r], unsigned(__popc(group)));
  }
  for (int o = 16; o > 0; o >>= 1) invalid += __shfl_xor_sync(0xffffffffu, invalid, o);
  if (lane == 0 && invalid != 0) atomicAdd(&h->invalid, invalid);
}

// perm[starts[r] .. starts[r + 1]) = the source rows of output row r, in no particular order; counts ends at 0.
template <class I>
__global__ void __launch_bounds__(1024)
    place_rows_kernel(const I* __restrict__ index, std::uint64_t n, std::uint64_t m, const scatter_header* h, int width,
                      std::uint32_t* __restrict__ counts, const std::uint32_t* __restrict__ starts,
                      std::uint32_t* __restrict__ perm) {
  if (!takes_gathered(true, read_geometry<float>(h, width))) return;
  const int lane = int(threadIdx.x & 31);
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t base = std::uint64_t(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
    const std::uint64_t t = base + lane;
    const I r = t < n ? index[t] : I(0);
    const bool valid = t < n && r >= 0 && std::uint64_t(r) < m;
    const unsigned long long key = valid ? (unsigned long long)(r) : ~0ull - unsigned(lane);
    const unsigned group = __match_any_sync(0xffffffffu, key);
    const int leader = __ffs(group) - 1;
    unsigned last = 0;  // the group's positions are last - size .. last - 1 of its row's range
    if (valid && lane == leader) last = atomicSub(&counts[r], unsigned(__popc(group)));
    last = __shfl_sync(0xffffffffu, last, leader);
    if (valid) {
      const unsigned rank = unsigned(__popc(group & ((1u << lane) - 1u)));
      perm[starts[r] + last - unsigned(__popc(group)) + rank] = std::uint32_t(t);
    }
  }
}

// One lane's running sums for its columns of one output row: level words and flags.
struct gathered_sums {
  std::int64_t word[gathered_columns][gathered_levels];
  std::uint32_t flags[gathered_columns];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int c = 0; c < gathered_columns; ++c) {
      flags[c] = 0;
#pragma unroll
      for (int j = 0; j < gathered_levels; ++j) word[c][j] = 0;
    }
  }

  // The term with float bits `bits` into column c (its level from the block's table; fixed index into the registers).
  __device__ __forceinline__ void add(int c, std::uint32_t bits, const std::uint16_t* table) {
    const auto parts = detred::detail::split_bits<float>(bits);
    const bool finite_nonzero =
        parts.field <= scatter_format<float>::max_field && (parts.field != 0 || parts.fraction != 0);
    if (!finite_nonzero) {
      flags[c] |= detred::detail::special_flags<float>(parts);
      return;
    }
    flags[c] |= detred::detail::slot_not_only_negative_zero;
    const std::uint16_t entry = table[parts.field == 0 ? 1 : parts.field];
    const int level = entry >> 8;
    const std::int64_t k = std::int64_t(detred::detail::term_word<float>(parts, entry & 0xff).lo);
#pragma unroll
    for (int j = 0; j < gathered_levels; ++j) word[c][j] += level == j ? k : 0;
  }

  // Column c's value with the prior value, rounded once (the finish kernel's arithmetic).
  __device__ __forceinline__ float rounded(int c, const scatter_geometry& g, float prior) const {
    float result;
    if (g.levels > 0 && (g.levels - 1) * g.width <= 56) {
      __int128 t = 0;
#pragma unroll
      for (int j = 0; j < gathered_levels; ++j)
        if (j < g.levels) t += __int128(word[c][j]) << (j * g.width);
      if (detred::detail::round_float_fast(t, g, prior, flags[c], result)) return result;
    }
    return exact_result(word[c][0], word[c][1], word[c][2], word[c][3], g, prior, flags[c]);
  }

  // The exact accumulator's rounding (NaN or Inf flags, far priors, exact zeros, wide data): out of line, so that its
  // local memory and registers stay out of the kernel's loop.
  static __device__ __noinline__ float exact_result(std::int64_t w0, std::int64_t w1, std::int64_t w2, std::int64_t w3,
                                                    scatter_geometry g, float prior, std::uint32_t flags) {
    static_assert(gathered_levels == 4);
    const level_word<float> w[gathered_levels] = {
        {std::uint64_t(w0)}, {std::uint64_t(w1)}, {std::uint64_t(w2)}, {std::uint64_t(w3)}};
    return detred::detail::slot_result<float>(w, 1, g, prior, flags);
  }
};

// One warp a chunk of sorted positions [c chunk, (c + 1) chunk); per pass of gathered_columns x 32 columns, the rows
// in sorted order, so that one output row's terms arrive together: its sums stay in registers until the row changes.
template <class T, class I>
__global__ void __launch_bounds__(256, 2)
    gathered_rows_kernel(const T* __restrict__ values, const I* __restrict__ index, std::uint64_t m, std::uint64_t d,
                         const std::uint32_t* __restrict__ perm, const std::uint32_t* __restrict__ starts,
                         std::uint32_t chunk, const scatter_header* h, int width,
                         level_word<float>* __restrict__ levels, std::uint32_t* __restrict__ flags,
                         float* __restrict__ out) {
  __shared__ std::uint16_t table[scatter_format<float>::max_field + 1];
  const scatter_geometry g = read_geometry<float>(h, width);
  if (!takes_gathered(true, g)) return;
  build_table<float>(table, g);
  __syncthreads();
  const std::uint32_t total = starts[m];
  const std::uint64_t slots = m * d;
  const int lane = int(threadIdx.x & 31);
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  gathered_sums sums;
  for (std::uint64_t c = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; c * chunk < total; c += warps) {
    const std::uint32_t p0 = std::uint32_t(c * chunk);
    const std::uint32_t p1 = std::uint32_t(min(std::uint64_t(p0) + chunk, std::uint64_t(total)));
    for (std::uint64_t c0 = 0; c0 < d; c0 += 32 * gathered_columns) {
      sums.clear();
      std::uint32_t current = ~0u;  // the output row the sums hold (warp-uniform; m < 2^31)
      // Adds the sums of output row `current` to their slots: rounded and written where the row lies wholly in
      // this chunk, else added to the global levels and flags for the finish kernel.
      const auto flush = [&] {
        if (current == ~0u) return;
        const bool whole = !crosses_chunks(starts[current], starts[current + 1], chunk);
#pragma unroll
        for (int k = 0; k < gathered_columns; ++k) {
          const std::uint64_t col = c0 + 32 * k + lane;
          if (col >= d) continue;
          const std::uint64_t s = std::uint64_t(current) * d + col;
          if (whole) {
            out[s] = sums.rounded(k, g, out[s]);
          } else {
#pragma unroll
            for (int j = 0; j < gathered_levels; ++j)
              if (j < g.levels && sums.word[k][j] != 0)
                atomicAdd(reinterpret_cast<unsigned long long*>(&levels[std::uint64_t(j) * slots + s].lo),
                          (unsigned long long)sums.word[k][j]);
            if (sums.flags[k] != 0) atomicOr(&flags[s], sums.flags[k]);
          }
        }
        sums.clear();
      };
      for (std::uint32_t q0 = p0; q0 < p1; q0 += 32) {
        const int count = int(min(32u, p1 - q0));
        const std::uint32_t my_row = lane < count ? perm[q0 + lane] : 0u;
        const std::uint32_t my_output = lane < count ? std::uint32_t(index[my_row]) : 0u;
        for (int e = 0; e < count; e += gathered_unroll) {
          T x[gathered_unroll][gathered_columns];
          std::uint32_t output[gathered_unroll];
#pragma unroll
          for (int u = 0; u < gathered_unroll; ++u) {
            const std::uint64_t row = __shfl_sync(0xffffffffu, my_row, (e + u) & 31);
            output[u] = __shfl_sync(0xffffffffu, my_output, (e + u) & 31);
#pragma unroll
            for (int k = 0; k < gathered_columns; ++k) {
              const std::uint64_t col = c0 + 32 * k + lane;
              x[u][k] = e + u < count && col < d ? values[row * d + col] : T{};
            }
          }
#pragma unroll
          for (int u = 0; u < gathered_unroll; ++u) {
            if (e + u >= count) break;  // warp-uniform
            if (output[u] != current) {
              flush();
              current = output[u];
            }
#pragma unroll
            for (int k = 0; k < gathered_columns; ++k)
              if (c0 + 32 * k + lane < d) sums.add(k, term_bits<float>(x[u][k]), table);
          }
        }
      }
      flush();
    }
  }
}

}  // namespace detred::cuda::detail
