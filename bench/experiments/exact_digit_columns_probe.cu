// Experiment (docs/EXACT.md "Digit columns", docs/PERFORMANCE.md "Exact sum: H200"): the exact sum's binary64 digit
// adds alone (exact_binary64_digit_add's instructions, five red.shared.add.u32 a term) over 1 GiB of full-range and of
// uniform doubles, interleaved with CUB's sum, in launch shapes that differ in who owns the digit rows and how the
// loads are held: "B/C" = B threads a block adding into C columns of 134 digit rows (B / C threads share a column;
// C = B: each thread its own, as the extracted levels' digit mode), fed from registers (each vector reloaded once
// added, as the library's loop) or from per-warp shared-memory stages filled by bulk copies (cp.async.bulk and an
// mbarrier a stage); also the 384/128 shape with more shared memory reserved than it uses (the L1 cache it leaves).
// Each variant's rows are checked against the register form of the same partition ("check"). Not part of the library;
// timings only (median of 15 calls). Build: cmake --build build --target exact_digit_columns_probe. The digit add and
// the normalisation are the library's (runs 1, 2 and 10 of docs/device-runs/2026-11-28-h200-exact-digit-columns.txt
// used a copy of them; run 16 this form).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cub/device/device_reduce.cuh>
#include <cuda/ptx>
#include <vector>

