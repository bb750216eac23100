// detred's single-pass device scan (include/detred/cuda/scan.hpp, scan.cuh): one tile of Threads * Items elements
// per block. Each warp loads its 32 * Items consecutive elements coalesced (element i of a lane's stripe at
// warp start + 32 i + lane, any element-aligned pointer) and transposes them through its own region of padded shared
// memory, so that each thread holds Items consecutive leaves; the tile is scanned by block_fenwick_scan with its
// carry-in from fenwick_lookback, and the outputs go back the same way. Before the scan, a small kernel clears the
// look-back flags; the scan is launched as its programmatic dependent, so that its launch and its tile loads overlap
// the clearing. Order and guarantees: docs/ORDER.md section 3 ("The GPU scan"); speed: docs/PERFORMANCE.md.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/block/block_scan.cuh"
#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/detail/fenwick_lookback.cuh"
#include "detred/cuda/detail/prefetch.cuh"
#include "detred/cuda/detail/scan_config.hpp"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.hpp"
#include "detred/errors.hpp"

namespace detred::cuda::detail {

// Shared-memory index with one pad element per 32: a thread's Items consecutive elements then fall in distinct banks
// across the warp (no bank conflicts for Items = 4, 8, 16, 32 and 4-byte values). padded(32 w + x) = padded(32 w) +
// padded(x): a warp's region of the tile is itself padded the same way.
__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

// A tile's padded buffer: static shared memory up to this size, dynamic shared memory (opted in per launch) up to
// scan_max_shared_bytes.
inline constexpr std::size_t scan_static_shared_bytes = 40960;
inline constexpr std::size_t scan_max_shared_bytes = 96 * 1024;
template <class T>
__host__ __device__ constexpr std::size_t tile_buffer_bytes(int tile) {
  return (std::size_t(tile) + tile / 32) * sizeof(T);
}
template <class T>
__host__ __device__ constexpr bool fits_static_shared(int tile) {
  return tile_buffer_bytes<T>(tile) <= scan_static_shared_bytes;
}

// load(const In&) -> T widens an input; store(const T&) -> Out finishes an output (canonical NaN for sums).
//
// Each warp owns 32 * Items consecutive elements of the tile and transposes them through its own region of shared
// memory (warp-striped loads and stores, coalesced; only __syncwarp), so the block meets at two barriers only, those
// of the block scan. The thread's values are fetched again from shared memory after the look-back: they hold no
// registers while warp 0 waits, which keeps the kernel's register count, and so the tiles in flight per SM, up: the
// thread stores its up-swept values (the Items / 2 it changed) into its own slots and fetches them after the
// look-back (block_fenwick_scan::scan_swept_reloading), so its Items - 1 up-sweep combines are not redone.
//
// Launched as a programmatic dependent of clear_lookback_flags: warp 0 waits for it (griddepcontrol.wait) before the
// look-back, the kernel's first access to the flags. prefetch_tiles > 0: block j asks L2 for the input of tile
// j + prefetch_tiles (speed only).
template <int Threads, int Items, class T, class In, class Out, class Load, class Op, class Store>
__global__ void __launch_bounds__(Threads)
    fenwick_scan_kernel(const In* in, Out* out, std::uint64_t n, fenwick_tile_state<T> state, Load load, Op op,
                        Store store, bool exclusive, T identity, int prefetch_tiles) {
  constexpr int tile = Threads * Items;
  constexpr int span = 32 * Items;  // one warp's share
  using block_scan = block_fenwick_scan<Threads, Items, T>;
  constexpr bool dynamic_buffer = !fits_static_shared<T>(tile);
  __shared__ T static_buffer[dynamic_buffer ? 1 : tile + tile / 32];
  extern __shared__ uint4 scan_dynamic_buffer[];  // tile_buffer_bytes<T>(tile) when dynamic_buffer
  T* const buffer = dynamic_buffer ? reinterpret_cast<T*>(scan_dynamic_buffer) : static_buffer;
  __shared__ typename block_scan::storage scratch;
  const std::uint64_t j = blockIdx.x;
  const std::uint64_t base = j * tile;
  if (prefetch_tiles > 0 && threadIdx.x == 0) {
    // The 16-byte-aligned part of a later tile's input (never outside [in, in + n)).
    const std::uint64_t ahead = (j + std::uint64_t(prefetch_tiles)) * tile;
    if (ahead < n) {
      const std::uint64_t count = n - ahead < std::uint64_t(tile) ? n - ahead : std::uint64_t(tile);
      const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(in + ahead);
      const std::uintptr_t begin = (first + 15) & ~std::uintptr_t{15};
      const std::uintptr_t end = (first + count * sizeof(In)) & ~std::uintptr_t{15};
      if (end > begin) prefetch_l2_bulk(reinterpret_cast<const void*>(begin), unsigned(end - begin));
    }
  }
  const int valid = n - base < std::uint64_t(tile) ? int(n - base) : tile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int first = warp * span;
  const int mine = valid - first;  // the warp's valid elements (<= 0: none; >= span: all)
  T* const region = buffer + padded(first);
  {
    // All loads first, into registers: a generic pointer may alias shared memory, so loads interleaved with the
    // region's stores would be issued one round trip at a time.
    const In* src = in + base + first;
    In loaded[Items];
    if (mine >= span) {
#pragma unroll
      for (int i = 0; i < Items; ++i) loaded[i] = src[i * 32 + lane];
    } else {
#pragma unroll
      for (int i = 0; i < Items; ++i)
        if (i * 32 + lane < mine) loaded[i] = src[i * 32 + lane];
    }
#pragma unroll
    for (int i = 0; i < Items; ++i)
      if (i * 32 + lane < mine) region[padded(i * 32 + lane)] = load(loaded[i]);
  }
  // Padding of a partial tile: a copy of its first input. Only nodes wholly inside [0, valid) reach an output.
  T pad{};
  if (valid < tile) pad = load(in[base]);
  __syncwarp();
  const auto fetch = [&](T(&a)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int x = lane * Items + i;
      a[i] = x < mine ? region[padded(x)] : pad;
    }
  };
  T a[Items];
  fetch(a);
  const bool publish = valid == tile;
  // The up-sweep's results, a[i] for odd i (even i keep their leaves), back into the thread's own slots (pads
  // included: a slot past the valid elements is the thread's alone), fetched again after the look-back.
  const auto stash_swept = [&](const T(&s)[Items]) {
#pragma unroll
    for (int i = 1; i < Items; i += 2) region[padded(lane * Items + i)] = s[i];
  };
  const auto fetch_swept = [&](T(&s)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int x = lane * Items + i;
      s[i] = (i & 1) || x < mine ? region[padded(x)] : pad;
    }
  };
  const auto carry_in = [&](const T& root, T& carry, bool& has, T& end) {
    // Only warp 0 touches the flags: it alone waits for the clearing kernel.
    cudaGridDependencySynchronize();
    fenwick_lookback(j, root, op, state, publish, carry, has, end);
  };
  T carry;
  bool has;
  thread_fenwick_up(a, op);
  stash_swept(a);
  block_scan{}.scan_swept_reloading(a, op, carry_in, scratch, carry, has, fetch_swept);
  // The next thread's carry-in P(thread end): from the next lane, the next warp's carry or the tile's end.
  T next = detail::shuffle_from(carry, (lane + 1) & 31);
  if (lane == 31) next = warp + 1 < Threads / 32 ? scratch.warp_value[warp + 1] : scratch.tile_end;
  // Each lane rewrites only its own slots, which only it has read: no barrier before, __syncwarp after.
  T* const slots = region + padded(lane * Items);  // Items consecutive slots never straddle a pad (Items <= 32)
  if (exclusive) {
    slots[0] = has ? carry : identity;
#pragma unroll
    for (int m = 1; m < Items; ++m) slots[m] = a[m - 1];
  } else {
    // inclusive[e] = P(e + 1): the exclusive prefix of leaf e + 1; P(tile end) from the look-back.
#pragma unroll
    for (int m = 1; m < Items; ++m) slots[m - 1] = a[m - 1];
    slots[Items - 1] = next;
  }
  __syncwarp();
  Out* dst = out + base + first;
  T result[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) result[i] = region[padded(i * 32 + lane)];
