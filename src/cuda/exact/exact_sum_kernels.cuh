// The GPU exact sum (docs/EXACT.md "On the GPU"). Kernel 1: each block takes a contiguous range of at most 2^30
// terms; each thread adds its terms into four 64-bit registers that cover a window of limbs (chosen from its first
// term), and a term outside the window goes straight into its warp's shared-memory limbs (64-bit shared atomics:
// integer addition, so their order never shows); at the end the registers, then the warps' limbs, are added into one
// state per block, normalised, written to the workspace. Kernel 2 (one block): limb k of the total is the integer sum
// of limb k over the blocks; one thread rounds it. Every step is an exact integer addition: the bits cannot depend on
// the grid, the schedule or the order of the atomics.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/workspace.hpp"
#include "src/cuda/exact/exact_sum.hpp"

namespace detred::cuda::detail {

inline constexpr int exact_block_threads = 256;
inline constexpr int exact_warps = exact_block_threads / 32;

template <class T>
using exact_state = exact_accumulator_for<T>;

template <class T>
inline constexpr int exact_digits = std::same_as<T, double> ? 3 : 2;

// A thread's register window: limbs base .. base+3.
template <class T>
struct exact_window {
  long long r[4] = {0, 0, 0, 0};
  int base = -1;
};

template <class T>
__device__ __forceinline__ void exact_add_term(T x, exact_window<T>& w, unsigned long long (*warp_limbs)[72], int warp,
                                               unsigned& flags) {
  using S = exact_state<T>;
  const auto d = S::decode(x);
  flags |= d.flags;
  if (d.limb < 0) return;
  long long v[3] = {(long long)(d.low & 0xffffffffu), (long long)(d.low >> 32), (long long)d.high};
  if (d.negative) {
    v[0] = -v[0];
    v[1] = -v[1];
    v[2] = -v[2];
  }
  if (w.base < 0) w.base = d.limb > 0 ? d.limb - 1 : 0;
  const int j = d.limb - w.base;
  constexpr int D = exact_digits<T>;
  if (j >= 0 && j <= 4 - D) {
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      long long add = 0;
#pragma unroll
      for (int i = 0; i < D; ++i) add += (t - j == i) ? v[i] : 0;
      w.r[t] += add;
    }
  } else {
#pragma unroll
    for (int i = 0; i < D; ++i)
      if (v[i]) atomicAdd(&warp_limbs[warp][d.limb + i], (unsigned long long)v[i]);
  }
}

template <class T>
__global__ void __launch_bounds__(exact_block_threads)
    exact_block_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t per_block, long long* block_limbs,
                       unsigned* block_flags) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  __shared__ unsigned long long warp_limbs[exact_warps][72];
  __shared__ unsigned shared_flags;
  const int tid = threadIdx.x, warp = tid / 32;
  for (int i = tid; i < exact_warps * 72; i += exact_block_threads) (&warp_limbs[0][0])[i] = 0;
  if (tid == 0) shared_flags = 0;
  __syncthreads();

  const std::uint64_t begin = std::uint64_t(blockIdx.x) * per_block;
  const std::uint64_t end = begin + per_block < n ? begin + per_block : n;
  exact_window<T> w;
  unsigned flags = 0;
  std::uint64_t i = begin + tid;
  constexpr int U = 4;
  for (; i + (U - 1) * exact_block_threads < end; i += U * exact_block_threads) {
    T t[U];
#pragma unroll
    for (int u = 0; u < U; ++u) t[u] = x[i + u * exact_block_threads];
#pragma unroll
    for (int u = 0; u < U; ++u) exact_add_term<T>(t[u], w, warp_limbs, warp, flags);
  }
  for (; i < end; i += exact_block_threads) exact_add_term<T>(x[i], w, warp_limbs, warp, flags);
  if (w.base >= 0) {
#pragma unroll
    for (int t = 0; t < 4; ++t)
      if (w.r[t] && w.base + t < L) atomicAdd(&warp_limbs[warp][w.base + t], (unsigned long long)w.r[t]);
  }
  flags = __reduce_or_sync(0xffffffffu, flags);
  if ((tid & 31) == 0 && flags) atomicOr(&shared_flags, flags);
  __syncthreads();
  // Limb k of the block: the warps' limbs added (|sum| <= 2^62: at most 2^30 terms a block, digits below 2^32).
  __shared__ long long total[72];
  if (tid < L) {
    long long s = 0;
    for (int wi = 0; wi < exact_warps; ++wi) s += (long long)warp_limbs[wi][tid];
    total[tid] = s;
  }
  __syncthreads();
  if (tid == 0) {
    // Normalise (carry propagation) so that the finishing kernel can add up to 2^31 block states.
    for (int k = 0; k + 1 < L; ++k) {
      const long long carry = total[k] >> 32;
      total[k] -= (long long)((unsigned long long)carry << 32);
      total[k + 1] += carry;
    }
    block_flags[blockIdx.x] = shared_flags;
  }
  __syncthreads();
  if (tid < L) block_limbs[std::uint64_t(blockIdx.x) * L + tid] = total[tid];
}

// Limb k of the total is the integer sum of limb k over the blocks; the flags are ORed. Every thread of the (one)
// block calls it; total and flags are shared memory, valid after it returns.
template <class T>
__device__ void exact_total_over_blocks(const long long* block_limbs, const unsigned* block_flags, int blocks,
                                        long long* total, unsigned& flags) {
  constexpr int L = exact_state<T>::limb_count;
  const int tid = threadIdx.x;
  if (tid == 0) flags = 0;
  __syncthreads();
  if (tid < L) {
    long long s = 0;
    for (int b = 0; b < blocks; ++b) s += block_limbs[std::uint64_t(b) * L + tid];
    total[tid] = s;
  }
  unsigned f = 0;
  for (int b = tid; b < blocks; b += blockDim.x) f |= block_flags[b];
  f = __reduce_or_sync(0xffffffffu, f);
  if ((tid & 31) == 0 && f) atomicOr(&flags, f);
  __syncthreads();
}

