// Experiment (docs/PERFORMANCE.md, "Scattered and segmented sums", "Where the time goes": the block-a-segment forms):
// the canonical segment sum with a block of warps a long segment, as CUB's segmented reduce gives each segment a
// block. Each form gives the library's bits (the probe counts the segments whose bits differ: 0 in every run):
//   - staged (block_segment_kernel, "block4x8"): each warp stages one region (8 rows of 32 lane vectors, 4 KiB) a pass
//     into its own shared buffer by cp.async (two buffers: the next pass's region in flight), reads the lane vectors at
//     any byte offset as the library's ring does, and writes the region's root; after one block barrier a pass, warp 0
//     pushes the pass's region roots in position order (the last, partial region's rows and tail from its stager's
//     buffer). Segments shorter than a region: one warp each, in turn, by the library's short_segment_sum.
//   - registers (the library's register_segment_kernel, src/cuda/scatter/segment_registers.cuh, which segment_sum
//     takes for long mean lengths as "w2x16", "w2x12" and "w4x8"): each warp holds its region of a tile in registers,
//     warp 0 joins the region roots after one barrier a tile; here in the library's shapes and their neighbours
//     (blocks of W warps, B blocks an SM: "wWxB"). The variants measured and lost (carveouts, non-coherent element
//     loads, realignment by shuffles, L2 fetch hints, several segments a block, 8 warps of 4 rows):
//     docs/PERFORMANCE.md, "Where the time goes".
// Timed against cub::DeviceSegmentedReduce::Sum and the library's segment_sum (without and with the values count) as
// segment_chunked_probe.cu is. Build: cmake --build build --target segment_block_probe; run:
// build/bench/segment_block_probe [reps]
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/experiments/segment_probe_harness.cuh"
#include "detred/accumulators/plain.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "src/cuda/scatter/segment_registers.cuh"
#include "src/cuda/scatter/segment_staged.cuh"

namespace detred::cuda::detail {

// Block of block_warps warps a segment: each warp stages 8 rows (one region, 4 KiB) of the segment through cp.async
// and reduces them to the region's root; warp 0 pushes the region roots in position order (and the last, partial
// region's rows and tail from its stager's buffer) into its counter. Short segments: one warp each, in turn.
inline constexpr int block_warps = 4;
inline constexpr int region_vectors = 256;                // 8 rows x 32 lanes
inline constexpr int stage_vectors = region_vectors + 4;  // + the vector after the region (skewed rows)

template <class R, class T, class Bounds, int BlocksPerSm>
__global__ void __launch_bounds__(32 * block_warps, BlocksPerSm)
    block_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments, Bounds bounds) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr std::uint64_t segment = 32 * V;
  constexpr std::uint64_t region = 8 * segment;
  using Acc = plain_accumulator<R>;
  __shared__ uint4 stage[2][block_warps][stage_vectors];
  __shared__ Acc region_roots[2][block_warps];
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  const widened_leaf<Acc> leaf{};
  unsigned turn = 0;  // the short segments go to the block's warps in turn
  for_each_block_segment(segments, bounds, [&](std::uint64_t slot, std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t len = end - begin;
    if (len < region) {
      if (int(turn++ % block_warps) == warp) {
        const R result = short_segment_sum<R, T>(values + begin, len);
        if (lane == 0) out[slot] = result;
      }
      return;
    }
    const T* x = values + begin;
    const unsigned skew = unsigned(reinterpret_cast<std::uintptr_t>(x) & 15);
    const unsigned skew_elements = skew / unsigned(sizeof(T));
    const char* aligned = reinterpret_cast<const char*>(x) - skew;
    const std::uint64_t vectors = (skew + len * sizeof(T) + 15) / 16;
    const bool head_whole = skew == 0 || begin * sizeof(T) >= skew;
    const std::uint64_t last = vectors - 1;
    const unsigned last_elements = unsigned(skew + len * sizeof(T) - last * 16) / unsigned(sizeof(T));
    // Vector k of the segment's aligned span into dst: a 16-byte asynchronous copy, or element by element where the
    // vector reaches outside the segment at its ends.
    const auto stage_vector = [&](std::uint64_t k, uint4* dst) {
      if (k >= vectors) return;
      if (k == 0 && !head_whole) {
        T* el = reinterpret_cast<T*>(dst);
        for (unsigned i = skew_elements; i < unsigned(V); ++i) el[i] = x[i - skew_elements];
      } else if (k == last && last_elements < unsigned(V)) {
        T* el = reinterpret_cast<T*>(dst);
        for (unsigned i = 0; i < unsigned(V); ++i) el[i] = i < last_elements ? x[k * V + i - skew_elements] : T{};
      } else {
        copy_vector_async(dst, aligned + k * 16);
      }
    };
    // Row q's lane vector from a stage buffer (words `words`).
    const auto read = [&](const uint4* buffer, int q) {
      if (skew == 0) return buffer[q * 32 + lane];
      const unsigned* words = reinterpret_cast<const unsigned*>(buffer);
      const unsigned word = unsigned(q) * 128 + 4 * unsigned(lane) + (skew >> 2);
      if constexpr (sizeof(T) <= 4) {
        if ((skew & 3) == 0) return ring_lane_vector<true>(words, ~0u, word, 0, lane);
      }
      return ring_lane_vector<false>(words, ~0u, word, skew & 3, lane);
    };
    const std::uint64_t regions = (len + region - 1) / region;  // the last may be partial
    warp_counter<Acc> counter;
    const std::uint64_t passes = (regions + block_warps - 1) / block_warps;
    // Stages this warp's region of pass p into buffer p & 1 (one commit group, empty past the last region).
    const auto issue = [&](std::uint64_t p) {
      const std::uint64_t r = p * block_warps + std::uint64_t(warp);
      uint4* buffer = stage[p & 1][warp];
      if (r < regions) {
        const std::uint64_t base = r * region_vectors;
#pragma unroll
        for (int i = 0; i < 8; ++i) stage_vector(base + std::uint64_t(32 * i + lane), &buffer[32 * i + lane]);
        if (lane == 0 && skew != 0) stage_vector(base + region_vectors, &buffer[region_vectors]);
      }
      commit_async_copies();
    };
    issue(0);
    for (std::uint64_t p = 0; p < passes; ++p) {
      __syncwarp();  // every lane has read the buffer that the next issue refills
      issue(p + 1);
      wait_async_copies_but<1>();
      __syncwarp();
      const std::uint64_t r = p * block_warps + std::uint64_t(warp);
      if (r < regions && (r + 1) * region <= len) {
        Acc lane_root[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          Acc node[V];
          vector_leaves<Acc, T>(read(stage[p & 1][warp], q),
                                r * region + std::uint64_t(q) * segment + std::uint64_t(lane) * V, leaf, node);
          lane_root[q] = lane_tree<Acc, V>(node);
        }
        const Acc root = warp_rows_root<8>(lane_root);
        if (lane == 0) region_roots[p & 1][warp] = root;
      }
      __syncthreads();
      if (warp == 0) {
        for (int w = 0; w < block_warps; ++w) {
          const std::uint64_t rw = p * block_warps + std::uint64_t(w);
          if (rw >= regions) break;
          if ((rw + 1) * region <= len) {
            counter.push(region_roots[p & 1][w], lane_level + 8);
          } else {
            // The partial region: its full rows one by one, then its tail, from warp w's buffer.
            const std::uint64_t at = rw * region;
            const int rows = int((len - at) / segment);
            for (int q = 0; q < rows; ++q)
              push_segment_root<Acc, T>(read(stage[p & 1][w], q), at + std::uint64_t(q) * segment, leaf, counter);
            const int rest = int(len - at - std::uint64_t(rows) * segment);
            if (rest > 0) {
              const T* elements = reinterpret_cast<const T*>(stage[p & 1][w]) + skew_elements + rows * int(segment);
              Acc node[V];
#pragma unroll
              for (int i = 0; i < V; ++i)
                node[i] = lane * V + i < rest ? leaf(elements[lane * V + i],
                                                     at + std::uint64_t(rows) * segment + std::uint64_t(lane * V + i))
                                              : Acc{};
              push_tail_nodes<Acc, T>(node, rest, counter);
            }
          }
        }
      }
    }
    wait_async_copies_but<0>();
    __syncthreads();  // warp 0 has read the last pass's buffers and roots before the next segment's stages
    if (warp == 0) {
      const R result = canonicalize_nan(counter.fold().result());
      if (lane == 0) out[slot] = result;
    }
  });
}

}  // namespace detred::cuda::detail

