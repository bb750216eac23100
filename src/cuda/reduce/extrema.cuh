// cuda::min, max, argmin, argmax (include/detred/cuda/extrema.hpp). IEEE 754-2019 minimum/maximum and the
// "lowest index of the extreme, else of the first NaN" rule are order-free: the result is a function of the multiset
// of (value, index) pairs, so any association and any order give the CPU's bits (docs/ORDER.md, "min, max, argmin,
// argmax"). That lets this path skip the canonical tree and run as a streaming kernel, like CUB's:
//
// - Each element's bits become an integer key in a total order that is the contract's order: for minimum
//   -Inf < ... < -0 < +0 < ... < +Inf, every NaN below everything (maximum: above everything); integers are their own
//   key. Comparing keys is then exact, one integer compare, with no NaN or signed-zero tests left.
// - argmin/argmax keep (key, index) and prefer the lower index on equal keys: the lowest index of the extreme; NaNs
//   all share the extreme key, so a NaN anywhere gives the first NaN's index. min/max keep the key alone.
// - The main kernel reads the 16-byte-aligned body as 16-byte vectors, four in flight per thread (grid-stride, so a
//   thread meets its indices in increasing order and a strict compare keeps its lowest one), joins threads, warps and
//   blocks with the same compare and writes one (key, index) per block. A one-block finishing kernel (programmatic
//   dependent launch) joins the block results and the unaligned head and tail elements, and writes the result.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "detred/cuda/detail/generic_reduce_engine.cuh"
#include "detred/cuda/extrema.hpp"

namespace detred::cuda::detail {

// The key of an element and the element of a key. Key: int for 16- and 32-bit inputs, long long for 64-bit ones.
template <class T, bool Min>
struct extremum_keys {
  static constexpr bool floating = floating_input<T>;
  using bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  using key = std::conditional_t<sizeof(T) == 8, long long, int>;
  static constexpr key lowest = std::numeric_limits<key>::min(), highest = std::numeric_limits<key>::max();
  static constexpr key nan_key = Min ? lowest : highest;  // floating inputs: every NaN wins
  static constexpr bits magnitude_mask = bits(bits(~bits(0)) >> 1);
  static constexpr bits infinity_bits = sizeof(T) == 8                    ? bits(0x7ff0000000000000ull)
                                        : sizeof(T) == 4                  ? bits(0x7f800000u)
                                        : std::is_same_v<T, detred::half> ? bits(0x7c00u)
                                                                          : bits(0x7f80u);

  __device__ __forceinline__ static key of(bits b) {
    if constexpr (!floating) {
      return key(std::make_signed_t<bits>(b));
    } else {
      const bits a = b & magnitude_mask;
      const key k = (b >> (8 * sizeof(T) - 1)) ? key(-key(a) - 1) : key(a);
      return a > infinity_bits ? nan_key : k;
    }
  }
  __device__ __forceinline__ static T value(key k) {
    bits b;
    if constexpr (!floating)
      b = bits(k);
    else if (k == nan_key)
      return canonical_nan<T>();
    else
      b = k < 0 ? bits(bits(-(k + 1)) | bits(~magnitude_mask)) : bits(k);
    T out;
    std::memcpy(&out, &b, sizeof(T));
    return out;
  }
  // The empty input's result: +Inf (min) or -Inf (max); for integers the largest or smallest value.
  __device__ __forceinline__ static T empty_value() {
    if constexpr (!floating) {
      return T(Min ? highest : lowest);  // integers are their own keys
    } else {
      const bits b = Min ? infinity_bits : bits(infinity_bits | bits(~magnitude_mask));
      T out;
      std::memcpy(&out, &b, sizeof(T));
      return out;
    }
  }
  __device__ __forceinline__ static bits bits_at(const T* p, std::uint64_t i) {
    bits b;
    std::memcpy(&b, p + i, sizeof(T));
    return b;
  }
};

// A candidate: its key and (argmin/argmax) its index; `none` loses to every element.
template <class Key>
struct extremum_candidate {
  Key key;
  std::uint64_t index;
};

template <class T, bool Min, bool Arg>
struct extremum_rule {
  using keys = extremum_keys<T, Min>;
  using key = typename keys::key;
  using candidate = extremum_candidate<key>;
  static constexpr key worst = Min ? keys::highest : keys::lowest;

