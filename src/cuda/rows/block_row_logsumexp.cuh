// Log-sum-exp rows staged in shared memory, one row a block: for rows long enough that one warp's three passes over
// its row (the maximum, the sum of exponentials, the outputs) would read it from L2 three times (one warp a row of
// [16384 x 32768] fp32 log_softmax measured 87% of L2 throughput and 0.33x a copy on the H200). Here the row is read
// from memory once, by asynchronous 16-byte copies into shared memory (no registers held across the passes: a version
// that kept the row in registers was capped at 64 registers a thread by its 1024-thread blocks and spilled), and its
// outputs written once. A row of 32768 fp32 takes 128 KiB (one block an SM), of bf16 64 KiB (three).
//
// The bits are warp_row_logsumexp's (row_logsumexp.cuh), so the CPU's: the maximum is exact (any grouping), and the
// sum has the same canonical decomposition. A region is K = 8 full segments (K 32 V elements, V a 16-byte vector's
// elements): a complete aligned subtree at level lane_level + 5 + 3. The block's warps take the row's full regions
// in turn (warp w regions w, w + W, ...) and reduce each from shared memory by warp_rows_root<8> over its segments'
// lane roots (the same nodes as the 8 segment roots joined pairwise: warp_registers_row_root's argument). Warp 0 then
// pushes the region roots in order into a warp counter at the region's level, continues with the tail (less than a
// region, read from memory) by push_segments_and_tail, and folds.
//
// Instructions, not bytes, bound the 16-bit rows, so the kernel spends as few as keep the bits (row_vectors.cuh): pass
// 1 also finds the row's minimum, and where min - max >= exp_float_lite_one_step_min (every row of ordinary logits)
// the exponentials of passes 2 and 3 are exp_float_lite_one_step, exp_float_lite's bits without its clamp, select and
// second scaling; where the maximum is finite no output is NaN, and pass 3 rounds with the hardware's conversions
// instead of T::from_float's integer steps. [16384 x 32768] bf16 log_softmax: 1.243 -> 0.820 ms on the H100.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "detred/rows/gradient_formulas.hpp"
#include "detred/rows/norm_formulas.hpp"
#include "detred/rows/row_accumulators.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"
#include "src/cuda/rows/row_vectors.cuh"

namespace detred::cuda::detail {

// Segments a region: a power of two that warp_rows_root takes (8, 16, 32).
inline constexpr int block_row_segments = 8;

template <class T>
inline constexpr std::uint64_t block_row_region =
    std::uint64_t(32) * tile_shape<T>::vector_elements* block_row_segments;

// Regions a row may have: the region roots' shared array (a region is 4 KiB whatever T, and a block's shared memory
// is at most 227 KiB on sm_90).
inline constexpr int block_row_max_regions = 64;

// Shared memory kept out of the staged row's budget: the kernel's static part (warp maxima, region roots, the row's
// sum and what the compiler adds: 1,424 bytes on sm_90 with CUDA 13) with room to spare.
inline constexpr std::size_t block_row_static_reserve = 8192;

// A 16-byte asynchronous copy from global to shared memory (cp.async, L1 bypassed), and the wait for every copy this
// thread issued.
__device__ __forceinline__ void copy_16_bytes_async(void* shared_destination, const void* global_source) {
  const unsigned destination = unsigned(__cvta_generic_to_shared(shared_destination));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(destination),
               "l"(__cvta_generic_to_global(global_source))
               : "memory");
}
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// The running maximum (fmaxf: NaN operands ignored), minimum and NaN flag of pass 1, fed one 16-byte vector at a time.
// 16-bit types take the vector's pairs first with __hmax2_nan and __hmin2 (exact, a NaN propagates to the maximum;
// either zero may win, which no result bit depends on: row_logsumexp.cuh, warp_row_max), then widen the one pair left:
// a third of the instructions of widening each element. The minimum only decides which exponential pass 2 runs
// (row_range_allows_one_step), never a bit.
struct running_range {
  float max = minus_infinity<float>();
  float min = -minus_infinity<float>();
  bool nan = false;
  __device__ __forceinline__ void add(float v) {
    max = fmaxf(max, v);
    min = fminf(min, v);
    nan |= v != v;
  }
  template <class T>
  __device__ __forceinline__ void add_vector(const uint4& raw) {
    if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, half>) {
      using pair = std::conditional_t<std::is_same_v<T, bfloat16>, __nv_bfloat162, __half2>;
      pair p[4];
      std::memcpy(p, &raw, sizeof(raw));
      const pair hi = __hmax2_nan(__hmax2_nan(p[0], p[1]), __hmax2_nan(p[2], p[3]));
      const pair lo = __hmin2(__hmin2(p[0], p[1]), __hmin2(p[2], p[3]));
      T e[2], f[2];
      std::memcpy(e, &hi, sizeof(hi));
      std::memcpy(f, &lo, sizeof(lo));
      max = fmaxf(max, fmaxf(widen<float>(e[0]), widen<float>(e[1])));
      nan |= widen<float>(e[0]) != widen<float>(e[0]) || widen<float>(e[1]) != widen<float>(e[1]);
      min = fminf(min, fminf(widen<float>(f[0]), widen<float>(f[1])));
    } else {
      constexpr int V = tile_shape<T>::vector_elements;
      T e[V];
      std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
      for (int j = 0; j < V; ++j) add(widen<float>(e[j]));
    }
  }
};