int main(int argc, char** argv) {
  using namespace detred::cuda::detail;
  using segment_probe::check;
  using segment_probe::csr_bounds;
  const segment_probe::probe_setup setup = segment_probe::setup(argc, argv);
  const int reps = setup.reps;
  const auto grid = [&](std::uint64_t segments) { return setup.grid(segments); };
  const auto forms = [&](auto type) {
    using T = decltype(type);
    // The largest shared-memory carveout for the staged form, as the library's staged kernel asks; the register
    // kernel keeps the driver's default, as the library launches it.
    check(cudaFuncSetAttribute(reinterpret_cast<const void*>(block_segment_kernel<T, T, csr_bounds, 8>),
                               cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared),
          __LINE__);
    const auto registers = [&](auto kernel, int warps) {
      return [&, kernel, warps](const T* v, const int* o, std::uint64_t s, T* out) {
        kernel<<<grid(s), 32 * warps>>>(v, out, s, csr_bounds{o});
      };
    };
    return std::vector<segment_probe::form<T>>{
        {"block4x8",
         [&](const T* v, const int* o, std::uint64_t s, T* out) {
           block_segment_kernel<T, T, csr_bounds, 8><<<grid(s), 128>>>(v, out, s, csr_bounds{o});
         }},
        {"w4x7", registers(register_segment_kernel<T, T, csr_bounds, 4, 7>, 4)},
        {"w4x8", registers(register_segment_kernel<T, T, csr_bounds, 4, 8>, 4)},
        {"w2x12", registers(register_segment_kernel<T, T, csr_bounds, 2, 12>, 2)},
        {"w2x14", registers(register_segment_kernel<T, T, csr_bounds, 2, 14>, 2)},
        {"w2x16", registers(register_segment_kernel<T, T, csr_bounds, 2, 16>, 2)}};
  };
  const std::uint64_t differing = segment_probe::run<float>("f32", std::uint64_t{1} << 26, reps, forms(float{})) +
                                  segment_probe::run<double>("f64", std::uint64_t{1} << 25, reps, forms(double{}));
  if (differing != 0)
    std::printf("FAILED: %llu segments differ from the library's bits\n", (unsigned long long)differing);
  return differing == 0 ? 0 : 1;
}