#pragma unroll
  for (int i = 0; i < Items; ++i)
    if (i * 32 + lane < mine) dst[i * 32 + lane] = store(result[i]);
}

inline std::uint64_t scan_tiles(std::uint64_t n, std::uint64_t tile) { return (n + tile - 1) / tile; }
inline std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

template <class T>
fenwick_tile_state<T> scan_state(void* workspace, std::uint64_t tiles) {
  auto* bytes = static_cast<unsigned char*>(workspace);
  fenwick_tile_state<T> s;
  s.status = reinterpret_cast<unsigned*>(bytes);
  s.fenwick = reinterpret_cast<T*>(bytes + align16(tiles * 4));
  s.inclusive = reinterpret_cast<T*>(bytes + align16(tiles * 4) + align16(tiles * sizeof(T)));
  s.words = bytes;  // packed form (values of 4 or 8 bytes): 2 words of at most 16 bytes per tile, from the start
  return s;
}

// A tile's padded buffer must fit shared memory (static up to 40 KiB, dynamic beyond), with room for the rest.
template <class T>
constexpr bool fits_shared(int tile) {
  return tile_buffer_bytes<T>(tile) <= scan_max_shared_bytes;
}

// Zeroes `count` 32-bit look-back flag words, and lets the scan that follows start at once: that scan waits in
// cudaGridDependencySynchronize for this grid's completion and memory flush before it reads or writes a flag.
// A template only so that every translation unit may define it.
template <int = 0>
__global__ void clear_lookback_flags(unsigned* words, std::uint64_t count) {
  cudaTriggerProgrammaticLaunchCompletion();
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    words[i] = 0u;
}

