// detred/cuda/scatter.hpp: the device calls give the CPU twins' bits (detred/scatter.hpp, themselves checked against
// the Boost reference in tests/test_scatter.cpp) for every value type, both index types, every data set, launch
// shape and permutation of the contributions (docs/SCATTER.md, "Why it is exact"); out-of-range indices are skipped
// and counted; segment_sum and reduce_by_key match the CPU in both methods. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/scatter.hpp"

#define DETRED_SCATTER_SKIP_WITHOUT_GPU()  \
  if (::detred::cuda::device_count() == 0) \
  GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)"

namespace {

using detred::bfloat16;
using detred::half;
using detred::scatter_output_t;
using detred::cuda::check;

template <class T>
struct buffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit buffer(std::size_t n) : count(n) {
    if (n) check(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)), "cudaMalloc");
  }
  explicit buffer(const std::vector<T>& host) : buffer(host.size()) {
    if (count) check(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~buffer() { cudaFree(ptr); }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  std::vector<T> host() const { return detred::cuda::to_host(ptr, count); }
};

template <class T>
T from_bits_of(std::uint64_t b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return T::from_bits(std::uint16_t(b));
  else if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(std::uint32_t(b));
  else
    return std::bit_cast<double>(b);
}

// Data sets: uniform in [-1, 1), ill-conditioned (cancelling pairs over 60 binades), random bits (every binade,
// subnormals, zeros), random bits with NaN, +-Inf and signed zeros.
template <class T>
std::vector<T> make_values(std::uint64_t n, int kind, std::mt19937_64& rng) {
  constexpr int total = int(sizeof(T) * 8), p = detred::float_traits<T>::precision;
  const std::uint64_t sign = std::uint64_t{1} << (total - 1), inf = ((std::uint64_t{1} << (total - p)) - 1) << (p - 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto from_double = [](double x) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
      return T::from_float(float(x));
    else
      return T(x);
  };
  std::vector<T> v(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (kind == 0) {
      v[i] = from_double(u(rng));
    } else if (kind == 1) {
      if (i % 2 == 0)
        v[i] = from_double(u(rng) * std::ldexp(1.0, int(rng() % 60) - 30));
      else
        v[i] = from_double(-detred::widen<double>(v[i - 1]) * (rng() % 3 ? 1.0 : 1.0 + 0x1p-6));
    } else {
      std::uint64_t b = rng();
      if (total < 64) b &= (std::uint64_t{1} << total) - 1;
      if ((b & inf) == inf) b &= ~(std::uint64_t{1} << (total - 2));
      if (kind == 3 && rng() % 4 == 0) {
        const auto pick = rng() % 4;
        b = pick == 0 ? sign : pick == 1 ? 0 : pick == 2 ? inf | (rng() % 2 ? sign : 0) : inf | 1;
      }
      v[i] = from_bits_of<T>(b);
    }
  }
  return v;
}

// 0 uniform, 1 Zipf(1.1), 2 all equal.
template <class I>
std::vector<I> make_index(std::uint64_t n, std::uint64_t m, int kind, std::mt19937_64& rng) {
  std::vector<I> idx(n);
  std::vector<double> cdf(m);
  double acc = 0;
  for (std::uint64_t k = 0; k < m; ++k) cdf[k] = acc += 1.0 / std::pow(double(k + 1), 1.1);
  std::uniform_real_distribution<double> u(0, acc);
  for (auto& x : idx) {
    if (kind == 1)
      x = I(std::min<std::uint64_t>(m - 1, std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
    else
      x = kind == 2 ? I(m / 2) : I(rng() % m);
  }
  return idx;
}

template <class R>
std::vector<R> make_prior(std::uint64_t count, std::mt19937_64& rng) {
  std::vector<R> prior(count);
  for (auto& p : prior) {
    const auto k = rng() % 4;
    p = k == 0 ? R(0) : k == 1 ? -R(0) : R(std::ldexp(double(std::int64_t(rng() % 2001) - 1000), -10));
  }
  return prior;
}

template <class R>
std::size_t count_differences(const std::vector<R>& a, const std::vector<R>& b) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) bad += detred::bits_of(a[i]) != detred::bits_of(b[i]);
  return bad;
}

// index_add on the device (d = 1 through scatter_add) with `options`.
template <class T, class I>
std::vector<scatter_output_t<T>> device_index_add(const std::vector<T>& source, const std::vector<I>& index,
                                                  const std::vector<scatter_output_t<T>>& prior, std::uint64_t m,
                                                  std::uint64_t d, detred::cuda::scatter_options options = {}) {
  const std::uint64_t n = index.size();
  buffer<T> s(source);
  buffer<I> ix(index);
  buffer<scatter_output_t<T>> out(prior);
  std::size_t bytes = 0;
  if (d == 1)
    detred::cuda::scatter_add(nullptr, bytes, s.ptr, ix.ptr, out.ptr, n, m, nullptr, options);
  else
    detred::cuda::index_add(nullptr, bytes, s.ptr, ix.ptr, out.ptr, n, m, d, nullptr, options);
  buffer<unsigned char> ws(std::max<std::size_t>(bytes, 1));
  if (d == 1)
    detred::cuda::scatter_add(ws.ptr, bytes, s.ptr, ix.ptr, out.ptr, n, m, nullptr, options);
  else
    detred::cuda::index_add(ws.ptr, bytes, s.ptr, ix.ptr, out.ptr, n, m, d, nullptr, options);
  return out.host();
}

std::vector<detred::cuda::scatter_options> launch_shapes() {
  return {{}, {nullptr, 64, 1}, {nullptr, 96, 7}, {nullptr, 1024, 3}, {nullptr, 128, 5000}};
}

template <class T>
class ScatterCuda : public ::testing::Test {};
using value_types = ::testing::Types<float, half, bfloat16, double>;
TYPED_TEST_SUITE(ScatterCuda, value_types);

TYPED_TEST(ScatterCuda, DeviceBitsEqualTheCpuOnEveryDataSetAndLaunchShape) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(5);
  for (int vk = 0; vk < 4; ++vk)
    for (int ik = 0; ik < 3; ++ik)
      for (std::uint64_t m : {97u, 256u, 5000u})
        for (std::uint64_t d : {1u, 5u}) {
          const std::uint64_t n = 40000 / d;
          const auto source = make_values<T>(n * d, vk, rng);
          const auto index = make_index<std::int64_t>(n, m, ik, rng);
          const std::vector<std::int32_t> index32(index.begin(), index.end());
          const auto prior = make_prior<R>(m * d, rng);
          auto want = prior;
          detred::index_add(source.data(), index.data(), want.data(), n, m, d);
          const std::string what = "values " + std::to_string(vk) + " index " + std::to_string(ik) + " m " +
                                   std::to_string(m) + " d " + std::to_string(d);
          for (const auto& shape : launch_shapes())
            EXPECT_EQ(count_differences(device_index_add(source, index, prior, m, d, shape), want), 0u)
                << what << " block " << shape.block_threads << " grid " << shape.grid_blocks;
          EXPECT_EQ(count_differences(device_index_add(source, index32, prior, m, d), want), 0u) << what << " int32";
        }
}

