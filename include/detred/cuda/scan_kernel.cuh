// detred's single-pass device scan (include/detred/cuda/scan.hpp, scan.cuh): one tile of Threads * Items elements
// per block. Loads are coalesced (element i of a thread's stripe at tile + i * Threads + thread, any element-aligned
// pointer) and transposed through padded shared memory, so that each thread holds Items consecutive leaves; the tile
// is scanned by block_fenwick_scan with its carry-in from fenwick_lookback, and the outputs go back the same way.
// Order and guarantees: docs/ORDER.md section 3 ("The GPU scan").
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/cuda/blocks/block_scan.cuh"
#include "detred/cuda/blocks/fenwick_lookback.cuh"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.hpp"
#include "detred/errors.hpp"

namespace detred::cuda::detail {

// Shared-memory index with one pad element per 32: a thread's Items consecutive elements then fall in distinct banks
// across the warp (no bank conflicts for Items = 4, 8, 16 and 4-byte values).
__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

// load(const In&) -> T widens an input; store(const T&) -> Out finishes an output (canonical NaN for sums).
template <int Threads, int Items, class T, class In, class Out, class Load, class Op, class Store>
__global__ void __launch_bounds__(Threads)
    fenwick_scan_kernel(const In* in, Out* out, std::uint64_t n, fenwick_tile_state<T> state, Load load, Op op,
                        Store store, bool exclusive, T identity) {
  constexpr int tile = Threads * Items;
  using block_scan = block_fenwick_scan<Threads, Items, T>;
  __shared__ T buffer[tile + tile / 32];
  __shared__ typename block_scan::storage scratch;
  const std::uint64_t j = blockIdx.x;
  const std::uint64_t base = j * tile;
  const int valid = n - base < std::uint64_t(tile) ? int(n - base) : tile;
  const int thread = threadIdx.x;
  const In* tile_in = in + base;
  {
    // All loads first, into registers: a generic pointer may alias shared memory, so loads interleaved with the
    // buffer's stores would be issued one round trip at a time.
    In loaded[Items];
    if (valid == tile) {
#pragma unroll
      for (int i = 0; i < Items; ++i) loaded[i] = tile_in[i * Threads + thread];
    } else {
#pragma unroll
      for (int i = 0; i < Items; ++i)
        if (i * Threads + thread < valid) loaded[i] = tile_in[i * Threads + thread];
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int e = i * Threads + thread;
      if (e < valid) buffer[padded(e)] = load(loaded[i]);
    }
  }
  __syncthreads();
  T a[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int e = thread * Items + i;
    // Padding of a partial tile: a copy of the first element. Only nodes wholly inside [0, valid) reach an output.
    a[i] = buffer[padded(e < valid ? e : 0)];
  }
  const bool publish = valid == tile;
  const auto carry_in = [&](const T& root, T& carry, bool& has, T& end) {
    fenwick_lookback(j, root, op, state, publish, carry, has, end);
  };
  T carry;
  bool has;
  block_scan{}.scan(a, op, carry_in, scratch, carry, has);  // (its __syncthreads order the buffer's reuse)
  if (exclusive) {
    buffer[padded(thread * Items)] = has ? carry : identity;
#pragma unroll
    for (int m = 1; m < Items; ++m) buffer[padded(thread * Items + m)] = a[m - 1];
  } else {
    // inclusive[e] = P(e + 1): the exclusive prefix of leaf e + 1, and P(tile end) from the look-back.
    if (thread > 0) buffer[padded(thread * Items - 1)] = carry;
#pragma unroll
    for (int m = 1; m < Items; ++m) buffer[padded(thread * Items + m - 1)] = a[m - 1];
    if (thread == 0) buffer[padded(tile - 1)] = scratch.tile_end;  // (unused by a partial tile)
  }
  __syncthreads();
  Out* tile_out = out + base;
  T result[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) result[i] = buffer[padded(i * Threads + thread)];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int e = i * Threads + thread;
    if (e < valid) tile_out[e] = store(result[i]);
  }
}

inline std::uint64_t scan_tiles(std::uint64_t n, std::uint64_t tile) { return (n + tile - 1) / tile; }
inline std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

// The look-back's pause between polls, in ns (speed only; benchmarks sweep it). Chosen on the H100, see
// docs/PERFORMANCE.md.
inline int lookback_backoff_ns = 0;

