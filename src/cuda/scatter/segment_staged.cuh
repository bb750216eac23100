// The canonical segment sums (segment_sum, reduce_by_key, sum_method::tree), the long segments staged through shared
// memory: one warp a segment and a block a warp, so that the hardware's block scheduler hands the next segment to
// whichever warp finishes first (segment lengths vary; a fixed assignment ends with the warps that drew the longest).
// Segments shorter than a region take warp_row_root's tile-free form (short_segment_sum) in the same launch.
//
// Reading. A segment may start at any element, off a 16-byte boundary. The warp copies the 16-byte aligned vectors
// that cover it into a ring of shared memory with 16-byte asynchronous copies (cp.async: whole aligned vectors, no
// registers held while they are in flight), up to staged_ahead + staged_batch groups of 32 vectors ahead, and reduces
// staged_batch groups after one wait and two warp barriers, their ring reads and lane trees independent of each other;
// the last vector is copied only up to the segment's end (the rest zero-filled), and a first vector that would begin
// before the values array (the first segment of an unaligned array) is stored element by element. Lane L then takes the
// lane vector of the canonical tree (the segment's elements 32 V q + V L .. + V - 1) from the ring at any byte offset:
// four 32-bit words read in an order rotated by L / 8, which puts the 32 lanes' reads in 32 different banks, put back
// in order, and for a 2-byte element offset a fifth word from the next lane and a funnel shift.
//
// Order. The same nodes as warp_row_root (include/detred/cuda/warp/row_warp.cuh), so the bits of the CPU's
// canonical_row_root and of the short segments' pass: regions of 8 full segments (8 x 32 lane vectors, a complete
// aligned subtree at level lane_level + 8) by warp_rows_root<8> over their lane roots (the segment roots joined
// pairwise: warp_registers_row_root's argument), the full segments left by the 5-level butterfly, and the tail (less
// than 32 V elements) by push_tail_nodes from the ring, each pushed into a warp counter in position order and folded.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/accumulators/plain.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"

namespace detred::cuda::detail {

// The ring: staged_ring_groups groups of 32 16-byte vectors (8 KiB a warp: 28 warps an SM on sm_90). The warp reduces
// staged_batch groups at a time while the staged_ahead groups after the first of them are in flight or landed, and
// issues the next staged_batch before it waits (the ring holds the batch, the group after it that a skewed segment's
// last lane reads, and the groups in flight: staged_ahead + staged_batch <= staged_ring_groups).
inline constexpr int staged_ring_groups = 16;
inline constexpr int staged_ahead = 12;
inline constexpr int staged_batch = 4;
static_assert(staged_ahead >= staged_batch + 1 && staged_ahead + staged_batch <= staged_ring_groups);
static_assert(8 % staged_batch == 0);

// Resident blocks (warps) an SM the canonical kernel is compiled for: at most 80 registers a thread (the ring's 8 KiB
// would allow 27 blocks, an SM 32).
inline constexpr int canonical_blocks_per_sm = 24;

// Segments shorter than this many elements (one region, 4 KiB) take the short segments' pass instead.
template <class T>
inline constexpr std::uint64_t staged_min_elements = std::uint64_t(8) * 32 * tile_shape<T>::vector_elements;

// A 16-byte asynchronous copy, global to shared memory (L1 bypassed), with the hint that L2 fetch the 256 bytes
// around it (the warp reads them all: its 32 lanes copy 512 consecutive bytes).
__device__ __forceinline__ void copy_vector_async(void* shared_destination, const void* global_source) {
  const unsigned destination = unsigned(__cvta_generic_to_shared(shared_destination));
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(destination),
               "l"(__cvta_generic_to_global(global_source))
               : "memory");
}
__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wait_async_copies_but() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Lane `lane`'s 16 bytes of the ring of `mask + 1` 32-bit words, starting `half_word` (0 or 2) bytes into word `word`
// (4 lane + c, c fixed across the warp). Lanes L, L + 8, L + 16, L + 24 share banks word by word, so lane group
// g = lane / 8 reads word t ^ g at step t: the warp's 32 reads of a step hit 32 banks. AnyOrder (for the callers'
// elements of at most 4 bytes, whose tree adds words 0 + 1 and 2 + 3 first, and IEEE addition being commutative):
// the words are returned in that order, pairs {0, 1} and {2, 3} kept together, which leaves the lane tree's result
// unchanged; otherwise put back in order (and, for a 2-byte offset, a fifth word from the next lane and a funnel
// shift).
template <bool AnyOrder>
__device__ __forceinline__ uint4 ring_lane_vector(const unsigned* words, unsigned mask, unsigned word,
                                                  unsigned half_word, int lane) {
  const unsigned g = unsigned(lane >> 3);
  unsigned r[4];
#pragma unroll
  for (unsigned t = 0; t < 4; ++t) r[t] = words[(word + (t ^ g)) & mask];
  if constexpr (AnyOrder) {
    return make_uint4(r[0], r[1], r[2], r[3]);
  } else {
    // r[t] is word t ^ g: w[i] = r[i ^ g].
    unsigned w[5];
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned by1 = (g & 1) ? r[i ^ 1] : r[i];
      const unsigned by1_2 = (g & 1) ? r[i ^ 3] : r[i ^ 2];
      w[i] = (g & 2) ? by1_2 : by1;
    }
    if (half_word == 0) return make_uint4(w[0], w[1], w[2], w[3]);
    w[4] = __shfl_down_sync(0xffffffffu, w[0], 1);
    if (lane == 31) w[4] = words[(word + 4) & mask];
    return make_uint4(__funnelshift_r(w[0], w[1], 16), __funnelshift_r(w[1], w[2], 16), __funnelshift_r(w[2], w[3], 16),
                      __funnelshift_r(w[3], w[4], 16));
  }
}

