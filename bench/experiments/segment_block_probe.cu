// Experiment (docs/PERFORMANCE.md, "Scattered and segmented sums", "Where the time goes": the block-a-segment form):
// the canonical segment sum with a block of 4 warps a long segment, as CUB's segmented reduce gives each segment a
// block. Each warp stages one region (8 rows of 32 lane vectors, 4 KiB) of the segment into its own shared buffer by
// cp.async (two buffers: the next pass's region is in flight while this one is reduced), reads the lane vectors at any
// byte offset as the library's ring does (ring_lane_vector), and writes the region's root; after one block barrier a
// pass, warp 0 pushes the pass's region roots in position order into its counter (and the last, partial region's
// rows and tail from its stager's buffer). Segments shorter than a region: one warp each, in turn. The same tree
// nodes as warp_row_root, so the same bits as the library (the probe counts the segments whose bits differ: 0 in
// every run). Timed against cub::DeviceSegmentedReduce::Sum and the library's segment_sum as
// segment_chunked_probe.cu is, at 8, 6 and 12 blocks an SM. Not part of the library. Build: cmake --build build
// --target segment_block_probe; run: build/bench/segment_block_probe [reps]
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "detred/accumulators/plain.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "src/cuda/scatter/segment_staged.cuh"

namespace detred::cuda::detail {

// Segment s is [offsets[s], offsets[s + 1]).
struct csr_bounds {
  const int* offsets;
  __device__ void operator()(std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) const {
    begin = std::uint64_t(offsets[s]);
    end = std::uint64_t(offsets[s + 1]);
  }
};


// Block of block_warps warps a segment: each warp stages 8 rows (one region, 4 KiB) of the segment through cp.async
// and reduces them to the region's root; warp 0 pushes the region roots in position order (and the last, partial
// region's rows and tail from its stager's buffer) into its counter. Short segments: one warp each, in turn.
inline constexpr int block_warps = 4;
inline constexpr int region_vectors = 256;            // 8 rows x 32 lanes
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
  const std::uint64_t count = segments;
  const std::uint64_t grid = gridDim.x;
  for (std::uint64_t first = blockIdx.x; first < count; first += 32 * grid) {
    const std::uint64_t mine = first + std::uint64_t(lane) * grid;
    std::uint64_t b = 0, e = 0;
    if (mine < count) bounds(mine, b, e);
    unsigned todo = __ballot_sync(0xffffffffu, mine < count);
    while (todo != 0) {
      const int source = __ffs(todo) - 1;
      todo &= todo - 1;
      const std::uint64_t begin = __shfl_sync(0xffffffffu, b, source), end = __shfl_sync(0xffffffffu, e, source);
      const std::uint64_t len = end - begin;
      const std::uint64_t slot = first + std::uint64_t(source) * grid;
      if (len < region) {
        if ((source & (block_warps - 1)) == warp) {
          const R result = short_segment_sum<R, T>(values + begin, len);
          if (lane == 0) out[slot] = result;
        }
        continue;
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
    }
  }
}
}  // namespace detred::cuda::detail

namespace {

using namespace detred::cuda::detail;

void check(cudaError_t e, int line) {
  if (e != cudaSuccess) {
    std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e), line);
    std::exit(1);
  }
}
#define CHECK(x) check((x), __LINE__)

// The library's bench offsets (bench/bench_scatter.cu): lengths uniform in [0, 2 mean].
std::vector<int> make_offsets(std::uint64_t n, std::uint64_t mean) {
  std::vector<int> offsets{0};
  std::uint64_t state = 12345;
  while (std::uint64_t(offsets.back()) < n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    offsets.push_back(int(std::min<std::uint64_t>(n, std::uint64_t(offsets.back()) + (state >> 33) % (2 * mean + 1))));
  }
  return offsets;
}