TYPED_TEST(ScatterCuda, PermutationsGiveTheSameBits) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(9);
  for (std::uint64_t m : {256u, 70000u}) {
    const std::uint64_t n = 200000;
    const auto values = make_values<T>(n, 1, rng);
    const auto index = make_index<std::int32_t>(n, m, 1, rng);
    const auto prior = make_prior<R>(m, rng);
    const auto first = device_index_add(values, index, prior, m, 1);
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    for (int r = 0; r < 3; ++r) {
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<T> v(n);
      std::vector<std::int32_t> ix(n);
      for (std::size_t i = 0; i < n; ++i) {
        v[i] = values[perm[i]];
        ix[i] = index[perm[i]];
      }
      EXPECT_EQ(count_differences(device_index_add(v, ix, prior, m, 1), first), 0u) << "m " << m;
    }
  }
}

// 2^24 contributions to one slot (docs/SCATTER.md, "Limits"), through the global and the privatised paths.
TEST(ScatterCudaSingle, HugeMultiplicity) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  const std::uint64_t n = std::uint64_t{1} << 24;
  std::vector<float> values(n);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = i % 2 ? 1.0f : (i % 4 == 0 ? 0x1p-40f : -0x1p-149f);
  values[5] = 0x1p127f;
  values[7] = -0x1p127f;
  for (std::uint64_t m : {3u, 100000u}) {
    std::vector<std::int32_t> index(n, 1);
    std::vector<float> prior(m, -0.0f);
    auto want = prior;
    detred::scatter_add(values.data(), index.data(), want.data(), n, m);
    EXPECT_EQ(count_differences(device_index_add(values, index, prior, m, 1), want), 0u) << m;
  }
}