// The canonical sum of a segment shorter than staged_min_elements<T>: warp_row_root's tile-free form (vector loads
// where x is 16-byte aligned). Warp-uniform; returned in every lane.
template <class R, class T>
__device__ R short_segment_sum(const T* __restrict__ x, std::uint64_t len) {
  using Acc = plain_accumulator<R>;
  const Acc root = (reinterpret_cast<std::uintptr_t>(x) & 15) == 0
                       ? warp_row_root<Acc, T, true, widened_leaf<Acc>, false>(x, len, widened_leaf<Acc>{})
                       : warp_row_root<Acc, T, false, widened_leaf<Acc>, false>(x, len, widened_leaf<Acc>{});
  return canonicalize_nan(root.result());
}

// The canonical sum of values[begin, end), end - begin >= staged_min_elements<T>, by one warp through its ring.
// Warp-uniform; returned in every lane.
template <class R, class T>
__device__ R staged_segment_sum(const T* __restrict__ values, std::uint64_t begin, std::uint64_t end, uint4* ring) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr std::uint64_t segment = 32 * V;
  constexpr unsigned ring_vectors = 32 * staged_ring_groups;
  using Acc = plain_accumulator<R>;
  const unsigned* ring_words = reinterpret_cast<const unsigned*>(ring);
  const T* ring_elements = reinterpret_cast<const T*>(ring);
  const int lane = int(threadIdx.x & 31);
  const widened_leaf<Acc> leaf{};
  const std::uint64_t len = end - begin;
  const T* x = values + begin;
  const unsigned skew = unsigned(reinterpret_cast<std::uintptr_t>(x) & 15);  // bytes past the boundary
  const unsigned skew_elements = skew / unsigned(sizeof(T));
  const char* aligned = reinterpret_cast<const char*>(x) - skew;
  const std::uint64_t bytes = skew + len * sizeof(T);
  const std::uint64_t vectors = (bytes + 15) / 16;
  // Vector 0 lies inside the values array when the segment starts at least `skew` bytes into it.
  const bool head_whole = skew == 0 || begin * sizeof(T) >= skew;
  // The last vector, when it reaches past the segment, is read element by element into registers when its group is
  // issued and stored into the ring only before the first wait that needs it (a 16-byte copy could fault past the
  // array's end).
  const std::uint64_t last = vectors - 1, last_group = last / 32;
  const unsigned last_elements = unsigned(bytes - last * 16) / unsigned(sizeof(T));
  T held[V];
  bool holding = false;
  // Groups 1 .. last_group - 1 (and group 0 when its first vector lies inside the array) are whole aligned vectors of
  // the array: the common case, one copy a lane.
  const auto issue = [&](std::uint64_t group) {
    const std::uint64_t k = group * 32 + std::uint64_t(lane);
    if ((group != 0 || head_whole) && group < last_group) {
      copy_vector_async(&ring[k & (ring_vectors - 1)], aligned + k * 16);
    } else if (k < vectors) {
      uint4* destination = &ring[k & (ring_vectors - 1)];
      if (k == 0 && !head_whole) {
        T* e = reinterpret_cast<T*>(destination);
#pragma unroll
        for (unsigned i = 0; i < unsigned(V); ++i)
          if (i >= skew_elements) e[i] = x[i - skew_elements];  // len >= 2 V: inside the segment
      } else if (k == last && last_elements < unsigned(V)) {
#pragma unroll
        for (unsigned i = 0; i < unsigned(V); ++i)
          held[i] = i < last_elements ? x[last * V + i - skew_elements] : T{};  // k > 0: no element before x
        holding = true;
      } else {
        copy_vector_async(destination, aligned + k * 16);
      }
    }
    commit_async_copies();
  };
  const auto store_held = [&] {
    if (holding) {
      T* e = reinterpret_cast<T*>(&ring[last & (ring_vectors - 1)]);
#pragma unroll
      for (int i = 0; i < V; ++i) e[i] = held[i];
      holding = false;
    }
  };
  // Full segment q's lane vector from the ring (groups q and, for a skewed segment, q + 1 landed).
  const auto read = [&](std::uint64_t q) {
    if (skew == 0) return ring[(unsigned(q) * 32 + unsigned(lane)) & (ring_vectors - 1)];
    const unsigned word = unsigned(q) * 128 + 4 * unsigned(lane) + (skew >> 2);
    if constexpr (sizeof(T) <= 4) {
      if ((skew & 3) == 0) return ring_lane_vector<true>(ring_words, 4 * ring_vectors - 1, word, 0, lane);
    }
    return ring_lane_vector<false>(ring_words, 4 * ring_vectors - 1, word, skew & 3, lane);
  };
  // Before full segment q: groups up to q + staged_ahead - 1 issued. One segment: group q + staged_ahead is issued,
  // groups <= q + 1 awaited.
  const auto step = [&](std::uint64_t q) {
    issue(q + staged_ahead);
    if (q + 1 >= last_group) store_held();
    wait_async_copies_but<staged_ahead - 1>();
    __syncwarp();
    return read(q);
  };
  // staged_batch segments q .. q + staged_batch - 1 at once: one wait and two warp barriers for all of them, their
  // ring reads independent of each other. The barrier first: every lane has read the groups whose slots the issue
  // reuses (q + staged_ahead - staged_ring_groups .. q - 1).
  const auto batch = [&](std::uint64_t q, uint4(&raw)[staged_batch]) {
    __syncwarp();
    const std::uint64_t g0 = q + staged_ahead;
    if (g0 + staged_batch <= last_group) {  // whole vectors inside the segment (g0 > 0)
      const char* source = aligned + (g0 * 32 + std::uint64_t(lane)) * 16;
      const unsigned slot = unsigned(g0) * 32 + unsigned(lane);
#pragma unroll
      for (int b = 0; b < staged_batch; ++b) {
        copy_vector_async(&ring[(slot + 32 * unsigned(b)) & (ring_vectors - 1)], source + 512 * b);
        commit_async_copies();
      }
    } else {
#pragma unroll
      for (int b = 0; b < staged_batch; ++b) issue(g0 + std::uint64_t(b));
    }
    if (q + staged_batch >= last_group) store_held();
    wait_async_copies_but<staged_ahead - 1>();
    __syncwarp();
    if (skew == 0) {
#pragma unroll
      for (int b = 0; b < staged_batch; ++b)
        raw[b] = ring[(unsigned(q + std::uint64_t(b)) * 32 + unsigned(lane)) & (ring_vectors - 1)];
      return;
    }
    if constexpr (sizeof(T) <= 4) {
      if ((skew & 3) == 0) {
#pragma unroll
        for (int b = 0; b < staged_batch; ++b)
          raw[b] =
              ring_lane_vector<true>(ring_words, 4 * ring_vectors - 1,
                                     unsigned(q + std::uint64_t(b)) * 128 + 4 * unsigned(lane) + (skew >> 2), 0, lane);
        return;
      }
    }
#pragma unroll
    for (int b = 0; b < staged_batch; ++b)
      raw[b] = ring_lane_vector<false>(ring_words, 4 * ring_vectors - 1,
                                       unsigned(q + std::uint64_t(b)) * 128 + 4 * unsigned(lane) + (skew >> 2),
                                       skew & 3, lane);
  };
  for (int g = 0; g < staged_ahead; ++g) issue(std::uint64_t(g));
  warp_counter<Acc> counter;
  const std::uint64_t full = len / segment, regions = full / 8;
  for (std::uint64_t r = 0; r < regions; ++r) {
    Acc lane_root[8];
#pragma unroll
    for (int h = 0; h < 8; h += staged_batch) {
      const std::uint64_t q0 = r * 8 + std::uint64_t(h);
      uint4 raw[staged_batch];
      batch(q0, raw);
#pragma unroll
      for (int b = 0; b < staged_batch; ++b) {
        Acc node[V];
        vector_leaves<Acc, T>(raw[b], (q0 + std::uint64_t(b)) * segment + std::uint64_t(lane) * V, leaf, node);
        lane_root[h + b] = lane_tree<Acc, V>(node);
      }
    }
    counter.push(warp_rows_root<8>(lane_root), lane_level + 8);
  }
  for (std::uint64_t q = regions * 8; q < full; ++q) {
    __syncwarp();  // the slot that step's issue reuses was read in the last batch
    push_segment_root<Acc, T>(step(q), q * segment, leaf, counter);
  }
  // The tail from the ring: its vectors are in the groups after the last full segment's, already issued.
  store_held();
  wait_async_copies_but<0>();
  __syncwarp();
  const int rest = int(len - full * segment);
  if (rest > 0) {
    const std::uint64_t first = full * segment;
    Acc node[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int at = lane * V + i;
      node[i] = at < rest ? leaf(ring_elements[(first + at + skew_elements) & (ring_vectors * V - 1)],
                                 first + std::uint64_t(at))
                          : Acc{};
    }
    push_tail_nodes<Acc, T>(node, rest, counter);
  }
  const R result = canonicalize_nan(counter.fold().result());
  __syncwarp();  // the ring is the next segment's
  return result;
}

