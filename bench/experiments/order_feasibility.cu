// Experiment, not product code: can a GPU run the canonical order (docs/ORDER.md, v1) at CUB's speed?
// A minimal fp32/fp64 kernel in the canonical order against cub::DeviceReduce::Sum on the same 1 GiB input, timed
// with CUDA events (median of 30 after warm-up), and its result compared bit for bit with detred's CPU tree sum.
// The production kernels (tuning, any n, any alignment, accumulators) are src/cuda/sum/.
//
// Kernel shape: a warp owns aligned ranges of 16 "warp tiles"; a warp tile is 32 rows x (32 lanes x one 16-byte
// vector) = 2^12 floats or 2^11 doubles, a complete subtree. Each lane reduces its vector in-thread (the bottom
// levels), a transpose-reduction across lanes gives all 32 row sums with 31 shuffles (the next 5 levels), 5 xor
// shuffles give the tile root (5 more levels), and the 16 tile roots go through a register tree. Partial roots (one
// per warp range, each a complete subtree) are folded on the host by the binary counter.
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "detred/accumulators/pairwise.hpp"
#include "detred/reduce.hpp"

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

template <class T>
struct vec;
template <>
struct vec<float> {
  using type = float4;
  static constexpr int width = 4;
  __device__ static float reduce(float4 a) { return __fadd_rn(__fadd_rn(a.x, a.y), __fadd_rn(a.z, a.w)); }
};
template <>
struct vec<double> {
  using type = double2;
  static constexpr int width = 2;
  __device__ static double reduce(double2 a) { return __dadd_rn(a.x, a.y); }
};

// Value selects written as bit operations, so that the compiler cannot turn them into a select of register-array
// addresses (which would move the array to local memory).
__device__ inline float pick(bool first, float a, float b) {
  const int mask = -int(first);
  return __int_as_float((__float_as_int(a) & mask) | (__float_as_int(b) & ~mask));
}
__device__ inline double pick(bool first, double a, double b) {
  const long long mask = -(long long)(first);
  return __longlong_as_double((__double_as_longlong(a) & mask) | (__double_as_longlong(b) & ~mask));
}

__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }

constexpr int kTilesPerRange = 16;

// One step of the transpose-reduction over 32 row values: lanes l and l ^ 2^S exchange half of their rows and add,
// the lower lane's operand on the left. Before the step a lane holds 32 >> S row values; after it, half as many.
template <int S, class T>
__device__ __forceinline__ void transpose_step(T (&v)[32], int lane) {
  constexpr int k = 32 >> S;
  const bool upper = (lane >> S) & 1;
#pragma unroll
  for (int j = 0; j < k / 2; ++j) {
    const T lo = v[j], hi = v[j + k / 2];
    const T send = pick(upper, lo, hi);
    const T keep = pick(upper, hi, lo);
    const T recv = __shfl_xor_sync(0xffffffffu, send, 1 << S);
    v[j] = add(pick(upper, recv, keep), pick(upper, keep, recv));
  }
}

template <class T>
__global__ void __launch_bounds__(256)
    canonical_ranges(const T* __restrict__ x, T* __restrict__ range_root, long long ranges) {
  using V = typename vec<T>::type;
  constexpr int W = vec<T>::width;
  constexpr long long tile = 32LL * 32 * W;
  const int lane = threadIdx.x & 31;
  const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  const long long warps = (gridDim.x * (long long)blockDim.x) >> 5;
  for (long long r = warp; r < ranges; r += warps) {
    T s0, s1, s2, s3, result;  // pending roots of 1, 2, 4, 8 tiles; the range's root
#pragma unroll
    for (int t = 0; t < kTilesPerRange; ++t) {
      const V* base = reinterpret_cast<const V*>(x + (r * kTilesPerRange + t) * tile) + lane;
      T v[32];
#pragma unroll
      for (int row = 0; row < 32; ++row) v[row] = vec<T>::reduce(__ldg(base + row * 32));
      // Transpose-reduction: step s pairs lanes l and l ^ (1 << s); a lane keeps half of its rows.
      transpose_step<0>(v, lane);
      transpose_step<1>(v, lane);
      transpose_step<2>(v, lane);
      transpose_step<3>(v, lane);
      transpose_step<4>(v, lane);
      // Lane l now holds the row bitreverse5(l); sibling rows differ in lane bit 4, then 3, ...
      T root = v[0];
#pragma unroll
      for (int m = 16; m >= 1; m /= 2) {
        const T other = __shfl_xor_sync(0xffffffffu, root, m);
        root = (lane & m) ? add(other, root) : add(root, other);
      }
      // Binary counter over the 16 tiles, unrolled: t is a compile-time constant, so every branch folds away and
      // the four pending subtree roots stay in registers.
      if (!(t & 1)) {
        s0 = root;
      } else {
        T v1 = add(s0, root);
        if (!(t & 2)) {
          s1 = v1;
        } else {
          T v2 = add(s1, v1);
          if (!(t & 4)) {
            s2 = v2;
          } else {
            T v3 = add(s2, v2);
            if (!(t & 8))
              s3 = v3;
            else
              result = add(s3, v3);
          }
        }
      }
    }
    if (lane == 0) range_root[r] = result;
  }
}

template <class T>
void run(const char* name) {
  const long long n = (1LL << 30) / sizeof(T);
  constexpr long long tile = 32LL * 32 * vec<T>::width;
  const long long ranges = n / (tile * kTilesPerRange);
  std::vector<T> host(n);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<T> dist(-1, 1);
  for (auto& e : host) e = dist(rng);
  T *dx, *droots, *dsum;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&droots, ranges * sizeof(T)));
  CHECK(cudaMalloc(&dsum, sizeof(T)));
  CHECK(cudaMemcpy(dx, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, dx, dsum, n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  auto time = [&](auto&& launch) {
    for (int i = 0; i < 5; ++i) launch();
    std::vector<float> ms;
    for (int i = 0; i < 30; ++i) {
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float t;
      CHECK(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const float cub_ms = time([&] { cub::DeviceReduce::Sum(temp, temp_bytes, dx, dsum, n); });
  for (int blocks_per_sm : {2, 4, 8}) {
    const int grid = std::min<long long>(sms * blocks_per_sm, (ranges + 7) / 8);
    const float ms = time([&] { canonical_ranges<T><<<grid, 256>>>(dx, droots, ranges); });
    CHECK(cudaGetLastError());
    std::vector<T> roots(ranges);
    CHECK(cudaMemcpy(roots.data(), droots, ranges * sizeof(T), cudaMemcpyDeviceToHost));
    detred::pairwise_accumulator<detred::plain_accumulator<T>> fold;
    int range_level = 0;
    while ((1LL << range_level) < tile * kTilesPerRange) ++range_level;
    for (T v : roots) fold.add_subtree(detred::plain_accumulator<T>{v}, range_level);
    const T gpu = fold.result();
    const T cpu = detred::sum(host, detred::sum_method::tree);
    std::printf("%s n=2^%d grid=%d: canonical %.3f ms = %.0f GB/s; cub %.3f ms = %.0f GB/s; ratio %.3f; bits %s\n",
                name, __builtin_ctzll(n), grid, ms, n * sizeof(T) / ms / 1e6, cub_ms, n * sizeof(T) / cub_ms / 1e6,
                cub_ms / ms, detred::bits_of(gpu) == detred::bits_of(cpu) ? "EQUAL to CPU tree" : "DIFFER");
  }
  cudaFree(dx);
  cudaFree(droots);
  cudaFree(dsum);
  cudaFree(temp);
}

int main() {
  run<float>("fp32");
  run<double>("fp64");
}