TEST(ScatterCudaSingle, SignedZerosAndSpecials) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  const float inf = std::numeric_limits<float>::infinity(), max = std::numeric_limits<float>::max();
  const std::vector<std::vector<float>> terms = {{-0.0f, -0.0f},          {},          {0.0f, -0.0f}, {1.0f, -1.0f},
                                                 {0x1p-149f, -0x1p-149f}, {max, -max}, {0x1p103f},    {inf, -inf}};
  for (float prior_value : {-0.0f, 0.0f, max}) {
    std::vector<float> values, prior(terms.size(), prior_value);
    std::vector<std::int32_t> index;
    for (std::size_t s = 0; s < terms.size(); ++s)
      for (float t : terms[s]) {
        values.push_back(t);
        index.push_back(std::int32_t(s));
      }
    auto want = prior;
    detred::scatter_add(values.data(), index.data(), want.data(), values.size(), want.size());
    for (std::uint64_t m : {std::uint64_t(terms.size()), std::uint64_t(50000)}) {
      std::vector<float> p = prior;
      p.resize(m, -0.0f);
      auto w = want;
      w.resize(m, -0.0f);
      EXPECT_EQ(count_differences(device_index_add(values, index, p, m, 1), w), 0u) << prior_value << " m " << m;
    }
  }
}

TEST(ScatterCudaSingle, OutOfRangeIndicesAreSkippedAndCounted) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(1);
  const std::uint64_t n = 10000, m = 300;
  const auto values = make_values<float>(n, 0, rng);
  auto index = make_index<std::int64_t>(n, m, 0, rng);
  std::vector<float> kept_values;
  std::vector<std::int64_t> kept_index;
  std::uint64_t invalid = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 7 == 0) index[i] = i % 2 ? -1 - std::int64_t(i) : std::int64_t(m + i);
    if (index[i] < 0 || std::uint64_t(index[i]) >= m) {
      ++invalid;
    } else {
      kept_values.push_back(values[i]);
      kept_index.push_back(index[i]);
    }
  }
  std::vector<float> want(m, 0.0f);
  detred::scatter_add(kept_values.data(), kept_index.data(), want.data(), kept_index.size(), m);
  buffer<std::uint64_t> count(1);
  EXPECT_EQ(count_differences(device_index_add(values, index, std::vector<float>(m, 0.0f), m, 1, {count.ptr}), want),
            0u);
  EXPECT_EQ(count.host()[0], invalid);
  // 16-bit rows into an output too large for the privatised path (narrow words), values of every kind: a row outside
  // [0, m) skips its d terms.
  const std::uint64_t rows = 20000, rows_m = 3000, d = 16;
  const auto source = make_values<bfloat16>(rows * d, 3, rng);
  auto row_index = make_index<std::int64_t>(rows, rows_m, 1, rng);
  std::vector<bfloat16> kept_source;
  std::vector<std::int64_t> kept_rows;
  std::uint64_t skipped = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (i % 7 == 0) row_index[i] = i % 2 ? -1 - std::int64_t(i) : std::int64_t(rows_m + i);
    if (row_index[i] < 0 || std::uint64_t(row_index[i]) >= rows_m) {
      skipped += d;
    } else {
      kept_source.insert(kept_source.end(), source.begin() + std::ptrdiff_t(i * d),
                         source.begin() + std::ptrdiff_t((i + 1) * d));
      kept_rows.push_back(row_index[i]);
    }
  }
  std::vector<float> want_rows(rows_m * d, 0.0f);
  detred::index_add(kept_source.data(), kept_rows.data(), want_rows.data(), kept_rows.size(), rows_m, d);
  buffer<std::uint64_t> row_count(1);
  EXPECT_EQ(count_differences(
                device_index_add(source, row_index, std::vector<float>(rows_m * d, 0.0f), rows_m, d, {row_count.ptr}),
                want_rows),
            0u);
  EXPECT_EQ(row_count.host()[0], skipped);
}