// Outputs of the three callers. store_row runs once a row (thread 0); value gives an output element (elementwise);
// finite_row_value gives it as the float before its rounding to T, in a row whose maximum is finite (then no output
// is NaN, and rounded_vector rounds as value does), one_step saying that row_range_allows_one_step.
struct logsumexp_to_rows {
  float* out;
  static constexpr bool elementwise = false;
  __device__ void store_row(std::uint64_t r, const logsumexp_parts<float>& parts) const { out[r] = parts.result(); }
  template <class T>
  __device__ T value(T, const logsumexp_parts<float>&, float) const {
    return T{};
  }
  __device__ float finite_row_value(float, const logsumexp_parts<float>&, float, bool) const { return 0.0f; }
};

// log_softmax: x - lse (norms::log_softmax_value; with a finite maximum lse is finite and x is not NaN).
template <class T>
struct log_softmax_to_elements {
  T* out;
  static constexpr bool elementwise = true;
  __device__ void store_row(std::uint64_t, const logsumexp_parts<float>&) const {}
  __device__ T value(T x, const logsumexp_parts<float>&, float lse) const { return norms::log_softmax_value(x, lse); }
  __device__ float finite_row_value(float x, const logsumexp_parts<float>&, float lse, bool) const { return x - lse; }
};

// softmax: exp(x - max) / sum (norms::softmax_value; with a finite maximum the quotient is in [0, 1]).
template <class T>
struct softmax_to_elements {
  T* out;
  static constexpr bool elementwise = true;
  __device__ void store_row(std::uint64_t, const logsumexp_parts<float>&) const {}
  __device__ T value(T x, const logsumexp_parts<float>& parts, float) const { return norms::softmax_value(x, parts); }
  __device__ float finite_row_value(float x, const logsumexp_parts<float>& parts, float, bool one_step) const {
    const float d = x - parts.max;
    return (one_step ? specified::exp_float_lite_one_step(d) : specified::exp_float_lite_nonpositive(d)) / parts.sum;
  }
};