// The total's limbs and flags as a state (n terms, `blocks` merges pending).
template <class T>
__device__ exact_state<T> exact_state_of(const long long* total, unsigned flags, int blocks, std::uint64_t n) {
  exact_state<T> s;
  for (int k = 0; k < exact_state<T>::limb_count; ++k) s.set_raw(k, total[k]);
  s.set_count(n, flags, std::uint32_t(blocks));
  return s;
}

template <class A, class T>
__global__ void __launch_bounds__(128) exact_finish_kernel(const long long* block_limbs, const unsigned* block_flags,
                                                           int blocks, std::uint64_t n, A* out) {
  __shared__ long long total[72];
  __shared__ unsigned flags;
  exact_total_over_blocks<T>(block_limbs, block_flags, blocks, total, flags);
  if (threadIdx.x == 0) *out = exact_state_of<T>(total, flags, blocks, n).template rounded<A>();
}

// The state instead of its rounding (for distributed sums, docs/DISTRIBUTED.md): out[0 .. L) the normalised limbs,
// out[L] the count, out[L + 1] the flags.
template <class T>
__global__ void __launch_bounds__(128) exact_state_kernel(const long long* block_limbs, const unsigned* block_flags,
                                                          int blocks, std::uint64_t n, long long* out) {
  using S = exact_state<T>;
  __shared__ long long total[72];
  __shared__ unsigned flags;
  exact_total_over_blocks<T>(block_limbs, block_flags, blocks, total, flags);
  if (threadIdx.x == 0) {
    S s = exact_state_of<T>(total, flags, blocks, n);
    s.normalize();
    for (int k = 0; k < S::limb_count; ++k) out[k] = s.limb(k);
    out[S::limb_count] = (long long)n;
    out[S::limb_count + 1] = (long long)flags;
  }
}

inline int exact_multiprocessors() {
  int device = 0;
  check(cudaGetDevice(&device), "cuda::sum (exact): cudaGetDevice");
  static thread_local int cached_device = -1, cached_sms = 0;
  if (device != cached_device) {
    check(cudaDeviceGetAttribute(&cached_sms, cudaDevAttrMultiProcessorCount, device),
          "cuda::sum (exact): cudaDeviceGetAttribute");
    cached_device = device;
  }
  return cached_sms;
}

// Kernel 1 over d_in[0..n): one normalised state per block in the workspace. Returns the block count.
template <class T>
int launch_exact_blocks(const T* d_in, std::uint64_t n, void* d_workspace, cudaStream_t stream, long long*& block_limbs,
                        unsigned*& block_flags) {
  if (n > exact_max_n)
    detred::detail::throw_invalid("cuda::sum", "sum_method::exact takes at most 2^42 terms per call (" +
                                                   std::to_string(n) + " given); merge exact_accumulator states");
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  // As many blocks as the device keeps resident (8 of 256 threads per SM), no more than the workspace bound, each
  // over at most 2^30 terms. The block count changes the speed only.
  std::uint64_t blocks = std::uint64_t(exact_multiprocessors()) * 8;
  if (blocks > exact_block_bound(n)) blocks = exact_block_bound(n);
  const std::uint64_t at_least = (n + (std::uint64_t{1} << 30) - 1) >> 30;
  if (blocks < at_least) blocks = at_least;
  std::uint64_t per_block = (n + blocks - 1) / blocks;
  per_block = (per_block + 1023) / 1024 * 1024;  // whole unrolled strides
  if (per_block == 0) per_block = 1024;
  blocks = n == 0 ? 1 : (n + per_block - 1) / per_block;
  unsigned char* base = static_cast<unsigned char*>(d_workspace) + workspace_header_bytes;
  block_limbs = reinterpret_cast<long long*>(base);
  block_flags = reinterpret_cast<unsigned*>(base + blocks * L * sizeof(long long));
  exact_block_kernel<T>
      <<<unsigned(blocks), exact_block_threads, 0, stream>>>(d_in, n, per_block, block_limbs, block_flags);
  check(cudaGetLastError(), "cuda::sum (exact): block kernel launch");
  return int(blocks);
}

template <class A, class T>
void launch_exact_sum(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  const int blocks = launch_exact_blocks(d_in, n, d_workspace, stream, block_limbs, block_flags);
  exact_finish_kernel<A, T><<<1, 128, 0, stream>>>(block_limbs, block_flags, blocks, n, d_out);
  check(cudaGetLastError(), "cuda::sum (exact): finishing kernel launch");
}

// The exact state of d_in[0..n) (exact_state_kernel's layout, L + 2 integers) at d_state, asynchronously on `stream`.
// The workspace is cuda::sum's (sum_workspace_bytes(n)).
template <class T>
void launch_exact_state(const T* d_in, std::uint64_t n, long long* d_state, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  const int blocks = launch_exact_blocks(d_in, n, d_workspace, stream, block_limbs, block_flags);
  exact_state_kernel<T><<<1, 128, 0, stream>>>(block_limbs, block_flags, blocks, n, d_state);
  check(cudaGetLastError(), "cuda::sum (exact): state kernel launch");
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_EXACT_SUM(A, T) \
  template void detred::cuda::detail::launch_exact_sum<A, T>(const T*, std::uint64_t, A*, void*, cudaStream_t);
#define DETRED_INSTANTIATE_EXACT_STATE(T) \
  template void detred::cuda::detail::launch_exact_state<T>(const T*, std::uint64_t, long long*, void*, cudaStream_t);