// Narrow words (docs/SCATTER.md, "Narrow words"): 16-bit rows into float outputs too large for the privatised path.
// The headroom's worst case (2^C - 1 rows into one output row, every term the largest significand at the top of its
// level, all of one sign: a word at (2^C - 1)(2^p - 1)2^(W - 1), just below 2^31), and more output rows past the
// private-slot threshold than there are private slots, at several launch shapes: the CPU's bits.
TEST(ScatterCudaSingle, NarrowWordsAtTheirLimits) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  const auto run = [](auto zero, int p) {
    using T = decltype(zero);
    // Worst case: C = 13 (8191 rows), W = 32 - p - 13; the big terms 2^(W - 1) binades above the smallest.
    {
      const std::uint64_t n = 8191, m = 8, d = 128;
      const int width = 32 - p - 13;
      const float big = std::ldexp(2.0f - std::ldexp(1.0f, 1 - p), 3), tiny = std::ldexp(1.0f, 3 - (width - 1));
      std::vector<T> source(n * d, T::from_float(big));
      source[0] = T::from_float(tiny);
      const std::vector<std::int32_t> index(n, 3);
      const std::vector<float> prior(m * d, 0.0f);
      auto want = prior;
      detred::index_add(source.data(), index.data(), want.data(), n, m, d);
      EXPECT_EQ(count_differences(device_index_add(source, index, prior, m, d), want), 0u) << "worst case p " << p;
      for (auto& v : source) v = T::from_float(-detred::widen<float>(v));
      want = prior;
      detred::index_add(source.data(), index.data(), want.data(), n, m, d);
      EXPECT_EQ(count_differences(device_index_add(source, index, prior, m, d), want), 0u) << "negative p " << p;
    }
    // More claimants than private slots, uniform and Zipf rows, values of every kind.
    std::mt19937_64 rng(21);
    for (int vk : {0, 1, 3})
      for (int ik : {0, 1}) {
        const std::uint64_t n = 200000, m = ik == 0 ? 100 : 3000, d = 16;
        const auto source = make_values<T>(n * d, vk, rng);
        const auto index = make_index<std::int64_t>(n, m, ik, rng);
        const auto prior = make_prior<float>(m * d, rng);
        auto want = prior;
        detred::index_add(source.data(), index.data(), want.data(), n, m, d);
        for (const auto& shape : launch_shapes())
          EXPECT_EQ(count_differences(device_index_add(source, index, prior, m, d, shape), want), 0u)
              << "p " << p << " values " << vk << " index " << ik << " block " << shape.block_threads << " grid "
              << shape.grid_blocks;
      }
  };
  run(bfloat16{}, 8);
  run(half{}, 11);
}