// One row a block (grid-stride over rows), blockDim.x a multiple of 32 up to 1024; every row 16-byte aligned and at
// most the dynamic shared memory's elements long (rounded up to a whole vector).
template <class T, class Output>
__global__ void __launch_bounds__(1024)
    block_row_logsumexp_kernel(const T* __restrict__ x, row_shape shape, Output output) {
  constexpr int V = tile_shape<T>::vector_elements, K = block_row_segments;
  constexpr std::uint64_t segment = 32 * V, region = block_row_region<T>;
  constexpr int region_level = tile_shape<T>::lane_level + 5 + 3;
  static_assert(K == 8, "region_level assumes 8 segments a region");
  using Acc = plain_accumulator<float>;
  extern __shared__ uint4 staged[];  // the row: staged[v] its v-th 16-byte vector
  __shared__ float warp_max[32], warp_min[32];
  __shared__ float region_root[block_row_max_regions];
  __shared__ float row_sum;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (std::uint64_t r = blockIdx.x; r < shape.rows; r += gridDim.x) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r), vectors = n / V;
    // The row into shared memory: whole vectors asynchronously, the last partial vector's elements directly.
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) copy_16_bytes_async(&staged[v], row + v * V);
    T* staged_elements = reinterpret_cast<T*>(staged);
    for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x) staged_elements[i] = row[i];
    wait_async_copies();
    __syncthreads();
    // Pass 1: the maximum (fmaxf and a NaN flag, as warp_row_max), and the minimum.
    running_range mine;
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) mine.add_vector<T>(staged[v]);
    for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x)
      mine.add(widen<float>(staged_elements[i]));
    float m = mine.max, lowest = mine.min;
    const bool nan = __any_sync(0xffffffffu, mine.nan);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
      lowest = fminf(lowest, __shfl_xor_sync(0xffffffffu, lowest, offset));
    }
    if (lane == 0) warp_max[warp] = nan ? canonical_nan<float>() : m, warp_min[warp] = lowest;
    __syncthreads();
    logsumexp_parts<float> parts{minus_infinity<float>(), negative_zero<float>()};
    float row_min = -minus_infinity<float>();
    for (int w = 0; w < warps; ++w) {
      const float v = warp_max[w];
      parts.max = v != v || parts.max != parts.max ? canonical_nan<float>() : fmaxf(parts.max, v);
      row_min = fminf(row_min, warp_min[w]);
    }
    const bool one_step = is_finite(parts.max) && row_range_allows_one_step(row_min, parts.max);
    // Pass 2: the sum of exp(x - max): the full regions from shared memory (shifted_exp_leaf's leaves, by the
    // one-step exponential where the row's range allows), then the tail.
    if (is_finite(parts.max)) {
      const shifted_exp_leaf<float> leaf{parts.max};
      const int regions = int(n / region);
      const auto region_root_of = [&](int q, const auto& exp_leaf) {
        Acc lane_root[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const std::uint64_t first = std::uint64_t(q) * region + k * segment + std::uint64_t(lane) * V;
          float f[V];
          widened_vector<T>(staged[first / V], f);
          Acc node[V];
#pragma unroll
          for (int i = 0; i < V; ++i) node[i] = exp_leaf(f[i]);
          lane_root[k] = lane_tree<Acc, V>(node);
        }
        return warp_rows_root<K>(lane_root);
      };
      for (int q = warp; q < regions; q += warps) {
        const Acc root = one_step ? region_root_of(q, one_step_exp_leaf{parts.max})
                                  : region_root_of(q, nonpositive_exp_leaf{parts.max});
        if (lane == 0) region_root[q] = root.sum;
      }
      __syncthreads();
      if (warp == 0) {
        warp_counter<Acc> counter;
        for (int q = 0; q < regions; ++q) counter.push(Acc::from_value(region_root[q]), region_level);
        push_segments_and_tail<Acc, T, true>(row, std::uint64_t(regions) * region, n, leaf, counter);
        const float sum = counter.fold().result();
        if (lane == 0) row_sum = sum;
      }
      __syncthreads();
      parts.sum = row_sum;
    }
    if (threadIdx.x == 0) output.store_row(r, parts);
    // Pass 3: the outputs, from shared memory.
    if constexpr (Output::elementwise) {
      const float lse = parts.result();
      T* o = output.out + r * shape.stride;
      if (is_finite(parts.max)) {
        // No output is NaN: each is finite_row_value rounded by the hardware, value's bits.
        for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
          float f[V], y[V];
          widened_vector<T>(staged[v], f);
#pragma unroll
          for (int j = 0; j < V; ++j) y[j] = output.finite_row_value(f[j], parts, lse, one_step);
          *reinterpret_cast<uint4*>(o + v * V) = rounded_vector<T>(y);
        }
      } else {
        for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
          T e[V], y[V];
          const uint4 raw = staged[v];
          std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
          for (int j = 0; j < V; ++j) y[j] = output.value(e[j], parts, lse);
          uint4 packed;
          std::memcpy(&packed, y, sizeof(packed));
          *reinterpret_cast<uint4*>(o + v * V) = packed;
        }
      }
      for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x)
        o[i] = output.value(staged_elements[i], parts, lse);
    }
    __syncthreads();  // the staged row, warp_max, region_root and row_sum are the next row's
  }
}

