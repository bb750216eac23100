// detred/scatter.hpp on the CPU: every output of scatter_add and index_add is the correctly rounded sum of its
// contributions and its prior value (docs/SCATTER.md, "Why it is exact"), checked against verify::exact_sum (Boost
// reference) slot by slot; the bits do not depend on the order of the contributions or the thread count; special
// values and signed zeros follow IEEE; out-of-range indices throw naming their position; segment_sum and
// reduce_by_key give the canonical (row_sum's) or the exact bits.
#include "detred/scatter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "detred/rows.hpp"
#include "detred/verify/exact_sum.hpp"
#include "src/cuda/scatter/scatter_levels.hpp"

namespace {

using detred::bfloat16;
using detred::half;
using detred::scatter_output_t;

template <class T>
T from_bits_of(std::uint64_t b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return T::from_bits(std::uint16_t(b));
  else if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(std::uint32_t(b));
  else
    return std::bit_cast<double>(b);
}

template <class T>
auto raw_bits(T x) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return x.bits;
  else
    return detred::bits_of(x);
}

template <class T>
bool is_special(T x) {
  constexpr int total = int(sizeof(T) * 8);
  constexpr int p = detred::float_traits<T>::precision;
  const std::uint64_t b = std::uint64_t(raw_bits(x));
  const std::uint64_t field = (b >> (p - 1)) & ((std::uint64_t{1} << (total - p)) - 1);
  return field == (std::uint64_t{1} << (total - p)) - 1;
}

// Value sets.
enum class values_kind { uniform, ill_conditioned, full_range, specials };

template <class T>
std::vector<T> make_values(std::uint64_t n, values_kind kind, std::mt19937_64& rng) {
  std::vector<T> v(n);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  constexpr int total = int(sizeof(T) * 8);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (kind == values_kind::uniform) {
      const double x = u(rng);
      if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
        v[i] = T::from_float(float(x));
      else
        v[i] = T(x);
    } else if (kind == values_kind::ill_conditioned) {
      // Pairs that cancel exactly, spread over a wide range of binades, and small terms left over.
      if (i % 2 == 1) {
        std::uint64_t b = std::uint64_t(raw_bits(v[i - 1]));
        b ^= std::uint64_t{1} << (total - 1);
        v[i] = from_bits_of<T>(b);
      } else {
        const double scale = std::ldexp(1.0, int(rng() % 60) - 30);
        const double x = u(rng) * scale;
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
          v[i] = T::from_float(float(x));
        else
          v[i] = T(x);
        if (rng() % 3 == 0) v[i] = from_bits_of<T>(std::uint64_t(raw_bits(v[i])) ^ 1);  // not an exact cancel
      }
    } else {
      // Random bit patterns: every binade, subnormals and zeros; specials only for values_kind::specials.
      std::uint64_t b = rng();
      if (total < 64) b &= (std::uint64_t{1} << total) - 1;
      T x = from_bits_of<T>(b);
      if (kind == values_kind::full_range && is_special(x)) x = from_bits_of<T>(b & ~(std::uint64_t{1} << (total - 2)));
      if (kind == values_kind::specials && rng() % 4 == 0) {
        const std::uint64_t pick = rng() % 4;
        const std::uint64_t sign = std::uint64_t{1} << (total - 1);
        constexpr int p = detred::float_traits<T>::precision;
        const std::uint64_t inf = ((std::uint64_t{1} << (total - p)) - 1) << (p - 1);
        x = from_bits_of<T>(pick == 0 ? sign : pick == 1 ? 0 : pick == 2 ? inf | (rng() % 2 ? sign : 0) : inf | 1);
      }
      v[i] = x;
    }
  }
  return v;
}

enum class index_kind { uniform, zipf, all_equal };

