// The device-wide canonical sum (include/detred/cuda/sum.hpp): two kernels and their launcher, instantiated once per
// type pair by canonical_sum_<type>.cu.
//
// Work decomposition of x[0..n), with tile = tile_shape<T>::elements and chunk = tiles_per_chunk * tile:
//   - full chunks [0, C): one warp each (grid-stride), root -> workspace roots[0 .. C);
//   - tail tiles: the t < tiles_per_chunk whole tiles after them, one warp each, roots -> roots[C .. C + t);
//   - the remainder: the r < tile elements after those.
// The finishing block folds, in index order, the roots of the aligned blocks that the binary digits of C, t and r
// stand for (digit_fold): exactly the canonical order of docs/ORDER.md, whatever the grid, block size or chunk size
// (these only decide which nodes are computed where).
//
// Launches (launch_canonical_sum): small inputs run one launch of one-warp blocks ("spread"), by programmatic
// dependent launch; large inputs one launch at 256 threads a block (the last block to arrive finishes: the single
// pass) or, at any other block size, the chunk kernel and then a one-block finishing kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/cuda/block/block_reduce.cuh"
#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/errors.hpp"
#include "src/cuda/common/arrivals.cuh"
#include "src/cuda/common/launch_policy.hpp"
#include "src/cuda/common/workspace.hpp"
#include "src/cuda/sum/wide_chunk_root.cuh"

