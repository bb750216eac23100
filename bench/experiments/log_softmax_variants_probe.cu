// Experiment (docs/PERFORMANCE.md, "log_softmax bf16"): the shared-memory log-sum-exp kernel that shipped before the
// one-step exponential (block_row_logsumexp_kernel, log_softmax bf16 [16384 x 32768]) against variants that keep its
// bits: hardware bf16 rounding in pass 3 where the row's lse is finite, pair widening, and a one-step-scaling
// exponential where the row's range allows (min - max >= -86.5); each variant's output compared with the kernel's bit
// for bit, then timed (median of interleaved calls). The winning variants are now the library's kernel, so this file
// builds against the tree before them, commit 289fb0d, not against the current one:
//   git worktree add /tmp/at-289fb0d 289fb0d && cd /tmp/at-289fb0d && cmake -B build -DDETRED_CUDA=ON ... &&
//   cmake --build build --target detred_cuda &&
//   nvcc -std=c++20 -O3 -arch=sm_90 -fmad=false -I. -Iinclude log_softmax_variants_probe.cu build/src/libdetred_cuda.a
// Log: docs/device-runs/2026-11-27-h100-log-softmax-one-step.txt. Not part of the library; timings only.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>
#include "src/cuda/rows/row_kernels.cuh"
using namespace detred;
using namespace detred::cuda;
using namespace detred::cuda::detail;
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

// exp_float_lite(d) for -86.5 <= d <= 0: the same operations as specified::detail::exp_float_lite_in_range up to e,
// then e 2^k by the exponent field (k >= -125 there, so e 2^k is normal and both of the original's scalings exact).
__device__ __forceinline__ float exp_lite_one_step(float x) {
  constexpr float shifter = 12582912.0f;
  const float shifted = x * 1.44269504088896341f + shifter;
  const float k_real = shifted - shifter;
  const int k = int(detred::bit_cast<std::uint32_t>(shifted) - detred::bit_cast<std::uint32_t>(shifter));
  const float r = (x - k_real * 0.693359375f) - k_real * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = (p * (r * r) + r) + 1.0f;
  return detred::bit_cast<float>(detred::bit_cast<std::uint32_t>(e) + (std::uint32_t(k) << 23));
}

__device__ __forceinline__ void widen_bf16_vector(const uint4& raw, float (&f)[8]) {
  const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

template <bool Conv, bool Exp, bool Widen>
__global__ void __launch_bounds__(1024) probe_kernel(const bfloat16* __restrict__ x, row_shape shape, bfloat16* out) {
  using T = bfloat16;
  constexpr int V = 8, K = block_row_segments;
  constexpr std::uint64_t segment = 32 * V, region = block_row_region<T>;
  constexpr int region_level = tile_shape<T>::lane_level + 5 + 3;
  using Acc = plain_accumulator<float>;
  extern __shared__ uint4 staged[];
  __shared__ float warp_max[32], warp_min[32];
  __shared__ float region_root[block_row_max_regions];
  __shared__ float row_sum;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (std::uint64_t r = blockIdx.x; r < shape.rows; r += gridDim.x) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r), vectors = n / V;
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) copy_16_bytes_async(&staged[v], row + v * V);
    T* staged_elements = reinterpret_cast<T*>(staged);
    for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x) staged_elements[i] = row[i];
    wait_async_copies();
    __syncthreads();
    running_max mine;
    float mn = __int_as_float(0x7f800000);
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
      const uint4 raw = staged[v];
      mine.add_vector<T>(raw);
      if (Exp) {
        __nv_bfloat162 p[4];
        std::memcpy(p, &raw, sizeof(raw));
        const __nv_bfloat162 m = __hmin2(__hmin2(p[0], p[1]), __hmin2(p[2], p[3]));
        mn = fminf(mn, fminf(__low2float(m), __high2float(m)));
      }
    }
    for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x) {
      mine.add(widen<float>(staged_elements[i]));
      mn = fminf(mn, widen<float>(staged_elements[i]));
    }
    float m = mine.max;
    const bool nan = __any_sync(0xffffffffu, mine.nan);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
      mn = fminf(mn, __shfl_xor_sync(0xffffffffu, mn, offset));
    }
    if (lane == 0) warp_max[warp] = nan ? canonical_nan<float>() : m, warp_min[warp] = mn;
    __syncthreads();
    logsumexp_parts<float> parts{minus_infinity<float>(), negative_zero<float>()};
    float row_min = __int_as_float(0x7f800000);
    for (int w = 0; w < warps; ++w) {
      const float v = warp_max[w];
      parts.max = v != v || parts.max != parts.max ? canonical_nan<float>() : fmaxf(parts.max, v);
      row_min = fminf(row_min, warp_min[w]);
    }
    if (is_finite(parts.max)) {
      const shifted_exp_leaf<float> leaf{parts.max};
      const bool fast = Exp && row_min - parts.max >= -86.5f;
      const int regions = int(n / region);
      for (int q = warp; q < regions; q += warps) {
        Acc lane_root[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const std::uint64_t first = std::uint64_t(q) * region + k * segment + std::uint64_t(lane) * V;
          Acc node[V];
          if (fast) {
            float f[8];
            widen_bf16_vector(staged[first / V], f);
#pragma unroll
            for (int i = 0; i < V; ++i) node[i] = Acc::from_value(exp_lite_one_step(f[i] - parts.max));
          } else if (Widen) {
            float f[8];
            widen_bf16_vector(staged[first / V], f);
#pragma unroll
            for (int i = 0; i < V; ++i)
              node[i] = Acc::from_value(specified::exp_float_lite_nonpositive(f[i] - parts.max));
          } else {
            vector_leaves<Acc, T>(staged[first / V], first, leaf, node);
          }
          lane_root[k] = lane_tree<Acc, V>(node);
        }
        const Acc root = warp_rows_root<K>(lane_root);
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
    const float lse = parts.result();
    T* o = out + r * shape.stride;
    if (Conv && is_finite(lse)) {
      for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
        float f[8];
        widen_bf16_vector(staged[v], f);
        __nv_bfloat162 y[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) y[i] = __floats2bfloat162_rn(f[2 * i] - lse, f[2 * i + 1] - lse);
        uint4 packed;
        std::memcpy(&packed, y, sizeof(packed));
        *reinterpret_cast<uint4*>(o + v * V) = packed;
      }
    } else {
      for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
        T e[V], y[V];
        const uint4 raw = staged[v];
        std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = norms::log_softmax_value(e[j], lse);
        uint4 packed;
        std::memcpy(&packed, y, sizeof(packed));
        *reinterpret_cast<uint4*>(o + v * V) = packed;
      }
    }
    for (std::uint64_t i = vectors * V + threadIdx.x; i < n; i += blockDim.x)
      o[i] = norms::log_softmax_value(staged_elements[i], lse);
    __syncthreads();
  }
}

