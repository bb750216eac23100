// Generic device scans (include/detred/cuda/scan.cuh) and the scan building blocks (warp/warp_scan.cuh,
// block/block_scan.cuh, block/blelloch_scan.cuh) used as users use them: non-commutative operators against the CPU
// scan (same bits) and against left-to-right references (exact operators). Label gpu: skipped, saying why, without a
// GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "detred/cuda/block/blelloch_scan.cuh"
#include "detred/cuda/block/block_scan.cuh"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.cuh"
#include "detred/cuda/warp/warp_scan.cuh"
#include "detred/scan.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/device_scan.hpp"

namespace {
using namespace detred;
using test::have_gpu;

// A device copy of a vector (or n uninitialised elements), freed on scope exit.
template <class T>
struct device_array {
  T* ptr = nullptr;
  std::size_t n = 0;
  explicit device_array(std::size_t count) : n(count) {
    cuda::check(cudaMalloc(&ptr, (n ? n : 1) * sizeof(T)), "cudaMalloc");
  }
  explicit device_array(const std::vector<T>& x) : device_array(x.size()) {
    if (n) cuda::check(cudaMemcpy(ptr, x.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~device_array() { cudaFree(ptr); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  T* data() const { return ptr; }
  std::vector<T> to_host() const {
    std::vector<T> x(n);
    if (n) cuda::check(cudaMemcpy(x.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return x;
  }
};

// The affine map h -> a h + b; op(first, then) = then o first: non-commutative, rounding (fp32).
struct affine {
  float a, b;
};
struct compose_affine {
  __host__ __device__ affine operator()(const affine& first, const affine& then) const {
#ifdef __CUDA_ARCH__
    return {__fmul_rn(then.a, first.a), __fadd_rn(__fmul_rn(then.a, first.b), then.b)};
#else
    return {then.a * first.a, then.a * first.b + then.b};
#endif
  }
};
// 2x2 matrices of integers mod 2^32, product: non-commutative and exactly associative.
struct mat2 {
  std::uint32_t m[4];
};
struct mat_product {
  __host__ __device__ mat2 operator()(const mat2& x, const mat2& y) const {
    return {{x.m[0] * y.m[0] + x.m[1] * y.m[2], x.m[0] * y.m[1] + x.m[1] * y.m[3], x.m[2] * y.m[0] + x.m[3] * y.m[2],
             x.m[2] * y.m[1] + x.m[3] * y.m[3]}};
  }
};
struct plus_float {
  __host__ __device__ float operator()(float x, float y) const {
#ifdef __CUDA_ARCH__
    return __fadd_rn(x, y);
#else
    return x + y;
#endif
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

std::vector<affine> random_maps(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> a(0.5f, 1.0f), b(-1.0f, 1.0f);
  std::vector<affine> x(n);
  for (auto& v : x) v = {a(rng), b(rng)};
  return x;
}

// n random 2x2 matrices mod 2^32 (x) and their left-to-right prefix products (ref): exact and non-commutative, so the
// reference of every association.
struct matrices_and_products {
  std::vector<mat2> x, ref;
};
matrices_and_products random_matrices(std::size_t n, std::mt19937_64& rng) {
  matrices_and_products m{std::vector<mat2>(n), std::vector<mat2>(n)};
  for (auto& v : m.x)
    for (auto& e : v.m) e = std::uint32_t(rng());
  mat2 acc = m.x[0];
  m.ref[0] = acc;
  for (std::size_t k = 1; k < n; ++k) m.ref[k] = acc = mat_product{}(acc, m.x[k]);
  return m;
}

// The GPU sum scan of `in` (A from T) against the CPU scan's bits, inclusive or exclusive.
template <class A, class T>
bool sum_scan_has_cpu_bits(const std::vector<T>& in, bool exclusive, const cuda::scan_options& c) {
  std::vector<A> ref(in.size());
  if (exclusive)
    detred::exclusive_sum_scan<A>(in.data(), ref.data(), in.size());
  else
    detred::inclusive_sum_scan<A>(in.data(), ref.data(), in.size());
  return same_bits(test::sum_scan_host_data<A, T>(std::span<const T>(in), exclusive, c, 0, false), ref);
}

// The generic device scan of x (inclusive, or exclusive from `identity`), with the workspace the size query asks for.
template <class T, class Op>
std::vector<T> gpu_scan(const std::vector<T>& x, Op op, bool exclusive, const T& identity, const cuda::scan_options& c,
                        bool in_place) {
  const std::size_t n = x.size();
  device_array<T> in(x);
  device_array<T> out(in_place ? 1 : n);
  T* dst = in_place ? in.data() : out.data();
  const auto scan = [&](void* ws, std::size_t& bytes) {
    if (exclusive)
      cuda::exclusive_scan(ws, bytes, static_cast<const T*>(in.data()), dst, n, identity, op, nullptr, c);
    else
      cuda::inclusive_scan(ws, bytes, static_cast<const T*>(in.data()), dst, n, op, nullptr, c);
  };
  std::size_t bytes = 0;
  scan(nullptr, bytes);
  device_array<unsigned char> ws(bytes);
  scan(ws.data(), bytes);
  std::vector<T> result(n);
  if (n) cuda::check(cudaMemcpy(result.data(), dst, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}

TEST(CudaGenericScan, AffineMapsHaveTheCpuBitsForEveryShapeAndSize) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  const affine identity{1.0f, -0.0f};
  int checked = 0;
  for (int t : {32, 64, 128, 256})
    for (int i : {4, 8, 16, 32}) {
      if (i == 32 && (t == 32 || t == 256)) continue;  // 32 items: 64 and 128 threads (256 x 32 x 8 B: too large)
      const std::size_t tile = std::size_t(t) * i;
      for (std::size_t n : {std::size_t{1}, tile - 1, tile, tile + 1, 3 * tile + 7, 16 * tile - 1, 33 * tile + 1}) {
        const auto x = random_maps(n, n + t);
        std::vector<affine> inc(n), exc(n);
        detred::inclusive_scan(x.data(), inc.data(), n, compose_affine{});
        detred::exclusive_scan(x.data(), exc.data(), n, identity, compose_affine{});
        ASSERT_TRUE(same_bits(gpu_scan(x, compose_affine{}, false, identity, {t, i}, n % 2 == 0), inc))
            << t << "x" << i << " n " << n;
        ASSERT_TRUE(same_bits(gpu_scan(x, compose_affine{}, true, identity, {t, i}, false), exc))
            << t << "x" << i << " n " << n;
        ++checked;
      }
    }
  EXPECT_EQ(checked, 98);
}

// scan.hpp: tiles above 40 KiB use dynamic shared memory (256 x 32 of 8-byte maps: 66 KiB; 128 x 32 of 16-byte
// matrices), and detail/tuning.hpp: every scan tuning (launch shapes by value size, L2 prefetch distances) is speed
// only. Each against the CPU scan's bits.
TEST(CudaGenericScan, DynamicSharedTilesAndEveryScanTuningKeepTheCpuBits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  const affine identity{1.0f, -0.0f};
  int checked = 0;
  for (const char* spec : {"", "scan.prefetch=0", "scan.prefetch=1", "scan.prefetch=7", "scan.prefetch=132",
                           "scan.threads8=256,scan.items8=32", "scan.threads8=64,scan.items8=16,scan.prefetch=0"}) {
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(spec)) << spec;
    for (cuda::scan_options c : {cuda::scan_options{256, 32}, {}, {128, 32}, {64, 4}}) {
      // The tile of the shape (the default's: 128 x 32 for 8-byte values).
      const std::size_t tile = std::size_t(c.block_threads ? c.block_threads : 128) *
                               std::size_t(c.items_per_thread ? c.items_per_thread : 32);
      for (std::size_t n : {std::size_t{1}, tile - 1, tile + 1, 5 * tile + 3, 300 * tile + 11}) {
        const auto x = random_maps(n, n * 3 + 1);
        std::vector<affine> inc(n), exc(n);
        detred::inclusive_scan(x.data(), inc.data(), n, compose_affine{});
        detred::exclusive_scan(x.data(), exc.data(), n, identity, compose_affine{});
        EXPECT_TRUE(same_bits(gpu_scan(x, compose_affine{}, false, identity, c, n % 2 == 0), inc))
            << spec << " " << c.block_threads << "x" << c.items_per_thread << " n " << n;
        EXPECT_TRUE(same_bits(gpu_scan(x, compose_affine{}, true, identity, c, false), exc))
            << spec << " " << c.block_threads << "x" << c.items_per_thread << " n " << n;
        ++checked;
      }
    }
  }
  cuda::detail::set_tuning_overrides("");
  std::mt19937_64 rng(11);
  const auto m = random_matrices(3 * 4096 + 5, rng);  // 128 x 32 matrices of 16 bytes: 66 KiB tiles
  EXPECT_TRUE(same_bits(gpu_scan(m.x, mat_product{}, false, mat2{}, {128, 32}, false), m.ref));
  EXPECT_EQ(checked, 7 * 4 * 5);
}

TEST(CudaGenericScan, MatrixProductsEqualTheLeftToRightProducts) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  std::mt19937_64 rng(7);
  for (std::size_t n : {std::size_t{5}, std::size_t{2047}, std::size_t{100'003}}) {
    const auto [x, ref] = random_matrices(n, rng);
    EXPECT_TRUE(same_bits(gpu_scan(x, mat_product{}, false, mat2{}, {}, false), ref)) << n;
    const mat2 one{{1, 0, 0, 1}};
    auto exc = gpu_scan(x, mat_product{}, true, one, {64, 4}, true);
    EXPECT_EQ(std::memcmp(&exc[0], &one, sizeof(mat2)), 0);
    EXPECT_TRUE(std::equal(exc.begin() + 1, exc.end(), ref.begin(),
                           [](const mat2& a, const mat2& b) { return std::memcmp(&a, &b, sizeof(mat2)) == 0; }));
  }
}

// Building blocks in a user's kernel: warp, block (256 x 4), Blelloch (1024 in shared memory).
__global__ void blocks_kernel(const float* x, float* warp_canonical, float* block_inclusive,
                              float* blelloch_exclusive) {
  const int t = threadIdx.x;
  if (t < 32) warp_canonical[t] = cuda::warp_canonical_inclusive_scan(x[t], plus_float{});
  using block = cuda::block_fenwick_scan<256, 4, float>;
  __shared__ block::storage storage;
  float a[4];
  for (int i = 0; i < 4; ++i) a[i] = x[t * 4 + i];
  float carry;
  bool has;
  block{}.scan(
      a, plus_float{}, [](float, float&, bool& h, float&) { h = false; }, storage, carry, has);
  // inclusive[e] = P(e + 1): a[m - 1] for m < 4, the next thread's carry for the last item (the root for the block's
  // last thread: P(1024) = T(0, 1024)).
  for (int m = 1; m < 4; ++m) block_inclusive[t * 4 + m - 1] = a[m - 1];
  if (t > 0) block_inclusive[t * 4 - 1] = carry;
  __shared__ float s[cuda::blelloch_slots(1024)];
  for (int i = t; i < 1024; i += 256) s[cuda::blelloch_slot(i)] = x[i];
  const float root = cuda::blelloch_exclusive_scan<1024>(s, plus_float{}, 0.0f, false);
  if (t == 255) block_inclusive[1023] = root;
  for (int i = t; i < 1024; i += 256) blelloch_exclusive[i] = i == 0 ? -0.0f : s[cuda::blelloch_slot(i)];
}

TEST(CudaScanBlocks, CanonicalBlocksHaveTheCpuBits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(1024);
  for (auto& v : x) v = std::ldexp(u(rng), int(rng() % 20));
  device_array<float> d(x), w(32), b(1024), e(1024);
  blocks_kernel<<<1, 256>>>(d.data(), w.data(), b.data(), e.data());
  cuda::check(cudaDeviceSynchronize(), "blocks_kernel");
  std::vector<float> cpu32(32), cpu(1024), cpu_exc(1024);
  detred::inclusive_sum_scan<float>(x.data(), cpu32.data(), 32);
  detred::inclusive_sum_scan<float>(x.data(), cpu.data(), 1024);
  detred::exclusive_sum_scan<float>(x.data(), cpu_exc.data(), 1024);
  EXPECT_TRUE(same_bits(w.to_host(), cpu32));
  EXPECT_TRUE(same_bits(b.to_host(), cpu));
  EXPECT_TRUE(same_bits(e.to_host(), cpu_exc));
}

// The sum scans under the scan tunings too (no L2 prefetch, the default's, a short distance): fp32, fp64 and fp32 into
// fp64, inclusive and exclusive, across tile boundaries of the default shapes and a small shape; the CPU scan's bits
// each time.
TEST(CudaGenericScan, SumScansKeepTheCpuBitsUnderEveryPrefetchDistance) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int checked = 0;
  for (const char* spec : {"scan.prefetch=0", "", "scan.prefetch=3"}) {
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(spec)) << spec;
    for (cuda::scan_options c : {cuda::scan_options{}, {64, 4}}) {
      for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{8193}, std::size_t{3 * 8192 + 7}}) {
        std::vector<float> x(n);
        for (auto& v : x) v = std::ldexp(u(rng), int(rng() % 30));
        std::vector<double> xd(x.begin(), x.end());
        for (bool exclusive : {false, true}) {
          EXPECT_TRUE((sum_scan_has_cpu_bits<float, float>(x, exclusive, c))) << spec << " n " << n;
          EXPECT_TRUE((sum_scan_has_cpu_bits<double, double>(xd, exclusive, c))) << spec << " n " << n;
          EXPECT_TRUE((sum_scan_has_cpu_bits<double, float>(x, exclusive, c))) << spec << " n " << n;
          ++checked;
        }
      }
    }
  }
  cuda::detail::set_tuning_overrides("");
  EXPECT_EQ(checked, 48);
}

}  // namespace