#include "src/cuda/exact/exact_binary64_digits.cuh"
__device__ __host__ inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__global__ void gen(uint64_t* x, uint64_t n) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint64_t r = mix(i);
    uint64_t f = (r >> 52) % 2047;
    x[i] = (r & 0x800fffffffffffffull) | (f << 52);
  }
}
constexpr int ROWS = detred::cuda::detail::exact_binary64_digits::rows;  // 134
__global__ void gen_uniform(double* x, uint64_t n) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = double(mix(i) >> 11) * 0x1p-53;
}
// The library's digit add (exact_binary64_digit_add, src/cuda/exact/exact_binary64_digits.cuh), Stride = B: the
// rows at the 32-bit shared-memory address `base`.
template <int B>
__device__ __forceinline__ void digit_add(unsigned base, unsigned long long b, int& highest, unsigned& others) {
  detred::cuda::detail::exact_binary64_digit_add<B>(detred::cuda::detail::exact_digit_rows{nullptr, base}, b, highest,
                                                    others);
}
// digit_add's value into the same rows with the shift and the digit split by integer multiplies (the IMAD pipe) instead
// of funnel shifts and masks (the ALU pipe): 31% fewer ALU instructions, 13% more in all (2026-11-28 run 10: slower).
template <int B>
__device__ __forceinline__ void digit_add_mul(unsigned base, unsigned long long b, int& highest, unsigned& others) {
  const unsigned hi = unsigned(b >> 32), lo = unsigned(b);
  const int field = int(hi >> 20) & 0x7ff;
  const unsigned sign = unsigned(int(hi) >> 31);
  others |= (hi ^ 0x80000000u) | lo;
  highest = field > highest ? field : highest;
  const unsigned mh = (hi & 0xfffffu) | (field != 0 ? 0x100000u : 0u);
  const unsigned long long s = ((unsigned long long)sign << 32) | sign;
  const unsigned long long x = ((((unsigned long long)mh << 32) | lo) ^ s) - s;
  const unsigned xl = unsigned(x);
  const int xh = int(x >> 32);
  const int pos = (field > 1 ? field : 1) + 13;
  const unsigned p = 1u << (pos & 15);
  // x p = c 2^32 + (a mod 2^32): a = xl p (unsigned), c = xh p + floor(a / 2^32) (signed).
  const unsigned long long a = (unsigned long long)xl * p;
  const long long c = (long long)xh * (long long)p + (long long)(a >> 32);
  const unsigned w0 = unsigned(a), w1 = unsigned(c), w2 = unsigned((unsigned long long)c >> 32);
  const unsigned d1 = __umulhi(w0, 65536u), d3 = __umulhi(w1, 65536u);
  const unsigned d0 = w0 - d1 * 65536u, d2 = w1 - d3 * 65536u;
  const unsigned a0 = base + unsigned(pos >> 4) * unsigned(B * 4);
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(a0), "r"(d0), "n"(0 * B * 4) : "memory");
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(a0), "r"(d1), "n"(1 * B * 4) : "memory");
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(a0), "r"(d2), "n"(2 * B * 4) : "memory");
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(a0), "r"(d3), "n"(3 * B * 4) : "memory");
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(a0), "r"(w2), "n"(4 * B * 4) : "memory");
}
// The library's normalisation of one thread's (here: one column's) digit rows.
template <int B>
__device__ __forceinline__ void normalize(unsigned* d) {
  detred::cuda::detail::exact_normalize_digits<B>(d);
}
// After a block's last step: each column normalised and a checksum of its rows added to *out (the "check" printed: the
// same for every variant of one partition, whatever feeds its adds).
template <int B, int C>
__device__ __forceinline__ void add_check(unsigned* column, uint64_t* out) {
  if (B != C) __syncthreads();
  if (threadIdx.x >= C) return;
  normalize<C>(column);
  uint64_t a = 0;
  for (int k = 0; k < ROWS; ++k) a += uint64_t(column[k * C]) * (k + 1) * (threadIdx.x + 7);
  atomicAdd((unsigned long long*)out, (unsigned long long)a);
}
// Before a step of U vectors: the block's columns normalised (every thread at once, barriers where threads share
// columns) when the step could bring a column past 2^14 terms since the last normalisation.
template <int B, int C, int U>
__device__ __forceinline__ void normalize_when_due(unsigned& since, unsigned* column) {
  constexpr unsigned period = (1u << 14) / (B / C);
  if (since + 2 * U > period) {
    if (B != C) __syncthreads();
    if (threadIdx.x < C) normalize<C>(column);
    if (B != C) __syncthreads();
    since = 0;
  }
  since += 2 * U;
}
__device__ __forceinline__ void vec_add_4(unsigned base, const ulonglong2& c, int& h, unsigned& o);
// Registers: the library's loop (one step a turn, each vector reloaded right after its use).
template <int B, int U, int C = B, bool Mul = false, int MinBlocks = 1>
__global__ void __launch_bounds__(B, MinBlocks) regk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  extern __shared__ unsigned W[];
  unsigned* d = W + threadIdx.x % C;
  if (threadIdx.x < C)
    for (int k = 0; k < ROWS; ++k) d[k * C] = 0;
  __syncthreads();
  const unsigned base = unsigned(__cvta_generic_to_shared(d));
  const uint64_t chunk = uint64_t(B) * U, stride = uint64_t(gridDim.x) * chunk, end = nv / chunk * chunk;
  uint64_t i = blockIdx.x * chunk + threadIdx.x;
  int highest = 0;
  unsigned others = 0, since = 0;
  ulonglong2 next[U];
  bool more = i + (U - 1) * B < end;
  if (more)
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = v[i + u * B];
  while (more) {
    normalize_when_due<B, C, U>(since, d);
    const uint64_t after = i + stride;
    more = after + (U - 1) * B < end;
    const ulonglong2* refill = v + (more ? after : i);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if constexpr (Mul) {
        digit_add_mul<C>(base, next[u].x, highest, others);
        digit_add_mul<C>(base, next[u].y, highest, others);
      } else {
        digit_add<C>(base, next[u].x, highest, others);
        digit_add<C>(base, next[u].y, highest, others);
      }
      next[u] = refill[u * B];
    }
    i = after;
  }
  add_check<B, C>(d, out);
}
// Stages: per warp S stages of U * 512 bytes (the warp's 32 vectors of each of the step's U rows), bulk copies.
template <int B, int U, int S, bool Early, int C = B>
__global__ void __launch_bounds__(B, 1) stagedk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  extern __shared__ __align__(128) unsigned W[];
  __shared__ uint64_t bars[B / 32][S];
  unsigned* d = W + threadIdx.x % C;
  uint4* stages = reinterpret_cast<uint4*>(W + ROWS * C);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint4* mine = stages + warp * S * U * 32;
  uint64_t* bar = bars[warp];
  if (threadIdx.x < C)
    for (int k = 0; k < ROWS; ++k) d[k * C] = 0;
  __syncthreads();
  const unsigned base = unsigned(__cvta_generic_to_shared(d));
  const uint64_t chunk = uint64_t(B) * U, stride = uint64_t(gridDim.x) * chunk, end = nv / chunk * chunk;
  uint64_t i = blockIdx.x * chunk + warp * 32;  // the warp's first vector
  if (lane == 0) {
    for (int s = 0; s < S; ++s) ::cuda::ptx::mbarrier_init(&bar[s], 1);
    ::cuda::ptx::fence_mbarrier_init(::cuda::ptx::sem_release, ::cuda::ptx::scope_cluster);
  }
  __syncwarp();
  uint64_t issue_i = i;
  int issue_stage = 0;
  auto issue = [&] {
    if (issue_i + (U - 1) * B + 31 < end) {
      if (lane == 0) {
        ::cuda::ptx::mbarrier_arrive_expect_tx(::cuda::ptx::sem_release, ::cuda::ptx::scope_cta,
                                               ::cuda::ptx::space_shared, &bar[issue_stage], U * 512);
#pragma unroll
        for (int u = 0; u < U; ++u)
          ::cuda::ptx::cp_async_bulk(::cuda::ptx::space_cluster, ::cuda::ptx::space_global,
                                     mine + (issue_stage * U + u) * 32, v + issue_i + u * B, 512, &bar[issue_stage]);
      }
    }
    issue_i += stride;
    if (++issue_stage == S) issue_stage = 0;
  };
  for (int s = 0; s < S; ++s) issue();
  int highest = 0;
  unsigned others = 0, since = 0, phase = 0;
  int stage = 0;
  for (; i + (U - 1) * B + 31 < end; i += stride) {
    normalize_when_due<B, C, U>(since, d);
    while (!::cuda::ptx::mbarrier_try_wait_parity(&bar[stage], (phase >> stage) & 1u)) {
    }
    phase ^= 1u << stage;
    const uint4* in = mine + stage * U * 32;
    if constexpr (Early) {
      uint4 c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) c[u] = in[u * 32 + lane];
      __syncwarp();
      issue();
#pragma unroll
      for (int u = 0; u < U; ++u) {
        digit_add<C>(base, (unsigned long long)c[u].y << 32 | c[u].x, highest, others);
        digit_add<C>(base, (unsigned long long)c[u].w << 32 | c[u].z, highest, others);
      }
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint4 c = in[u * 32 + lane];
        digit_add<C>(base, (unsigned long long)c.y << 32 | c.x, highest, others);
        digit_add<C>(base, (unsigned long long)c.w << 32 | c.z, highest, others);
      }
      __syncwarp();
      issue();
    }
    if (++stage == S) stage = 0;
  }
  add_check<B, C>(d, out);
}
template <class F>
float timeit(F f, int reps = 15) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}
int sms;
double gbytes;
float cub_ms(const double* x, uint64_t n, double* out, void* tmp, size_t tb) {
  return timeit([&] { cub::DeviceReduce::Sum(tmp, tb, x, out, (int64_t)n); });
}
template <class K>
float kern_ms(K kern, size_t sh, const ulonglong2* v, uint64_t nv, uint64_t* out, int threads = 256, int per_sm = 1) {
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sh));
  cudaMemset(out, 0, 8);
  kern<<<sms * per_sm, threads, sh>>>(v, nv, out);
  uint64_t check = 0;
  cudaMemcpy(&check, out, 8, cudaMemcpyDeviceToHost);
  printf("check %016llx  ", (unsigned long long)check);
  float t = timeit([&] { kern<<<sms * per_sm, threads, sh>>>(v, nv, out); });
  cudaError_t e = cudaGetLastError();
  if (e) printf("error %s\n", cudaGetErrorString(e));
  return t;
}
int main() {
  const uint64_t n = 1ull << 27, nv = n / 2;
  uint64_t* x;
  uint64_t* out;
  cudaMalloc(&x, n * 8);
  cudaMalloc(&out, 64);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  gen<<<1024, 256>>>(x, n);
  cudaDeviceSynchronize();
  gbytes = n * 8 / 1e9;
  size_t tb = 0;
  cub::DeviceReduce::Sum(nullptr, tb, (const double*)x, (double*)out, (int64_t)n);
  void* tmp;
  cudaMalloc(&tmp, tb);
  const ulonglong2* v = (const ulonglong2*)x;
  const size_t rows_sh = size_t(ROWS) * 4 * 256;
  for (int data = 0; data < 2; ++data) {
    if (data == 1) {
      gen_uniform<<<1024, 256>>>((double*)x, n);
      cudaDeviceSynchronize();
      printf("uniform [0, 1)\n");
    } else
      printf("full range\n");
    for (int rep = 0; rep < 2; ++rep) {
      auto report = [&](const char* name, float ms) {
        float c = cub_ms((const double*)x, n, (double*)out, tmp, tb);
        printf("%-50s %7.0f GB/s  CUB %7.0f GB/s  %.3fx\n", name, gbytes / ms * 1e3, gbytes / c * 1e3, c / ms);
      };
      const size_t r128 = size_t(ROWS) * 4 * 128, r192 = size_t(ROWS) * 4 * 192;
      report("256/256 U=10 (library)", kern_ms(regk<256, 10>, rows_sh, v, nv, out));
      report("256/128 U=10", kern_ms(regk<256, 10, 128>, r128, v, nv, out, 256));
      report("384/128 U=8", kern_ms(regk<384, 8, 128>, r128, v, nv, out, 384));
      report("384/128 U=8, 134 KiB allocated", kern_ms(regk<384, 8, 128>, rows_sh, v, nv, out, 384));
      report("384/128 U=8, 201 KiB allocated", kern_ms(regk<384, 8, 128>, 3 * r128, v, nv, out, 384));
      report("384/128 U=10", kern_ms(regk<384, 10, 128>, r128, v, nv, out, 384));
      report("384/128 U=6", kern_ms(regk<384, 6, 128>, r128, v, nv, out, 384));
      report("384/192 U=8", kern_ms(regk<384, 8, 192>, r192, v, nv, out, 384));
      report("512/128 U=6", kern_ms(regk<512, 6, 128>, r128, v, nv, out, 512));
      report("512/128 U=4", kern_ms(regk<512, 4, 128>, r128, v, nv, out, 512));
      report("256/128 U=8 x2 blocks", kern_ms(regk<256, 8, 128, false, 2>, r128, v, nv, out, 256, 2));
      report("384/128 U=4 x2 blocks", kern_ms(regk<384, 4, 128, false, 2>, r128, v, nv, out, 384, 2));
      report("384/64 U=8", kern_ms(regk<384, 8, 64>, r128 / 2, v, nv, out, 384));
      report("384/64 U=8 multiplies", kern_ms(regk<384, 8, 64, true>, r128 / 2, v, nv, out, 384));
      report("512/128 U=6 multiplies", kern_ms(regk<512, 6, 128, true>, r128, v, nv, out, 512));
      if (data == 0) {  // shared-memory stages filled by bulk copies (2026-11-28 run 1: all slower)
        report("256/256 stages U=10 S=2 early",
               kern_ms(stagedk<256, 10, 2, true>, rows_sh + 8 * 2 * 10 * 512, v, nv, out));
        report("256/256 stages U=4 S=5 early",
               kern_ms(stagedk<256, 4, 5, true>, rows_sh + 8 * 5 * 4 * 512, v, nv, out));
        report("512/256 stages U=5 S=2 early",
               kern_ms(stagedk<512, 5, 2, true, 256>, rows_sh + 16 * 2 * 5 * 512, v, nv, out, 512));
        report("512/256 registers U=6", kern_ms(regk<512, 6, 256>, rows_sh, v, nv, out, 512));
        report("1024/256 registers U=2", kern_ms(regk<1024, 2, 256>, rows_sh, v, nv, out, 1024));
      }
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