// Narrow words clear and read only the output rows some source row hits; every other row keeps the rounding of its
// prior value alone (NaN payloads, infinities, signed zeros, subnormals: the CPU's bits). Two calls share one workspace
// filled with garbage first, the second hitting other rows than the first, so that a row the second call skips holds
// the first call's words and a stale or uncleared word read anywhere changes a result. Rows of 64 take the finish's
// four slots a thread, rows of 66 one slot a thread.
TEST(ScatterCudaSingle, NarrowWordsLeaveUntouchedRowsAtTheirPriorsRounding) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  const auto run = [](auto zero, std::uint64_t d) {
    using T = decltype(zero);
    std::mt19937_64 rng(31);
    const std::uint64_t n = 3000, m = 5000;
    const std::uint32_t specials[] = {0x7fc00000u, 0x7fc00123u, 0xffc00001u, 0x7f800001u, 0x7f800000u, 0xff800000u,
                                      0x80000000u, 0x00000000u, 0x00000001u, 0x807fffffu, 0x3f800000u, 0xc2c80000u};
    std::vector<float> prior(m * d);
    for (auto& p : prior) p = std::bit_cast<float>(specials[rng() % std::size(specials)]);
    std::size_t bytes = 0;
    detred::cuda::index_add(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<const std::int64_t*>(nullptr),
                            static_cast<float*>(nullptr), n, m, d);
    buffer<unsigned char> ws(bytes);
    check(cudaMemset(ws.ptr, 0xa5, bytes), "cudaMemset");
    buffer<float> out(prior);
    auto want = prior;
    for (int call = 0; call < 2; ++call) {
      // Call 0 hits even rows below 2000, call 1 rows that are multiples of 3 below 3000 (some shared with call 0).
      std::vector<std::int64_t> index(n);
      for (auto& r : index) r = call == 0 ? std::int64_t(2 * (rng() % 1000)) : std::int64_t(3 * (rng() % 1000));
      const auto source = make_values<T>(n * d, call == 0 ? 0 : 3, rng);
      detred::index_add(source.data(), index.data(), want.data(), n, m, d);
      buffer<T> s(source);
      buffer<std::int64_t> ix(index);
      detred::cuda::index_add(ws.ptr, bytes, s.ptr, ix.ptr, out.ptr, n, m, d);
      EXPECT_EQ(count_differences(out.host(), want), 0u)
          << "call " << call << " p " << detred::float_traits<T>::precision << " d " << d;
    }
  };
  for (std::uint64_t d : {64u, 66u}) {
    run(bfloat16{}, d);
    run(half{}, d);
  }
}

TYPED_TEST(ScatterCuda, SegmentsAndRunsEqualTheCpu) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(4);
  for (std::uint64_t mean : {16u, 256u, 4096u}) {
    std::vector<std::int64_t> offsets{0};
    for (int s = 0; s < 300; ++s)
      offsets.push_back(offsets.back() + (s % 9 == 0 ? 0 : std::int64_t(rng() % (2 * mean))));
    const std::uint64_t segments = offsets.size() - 1, n = std::uint64_t(offsets.back());
    for (int vk : {0, 1, 3}) {
      const auto values = make_values<T>(n, vk, rng);
      std::vector<std::int32_t> keys(n);
      for (std::uint64_t s = 0; s < segments; ++s)
        for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) keys[std::size_t(i)] = std::int32_t(s % 5);
      buffer<T> v(values);
      buffer<std::int64_t> off(offsets);
      buffer<std::int32_t> k(keys);
      for (auto method : {detred::sum_method::tree, detred::sum_method::exact}) {
        std::vector<R> want(segments);
        detred::segment_sum(values.data(), offsets.data(), want.data(), segments, method);
        for (int threads : {0, 32, 96})
          for (std::uint64_t count : {std::uint64_t{0}, n, segments * (4096 / sizeof(T)),
                                      segments * (16384 / sizeof(T)), std::uint64_t{1} << 62}) {
            buffer<R> out(segments);
            std::size_t bytes = 0;
            detred::cuda::segment_sum(nullptr, bytes, v.ptr, off.ptr, out.ptr, segments, nullptr,
                                      {method, threads, count});
            EXPECT_EQ(bytes, detred::cuda::min_workspace_bytes);
            detred::cuda::segment_sum(reinterpret_cast<void*>(1), bytes, v.ptr, off.ptr, out.ptr, segments, nullptr,
                                      {method, threads, count});
            EXPECT_EQ(count_differences(out.host(), want), 0u)
                << "mean " << mean << " values " << vk << " count " << count;
          }
        std::vector<std::int32_t> want_keys(n);
        std::vector<R> want_sums(n);
        std::uint64_t want_runs = 0;
        detred::reduce_by_key(keys.data(), values.data(), want_keys.data(), want_sums.data(), &want_runs, n, method);
        buffer<std::int32_t> uk(n);
        buffer<R> sums(n);
        buffer<std::uint64_t> runs(1);
        std::size_t bytes = 0;
        detred::cuda::reduce_by_key(nullptr, bytes, k.ptr, v.ptr, uk.ptr, sums.ptr, runs.ptr, n, nullptr, {method});
        buffer<unsigned char> ws(std::max<std::size_t>(bytes, 1));
        detred::cuda::reduce_by_key(ws.ptr, bytes, k.ptr, v.ptr, uk.ptr, sums.ptr, runs.ptr, n, nullptr, {method});
        const std::uint64_t got_runs = runs.host()[0];
        ASSERT_EQ(got_runs, want_runs);
        const auto got_keys = uk.host(), got_sums = sums.host();
        EXPECT_TRUE(std::equal(want_keys.begin(), want_keys.begin() + std::ptrdiff_t(want_runs), got_keys.begin()));
        EXPECT_EQ(count_differences(std::vector<R>(got_sums.begin(), got_sums.begin() + std::ptrdiff_t(want_runs)),
                                    std::vector<R>(want_sums.begin(), want_sums.begin() + std::ptrdiff_t(want_runs))),
                  0u);
      }
    }
  }
}