// The dynamic shared memory a row of `cols` elements takes (whole 16-byte vectors).
template <class T>
std::size_t block_row_staged_bytes(std::uint64_t cols) {
  return std::size_t((cols * sizeof(T) + 15) / 16 * 16);
}

// The dynamic shared memory a block may have on the current device (the opt-in limit less the kernel's static part),
// queried once per device.
inline std::size_t block_row_shared_capacity() {
  static std::array<std::atomic<std::size_t>, 64> known{};  // 0: not asked yet
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < int(known.size())) {
    const std::size_t cached = known[std::size_t(device)].load(std::memory_order_relaxed);
    if (cached != 0) return cached;
  }
  int optin = 0;
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  const std::size_t capacity =
      std::size_t(optin) > block_row_static_reserve ? std::size_t(optin) - block_row_static_reserve : 1;
  if (device < int(known.size())) known[std::size_t(device)].store(capacity, std::memory_order_relaxed);
  return capacity;
}

// Whether block_row_logsumexp_kernel takes a launch: every row 16-byte aligned, at least two regions long at its
// longest (shape.cols; per-row lengths with cols = 0 are not taken), and the longest row fits the block's shared
// memory (fp32 rows up to about 57,000 elements, 16-bit rows up to about 114,000 on sm_90). Longer rows take the
// one-warp-a-row kernels.
template <class T>
bool block_rows_apply(const void* a, const void* b, const row_shape& shape) {
  const auto aligned = [&](const void* p) {
    return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (shape.stride * sizeof(T)) % 16 == 0);
  };
  return aligned(a) && aligned(b) && shape.cols >= 2 * block_row_region<T> &&
         shape.cols / block_row_region<T> <= std::uint64_t(block_row_max_regions) &&
         block_row_staged_bytes<T>(shape.cols) <= block_row_shared_capacity();
}

// Threads a block: rows.block_row_threads of the tuning (detail/tuning.hpp) where set, else 256 where three blocks'
// rows fit an SM's shared memory (their phases overlap: [16384 x 32768] bf16 log_softmax 1.41 ms against 1.50 at 512
// threads and 1.76 at 128 on the H100) and 512 where fewer do (fp32 rows of 32768: 2.19 ms, 1024 threads 2.20, 256
// threads 2.77).
template <class T>
int block_rows_threads(const row_shape& shape) {
  const int tuned = current_tuning().rows.block_row_threads;
  if (tuned != 0) return tuned;
  return block_row_staged_bytes<T>(shape.cols) <= 72 * 1024 ? 256 : 512;
}

// One block a row, or options.grid_blocks blocks when that is fewer (speed only).
template <class T, class Output>
void launch_block_row_logsumexp(const T* x, const row_shape& shape, Output output, cudaStream_t stream,
                                const row_options& options) {
  std::uint64_t blocks = shape.rows < 0x7fffffffu ? shape.rows : 0x7fffffffu;
  if (options.grid_blocks != 0 && std::uint64_t(options.grid_blocks) < blocks)
    blocks = std::uint64_t(options.grid_blocks);
  const unsigned grid = unsigned(blocks);
  const std::size_t staged = block_row_staged_bytes<T>(shape.cols);
  const auto kernel = block_row_logsumexp_kernel<T, Output>;
  // Shared memory past 48 KiB is opted into per kernel and device: once, for the device's whole capacity (a per-call
  // cudaFuncSetAttribute costs host microseconds that small batches feel).
  static std::array<std::atomic<bool>, 64> opted_in{};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (device >= int(opted_in.size()) || !opted_in[std::size_t(device)].load(std::memory_order_acquire)) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(block_row_shared_capacity())),
          "cudaFuncSetAttribute");
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared),
          "cudaFuncSetAttribute");
    if (device < int(opted_in.size())) opted_in[std::size_t(device)].store(true, std::memory_order_release);
  }
  kernel<<<grid, block_rows_threads<T>(shape), staged, stream>>>(x, shape, output);
}

}  // namespace detred::cuda::detail
