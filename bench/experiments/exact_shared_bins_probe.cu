// Experiment (docs/history/exact-experiments.md, "block-shared bins"): a block-shared
// superaccumulator of 2,080 64-bit exponent bins filled by shared-memory atomicAdd (two per binary64 term: the low 26
// and the high 27 bits of the significand, in the bins of their weights), against per-thread limb rows (three
// read-modify-writes a term) and a plain read, on 1 GiB of uniform and of full-range doubles. ptxas compiles the 64-bit
// shared atomicAdd into a compare-and-swap loop (ATOMS.CAST.SPIN.64 in `cuobjdump -sass`). Not part of the library;
// timings only (median of 12 calls). Build: cmake --build build --target exact_shared_bins_probe; run:
// build/bench/exact_shared_bins_probe
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
__device__ __host__ inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__global__ void gen(uint64_t* x, uint64_t n, int full) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint64_t r = mix(i);
    if (full) {
      uint64_t f = (r >> 52) % 2047;
      x[i] = (r & 0x800fffffffffffffull) | (f << 52);
    } else {
      double d = (double)(r >> 11) * 0x1p-52 - 1.0;
      x[i] = __double_as_longlong(d);
    }
  }
}
__global__ void readk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  uint64_t a = 0;
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += gridDim.x * blockDim.x) {
    ulonglong2 c = v[i];
    a ^= c.x ^ c.y;
  }
  if (a == 42) out[0] = a;
}
template <int B, bool Red>
__global__ void __launch_bounds__(B) binsk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  __shared__ unsigned long long bins[2048 + 32];
  for (int i = threadIdx.x; i < 2080; i += B) bins[i] = 0;
  __syncthreads();
  for (uint64_t i = blockIdx.x * B + threadIdx.x; i < nv; i += uint64_t(gridDim.x) * B) {
    ulonglong2 c = v[i];
    uint64_t t[2] = {c.x, c.y};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      uint64_t b = t[j];
      int f = int(b >> 52) & 0x7ff;
      uint64_t m = (b & 0xfffffffffffffull) | (f ? 1ull << 52 : 0);
      if (f == 0x7ff) m = 0;
      int k = f > 1 ? f : 1;
      uint64_t s = (int64_t)b >> 63;
      uint64_t lo = ((m & 0x3ffffff) ^ s) - s, hi = ((m >> 26) ^ s) - s;
      atomicAdd(&bins[k], lo);
      atomicAdd(&bins[k + 26], hi);
    }
  }
  __syncthreads();
  uint64_t a = 0;
  for (int i = threadIdx.x; i < 2080; i += B) a += bins[i] * i;
  if (a == 42) out[0] = a;
}
template <int B>
__global__ void __launch_bounds__(B, 1) limbsk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  extern __shared__ long long L[];
  long long* limbs = L + threadIdx.x;
  for (int k = 0; k < 67; ++k) limbs[k * B] = 0;
  for (uint64_t i = blockIdx.x * B + threadIdx.x; i < nv; i += uint64_t(gridDim.x) * B) {
    ulonglong2 c = v[i];
    uint64_t t[2] = {c.x, c.y};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      uint64_t b = t[j];
      int f = int(b >> 52) & 0x7ff;
      uint64_t m = (b & 0xfffffffffffffull) | (f ? 1ull << 52 : 0);
      if (f == 0x7ff) m = 0;
      int pos = (f > 1 ? f : 1) + 13;
      int k = pos >> 5, sh = pos & 31;
      unsigned lo = unsigned(m), hi = unsigned(m >> 32);
      unsigned long long d[3] = {(unsigned long long)(lo << sh), __funnelshift_l(lo, hi, sh),
                                 __funnelshift_l(hi, 0u, sh)};
      uint64_t s = (int64_t)b >> 63;
      long long* row = limbs + k * B;
#pragma unroll
      for (int q = 0; q < 3; ++q) row[q * B] += (long long)((d[q] ^ s) - s);
    }
  }
  uint64_t a = 0;
  for (int k = 0; k < 67; ++k) a += limbs[k * B];
  if (a == 42) out[0] = a;
}
template <class F>
float timeit(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < 12; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[6];
}
int main() {
  const uint64_t n = 1ull << 27, nv = n / 2;
  uint64_t* x;
  uint64_t* out;
  cudaMalloc(&x, n * 8);
  cudaMalloc(&out, 8);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(limbsk<256>, cudaFuncAttributeMaxDynamicSharedMemorySize, 67 * 256 * 8);
  for (int full = 0; full < 2; ++full) {
    gen<<<1024, 256>>>(x, n, full);
    cudaDeviceSynchronize();
    const ulonglong2* v = (const ulonglong2*)x;
    double gb = n * 8 / 1e9;
    printf("data %s\n", full ? "full range" : "uniform");
    float r = timeit([&] { readk<<<sms * 8, 256>>>(v, nv, out); });
    printf("  read                      %.3f ms %.0f GB/s\n", r, gb / r * 1e3);
    float l = timeit([&] { limbsk<256><<<sms, 256, 67 * 256 * 8>>>(v, nv, out); });
    printf("  per-thread limbs 256x1/SM %.3f ms %.0f GB/s\n", l, gb / l * 1e3);
    for (int bps : {2, 4, 8}) {
      float t = timeit([&] { binsk<256, false><<<sms * bps, 256>>>(v, nv, out); });
      printf("  block bins 256 x %d/SM     %.3f ms %.0f GB/s\n", bps, t, gb / t * 1e3);
    }
    for (int bps : {4, 8, 16}) {
      float t = timeit([&] { binsk<128, false><<<sms * bps, 128>>>(v, nv, out); });
      printf("  block bins 128 x %d/SM     %.3f ms %.0f GB/s\n", bps, t, gb / t * 1e3);
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