// Clears the look-back flags (clear_lookback_flags), then launches the scan kernel as its programmatic dependent (its
// dynamic shared memory opted in where the tile buffer exceeds the static 40 KiB). The flags are zero when any block
// reads them.
template <int Threads, int Items, class T, class In, class Out, class Load, class Op, class Store>
void launch_fenwick_scan(const In* in, Out* out, std::uint64_t n, void* workspace, cudaStream_t stream, Load load,
                         Op op, Store store, bool exclusive, const T& identity, int prefetch_tiles, const char* what) {
  constexpr int tile = Threads * Items;
  const std::uint64_t tiles = scan_tiles(n, std::uint64_t(tile));
  if (tiles > 0x7fffffffull) detred::detail::throw_invalid(what, "n needs more tiles than one grid has blocks");
  const fenwick_tile_state<T> state = scan_state<T>(workspace, tiles);
  const std::size_t flag_bytes = packed_lookback<T> ? tiles * 2 * sizeof(lookback_word<T>) : tiles * 4;
  const std::uint64_t words = flag_bytes / 4;  // flag_bytes is a multiple of 4
  const std::uint64_t blocks = (words + 255) / 256;
  clear_lookback_flags<<<unsigned(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(static_cast<unsigned*>(workspace),
                                                                                    words);
  check(cudaGetLastError(), "cuda scan: launching clear_lookback_flags");
  auto kernel = fenwick_scan_kernel<Threads, Items, T, In, Out, Load, Op, Store>;
  std::size_t dynamic_bytes = 0;
  if constexpr (!fits_static_shared<T>(tile)) {
    dynamic_bytes = tile_buffer_bytes<T>(tile);
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_bytes)),
          "cuda scan: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  }
  launch_dependent(kernel, dim3(unsigned(tiles)), dim3(Threads), dynamic_bytes, stream, "cuda scan: kernel launch", in,
                   out, n, state, load, op, store, exclusive, identity, prefetch_tiles);
}

// Checks the arguments, picks the kernel shape, launches. T: the value type the scan combines. The caller has run
// the workspace query: `workspace` holds scan_workspace_size(n, sizeof(T)) bytes. `what` names the public call in
// errors.
template <class T, class In, class Out, class Load, class Op, class Store>
void run_fenwick_scan(void* workspace, const In* in, Out* out, std::uint64_t n, cudaStream_t stream,
                      const scan_options& requested, Load load, Op op, Store store, bool exclusive, const T& identity,
                      const char* what) {
  static_assert(sizeof(T) % 4 == 0, "the scanned type's size must be a multiple of 4 bytes");
  const scan_tuning tuning = current_tuning().scan;  // per-device defaults and overrides (speed only)
  const scan_options c = choose_scan_config(requested, sizeof(T), tuning, what);
  if (n == 0) return;
  if (in == nullptr) detred::detail::throw_invalid(what, "d_in is null");
  if (out == nullptr) detred::detail::throw_invalid(what, "d_out is null");
  if (reinterpret_cast<std::uintptr_t>(in) % alignof(In))
    detred::detail::throw_invalid(what, "d_in is not aligned to its element type");
  if (reinterpret_cast<std::uintptr_t>(out) % alignof(Out))
    detred::detail::throw_invalid(what, "d_out is not aligned to its element type");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 16)
    detred::detail::throw_invalid(what, "d_workspace is not 16-byte aligned");
#define DETRED_SCAN_SHAPE(THREADS, ITEMS)                                                                      \
  if constexpr (fits_shared<T>(THREADS * ITEMS)) {                                                             \
    if (c.block_threads == THREADS && c.items_per_thread == ITEMS)                                             \
      return launch_fenwick_scan<THREADS, ITEMS, T>(in, out, n, workspace, stream, load, op, store, exclusive, \
                                                    identity, tuning.prefetch_tiles, what);                    \
  }
  DETRED_SCAN_SHAPE(32, 4)
  DETRED_SCAN_SHAPE(32, 8)
  DETRED_SCAN_SHAPE(32, 16)
  DETRED_SCAN_SHAPE(64, 4)
  DETRED_SCAN_SHAPE(64, 8)
  DETRED_SCAN_SHAPE(64, 16)
  DETRED_SCAN_SHAPE(128, 4)
  DETRED_SCAN_SHAPE(128, 8)
  DETRED_SCAN_SHAPE(128, 16)
  DETRED_SCAN_SHAPE(256, 4)
  DETRED_SCAN_SHAPE(256, 8)
  DETRED_SCAN_SHAPE(256, 16)
  DETRED_SCAN_SHAPE(64, 32)
  DETRED_SCAN_SHAPE(128, 32)
  DETRED_SCAN_SHAPE(256, 32)
#undef DETRED_SCAN_SHAPE
  detred::detail::throw_invalid(what, "scan_options: this tile needs more than 96 KiB of shared memory for this type");
}

}  // namespace detred::cuda::detail