// Long segments, staged through shared memory and held in registers by blocks of 4 warps (docs/SCATTER.md, "On the
// GPU"; segment_options::values chooses): every element offset from a 16-byte boundary, lengths around the staged
// pass's threshold, a region, a segment and a tail, segments that wrap the ring many times and span many tiles (up to
// 129 regions), and a values array that itself starts off a boundary (the first segment's first vector then lies
// partly before the array): the CPU's canonical bits, and the exact method's.
TYPED_TEST(ScatterCuda, SegmentsAtEveryStartOffsetEqualTheCpu) {
  DETRED_SCATTER_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  using R = scatter_output_t<T>;
  constexpr std::int64_t V = 16 / sizeof(T), seg = 32 * V, region = 8 * seg;
  const std::vector<std::int64_t> lengths = {0,
                                             1,
                                             V + 1,
                                             seg - 1,
                                             seg + 3,
                                             region - 1,
                                             region,
                                             region + 1,
                                             region + V - 1,
                                             region + seg,
                                             region + seg + 2,
                                             2 * region + 3 * seg + 5,
                                             9 * region + 7 * seg + V + 1,
                                             40 * region + 3,
                                             64 * region + seg + 1,
                                             129 * region + 2 * seg + V};
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t start = 0; start < V; ++start)
    for (std::int64_t length : lengths) {
      // A filler segment brings the next start to `start` modulo V.
      offsets.push_back(offsets.back() + (start - offsets.back() % V + V) % V);
      offsets.push_back(offsets.back() + length);
    }
  const std::uint64_t segments = offsets.size() - 1, n = std::uint64_t(offsets.back());
  std::mt19937_64 rng(12);
  for (int vk : {0, 1, 3}) {
    const auto values = make_values<T>(n, vk, rng);
    for (std::uint64_t shift : {0u, 1u}) {
      std::vector<T> shifted(shift, T{});
      shifted.insert(shifted.end(), values.begin(), values.end());
      buffer<T> v(shifted);
      buffer<std::int64_t> off(offsets);
      for (auto method : {detred::sum_method::tree, detred::sum_method::exact}) {
        std::vector<R> want(segments);
        detred::segment_sum(values.data(), offsets.data(), want.data(), segments, method);
        // Values counts: none (the staged kernel), the true one, and counts whose mean is 4 KiB and 16 KiB of input
        // and 2^62 values (the register kernel in each of its three shapes for every segment).
        for (std::uint64_t count : {std::uint64_t{0}, n, segments * (4096 / sizeof(T)), segments * (16384 / sizeof(T)),
                                    std::uint64_t{1} << 62}) {
          buffer<R> out(segments);
          std::size_t bytes = detred::cuda::min_workspace_bytes;
          detred::cuda::segment_sum(reinterpret_cast<void*>(1), bytes, v.ptr + shift, off.ptr, out.ptr, segments,
                                    nullptr, {method, 0, count});
          const auto got = out.host();
          const std::size_t bad = count_differences(got, want);
          EXPECT_EQ(bad, 0u) << "values " << vk << " shift " << shift << " count " << count;
          for (std::uint64_t s = 0; s < segments && bad != 0; ++s)
            if (detred::bits_of(got[s]) != detred::bits_of(want[s])) {
              ADD_FAILURE() << "first difference: segment " << s << " start " << offsets[s] << " length "
                            << offsets[s + 1] - offsets[s];
              break;
            }
        }
      }
    }
  }
}

}  // namespace