template <class I>
std::vector<I> make_index(std::uint64_t n, std::uint64_t m, index_kind kind, std::mt19937_64& rng) {
  std::vector<I> idx(n);
  if (kind == index_kind::zipf) {
    std::vector<double> cdf(m);
    double acc = 0;
    for (std::uint64_t k = 0; k < m; ++k) cdf[k] = acc += 1.0 / std::pow(double(k + 1), 1.1);
    std::uniform_real_distribution<double> u(0, acc);
    for (auto& x : idx)
      x = I(std::min<std::uint64_t>(m - 1, std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
  } else {
    for (auto& x : idx) x = kind == index_kind::all_equal ? I(m / 2) : I(rng() % m);
  }
  return idx;
}

// The reference: slot s of out = exact_sum(prior[s], contributions) rounded once.
template <class T, class I>
std::vector<scatter_output_t<T>> reference_index_add(const std::vector<T>& source, const std::vector<I>& index,
                                                     const std::vector<scatter_output_t<T>>& prior, std::uint64_t d) {
  using R = scatter_output_t<T>;
  std::vector<detred::verify::exact_sum> sums(prior.size());
  for (std::size_t s = 0; s < prior.size(); ++s) sums[s].add(prior[s]);
  for (std::size_t i = 0; i < index.size(); ++i)
    for (std::uint64_t c = 0; c < d; ++c) sums[std::size_t(index[i]) * d + c].add(source[i * d + c]);
  std::vector<R> out(prior.size());
  for (std::size_t s = 0; s < prior.size(); ++s) out[s] = sums[s].template rounded<R>();
  return out;
}

template <class R>
void expect_same_bits(const std::vector<R>& got, const std::vector<R>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t s = 0; s < got.size(); ++s) {
    if (detred::bits_of(got[s]) != detred::bits_of(want[s])) {
      if (++bad <= 3)
        ADD_FAILURE() << what << ": slot " << s << " got " << got[s] << " (0x" << std::hex << detred::bits_of(got[s])
                      << ") want " << want[s] << " (0x" << detred::bits_of(want[s]) << std::dec << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << what;
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

template <class T>
class ScatterTypes : public ::testing::Test {};
using value_types = ::testing::Types<float, half, bfloat16, double>;
TYPED_TEST_SUITE(ScatterTypes, value_types);

// docs/SCATTER.md, "Why it is exact": every slot equals the reference, for every index and value set, both index
// types, index_add rows of several widths.
TYPED_TEST(ScatterTypes, EverySlotIsTheCorrectlyRoundedSum) {
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(7);
  for (values_kind vk :
       {values_kind::uniform, values_kind::ill_conditioned, values_kind::full_range, values_kind::specials})
    for (index_kind ik : {index_kind::uniform, index_kind::zipf, index_kind::all_equal})
      for (std::uint64_t d : {1u, 3u, 8u}) {
        const std::uint64_t n = 3000 / d, m = 97;
        const auto source = make_values<T>(n * d, vk, rng);
        const auto idx32 = make_index<std::int32_t>(n, m, ik, rng);
        const std::vector<std::int64_t> idx64(idx32.begin(), idx32.end());
        const auto prior = make_prior<R>(m * d, rng);
        const auto want = reference_index_add(source, idx32, prior, d);
        auto got = prior;
        if (d == 1)
          detred::scatter_add(source.data(), idx32.data(), got.data(), n, m);
        else
          detred::index_add(source.data(), idx32.data(), got.data(), n, m, d);
        const std::string what =
            "values " + std::to_string(int(vk)) + " index " + std::to_string(int(ik)) + " d " + std::to_string(d);
        expect_same_bits(got, want, what + " int32");
        auto got64 = prior;
        detred::index_add(source.data(), idx64.data(), got64.data(), n, m, d);
        expect_same_bits(got64, want, what + " int64");
      }
}

// Same bits in every order of the contributions and on every thread count (determinism::exact).
TYPED_TEST(ScatterTypes, PermutationsAndThreadCountsGiveTheSameBits) {
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(11);
  const std::uint64_t n = 20000, m = 300;
  const auto values = make_values<T>(n, values_kind::ill_conditioned, rng);
  const auto index = make_index<std::int64_t>(n, m, index_kind::zipf, rng);
  const auto prior = make_prior<R>(m, rng);
  auto first = prior;
  detred::scatter_add(values.data(), index.data(), first.data(), n, m, {1});
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  for (unsigned threads : {2u, 3u, 7u}) {
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<T> v(n);
    std::vector<std::int64_t> ix(n);
    for (std::size_t i = 0; i < n; ++i) {
      v[i] = values[perm[i]];
      ix[i] = index[perm[i]];
    }
    auto got = prior;
    detred::scatter_add(v.data(), ix.data(), got.data(), n, m, {threads});
    expect_same_bits(got, first, "threads " + std::to_string(threads));
  }
}

// 2^24 contributions to one slot (the headroom of docs/SCATTER.md, "Limits"): 1.0 and a term 2^-40 that only the
// exact sum keeps, and the largest and smallest binades in one slot.
TEST(Scatter, HugeMultiplicityIsExact) {
  const std::uint64_t n = std::uint64_t{1} << 24;
  std::vector<float> values(n);
  std::vector<std::int32_t> index(n, 1);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = i % 2 ? 1.0f : (i % 4 == 0 ? 0x1p-40f : -0x1p-149f);
  values[5] = 0x1p127f;
  values[7] = -0x1p127f;
  std::vector<float> out{0.5f, -0.0f, 3.0f};
  detred::scatter_add(values.data(), index.data(), out.data(), n, 3);
  detred::verify::exact_sum ref;
  ref.add(-0.0f);
  for (float v : values) ref.add(v);
  EXPECT_EQ(detred::bits_of(out[1]), detred::bits_of(ref.rounded<float>()));
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[2], 3.0f);
  // 2^23 - 2 ones, +-2^127 cancelling, 2^22 * 2^-40 and -2^22 * 2^-149: 2^23 - 2 + 2^-18 - tiny rounds to 2^23 - 2.
  EXPECT_EQ(out[1], 0x1p23f - 2.0f);
  // binary64: 2^24 - 1 terms of 2^-60 survive the cancelling of 1.0 by the prior -1.0.
  std::vector<double> dv(n, 0x1p-60);
  dv[0] = 1.0;
  std::vector<double> dout{-1.0};
  std::vector<std::int64_t> di(n, 0);
  detred::scatter_add(dv.data(), di.data(), dout.data(), n, 1);
  EXPECT_EQ(dout[0], 0x1p-60 * double(n - 1));
}

// IEEE behaviour (docs/SCATTER.md, "Special values"): signed zeros, NaN, infinities, overflow exactly at MAX + ulp/2.
TEST(Scatter, SpecialValuesAndSignedZeros) {
  const float max = std::numeric_limits<float>::max();
  const float half_ulp = 0x1p103f;  // ulp(MAX) / 2
  struct slot_case {
    float prior;
    std::vector<float> terms;
    float want;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<slot_case> cases = {
      {-0.0f, {-0.0f, -0.0f}, -0.0f},                          // all -0.0: -0.0
      {-0.0f, {}, -0.0f},                                      // no contribution: the prior value
      {0.0f, {-0.0f}, 0.0f},                                   // a +0.0 prior
      {-0.0f, {0.0f, -0.0f}, 0.0f},                            // a +0.0 term
      {-0.0f, {1.0f, -1.0f}, 0.0f},                            // exact cancellation: +0.0
      {-0.0f, {0x1p-149f, -0x1p-149f}, 0.0f},                  // subnormal cancellation
      {max, {max, -max}, max},                                 // partial sums overflow, the sum does not
      {max, {half_ulp}, inf},                                  // MAX + ulp/2: the tie rounds to Inf
      {max, {half_ulp, -0x1p80f}, max},                        // just below the tie
      {-max, {-half_ulp}, -inf},                               // and negative
      {1.0f, {inf, 2.0f}, inf},                                // an infinity
      {1.0f, {inf, -inf}, std::bit_cast<float>(0x7fc00000u)},  // Inf - Inf: canonical NaN
      {1.0f, {std::bit_cast<float>(0xffc01234u)}, std::bit_cast<float>(0x7fc00000u)},  // any NaN: canonical
      {inf, {-1.0f}, inf},                                                             // an infinite prior
  };
  std::vector<float> values, prior;
  std::vector<std::int32_t> index;
  for (std::size_t s = 0; s < cases.size(); ++s) {
    prior.push_back(cases[s].prior);
    for (float t : cases[s].terms) {
      values.push_back(t);
      index.push_back(std::int32_t(s));
    }
  }
  auto out = prior;
  detred::scatter_add(values.data(), index.data(), out.data(), values.size(), out.size());
  for (std::size_t s = 0; s < cases.size(); ++s)
    EXPECT_EQ(detred::bits_of(out[s]), detred::bits_of(cases[s].want)) << "case " << s << ": " << out[s];
}

TEST(Scatter, OutOfRangeIndexThrowsNamingItsPosition) {
  std::vector<float> values(6, 1.0f), out(4, 0.0f);
  const std::vector<std::int32_t> index{0, 1, 2, 4, 3, 0};
  try {
    detred::scatter_add(values.data(), index.data(), out.data(), 6, 4);
    FAIL() << "no exception";
  } catch (const detred::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("index[3] = 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out, std::vector<float>(4, 0.0f)) << "nothing written before the check";
  const std::vector<std::int64_t> negative{0, -1};
  EXPECT_THROW(detred::scatter_add(values.data(), negative.data(), out.data(), 2, 4), detred::invalid_argument);
}

// The geometry's widths keep every level's sum in its word (docs/SCATTER.md, "Headroom"): n - 1 terms of the
// largest significand at the top of a level (shift W - 1), all of one sign, the worst case the bound allows.
template <class R>
void worst_case_level(int top) {
  using F = detred::detail::scatter_format<R>;
  const std::uint64_t n = (std::uint64_t{1} << 20) - 1;
  const int w = detred::detail::level_width<R>(n);
  const int bias = F::max_field / 2;
  const R largest = std::ldexp(R(2) - std::ldexp(R(1), -F::fraction_bits), top - bias);  // field top, all ones
  std::vector<R> values(n, -largest);
  values[0] = std::ldexp(R(1), top - (w - 1) - bias);  // sets bottom: the top field is at shift W - 1 of level 0
  std::vector<std::int32_t> index(n, 0);
  std::vector<R> out{R(0)};
  detred::scatter_add(values.data(), index.data(), out.data(), n, 1);
  detred::verify::exact_sum ref;
  ref.add(R(0));
  for (R x : values) ref.add(x);
  EXPECT_EQ(detred::bits_of(out[0]), detred::bits_of(ref.template rounded<R>())) << "top field " << top;
}

TEST(Scatter, LevelWidthsLeaveHeadroom) {
  using namespace detred::detail;
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1} << 24, (std::uint64_t{1} << 26) - 1, max_scatter_terms}) {
    const int c = headroom_bits(n);
    EXPECT_LT(n, std::uint64_t{1} << c);
    EXPECT_LE(24 - 1 + level_width<float>(n) + c, 63) << n;
    EXPECT_LE(53 - 1 + level_width<double>(n) + c, 127) << n;
    EXPECT_GE(level_width<float>(n), 4);
  }
  worst_case_level<float>(100);
  worst_case_level<double>(1000);
}

// The GPU's float fast rounding (slot_result_float_fast, docs/SCATTER.md "On the GPU") gives slot_result's bits
// wherever it answers: random level words at the extremes of their headroom, geometries from the bottom field 1
// (subnormal results) to the top (overflow to infinity), priors of every kind, words with trailing zeros (ties).
TEST(Scatter, FloatFastRoundingMatchesTheExactAccumulator) {
  using namespace detred::detail;
  std::mt19937_64 rng(11);
  int answered = 0;
  for (int trial = 0; trial < 400000; ++trial) {
    scatter_geometry g;
    g.width = int(4 + rng() % 37);
    g.bottom = int(1 + rng() % 254);
    g.levels = int(1 + rng() % 8);
    g.top = std::min(254, g.bottom + (g.levels - 1) * g.width);
    g.levels = (g.top - g.bottom) / g.width + 1;
    level_word<float> words[8] = {};
    for (int j = 0; j < g.levels; ++j) {
      const int bits = int(rng() % 64);  // magnitudes from 0 to 2^62
      std::uint64_t v = bits == 0 ? 0 : (rng() >> (64 - bits));
      if (rng() % 4 == 0) v &= ~std::uint64_t{0} << int(rng() % 40);  // trailing zeros: exact ties below bit 24
      words[j].lo = rng() % 2 ? v : ~v + 1;
    }
    float prior = 0;
    switch (rng() % 5) {
      case 0:
        prior = 0.0f;
        break;
      case 1:
        prior = -0.0f;
        break;
      case 2:
        prior = std::bit_cast<float>(std::uint32_t(rng()));
        break;
      case 3:
        prior = std::ldexp(float(std::int64_t(rng() % 2000001) - 1000000), g.bottom - 150 + int(rng() % 60));
        break;
      default:
        prior = std::bit_cast<float>(std::uint32_t(rng() % 0x00800000u));
        break;  // subnormal
    }
    const std::uint32_t flags = rng() % 50 == 0 ? slot_nan : 0u;
    float fast = 0;
    const float exact = slot_result<float>(words, 1, g, prior, flags);
    if (!slot_result_float_fast(words, 1, g, prior, flags, fast)) continue;
    ++answered;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(fast), std::bit_cast<std::uint32_t>(exact))
        << "trial " << trial << " bottom " << g.bottom << " width " << g.width << " levels " << g.levels;
  }
  EXPECT_GT(answered, 100000);  // the fast path answers most cases (the test exercises it)
}

// Narrow words (docs/SCATTER.md, "Narrow words"): narrow_slot_result and its register form narrow_slot_result_fast
// (where it answers) give the correctly rounded sum of the levels' integers at their weights and the prior value,
// against the Boost reference: words up to 2^31 in magnitude, every width and level count the GPU can use, bottom
// fields from 1 (subnormal results) up, priors of every kind.
TEST(Scatter, NarrowWordsRoundAsTheReference) {
  using namespace detred::detail;
  std::mt19937_64 rng(17);
  int answered = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const int p = rng() % 2 ? 8 : 11;
    scatter_geometry g;
    g.width = int(1 + rng() % (31 - p));
    g.bottom = int(1 + rng() % 254);
    g.levels = int(1 + rng() % 24);
    g.top = std::min(254, g.bottom + (g.levels - 1) * g.width);
    g.levels = (g.top - g.bottom) / g.width + 1;
    std::int32_t words[32] = {};
    detred::verify::exact_sum ref;
    for (int j = 0; j < g.levels; ++j) {
      const int bits = int(rng() % 32);
      std::int64_t v = bits == 0 ? 0 : std::int64_t(rng() >> (64 - bits));
      if (rng() % 4 == 0) v &= ~std::int64_t{0} << int(rng() % 20);
      words[j] = std::int32_t(rng() % 2 ? v : -v);
    }
    if (rng() % 8 == 0)
      for (int j = 0; j < g.levels; ++j) words[j] = 0;  // exact zeros: the sign rule
    if (rng() % 8 == 0 && g.levels > 1) {               // the levels cancel exactly
      words[0] = std::int32_t(1) << g.width;
      words[1] = -1;
      for (int j = 2; j < g.levels; ++j) words[j] = 0;
    }
    for (int j = 0; j < g.levels; ++j)
      if (words[j] != 0) ref.add(std::ldexp(double(words[j]), g.bottom + j * g.width - 150 + 24 - p));
    float prior = 0;
    switch (rng() % 4) {
      case 0:
        prior = rng() % 2 ? 0.0f : -0.0f;
        break;
      case 1:
        prior = std::bit_cast<float>(std::uint32_t(rng()) & 0xff7fffffu);  // finite
        break;
      case 2:
        prior = std::ldexp(float(std::int64_t(rng() % 2000001) - 1000000), g.bottom - 150 + int(rng() % 60));
        break;
      default:
        prior = std::bit_cast<float>(std::uint32_t(rng() % 0x00800000u));  // subnormal
        break;
    }
    ref.add(prior);
    // A +0.0 term flagged (it adds no word): an exact zero is then +0.0.
    const std::uint32_t flags = rng() % 8 == 0 ? slot_not_only_negative_zero : 0u;
    if (flags) ref.add(0.0f);
    const float want = ref.rounded<float>();
    const float exact = narrow_slot_result(words, 1, g, p, prior, flags);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(exact), std::bit_cast<std::uint32_t>(want))
        << "trial " << trial << " p " << p << " bottom " << g.bottom << " width " << g.width << " levels " << g.levels;
    float fast = 0;
    if (!narrow_slot_result_fast(words, 1, g, p, prior, flags, fast)) continue;
    ++answered;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(fast), std::bit_cast<std::uint32_t>(want))
        << "fast: trial " << trial << " p " << p << " bottom " << g.bottom << " width " << g.width;
  }
  EXPECT_GT(answered,
            40000);  // the register form answers about a quarter (wide spans and far priors go to the accumulator)
  // A term's narrow integer is its value in the level's unit: bfloat16 1.5 at shift 3 is 0xc0 << 3; half -1.5 too in
  // its 11 bits.
  const auto parts = split_bits<float>(std::bit_cast<std::uint32_t>(1.5f));
  EXPECT_EQ(narrow_term(parts, 8, 3), 0xc0 << 3);
  EXPECT_EQ(narrow_term(split_bits<float>(std::bit_cast<std::uint32_t>(-1.5f)), 11, 0), -0x600);
  EXPECT_EQ(narrow_width(8, 8191), 11);
  EXPECT_EQ(narrow_width(8, 8192), 10);
  EXPECT_EQ(narrow_width(11, std::uint64_t{1} << 21), 0);
}