  __device__ __forceinline__ static bool beats(key a, key b) { return Min ? a < b : a > b; }
  __device__ __forceinline__ static candidate none() { return {worst, ~std::uint64_t(0)}; }
  // The better of two candidates; on equal keys the lower index (only the key matters for min/max).
  __device__ __forceinline__ static candidate better(const candidate& a, const candidate& b) {
    if constexpr (Arg)
      return beats(b.key, a.key) || (b.key == a.key && b.index < a.index) ? b : a;
    else
      return {beats(b.key, a.key) ? b.key : a.key, 0};
  }
  __device__ __forceinline__ static candidate shuffle(const candidate& c, int mask) {
    candidate out;
    out.key = __shfl_xor_sync(0xffffffffu, c.key, mask);
    if constexpr (Arg) out.index = __shfl_xor_sync(0xffffffffu, c.index, mask);
    return out;
  }
  // The block's best candidate, in thread 0 (all threads must call it).
  __device__ __forceinline__ static candidate block_best(candidate c, candidate* warp_slots) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) c = better(c, shuffle(c, mask));
    const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if ((threadIdx.x & 31) == 0) warp_slots[warp] = c;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int w = 1; w < warps; ++w) c = better(c, warp_slots[w]);
    return c;
  }
};

inline constexpr int extremum_block_threads = 256;
inline constexpr int extremum_loads_in_flight = 4;

template <class T, bool Min, bool Arg>
__global__ void __launch_bounds__(extremum_block_threads)
    extremum_main_kernel(const uint4* __restrict__ body, std::uint64_t vectors, std::uint64_t body_first,
                         extremum_candidate<typename extremum_keys<T, Min>::key>* block_results) {
  using rule = extremum_rule<T, Min, Arg>;
  using keys = typename rule::keys;
  using bits = typename keys::bits;
  using key = typename rule::key;
  constexpr int per_vector = int(16 / sizeof(T));
  __shared__ typename rule::candidate warp_slots[extremum_block_threads / 32];
  cudaTriggerProgrammaticLaunchCompletion();
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t u = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  key best = rule::worst;
  std::uint64_t best_vector = ~std::uint64_t(0);
  int best_lane = 0;
  // One vector: its best element (the first of equal keys), then against the thread's best (strictly better only:
  // the thread's vectors arrive in increasing index order).
  const auto take = [&](const uint4& w, std::uint64_t vector) {
    bits e[per_vector];
    std::memcpy(e, &w, 16);
    key k = keys::of(e[0]);
    int lane = 0;
#pragma unroll
    for (int j = 1; j < per_vector; ++j) {
      const key kj = keys::of(e[j]);
      if constexpr (Arg) {
        if (rule::beats(kj, k)) {
          k = kj;
          lane = j;
        }
      } else {
        k = rule::beats(kj, k) ? kj : k;
      }
    }
    if constexpr (Arg) {
      if (rule::beats(k, best)) {
        best = k;
        best_vector = vector;
        best_lane = lane;
      }
    } else {
      best = rule::beats(k, best) ? k : best;
    }
  };
  constexpr int L = extremum_loads_in_flight;
  for (; u + (L - 1) * stride < vectors; u += L * stride) {
    uint4 w[L];
#pragma unroll
    for (int i = 0; i < L; ++i) w[i] = __ldg(body + u + i * stride);
#pragma unroll
    for (int i = 0; i < L; ++i) take(w[i], u + i * stride);
  }
  for (; u < vectors; u += stride) take(__ldg(body + u), u);
  typename rule::candidate mine{best, best_vector == ~std::uint64_t(0)
                                          ? ~std::uint64_t(0)
                                          : body_first + best_vector * per_vector + std::uint64_t(best_lane)};
  mine = rule::block_best(mine, warp_slots);
  if (threadIdx.x == 0) block_results[blockIdx.x] = mine;
}

template <class T, bool Min, bool Arg>
__global__ void __launch_bounds__(extremum_block_threads)
    extremum_finish_kernel(const T* __restrict__ in, std::uint64_t n, std::uint64_t body_first, std::uint64_t body_end,
                           const extremum_candidate<typename extremum_keys<T, Min>::key>* __restrict__ block_results,
                           unsigned blocks, T* value_out, std::uint64_t* index_out) {
  using rule = extremum_rule<T, Min, Arg>;
  using keys = typename rule::keys;
  __shared__ typename rule::candidate warp_slots[extremum_block_threads / 32];
  cudaGridDependencySynchronize();  // the main kernel's block results are complete and visible from here on
  typename rule::candidate c = rule::none();
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) c = rule::better(c, block_results[b]);
  // The elements outside the vector body: the unaligned head [0, body_first) and the tail [body_end, n).
  const std::uint64_t outside = body_first + (n - body_end);
  for (std::uint64_t o = threadIdx.x; o < outside; o += blockDim.x) {
    const std::uint64_t i = o < body_first ? o : body_end + (o - body_first);
    c = rule::better(c, {keys::of(keys::bits_at(in, i)), i});
  }
  c = rule::block_best(c, warp_slots);
  if (threadIdx.x != 0) return;
  if constexpr (Arg) {
    *index_out = n == 0 ? n : c.index;
  } else {
    *value_out = n == 0 ? keys::empty_value() : keys::value(c.key);
  }
}