namespace detred::cuda::detail {

inline constexpr int finish_threads = 512;
inline constexpr int fused_threads = 256;  // block size of the one-block path and of the single pass
// Block size of the single pass for small inputs ("spread", launch_policy.hpp): one warp per block, so that the few
// chunks of a small input land on as many SMs as there are chunks (a block of 8 warps puts 8 of them on one SM).
inline constexpr int spread_threads = 32;

// What remains after the chunk kernel: where the roots are and how the input ends.
template <class Acc, class T>
struct finish_plan {
  const Acc* roots;
  std::uint64_t full_chunks;
  int chunk_level;
  int tail_tiles;
  const T* remainder;
  int remainder_count;
};

// Joins everything in the canonical order with the whole block and writes the result from thread 0 (canonical NaN;
// -0.0 when n == 0). The aligned blocks of chunk roots (the binary digits of full_chunks), then of tail-tile roots,
// then of the remainder's elements, largest first, each a complete tree, are left-folded (digit_fold, order.hpp: the
// binary counter of these pushes in one accumulator).
template <int BlockThreads, class Acc, class T>
__device__ void finish_in_block(const finish_plan<Acc, T>& plan, typename Acc::value_type* out, Acc* warp_roots) {
  using A = typename Acc::value_type;
  constexpr int tile_level = tile_shape<T>::tile_level;
  digit_fold<Acc, merge_accumulators> counter;  // thread 0's
  std::uint64_t first = 0;
  for (int k = 63; k >= 0; --k) {
    if (!((plan.full_chunks >> k) & 1u)) continue;
    const auto load = [&](std::uint64_t i) { return plan.roots[first + i]; };
    const Acc root = block_subtree_root<BlockThreads, Acc>(load, k, warp_roots);
    if (threadIdx.x == 0) counter.push(root, plan.chunk_level + k);
    first += std::uint64_t{1} << k;
  }
  for (int k = 4; k >= 0; --k) {
    if (!((plan.tail_tiles >> k) & 1)) continue;
    const auto load = [&](std::uint64_t i) { return plan.roots[first + i]; };
    const Acc root = block_subtree_root<BlockThreads, Acc>(load, k, warp_roots);
    if (threadIdx.x == 0) counter.push(root, tile_level + k);
    first += std::uint64_t{1} << k;
  }
  int offset = 0;
  for (int k = tile_level - 1; k >= 0; --k) {
    if (!((plan.remainder_count >> k) & 1)) continue;
    const auto load = [&](std::uint64_t i) { return Acc::from_value(widen<A>(plan.remainder[offset + i])); };
    const Acc root = block_subtree_root<BlockThreads, Acc>(load, k, warp_roots);
    if (threadIdx.x == 0) counter.push(root, k);
    offset += 1 << k;
  }
  if (threadIdx.x == 0) *out = canonicalize_nan(counter.empty() ? Acc{}.result() : counter.fold().result());
}

// Whether the chunk kernel reads its full chunks with warp_chunk_root_wide (wide_chunk_root.cuh): Neumaier sums of
// aligned doubles, large inputs (the small-input kernel reads a tile or two a warp and keeps warp_chunk_root).
template <class Acc, class T, bool Aligned, int Fused>
inline constexpr bool wide_chunk_roots =
    std::is_same_v<Acc, neumaier_accumulator<double>>&& std::is_same_v<T, double>&& Aligned&& Fused != spread_threads;

// Roots of the full chunks (items [0, full_chunks)) and of the tail tiles (items [full_chunks, items)). With
// `out` non-null and `arrivals` null the grid is one block of Fused threads, which then also finishes (the
// small-input path). With both non-null (blocks of Fused threads) the single pass: the last block to arrive
// finishes, in the same fixed order as finish_kernel (only which block runs the fold varies). Fused: fused_threads, or
// spread_threads for small inputs; with out null any block size. Depth: passes of loads in flight a warp
// (warp_chunk_root; sum_tuning::pass_depth), speed only.
template <class Acc, class T, bool Aligned, int Fused = fused_threads, int Depth = 1>
__global__ void __launch_bounds__(max_block_threads)
    chunk_roots_kernel(const T* __restrict__ x, std::uint64_t items, int tiles_per_chunk, finish_plan<Acc, T> plan,
                       typename Acc::value_type* out, unsigned long long* arrivals) {
  constexpr std::uint64_t tile = tile_shape<T>::elements;
  const std::uint64_t chunk = tile * std::uint64_t(tiles_per_chunk);
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  Acc* roots = const_cast<Acc*>(plan.roots);
  // The small-input kernel (one-warp blocks) is launched by programmatic dependent launch and may then be scheduled
  // while the stream's previous kernel still runs: it reads and writes nothing before that kernel has completed and
  // its memory is visible. The large-input kernel is launched plainly and does not wait here: the wait cost it about
  // 1% at 1 GiB fp32 on the H100.
  if constexpr (Fused == spread_threads) cudaGridDependencySynchronize();
  // Lets the finishing kernel (launched with programmatic stream serialization) be scheduled while this grid runs; it
  // still waits for this grid's completion and memory flush in cudaGridDependencySynchronize before reading roots.
  cudaTriggerProgrammaticLaunchCompletion();
  for (std::uint64_t item = warp; item < items; item += warps) {
    Acc root;
    if (item < plan.full_chunks) {
      if constexpr (wide_chunk_roots<Acc, T, Aligned, Fused>) {
        root = warp_chunk_root_wide<Acc>(x + item * chunk, tiles_per_chunk);
      } else {
        root = warp_chunk_root<Acc, T, Aligned, Depth>(x + item * chunk, tiles_per_chunk);
      }
    } else {
      root = warp_tile_root<Acc, T, Aligned>(x + plan.full_chunks * chunk + (item - plan.full_chunks) * tile);
    }
    if ((threadIdx.x & 31) == 0) roots[item] = root;
  }
  if (out != nullptr && arrivals == nullptr) {
    __shared__ Acc warp_roots[Fused / 32];
    __syncthreads();  // the block's own root stores are visible to the block after the barrier
    finish_in_block<Fused>(plan, out, warp_roots);
  } else if (out != nullptr) {
    __shared__ bool last;
    if ((threadIdx.x & 31) == 0) __threadfence();  // release: the warp's root store is visible before the arrival
    __syncthreads();
    if (threadIdx.x == 0) last = arrive_last(arrivals, gridDim.x);
    __syncthreads();
    if (last) {
      if (threadIdx.x == 0) *arrivals = clean_tag << arrival_count_bits;  // every block has arrived: rest state
      __threadfence();  // acquire: every other block's roots, released before its arrival, are visible from here
      __shared__ Acc warp_roots[Fused / 32];
      finish_in_block<Fused>(plan, out, warp_roots);
    }
  }
}

template <class Acc, class T>
__global__ void __launch_bounds__(finish_threads)
    finish_kernel(finish_plan<Acc, T> plan, typename Acc::value_type* out) {
  cudaGridDependencySynchronize();  // the chunk kernel's roots are complete and visible from here on
  __shared__ Acc warp_roots[finish_threads / 32];
  finish_in_block<finish_threads>(plan, out, warp_roots);
}

// Per-device facts for one kernel and block size, queried once and cached: the queries cost microseconds of host
// time, which a small sum would otherwise pay on every call. The last few lookups of this thread are kept in a
// thread-local cache in front of the shared one, so the steady state takes no mutex.
template <class Kernel>
device_facts facts_shared(Kernel kernel, int block_threads) {
  struct entry {
    Kernel kernel;
    int device, block_threads;
    device_facts facts;
  };
  static std::mutex mutex;
  static std::vector<entry> cache;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const std::lock_guard<std::mutex> lock(mutex);
  for (const entry& e : cache)
    if (e.kernel == kernel && e.device == device && e.block_threads == block_threads) return e.facts;
  device_facts f;
  check(cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute(MultiProcessorCount)");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.resident_blocks_per_multiprocessor, kernel, block_threads, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (f.resident_blocks_per_multiprocessor < 1) f.resident_blocks_per_multiprocessor = 1;
  cache.push_back({kernel, device, block_threads, f});
  return f;
}

template <class Kernel>
device_facts facts_for(Kernel kernel, int block_threads) {
  struct entry {
    Kernel kernel = nullptr;
    int device = -1, block_threads = 0;
    device_facts facts;
  };
  thread_local entry recent[4];  // a call looks up two (the main and the spread kernel)
  thread_local int next = 0;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  for (const entry& e : recent)
    if (e.kernel == kernel && e.device == device && e.block_threads == block_threads) return e.facts;
  entry& e = recent[next];
  next = (next + 1) % 4;
  e = {kernel, device, block_threads, facts_shared(kernel, block_threads)};
  return e.facts;
}

// Whether the large-input chunk kernel has a two-passes-in-flight instantiation (sum_tuning::pass_depth = 2), for
// aligned inputs: where two passes of 16 rows and the pass's row values fit the registers without spilling, plain fp64
// sums and Neumaier sums of floats in float (254 registers; H200, 1 GiB: 0.950-0.957 -> 0.961-0.964x CUB).
// Neumaier fp64 would spill (255 registers and 184 bytes of local memory: 0.84x CUB). Elsewhere pass_depth is ignored
// (speed only).
template <class Acc, class T>
inline constexpr bool two_passes_possible = std::is_same_v<T, typename Acc::value_type>&& rows_per_pass<Acc> == 16 &&
                                            (std::is_same_v<Acc, plain_accumulator<typename Acc::value_type>> ||
                                             std::is_same_v<Acc, neumaier_accumulator<float>>);

// The chunk kernel for this input alignment, finishing block size and tuning. Two passes in flight only for the
// large-input kernel: small inputs read a tile or two a warp (8.97 against 8.82 us a call at fp64 2^20 on the H200).
template <class Acc, class T, int Fused>
auto chunk_kernel_for(bool aligned, const sum_tuning& tuning) {
  if constexpr (two_passes_possible<Acc, T> && Fused != spread_threads) {
    if (aligned && tuning.pass_depth == 2) return chunk_roots_kernel<Acc, T, true, Fused, 2>;
  }
  return aligned ? chunk_roots_kernel<Acc, T, true, Fused> : chunk_roots_kernel<Acc, T, false, Fused>;
}

template <class Acc, class T>
void launch_canonical_sum(const T* d_in, std::uint64_t n, typename Acc::value_type* d_out, void* d_workspace,
                          cudaStream_t stream, const sum_options& requested) {
  constexpr std::uint64_t tile = tile_shape<T>::elements;
  const bool aligned = reinterpret_cast<std::uintptr_t>(d_in) % 16 == 0;
  const sum_tuning tuning = current_tuning().sum;  // the device class's defaults and overrides (detail/tuning.hpp)
  auto kernel = chunk_kernel_for<Acc, T, fused_threads>(aligned, tuning);
  auto spread_kernel = chunk_kernel_for<Acc, T, spread_threads>(aligned, tuning);
  const device_facts facts = facts_for(kernel, chosen_block_threads(requested, tuning));
  sum_options c = choose_launch_shape(requested, n, tile, facts, tuning);
  if (spread_small_input(requested, c, n, tile, facts))
    c = choose_launch_shape(with_block_threads(requested, spread_threads), n, tile,
                            facts_for(spread_kernel, spread_threads), tuning);
  // The single pass and the one-block path finish inside the chunk kernel, whose block size is then fixed at compile
  // time: fused_threads, or spread_threads (the spread kernel).
  const bool spread = c.block_threads == spread_threads;
  const bool fused = c.block_threads == fused_threads || spread;
  auto chunk_kernel = spread ? spread_kernel : kernel;

  const std::uint64_t chunk = tile * std::uint64_t(c.tiles_per_chunk);
  const std::uint64_t full_chunks = n / chunk;
  const std::uint64_t rest = n - full_chunks * chunk;
  const int tail_tiles = int(rest / tile);
  const int remainder_count = int(rest - std::uint64_t(tail_tiles) * tile);
  const std::uint64_t items = full_chunks + std::uint64_t(tail_tiles);
  int chunk_level = 0;
  while ((std::uint64_t{1} << chunk_level) < chunk) ++chunk_level;

  const finish_plan<Acc, T> plan{workspace_roots<Acc>(d_workspace),
                                 full_chunks,
                                 chunk_level,
                                 tail_tiles,
                                 d_in + (full_chunks * chunk + std::uint64_t(tail_tiles) * tile),
                                 remainder_count};
  const std::uint64_t warps_per_block = std::uint64_t(c.block_threads / 32);
  // The chunk kernel's launch: plain, or for the small-input (spread) kernel by programmatic dependent launch (that
  // kernel waits for the previous kernel in cudaGridDependencySynchronize before it touches memory, so the bits and
  // the ordering are the same either way).
  const auto launch_chunks = [&](unsigned grid, typename Acc::value_type* out, unsigned long long* arrivals,
                                 const char* what) {
    if (spread) {
      launch_dependent(chunk_kernel, dim3(grid), dim3(unsigned(c.block_threads)), 0, stream, what, d_in, items,
                       c.tiles_per_chunk, plan, out, arrivals);
    } else {
      chunk_kernel<<<grid, unsigned(c.block_threads), 0, stream>>>(d_in, items, c.tiles_per_chunk, plan, out, arrivals);
      check(cudaGetLastError(), what);
    }
  };
  // Small inputs (every item fits one block's warps twice over) take one launch: the block finishes too.
  if (fused && items <= 2 * warps_per_block) {
    launch_chunks(1, d_out, nullptr, "cuda::sum: launching chunk_roots_kernel (one block)");
    return;
  }
  if (items > 0) {
    const std::uint64_t useful_blocks = (items + warps_per_block - 1) / warps_per_block;
    const unsigned grid = unsigned(useful_blocks < std::uint64_t(c.grid_blocks) ? useful_blocks : c.grid_blocks);
    // The single pass (blocks of fused_threads or spread_threads): the last block to finish folds the roots.
    if (fused && grid < (1u << arrival_count_bits) - 1) {
      launch_chunks(grid, d_out, workspace_arrivals(d_workspace),
                    "cuda::sum: launching chunk_roots_kernel (single pass)");
      return;
    }
    launch_chunks(grid, nullptr, nullptr, "cuda::sum: launching chunk_roots_kernel");
  }
  // Programmatic dependent launch (Hopper): the finishing kernel's launch overlaps the chunk kernel's tail.
  launch_finishing_block(finish_kernel<Acc, T>, finish_threads, stream, "cuda::sum: launching finish_kernel", plan,
                         d_out);
}

}  // namespace detred::cuda::detail
