// Properties of the CUDA device-wide sum scans (include/detred/cuda/scan.hpp; label gpu): every output has the CPU
// scan's bits (docs/ORDER.md section 3) for random sizes, values, launch shapes (scan_options), pointer offsets and
// in-place calls; sizes around every tile boundary of every launch shape; the last inclusive output equals the sum;
// exclusive[i + 1] == inclusive[i]; special values; one input past 2^31 elements. Without a CUDA device these tests
// are skipped, saying so; the workspace idiom and the argument checks (docs/API.md) need no device and always run.
// Plain C++ against detred::cuda's host API.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/scan.hpp"
#include "detred/reduce.hpp"
#include "detred/scan.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/device_scan.hpp"

namespace detred::test {
namespace {

constexpr const char* no_gpu = "no CUDA device on this machine: GPU test not run";

template <class A>
auto bits_of_value(A v) {
  if constexpr (sizeof(A) == 4)
    return std::bit_cast<std::uint32_t>(v);
  else
    return std::bit_cast<std::uint64_t>(v);
}

// The 15 kernel shapes (threads x items per thread; 32 items with 64, 128 or 256 threads).
std::vector<cuda::scan_options> all_shapes() {
  std::vector<cuda::scan_options> shapes;
  for (int t : {32, 64, 128, 256})
    for (int i : {4, 8, 16, 32})
      if (i < 32 || t > 32) shapes.push_back({t, i});
  return shapes;
}

template <class A, class T>
std::vector<A> cpu_scan(const std::vector<T>& x, bool exclusive) {
  std::vector<A> out(x.size());
  if (exclusive)
    detred::exclusive_sum_scan<A>(x.data(), out.data(), x.size());
  else
    detred::inclusive_sum_scan<A>(x.data(), out.data(), x.size());
  return out;
}

// Index of the first output whose bits differ, or -1.
template <class A>
long long first_difference(const std::vector<A>& a, const std::vector<A>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits_of_value(a[i]) != bits_of_value(b[i])) return static_cast<long long>(i);
  return -1;
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, half>)
    return half::from_float(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>)
    return bfloat16::from_float(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

// Values: mostly uniform in [-1, 1), some wide-range ones, rare -0.0, +-Inf and NaN when `special`.
template <class T>
std::vector<T> make_values(std::size_t n, std::uint64_t seed, bool special) {
  std::vector<T> x(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : x) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(std::int64_t(s >> 11) - (std::int64_t{1} << 52)) * 0x1p-52;
    const int kind = int(s & 1023);
    double d = u;
    if (kind < 40) d = std::ldexp(u, int(s >> 20 & 31) - 16);
    if (special && kind == 1000) d = -0.0;
    if (special && kind == 1001) d = std::numeric_limits<double>::infinity();
    if (special && kind == 1002) d = -std::numeric_limits<double>::infinity();
    if (special && kind == 1003) d = std::numeric_limits<double>::quiet_NaN();
    v = from_double<T>(d);
  }
  return x;
}

template <class A, class T>
void expect_cpu_bits(const std::vector<T>& x, const cuda::scan_options& c, std::size_t offset, bool in_place,
                     const char* what) {
  for (bool exclusive : {false, true}) {
    const auto gpu = sum_scan_host_data<A>(std::span<const T>(x), exclusive, c, offset, in_place);
    const auto cpu = cpu_scan<A>(x, exclusive);
    const long long at = first_difference(gpu, cpu);
    ASSERT_EQ(at, -1) << what << ": n " << x.size() << ", shape " << c.block_threads << "x" << c.items_per_thread
                      << ", offset " << offset << (exclusive ? ", exclusive" : ", inclusive")
                      << ", first difference at " << at;
  }
}

// docs/API.md, the workspace idiom: a null d_workspace is a size query (the bytes written, nothing launched: no device
// is touched, so this runs without one); too few bytes, and scan_options values outside their sets, throw
// invalid_argument naming the call and the field.
TEST(CudaScan, SizeQueryAndArgumentChecksFollowTheWorkspaceIdiom) {
  const float* in = nullptr;
  float* out = nullptr;
  const double* in_d = nullptr;
  double* out_d = nullptr;
  std::size_t small = 0, large = 0, wide = 0;
  cuda::inclusive_sum_scan(nullptr, small, in, out, 1000);
  cuda::exclusive_sum_scan(nullptr, large, in, out, std::uint64_t{1} << 32);
  cuda::inclusive_sum_scan(nullptr, wide, in_d, out_d, std::uint64_t{1} << 32);
  // The look-back of the smallest shape (32 x 4 = 128 elements a tile) keeps two words a tile: 8 bytes each for 4-byte
  // values, 16 for 8-byte ones.
  const std::uint64_t tiles = (std::uint64_t{1} << 32) / 128;
  EXPECT_GE(small, 8 * 2 * 8u);
  EXPECT_GE(large, tiles * 2 * 8);
  EXPECT_GE(wide, tiles * 2 * 16);
  alignas(256) static unsigned char host_bytes[1024];  // never dereferenced: the checks throw before any work
  std::size_t too_few = small - 1;
  const auto message = [](auto&& call) {
    try {
      call();
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(
      message([&] { cuda::inclusive_sum_scan(host_bytes, too_few, in, out, 1000); }).find("cuda::inclusive_sum_scan"),
      std::string::npos);
  std::size_t bytes = 0;
  const std::string threads = message([&] { cuda::exclusive_sum_scan(nullptr, bytes, in, out, 10, nullptr, {48, 0}); });
  EXPECT_NE(threads.find("cuda::exclusive_sum_scan"), std::string::npos) << threads;
  EXPECT_NE(threads.find("block_threads"), std::string::npos) << threads;
  const std::string items = message([&] { cuda::inclusive_sum_scan(nullptr, bytes, in, out, 10, nullptr, {0, 64}); });
  EXPECT_NE(items.find("items_per_thread"), std::string::npos) << items;
  EXPECT_THROW(cuda::inclusive_sum_scan(nullptr, bytes, in, out, 10, nullptr, {32, 32}), invalid_argument);
  EXPECT_EQ(bytes, 0u);  // no size written by a call that threw
  for (const auto& c : all_shapes())
    EXPECT_NO_THROW(cuda::inclusive_sum_scan(nullptr, bytes, in_d, out_d, 10, nullptr, c));
}

// Sizes around every tile boundary: m tiles + {-1, 0, +1} for m = 1..6 and m = 2^k (-1) up to 64 tiles, for every
// kernel shape, float -> float and double -> double (the 4- and 8-byte value paths), at offsets cycling 0..7.
TEST(CudaScan, SizesAroundTileBoundariesGiveTheCpuBitsForEveryShape) {
  if (!have_gpu()) GTEST_SKIP() << no_gpu;
  int configurations = 0;
  std::size_t offset = 0;
  for (const auto& c : all_shapes()) {
    const std::size_t tile = std::size_t(c.block_threads) * c.items_per_thread;
    for (std::size_t m : {1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 31, 32, 63, 64})
      for (int d : {-1, 0, 1}) {
        const std::size_t n = m * tile + d;
        const auto xf = make_values<float>(n, n * 31 + m, true);
        expect_cpu_bits<float>(xf, c, offset % 8, false, "float");
        const auto xd = make_values<double>(n, n * 37 + m, false);
        expect_cpu_bits<double>(xd, c, (offset + 3) % 8, false, "double");
        ++offset;
        if (HasFatalFailure()) return;
      }
    ++configurations;
  }
  std::cout << configurations << " kernel shapes x 42 sizes x 8 offsets cycled, float and double: CPU bits\n";
}

// Random sizes (up to ~300 tiles of the smallest shape), values, shapes, offsets, type pairs, in place or not.
TEST(CudaScan, RandomInputsAndConfigurationsGiveTheCpuBits) {
  if (!have_gpu()) GTEST_SKIP() << no_gpu;
  const bool ok = rc::check("GPU scan == CPU scan", [] {
    const auto shapes = all_shapes();
    const auto c = *rc::gen::elementOf(shapes);
    const std::size_t n = *rc::gen::inRange<std::size_t>(0, 40000);
    const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 8);
    const bool in_place = *rc::gen::arbitrary<bool>();
    const int pair = *rc::gen::inRange(0, 5);
    const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
    const auto check = [&](auto a_tag, auto t_tag) {
      using A = decltype(a_tag);
      using T = decltype(t_tag);
      const auto x = make_values<T>(n, seed, true);
      for (bool exclusive : {false, true}) {
        const auto gpu = sum_scan_host_data<A>(std::span<const T>(x), exclusive, c, offset, in_place);
        RC_ASSERT(first_difference(gpu, cpu_scan<A>(x, exclusive)) == -1);
      }
    };
    switch (pair) {
      case 0:
        check(float{}, half{});
        break;
      case 1:
        check(float{}, bfloat16{});
        break;
      case 2:
        check(float{}, float{});
        break;
      case 3:
        check(double{}, float{});
        break;
      default:
        check(double{}, double{});
        break;
    }
  });
  EXPECT_TRUE(ok);
}

// Scan consistency and shift: the last inclusive output is the sum (sum_method::tree), exclusive[0] == -0.0 and
// exclusive[i + 1] == inclusive[i], on sizes with many tiles (the look-back's deep Fenwick walks).
TEST(CudaScan, LastInclusiveIsTheSumAndExclusiveIsTheShiftedInclusive) {
  if (!have_gpu()) GTEST_SKIP() << no_gpu;
  for (std::size_t n : {std::size_t{1}, std::size_t{4096 * 255 + 17}, std::size_t{1} << 22,
                        (std::size_t{1} << 22) + 4095, std::size_t{3'000'001}}) {
    const auto x = make_values<float>(n, n, false);
    const auto inc = sum_scan_host_data<float>(std::span<const float>(x), false, {}, 0, false);
    const auto exc = sum_scan_host_data<float>(std::span<const float>(x), true, {}, 1, false);
    EXPECT_EQ(bits_of_value(inc.back()), bits_of_value(detred::sum<float>(x.data(), n, sum_method::tree))) << n;
    EXPECT_EQ(bits_of_value(exc[0]), bits_of_value(-0.0f));
    for (std::size_t i = 0; i + 1 < n; ++i)
      if (bits_of_value(exc[i + 1]) != bits_of_value(inc[i])) {
        ADD_FAILURE() << "n " << n << ": exclusive[" << i + 1 << "] != inclusive[" << i << "]";
        break;
      }
  }
}

// Special values: all -0.0 stays -0.0; +Inf then -Inf gives canonical NaN from there on; overflow to +Inf; NaN
// inputs canonicalised; subnormals kept.
TEST(CudaScan, SpecialValuesAsTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << no_gpu;
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  const float nan_payload = std::bit_cast<float>(0x7fc12345u);
  std::vector<std::vector<float>> cases = {
      std::vector<float>(5000, -0.0f),
      {1.0f, inf, 2.0f, -inf, 3.0f},
      std::vector<float>(9000, big),
      {1.0f, nan_payload, 2.0f},
      std::vector<float>(7000, std::numeric_limits<float>::denorm_min()),
  };
  for (const auto& x : cases) {
    for (bool exclusive : {false, true}) {
      const auto gpu = sum_scan_host_data<float>(std::span<const float>(x), exclusive, {128, 4}, 2, true);
      EXPECT_EQ(first_difference(gpu, cpu_scan<float>(x, exclusive)), -1) << "n " << x.size();
    }
  }
  const auto zeros = sum_scan_host_data<float>(std::span<const float>(cases[0]), false, {}, 0, false);
  EXPECT_EQ(bits_of_value(zeros.back()), bits_of_value(-0.0f));
  const auto nan = sum_scan_host_data<float>(std::span<const float>(cases[1]), false, {}, 0, false);
  EXPECT_EQ(bits_of_value(nan[3]), 0x7fc00000u);
}

// n = 2^31 + 4097 bfloat16 values summed into float: every output equals the CPU's (64-bit indexing, 2^20+ tiles).
TEST(CudaScan, BeyondTwoToThe31ElementsGivesTheCpuBits) {
  if (!have_gpu()) GTEST_SKIP() << no_gpu;
  const std::uint64_t n = (std::uint64_t{1} << 31) + 4097;
  const cuda::device_summary device = cuda::describe_device(0);
  if (device.global_memory_bytes < n * 7)
    GTEST_SKIP() << "the device has " << device.global_memory_bytes << " bytes; this test needs about " << n * 7;
  std::vector<bfloat16> x(n);
  std::uint64_t state = 2026;
  for (auto& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = bfloat16::from_float(static_cast<float>(static_cast<std::int64_t>(state >> 40) - (std::int64_t{1} << 22)) *
                             0x1p-23f);
  }
  const auto gpu = sum_scan_host_data<float>(std::span<const bfloat16>(x), false, {}, 3, false);
  std::vector<float> cpu(n);
  detred::inclusive_sum_scan<float>(x.data(), cpu.data(), n);
  EXPECT_EQ(first_difference(gpu, cpu), -1);
  EXPECT_EQ(bits_of_value(gpu.back()), bits_of_value(detred::sum<float>(x.data(), n, sum_method::tree)));
  std::cout << "n = " << n << ": last inclusive " << std::hexfloat << gpu.back() << std::defaultfloat << "\n";
}

}  // namespace
}  // namespace detred::test