template <class T>
fenwick_tile_state<T> scan_state(void* workspace, std::uint64_t tiles) {
  auto* bytes = static_cast<unsigned char*>(workspace);
  fenwick_tile_state<T> s;
  s.status = reinterpret_cast<unsigned*>(bytes);
  s.fenwick = reinterpret_cast<T*>(bytes + align16(tiles * 4));
  s.inclusive = reinterpret_cast<T*>(bytes + align16(tiles * 4) + align16(tiles * sizeof(T)));
  s.backoff_ns = lookback_backoff_ns;
  s.words = bytes;  // packed form (values of 4 or 8 bytes): 2 words of at most 16 bytes per tile, from the start
  return s;
}

// A tile's padded buffer must fit the 48 KiB of static shared memory, with room for the rest.
template <class T>
constexpr bool fits_shared(int tile) {
  return (std::size_t(tile) + tile / 32) * sizeof(T) <= 40960;
}

inline scan_launch_config choose_scan_config(scan_launch_config c, std::size_t value_bytes) {
  const auto bad = [](int v, int a, int b, int d, int e) { return v != 0 && v != a && v != b && v != d && v != e; };
  if (bad(c.block_threads, 32, 64, 128, 256))
    detred::detail::throw_invalid("cuda scan", "scan_launch_config.block_threads must be 0, 32, 64, 128 or 256");
  if (bad(c.items_per_thread, 4, 8, 16, 4))
    detred::detail::throw_invalid("cuda scan", "scan_launch_config.items_per_thread must be 0, 4, 8 or 16");
  if (c.block_threads == 0) c.block_threads = 256;
  if (c.items_per_thread == 0) c.items_per_thread = value_bytes <= 4 ? 16 : value_bytes <= 16 ? 8 : 4;
  return c;
}

template <int Threads, int Items, class T, class In, class Out, class Load, class Op, class Store>
void launch_fenwick_scan(const In* in, Out* out, std::uint64_t n, void* workspace, cudaStream_t stream, Load load,
                         Op op, Store store, bool exclusive, const T& identity) {
  const std::uint64_t tiles = scan_tiles(n, std::uint64_t(Threads) * Items);
  if (tiles > 0x7fffffffull) detred::detail::throw_invalid("cuda scan", "too many tiles for one grid");
  const fenwick_tile_state<T> state = scan_state<T>(workspace, tiles);
  const std::size_t flag_bytes = packed_lookback<T> ? tiles * 2 * sizeof(lookback_word<T>) : tiles * 4;
  check(cudaMemsetAsync(workspace, 0, flag_bytes, stream), "cuda scan: cudaMemsetAsync");
  fenwick_scan_kernel<Threads, Items, T>
      <<<unsigned(tiles), Threads, 0, stream>>>(in, out, n, state, load, op, store, exclusive, identity);
  check(cudaGetLastError(), "cuda scan: kernel launch");
}

// Checks the arguments, picks the kernel shape, launches. T: the value type the scan combines.
template <class T, class In, class Out, class Load, class Op, class Store>
void run_fenwick_scan(const In* in, Out* out, std::uint64_t n, void* workspace, std::size_t workspace_bytes,
                      cudaStream_t stream, const scan_launch_config& requested, Load load, Op op, Store store,
                      bool exclusive, const T& identity) {
  static_assert(sizeof(T) % 4 == 0, "the scanned type's size must be a multiple of 4 bytes");
  const scan_launch_config c = choose_scan_config(requested, sizeof(T));
  if (n == 0) return;
  if (in == nullptr || out == nullptr) detred::detail::throw_invalid("cuda scan", "null input or output");
  if (reinterpret_cast<std::uintptr_t>(in) % alignof(In) || reinterpret_cast<std::uintptr_t>(out) % alignof(Out))
    detred::detail::throw_invalid("cuda scan", "input or output not aligned to its element type");
  if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 16)
    detred::detail::throw_invalid("cuda scan", "d_workspace must be a 16-byte aligned device pointer");
  if (workspace_bytes < scan_workspace_bytes(n, sizeof(T)))
    detred::detail::throw_invalid("cuda scan", "workspace too small (scan_workspace_bytes)");
#define DETRED_SCAN_SHAPE(THREADS, ITEMS)                                                                      \
  if constexpr (fits_shared<T>(THREADS * ITEMS)) {                                                             \
    if (c.block_threads == THREADS && c.items_per_thread == ITEMS)                                             \
      return launch_fenwick_scan<THREADS, ITEMS, T>(in, out, n, workspace, stream, load, op, store, exclusive, \
                                                    identity);                                                 \
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
#undef DETRED_SCAN_SHAPE
  detred::detail::throw_invalid("cuda scan", "this tile shape needs too much shared memory for this value type");
}

}  // namespace detred::cuda::detail