// segment_sum, tree: each segment has row_sum's bits (batch-invariant); exact: the reference; empty segments -0.0.
TYPED_TEST(ScatterTypes, SegmentSumCanonicalAndExact) {
  using T = TypeParam;
  using R = scatter_output_t<T>;
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> offsets{0};
  for (int s = 0; s < 60; ++s) offsets.push_back(offsets.back() + (s % 5 == 0 ? 0 : std::int64_t(rng() % 700)));
  const std::uint64_t segments = offsets.size() - 1;
  const auto values = make_values<T>(std::uint64_t(offsets.back()), values_kind::ill_conditioned, rng);
  std::vector<R> tree(segments), exact(segments);
  detred::segment_sum(values.data(), offsets.data(), tree.data(), segments, detred::sum_method::tree, {3});
  detred::segment_sum(values.data(), offsets.data(), exact.data(), segments, detred::sum_method::exact, {2});
  for (std::uint64_t s = 0; s < segments; ++s) {
    const std::uint64_t len = std::uint64_t(offsets[s + 1] - offsets[s]);
    detred::verify::exact_sum ref;
    for (std::uint64_t i = 0; i < len; ++i) ref.add(values[std::size_t(offsets[s]) + i]);
    EXPECT_EQ(detred::bits_of(exact[s]), detred::bits_of(ref.template rounded<R>())) << s;
    if constexpr (std::is_same_v<R, float>) {
      float row = 0;
      detred::row_sum(values.data() + offsets[s], &row, detred::dense_rows(1, len));
      EXPECT_EQ(detred::bits_of(tree[s]), detred::bits_of(row)) << s;
    }
    // Batch invariance: the segment alone gives the same bits.
    R alone{};
    const std::int64_t one[2] = {0, std::int64_t(len)};
    detred::segment_sum(values.data() + offsets[s], one, &alone, 1, detred::sum_method::tree, {1});
    EXPECT_EQ(detred::bits_of(tree[s]), detred::bits_of(alone)) << s;
    if (len == 0) {
      EXPECT_EQ(detred::bits_of(tree[s]), detred::bits_of(-R(0)));
      EXPECT_EQ(detred::bits_of(exact[s]), detred::bits_of(-R(0)));
    }
  }
}