template <class F>
float time_ms(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
void run(const char* name, std::uint64_t n, int reps) {
  using R = T;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<T> host(n);
  std::uint64_t state = 99;
  for (auto& v : host) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = T(double(std::int64_t(state >> 40) - (std::int64_t{1} << 23)) / double(1 << 20));
  }
  T* values = nullptr;
  CHECK(cudaMalloc(&values, n * sizeof(T)));
  CHECK(cudaMemcpy(values, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, 256 << 20));
  for (int aligned_starts = 0; aligned_starts < 2; ++aligned_starts)
    for (std::uint64_t mean : {16u, 256u, 1024u, 4096u, 16384u}) {
      if (aligned_starts && mean != 4096) continue;
      std::vector<int> offsets = make_offsets(n, mean);
      if (aligned_starts)
        for (std::size_t i = 0; i + 1 < offsets.size(); ++i) offsets[i] &= ~(16 / int(sizeof(T)) - 1);
      const std::uint64_t segments = offsets.size() - 1;
      int* d_offsets = nullptr;
      CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int)));
      CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
      std::vector<R*> out(5);
      for (auto& o : out) CHECK(cudaMalloc(&o, segments * sizeof(R)));
      std::size_t cub_bytes = 0;
      cub::DeviceSegmentedReduce::Sum(nullptr, cub_bytes, values, out[0], int(segments), d_offsets, d_offsets + 1);
      void* cub_workspace = nullptr;
      CHECK(cudaMalloc(&cub_workspace, cub_bytes));
      unsigned long long* counter = nullptr;
      CHECK(cudaMalloc(&counter, sizeof(unsigned long long)));
      const csr_bounds bounds{d_offsets};
      const unsigned grid = unsigned(std::min<std::uint64_t>(segments, std::uint64_t(sms) * 256));
      std::size_t no_bytes = 0;
      cudaFuncSetAttribute(block_segment_kernel<R, T, csr_bounds, 8>, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
      cudaFuncSetAttribute(block_segment_kernel<R, T, csr_bounds, 6>, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
      cudaFuncSetAttribute(block_segment_kernel<R, T, csr_bounds, 12>, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
      const std::vector<std::pair<const char*, std::function<void()>>> forms = {
          {"cub", [&] { cub::DeviceSegmentedReduce::Sum(cub_workspace, cub_bytes, values, out[0], int(segments),
                                                        d_offsets, d_offsets + 1); }},
          {"library", [&] { detred::cuda::segment_sum(out[1], no_bytes, values, d_offsets, out[1], segments); }},
          {"block4x8", [&] { block_segment_kernel<R, T, csr_bounds, 8><<<grid, 128>>>(values, out[2], segments, bounds); }},
          {"block4x6", [&] { block_segment_kernel<R, T, csr_bounds, 6><<<grid, 128>>>(values, out[3], segments, bounds); }},
          {"block4x12", [&] { block_segment_kernel<R, T, csr_bounds, 12><<<grid, 128>>>(values, out[4], segments, bounds); }}};
      for (auto& f : forms) f.second();
      CHECK(cudaDeviceSynchronize());
      std::vector<std::vector<R>> results(out.size(), std::vector<R>(segments));
      for (std::size_t k = 0; k < out.size(); ++k)
        CHECK(cudaMemcpy(results[k].data(), out[k], segments * sizeof(R), cudaMemcpyDeviceToHost));
      std::vector<std::vector<float>> times(forms.size());
      for (int r = 0; r < reps; ++r)
        for (std::size_t k = 0; k < forms.size(); ++k) {
          CHECK(cudaMemset(flush, r, 256 << 20));
          times[k].push_back(time_ms(forms[k].second));
        }
      CHECK(cudaGetLastError());
      std::printf("%s mean %5llu%s (%llu segments):", name, (unsigned long long)mean, aligned_starts ? " aligned" : "",
                  (unsigned long long)segments);
      const float t_cub = median(times[0]);
      for (std::size_t k = 0; k < forms.size(); ++k) {
        std::size_t differ = 0;
        if (k >= 2)
          for (std::uint64_t s = 0; s < segments; ++s)
            differ += std::memcmp(&results[k][s], &results[1][s], sizeof(R)) != 0;
        std::printf("  %s %.4f ms (%.3fx)", forms[k].first, median(times[k]), t_cub / median(times[k]));
        if (k >= 2) std::printf(" [%zu differ]", differ);
      }
      std::printf("\n");
      for (auto& o : out) cudaFree(o);
      cudaFree(d_offsets);
      cudaFree(cub_workspace);
      cudaFree(counter);
    }
  cudaFree(values);
  cudaFree(flush);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 25;
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s; ratios are CUB's time over each form's\n", p.name);
  run<float>("f32", std::uint64_t{1} << 26, reps);
  run<double>("f64", std::uint64_t{1} << 25, reps);
}