// Calls f(slot, begin, end) for this block's segments b, b + grid, b + 2 grid, ... (b = blockIdx.x) in that order,
// every lane of the warp with the same arguments (segment `slot` is [begin, end)): the lanes read 32 segments' bounds
// at once. `count`: the number of segments.
template <class Bounds, class F>
__device__ __forceinline__ void for_each_block_segment(std::uint64_t count, const Bounds& bounds, F&& f) {
  const int lane = int(threadIdx.x & 31);
  const std::uint64_t grid = gridDim.x;
  for (std::uint64_t first = blockIdx.x; first < count; first += 32 * grid) {
    const std::uint64_t mine = first + std::uint64_t(lane) * grid;
    std::uint64_t b = 0, e = 0;
    if (mine < count) bounds(mine, b, e);
    unsigned todo = __ballot_sync(0xffffffffu, mine < count);
    while (todo != 0) {
      const int source = __ffs(todo) - 1;
      todo &= todo - 1;
      f(first + std::uint64_t(source) * grid, __shfl_sync(0xffffffffu, b, source), __shfl_sync(0xffffffffu, e, source));
    }
  }
}

// The canonical segment sums: one block of 32 threads, grid-stride over the segments (for_each_block_segment), those
// of at least staged_min_elements<T> through the ring, the others by short_segment_sum. `segments`: the count, or
// (when d_segments is set) an upper bound with the count in device memory.
template <class R, class T, class Bounds>
__global__ void __launch_bounds__(32, canonical_blocks_per_sm)
    canonical_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments,
                             const std::uint64_t* d_segments, Bounds bounds) {
  __shared__ uint4 ring[32 * staged_ring_groups];
  const std::uint64_t count = d_segments ? *d_segments : segments;
  for_each_block_segment(count, bounds, [&](std::uint64_t slot, std::uint64_t begin, std::uint64_t end) {
    const R result = end - begin >= staged_min_elements<T> ? staged_segment_sum<R, T>(values, begin, end, ring)
                                                           : short_segment_sum<R, T>(values + begin, end - begin);
    if ((threadIdx.x & 31) == 0) out[slot] = result;
  });
}

}  // namespace detred::cuda::detail