TEST(Scatter, ReduceByKeyRuns) {
  const std::vector<std::int32_t> keys{5, 5, 5, 2, 2, 9, 5, 5};
  const std::vector<float> values{1.0f, 0x1p-30f, -1.0f, 2.0f, 3.0f, 4.0f, 0x1p30f, 1.0f};
  std::vector<std::int32_t> unique(keys.size());
  std::vector<float> sums(keys.size());
  std::uint64_t runs = 0;
  detred::reduce_by_key(keys.data(), values.data(), unique.data(), sums.data(), &runs, keys.size(),
                        detred::sum_method::exact);
  ASSERT_EQ(runs, 4u);
  EXPECT_EQ(std::vector<std::int32_t>(unique.begin(), unique.begin() + 4), (std::vector<std::int32_t>{5, 2, 9, 5}));
  EXPECT_EQ(std::vector<float>(sums.begin(), sums.begin() + 4),
            (std::vector<float>{0x1p-30f, 5.0f, 4.0f, 0x1p30f}));  // 2^30 + 1 rounds to 2^30 in float
  detred::reduce_by_key(keys.data(), values.data(), unique.data(), sums.data(), &runs, 0, detred::sum_method::tree);
  EXPECT_EQ(runs, 0u);
  EXPECT_THROW(detred::reduce_by_key(keys.data(), values.data(), unique.data(), sums.data(), &runs, keys.size(),
                                     detred::sum_method::tree_neumaier),
               detred::invalid_argument);
}

}  // namespace
