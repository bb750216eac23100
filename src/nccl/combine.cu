// The all-reduce's combine kernels (combine.hpp). sum_method::tree: the canonical order over the P ranks' values
// (docs/ORDER.md: complete trees over the blocks of P's binary digits, left-folded), written out at compile time for
// P <= 8 (src/distributed/rank_order.hpp: straight-line code, 16-byte vector loads, one per rank) and by the binary
// counter for larger P. sum_method::exact: one exact_accumulator<float> per element (12 limbs, local memory; the
// exact all-reduce has no speed bar). The grid and the vector width never change a bit: each element is reduced alone.
// Device arithmetic is plain IEEE addition (the library builds with --fmad=false and no fast-math).
#include <cuda_runtime.h>

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "detred/order.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/types/half.hpp"
#include "src/distributed/rank_order.hpp"
#include "src/nccl/combine.hpp"

namespace detred::nccl::detail {
namespace {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(bfloat16 x) { return x.to_float(); }
__device__ __forceinline__ float to_float(half x) { return x.to_float(); }
template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return canonicalize_nan(x);
}
template <>
__device__ __forceinline__ bfloat16 from_float<bfloat16>(float x) {
  return canonicalize_nan(bfloat16::from_float(x));
}
template <>
__device__ __forceinline__ half from_float<half>(float x) {
  return canonicalize_nan(half::from_float(x));
}

struct add_floats {
  __host__ __device__ void operator()(float& left, const float& right) const { left = left + right; }
};

template <class T>
__device__ __forceinline__ const T* source(const T* own, const T* staged, std::uint64_t stride, int r, int me) {
  return r == me ? own : staged + std::uint64_t(r) * stride;
}

// One element, any P: the canonical order by the binary counter, or exact.
template <class T, bool Exact>
__device__ T combine_element(const T* own, const T* staged, std::uint64_t stride, int ranks, int me, std::uint64_t e) {
  if constexpr (Exact) {
    exact_accumulator<float> acc;
    for (int r = 0; r < ranks; ++r) acc.add(source(own, staged, stride, r, me)[e]);
    return acc.template rounded<T>();
  } else {
    binary_counter<float, add_floats> counter;
    for (int r = 0; r < ranks; ++r) counter.push(to_float(source(own, staged, stride, r, me)[e]));
    return from_float<T>(counter.fold());
  }
}

template <class T, bool Exact>
__global__ void combine_any_ranks(const T* own, const T* staged, std::uint64_t stride, int ranks, int me, T* out,
                                  std::uint64_t count) {
  for (std::uint64_t e = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < count;
       e += std::uint64_t(gridDim.x) * blockDim.x)
    out[e] = combine_element<T, Exact>(own, staged, stride, ranks, me, e);
}

// The canonical order, P known at compile time: each thread loads one 16-byte vector from each rank and reduces its
// lanes. Requires 16-byte aligned own, staged, out and stride * sizeof(T); the last count % V elements go element-wise.
template <class T, int P>
__global__ void combine_vectors(const T* own, const T* staged, std::uint64_t stride, int me, T* out,
                                std::uint64_t count) {
  constexpr int V = 16 / sizeof(T);
  const std::uint64_t vectors = count / V;
  const std::uint64_t step = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < vectors; i += step) {
    uint4 v[P];
#pragma unroll
    for (int r = 0; r < P; ++r) v[r] = reinterpret_cast<const uint4*>(source(own, staged, stride, r, me))[i];
    alignas(16) T result[V];
#pragma unroll
    for (int lane = 0; lane < V; ++lane) {
      const auto load = [&](int r) { return to_float(reinterpret_cast<const T*>(&v[r])[lane]); };
      result[lane] = from_float<T>(distributed::rank_order_sum<P>(load));
    }
    reinterpret_cast<uint4*>(out)[i] = *reinterpret_cast<const uint4*>(result);
  }
  for (std::uint64_t e = vectors * V + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < count; e += step) {
    const auto load = [&](int r) { return to_float(source(own, staged, stride, r, me)[e]); };
    out[e] = from_float<T>(distributed::rank_order_sum<P>(load));
  }
}

// combine_vectors for P = ranks (1 <= ranks <= 8), chosen by recursion over P.
template <class T, int P = 1>
void launch_vectors(int ranks, const T* own, const T* staged, std::uint64_t stride, int me, T* out, std::uint64_t count,
                    unsigned grid, cudaStream_t stream) {
  if constexpr (P < 8) {
    if (ranks != P) return launch_vectors<T, P + 1>(ranks, own, staged, stride, me, out, count, grid, stream);
  }
  combine_vectors<T, P><<<grid, 256, 0, stream>>>(own, staged, stride, me, out, count);
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

__global__ void reduce_rows_kernel(const float* in, std::uint64_t stride, int rows, float* out, std::uint64_t n) {
  for (std::uint64_t e = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < n;
       e += std::uint64_t(gridDim.x) * blockDim.x) {
    binary_counter<float, add_floats> counter;
    for (int k = 0; k < rows; ++k) counter.push(in[std::uint64_t(k) * stride + e]);
    out[e] = counter.fold();
  }
}

}  // namespace

void launch_reduce_rows(const float* in, std::uint64_t stride, int rows, float* out, std::uint64_t n,
                        cudaStream_t stream) {
  if (n == 0) return;
  const unsigned grid = unsigned(n / 256 + 1 < 1056 ? n / 256 + 1 : 1056);
  reduce_rows_kernel<<<grid, 256, 0, stream>>>(in, stride, rows, out, n);
  cuda::check(cudaGetLastError(), "detred::nccl: reduce_rows kernel launch");
}

template <class T>
void launch_combine(const T* own, const T* staged, std::uint64_t stride, int ranks, int me, T* out, std::uint64_t count,
                    bool exact, cudaStream_t stream) {
  if (count == 0) return;
  const std::uint64_t threads_needed = (count + 3) / 4;
  // At most 528 blocks of 256 threads: half the H100/H200 thread slots, so that the NCCL kernels of the next chunk
  // find room beside a combine (speed only: each element is reduced alone).
  const unsigned grid = unsigned(threads_needed / 256 + 1 < 528 ? threads_needed / 256 + 1 : 528);
  const bool vectors = aligned16(own) && aligned16(staged) && aligned16(out) && (stride * sizeof(T)) % 16 == 0;
  if (exact) {
    combine_any_ranks<T, true><<<grid, 256, 0, stream>>>(own, staged, stride, ranks, me, out, count);
  } else if (vectors && ranks <= 8) {
    launch_vectors(ranks, own, staged, stride, me, out, count, grid, stream);
  } else {
    combine_any_ranks<T, false><<<grid, 256, 0, stream>>>(own, staged, stride, ranks, me, out, count);
  }
  cuda::check(cudaGetLastError(), "detred::nccl: combine kernel launch");
}

template void launch_combine<float>(const float*, const float*, std::uint64_t, int, int, float*, std::uint64_t, bool,
                                    cudaStream_t);
template void launch_combine<bfloat16>(const bfloat16*, const bfloat16*, std::uint64_t, int, int, bfloat16*,
                                       std::uint64_t, bool, cudaStream_t);
template void launch_combine<half>(const half*, const half*, std::uint64_t, int, int, half*, std::uint64_t, bool,
                                   cudaStream_t);

}  // namespace detred::nccl::detail