// Bytes of workspace: the generic engine's bound for 16-byte nodes, which leaves room for far more block results than
// any grid has (the grid is also capped by the workspace given).
template <class T>
constexpr std::size_t extremum_workspace_bytes(std::uint64_t n) {
  return generic_workspace_bytes<T, extremum_candidate<long long>>(n);
}

template <class T, bool Min, bool Arg>
void launch_extremum(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_value_out,
                     std::uint64_t* d_index_out, std::uint64_t n, cudaStream_t stream, const reduce_options& options,
                     const char* what) {
  using candidate = typename extremum_rule<T, Min, Arg>::candidate;
  static_assert(sizeof(candidate) == sizeof(extremum_candidate<long long>));
  validate_reduce_options(options, what);
  if (workspace_query(d_workspace, workspace_bytes, extremum_workspace_bytes<T>(n), what)) return;
  validate_workspace_alignment(d_workspace, what);
  if (n > 0 && d_in == nullptr) detred::detail::throw_invalid(what, "d_in is null but n > 0");
  const auto address = reinterpret_cast<std::uintptr_t>(d_in);
  if (address % alignof(T) != 0) detred::detail::throw_invalid(what, "d_in is not aligned to its element type");
  if ((Arg ? static_cast<void*>(d_index_out) : static_cast<void*>(d_value_out)) == nullptr)
    detred::detail::throw_invalid(what, "d_out is null");
  // The body: whole 16-byte vectors from the first 16-byte boundary on.
  constexpr std::uint64_t per_vector = 16 / sizeof(T);
  const std::uint64_t head = n == 0 ? 0 : std::min<std::uint64_t>(n, ((16 - address % 16) % 16) / sizeof(T));
  const std::uint64_t vectors = (n - head) / per_vector;
  const std::uint64_t body_end = head + vectors * per_vector;
  auto* block_results = reinterpret_cast<candidate*>(static_cast<unsigned char*>(d_workspace) + generic_header_bytes);
  unsigned blocks = 0;
  if (vectors > 0) {
    int device = 0, sms = 1;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    const int threads = options.block_threads ? options.block_threads : extremum_block_threads;
    // Default: as many blocks as are resident at once (every thread loops grid-stride over an equal share), and at
    // least 4 vectors per thread.
    int per_sm = 1;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, extremum_main_kernel<T, Min, Arg>, threads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    const std::uint64_t resident = std::uint64_t(sms) * std::uint64_t(std::max(per_sm, 1));
    const std::uint64_t useful = (vectors + 4 * threads - 1) / (4 * std::uint64_t(threads));
    std::uint64_t grid = std::min(resident, useful);
    if (options.grid_blocks > 0) grid = std::min<std::uint64_t>(grid, std::uint64_t(options.grid_blocks));
    grid = std::min<std::uint64_t>(grid, (workspace_bytes - generic_header_bytes) / sizeof(candidate));
    blocks = unsigned(std::max<std::uint64_t>(grid, 1));
    extremum_main_kernel<T, Min, Arg><<<blocks, unsigned(threads), 0, stream>>>(
        reinterpret_cast<const uint4*>(d_in + head), vectors, head, block_results);
    check(cudaGetLastError(), "launching extremum_main_kernel");
  }
  launch_finishing_block(extremum_finish_kernel<T, Min, Arg>, extremum_block_threads, stream,
                         "launching extremum_finish_kernel", d_in, n, head, body_end,
                         static_cast<const candidate*>(block_results), blocks, d_value_out, d_index_out);
}

template <class T>
void extremum_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_value_out,
                        std::uint64_t* d_index_out, std::uint64_t n, extremum_kind kind, cudaStream_t stream,
                        const reduce_options& options) {
  switch (kind) {
    case extremum_kind::min:
      return launch_extremum<T, true, false>(d_workspace, workspace_bytes, d_in, d_value_out, d_index_out, n, stream,
                                             options, "cuda::min");
    case extremum_kind::max:
      return launch_extremum<T, false, false>(d_workspace, workspace_bytes, d_in, d_value_out, d_index_out, n, stream,
                                              options, "cuda::max");
    case extremum_kind::argmin:
      return launch_extremum<T, true, true>(d_workspace, workspace_bytes, d_in, d_value_out, d_index_out, n, stream,
                                            options, "cuda::argmin");
    case extremum_kind::argmax:
      return launch_extremum<T, false, true>(d_workspace, workspace_bytes, d_in, d_value_out, d_index_out, n, stream,
                                             options, "cuda::argmax");
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_EXTREMA(T)                                                                      \
  template void detred::cuda::detail::extremum_on_device<T>(void*, std::size_t&, const T*, T*, std::uint64_t*,  \
                                                            std::uint64_t, detred::cuda::detail::extremum_kind, \
                                                            cudaStream_t, const detred::cuda::reduce_options&);
