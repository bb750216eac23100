// Experiment (docs/history/exact-experiments.md, "slow-path probe"): what the exact
// sum's binary64 slow path costs by itself. 1 GiB of full-range doubles (random sign, exponent field uniform over 0 ..
// 2046, random fraction, generated on the device) is read by kernels that send every term down one slow path and
// nothing else, beside a plain 16-byte read kernel: mode 0 = three 32-bit digits into the thread's own 67 limb rows
// (an earlier form of the library's path), mode 1 = two digits (low 32 bits, and the rest below 2^52) with the rows
// normalised every 1000 terms, mode 2 = one 128-bit read-modify-write into 33 fixed windows of 64 fields (timing only:
// its periodic normalisation is left out, so its sums are not exact). Each at 256 x 1, 128 x 3 and 64 x 6 threads x
// blocks an SM and 4 or 8 vectors a thread a step. Not part of the library; timings only (median of 12 calls).
// Build: cmake --build build --target exact_slow_path_probe; run: build/bench/exact_slow_path_probe
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
__global__ void gen(uint64_t* x, uint64_t n) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint64_t r = mix(i);
    uint64_t f = (r >> 52) % 2047;
    x[i] = (r & 0x800fffffffffffffull) | (f << 52);
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
struct dec {
  uint64_t m, s;
  int f;
};
__device__ __forceinline__ dec decode(uint64_t b) {
  dec d;
  d.f = int(b >> 52) & 0x7ff;
  d.m = (b & 0xfffffffffffffull) | (d.f ? 1ull << 52 : 0);
  if (d.f == 0x7ff) d.m = 0;
  d.s = (uint64_t)((int64_t)b >> 63);
  return d;
}
// Mode 0: 67 rows of 64-bit limbs, 3 RMW of 32-bit digits (the current lean slow path).
// Mode 1: 67 rows, 2 RMW (row k: low 32 bits, row k+1: the rest < 2^52), normalise every 1024 terms.
// Mode 2: 33 fixed windows of 64 fields as 128-bit words, 1 RMW, normalise every 2048 terms.
template <int Mode, int B, int MinB, int U>
__global__ void __launch_bounds__(B, MinB) slowk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  extern __shared__ long long L[];
  long long* limbs = L + threadIdx.x;
  constexpr int rows = Mode == 2 ? 66 : 67;  // Mode 2: 33 x 2 words
  for (int k = 0; k < rows; ++k) limbs[k * B] = 0;
  unsigned count = 0;
  const uint64_t stride = uint64_t(gridDim.x) * B * U;
  // The next step's vectors are requested before this step's are added (as the library's exact_thread_terms does).
  ulonglong2 c[U];
  uint64_t i0 = (blockIdx.x * uint64_t(B)) * U + threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) c[u] = i0 + u * B < nv ? v[i0 + u * B] : make_ulonglong2(0, 0);
  for (; i0 < nv; i0 += stride) {
    ulonglong2 next[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint64_t i = i0 + stride + u * B;
      next[u] = i < nv ? v[i] : make_ulonglong2(0, 0);
    }
    if constexpr (Mode != 0) {
      count += 2 * U;
      if (count >= 1000) {
        count = 0;
        if constexpr (Mode == 1) {
          for (int k = 0; k + 1 < 67; ++k) {
            long long x = limbs[k * B];
            long long cy = x >> 32;
            limbs[k * B] = x - (cy << 32);
            limbs[(k + 1) * B] += cy;
          }
        } else {
          for (int w = 0; w + 1 < 33; ++w) {
            __int128 a = *reinterpret_cast<__int128*>(L + (2 * w) * B * 0);
            (void)a;
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint64_t t[2] = {c[u].x, c[u].y};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        dec d = decode(t[j]);
        if constexpr (Mode == 0) {
          int pos = (d.f > 1 ? d.f : 1) + 13;
          int k = pos >> 5, sh = pos & 31;
          unsigned lo = unsigned(d.m), hi = unsigned(d.m >> 32);
          unsigned long long g[3] = {(unsigned long long)(lo << sh), __funnelshift_l(lo, hi, sh),
                                     __funnelshift_l(hi, 0u, sh)};
          long long* row = limbs + k * B;
#pragma unroll
          for (int q = 0; q < 3; ++q) row[q * B] += (long long)((g[q] ^ d.s) - d.s);
        } else if constexpr (Mode == 1) {
          int pos = (d.f > 1 ? d.f : 1) + 13;
          int k = pos >> 5, sh = pos & 31;
          uint64_t x = d.m << sh;
          uint64_t lo = x & 0xffffffffu;
          uint64_t hi = (d.m >> (32 - sh));  // sh=0: m>>32
          long long* row = limbs + k * B;
          row[0] += (long long)((lo ^ d.s) - d.s);
          row[B] += (long long)((hi ^ d.s) - d.s);
        } else {
          int f = d.f > 1 ? d.f : 1;
          int w = f >> 6, sh = f & 63;
          unsigned __int128 x = (unsigned __int128)d.m << sh;
          unsigned __int128 s = (unsigned __int128)(__int128)(int64_t)d.s;
          x = (x ^ s) - s;
          // window w of this thread: two 64-bit words in rows 2w, 2w+1 (a 16-byte access needs them adjacent: use a
          // [B][33] layout instead)
          __int128* win = reinterpret_cast<__int128*>(L) + (size_t)threadIdx.x + (size_t)w * B;
          *win += (__int128)x;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) c[u] = next[u];
  }
  uint64_t a = 0;
  for (int k = 0; k < rows; ++k) a += limbs[k * B];
  if (a == 42) out[0] = a;
}
// Atomic digits: rows of 32-bit words (row r of thread t at word r * B + t), digit width D; a term's m << (pos % D)
// (below 2^(53 + D - 1)) is cut into D-bit digits added by shared 32-bit atomics whose result is unused (ATOMS.ADD,
// fire and forget: no read-modify-write chain in the thread). D = 16: 5 digits, 133 rows, rows normalised every 2^14
// terms; D = 21: 4 digits, 101 rows, every 2^9 terms. Timing only, like the modes above (the sums are exact: the
// normalisation is done, but nothing reads the rows back).
template <int D>
struct atomic_digits {
  static constexpr int digits = (53 + D - 1 + D - 1) / D;
  static constexpr int rows = (2060 + 53 + D - 1) / D + 1;
  static constexpr unsigned period = 1u << (30 - D);
};
// Layout 0: u32 row r of thread t at word r * B + t (conflict-free). Layout 1: the halves of 64-bit rows at 32-bit
// spacing (row r at word 2 ((r / 2) B + t) + (r % 2)), as the library's rows would be reused in place: lanes t and
// t + 16 share a bank when their digits' parities agree.
template <int Layout, int B>
__device__ __forceinline__ int row_index(int r) {
  if constexpr (Layout == 0)
    return r * B;
  else
    return 2 * ((r >> 1) * B) + (r & 1);  // relative to rows = W + 2 threadIdx.x
}
template <int D, int B, int MinB, int U, bool Signed, int Layout>
__global__ void __launch_bounds__(B, MinB) atomk(const ulonglong2* v, uint64_t nv, uint64_t* out) {
  using A = atomic_digits<D>;
  extern __shared__ unsigned W[];
  unsigned* rows = W + (Layout == 0 ? threadIdx.x : 2 * threadIdx.x);
  for (int k = 0; k < A::rows; ++k) rows[row_index<Layout, B>(k)] = 0;
  unsigned count = 0;
  const uint64_t stride = uint64_t(gridDim.x) * B * U;
  ulonglong2 c[U];
  uint64_t i0 = (blockIdx.x * uint64_t(B)) * U + threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) c[u] = i0 + u * B < nv ? v[i0 + u * B] : make_ulonglong2(0, 0);
  for (; i0 < nv; i0 += stride) {
    ulonglong2 n[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint64_t i = i0 + stride + u * B;
      n[u] = i < nv ? v[i] : make_ulonglong2(0, 0);
    }
    count += 2 * U;
    if (count >= A::period) {
      count = 0;
      int carry = 0;
      for (int k = 0; k + 1 < A::rows; ++k) {
        int x = int(rows[row_index<Layout, B>(k)]) + carry;
        carry = x >> D;
        rows[row_index<Layout, B>(k)] = unsigned(x - (carry << D));
      }
      rows[row_index<Layout, B>(A::rows - 1)] += unsigned(carry);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint64_t t[2] = {c[u].x, c[u].y};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        dec d = decode(t[j]);
        int pos = (d.f > 1 ? d.f : 1) + 13;
        int k = pos / D, sh = pos - k * D;
        if constexpr (Signed && D == 16) {
          // The term as a signed 64-bit integer shifted left by sh into three words (two's complement, 96 bits): the
          // four low 16-bit digits unsigned, the fifth signed (sign-extended); their weighted sum is the term.
          const long long xm = (long long)((d.m ^ d.s) - d.s);
          const unsigned lo = unsigned(xm), hi = unsigned((unsigned long long)xm >> 32), top = unsigned(xm >> 63);
          const unsigned w0 = lo << sh, w1 = __funnelshift_l(lo, hi, sh), w2 = __funnelshift_l(hi, top, sh);
          const unsigned g[5] = {w0 & 0xffffu, w0 >> 16, w1 & 0xffffu, w1 >> 16, unsigned(int(w2) >> 0)};
          // w2 holds bits 64 .. 95 of the shifted value: as a signed digit at weight 2^64 it is w2 (sign included).
#pragma unroll
          for (int q = 0; q < 5; ++q) atomicAdd(rows + row_index<Layout, B>(k + q), g[q]);
        } else {
          unsigned __int128 x = (unsigned __int128)d.m << sh;
          const unsigned s = unsigned(d.s);
#pragma unroll
          for (int q = 0; q < A::digits; ++q) {
            unsigned g = unsigned(x >> (q * D)) & ((1u << D) - 1);
            atomicAdd(rows + row_index<Layout, B>(k + q), (g ^ s) - s);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) c[u] = n[u];
  }
  uint64_t a = 0;
  for (int k = 0; k < A::rows; ++k) a += rows[row_index<Layout, B>(k)];
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
int sms;
template <int Mode, int B, int MinB, int U>
void run(const ulonglong2* v, uint64_t nv, uint64_t* out, double gb) {
  size_t sh = Mode == 2 ? size_t(33) * 16 * B : size_t(67) * 8 * B;
  cudaFuncSetAttribute(slowk<Mode, B, MinB, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sh));
  int per = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, slowk<Mode, B, MinB, U>, B, sh);
  float t = timeit([&] { slowk<Mode, B, MinB, U><<<sms * per, B, sh>>>(v, nv, out); });
  printf("  mode %d  %4d threads x %d blocks/SM  unroll %2d  %.3f ms %5.0f GB/s\n", Mode, B, per, U, t, gb / t * 1e3);
}
template <int D, int B, int MinB, int U, bool Signed = false, int Layout = 0>
void run_atomic(const ulonglong2* v, uint64_t nv, uint64_t* out, double gb) {
  size_t sh = size_t(atomic_digits<D>::rows + 2) * 4 * B;
  auto kern = atomk<D, B, MinB, U, Signed, Layout>;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sh));
  int per = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, B, sh);
  float t = timeit([&] { kern<<<sms * per, B, sh>>>(v, nv, out); });
  printf("  atomic digits of %d bits%s%s  %4d threads x %d blocks/SM  unroll %2d  %.3f ms %5.0f GB/s\n", D,
         Signed ? ", signed" : "", Layout ? ", halves of 64-bit rows" : "", B, per, U, t, gb / t * 1e3);
}
int main() {
  const uint64_t n = 1ull << 27, nv = n / 2;
  uint64_t* x;
  uint64_t* out;
  cudaMalloc(&x, n * 8);
  cudaMalloc(&out, 8);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  gen<<<1024, 256>>>(x, n);
  cudaDeviceSynchronize();
  const ulonglong2* v = (const ulonglong2*)x;
  double gb = n * 8 / 1e9;
  float r = timeit([&] { readk<<<sms * 8, 256>>>(v, nv, out); });
  printf("full range, every term slow\n  read %.3f ms %.0f GB/s\n", r, gb / r * 1e3);
  run<0, 256, 1, 8>(v, nv, out, gb);
  run<0, 256, 1, 4>(v, nv, out, gb);
  run<0, 128, 3, 4>(v, nv, out, gb);
  run<0, 128, 3, 8>(v, nv, out, gb);
  run<0, 64, 6, 4>(v, nv, out, gb);
  run<1, 256, 1, 8>(v, nv, out, gb);
  run<1, 128, 3, 4>(v, nv, out, gb);
  run<1, 128, 3, 8>(v, nv, out, gb);
  run<1, 64, 6, 4>(v, nv, out, gb);
  run<2, 256, 1, 8>(v, nv, out, gb);
  run<2, 128, 3, 4>(v, nv, out, gb);
  run<2, 128, 3, 8>(v, nv, out, gb);
  run<2, 64, 6, 4>(v, nv, out, gb);
  run_atomic<16, 256, 1, 8>(v, nv, out, gb);
  run_atomic<16, 128, 3, 4>(v, nv, out, gb);
  run_atomic<16, 128, 3, 8>(v, nv, out, gb);
  run_atomic<16, 256, 1, 10>(v, nv, out, gb);
  run_atomic<16, 256, 1, 8, true>(v, nv, out, gb);
  run_atomic<16, 256, 1, 10, true>(v, nv, out, gb);
  run_atomic<16, 128, 3, 8, true>(v, nv, out, gb);
  run_atomic<16, 256, 1, 8, true, 1>(v, nv, out, gb);
  run_atomic<16, 256, 1, 10, true, 1>(v, nv, out, gb);
  run_atomic<16, 128, 3, 8, true, 1>(v, nv, out, gb);
  run_atomic<21, 256, 2, 8>(v, nv, out, gb);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