int main(int argc, char** argv) {
  const std::uint64_t rows = 16384, c = 32768, n = rows * c;
  const float scale = argc > 1 ? std::atof(argv[1]) : 4.0f;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  std::vector<bfloat16> h(n);
  for (auto& v : h) v = bfloat16::from_float(nd(rng) * scale);
  // a few special rows: -inf entries, a NaN row, an all -inf row, a wide-range row, +inf
  for (std::uint64_t j = 0; j < c; j += 7) h[1 * c + j] = bfloat16::from_float(-INFINITY);
  h[2 * c + 5] = bfloat16::from_bits(0x7fc1);
  for (std::uint64_t j = 0; j < c; ++j) h[3 * c + j] = bfloat16::from_float(-INFINITY);
  for (std::uint64_t j = 0; j < c; ++j) h[4 * c + j] = bfloat16::from_float(float(j % 200) - 150.0f);
  h[5 * c + 9] = bfloat16::from_float(INFINITY);
  for (std::uint64_t j = 0; j < c; ++j) h[6 * c + j] = bfloat16::from_float((nd(rng) * 1e-38f));
  bfloat16 *x, *ref, *o;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&ref, n * 2));
  CK(cudaMalloc(&o, n * 2));
  CK(cudaMemcpy(x, h.data(), n * 2, cudaMemcpyHostToDevice));
  row_shape shape{};
  shape.rows = rows;
  shape.cols = c;
  shape.stride = c;
  const std::size_t staged = block_row_staged_bytes<bfloat16>(c);
  struct variant {
    const char* name;
    std::function<void(bfloat16*)> run;
  };
  std::vector<variant> vs;
  vs.push_back({"original (log_softmax_forward)", [&](bfloat16* out) {
                  launch_block_row_logsumexp(x, shape, log_softmax_to_elements<bfloat16>{out}, nullptr,
                                             cuda::row_options{});
                }});
  auto add = [&](auto kernel, const char* name) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(block_row_shared_capacity())));
    vs.push_back({name, [=](bfloat16* out) { kernel<<<unsigned(rows), 256, staged>>>(x, shape, out); }});
  };
  add(probe_kernel<false, false, false>, "probe copy of the original");
  add(probe_kernel<true, false, false>, "+ hardware rounding");
  add(probe_kernel<true, false, true>, "+ pair widening");
  add(probe_kernel<true, true, true>, "+ one-step exp");
  add(probe_kernel<false, true, true>, "one-step exp alone");
  vs[0].run(ref);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<bfloat16> a(n), b(n);
  CK(cudaMemcpy(a.data(), ref, n * 2, cudaMemcpyDeviceToHost));
  for (std::size_t k = 1; k < vs.size(); ++k) {
    CK(cudaMemset(o, 0x55, n * 2));
    vs[k].run(o);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(b.data(), o, n * 2, cudaMemcpyDeviceToHost));
    std::uint64_t diff = 0, first = n;
    for (std::uint64_t i = 0; i < n; ++i)
      if (a[i].bits != b[i].bits) {
        if (!diff) first = i;
        ++diff;
      }
    printf("%-34s %s", vs[k].name, diff ? "DIFFERENT BITS" : "same bits");
    if (diff)
      printf(" (%llu, first at row %llu col %llu: %04x vs %04x)", (unsigned long long)diff,
             (unsigned long long)(first / c), (unsigned long long)(first % c), a[first].bits, b[first].bits);
    printf("\n");
  }
  const int reps = 20;
  std::vector<std::vector<float>> t(vs.size());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < vs.size(); ++k) {
      vs[k].run(o);
      cudaEventRecord(e0);
      vs[k].run(o);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t[k].push_back(ms);
    }
  for (std::size_t k = 0; k < vs.size(); ++k) {
    std::sort(t[k].begin(), t[k].end());
    printf("%-34s median %.3f ms (%.2f TB/s)\n", vs[k].name, t[k][reps / 2],
           2.0 * n * 2 / (t[k][reps / 2] * 1e-3) / 1e12);
  }
}
