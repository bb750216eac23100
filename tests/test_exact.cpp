// sum_method::exact on the CPU and detred::exact_accumulator (docs/EXACT.md): the correctly rounded sum, bit for bit
// the rounding of verify::exact_sum (Boost cpp_int), on the data sets and hand-made edge cases, for every type
// pair, every thread count, permutations and splits; merge associativity; byte-form round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/exact_sum.hpp"
#include "src/cpu/exact_blocks.hpp"
#include "tests/support/exact_inputs.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using namespace detred::test;

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

template <class A, class T>
void expect_exact(const std::vector<T>& x, const std::string& what) {
  const verify::exact_sum reference = verify::exact_sum_of<T>(x);
  const A expected = reference.rounded<A>();
  for (unsigned threads : {1u, 2u, 3u, 0u}) {
    const A got = sum<A>(x.data(), x.size(), sum_method::exact, cpu_options{threads});
    ASSERT_EQ(raw(got), raw(expected)) << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name
                                       << " n=" << x.size() << " threads=" << threads;
  }
  // The state rounded to the input type too (what rounded<T>() promises).
  exact_accumulator_for<T> s;
  s.add(x.data(), x.size());
  ASSERT_EQ(raw(s.template rounded<T>()), raw(reference.rounded<T>())) << what << " rounded to the input type";
}

TEST(ExactSum, EdgeCasesEveryTypePair) {
  for_each_type_pair([]<class A, class T>() {
    for (const auto& [name, x] : exact_edge_cases<T>()) expect_exact<A, T>(x, name);
  });
}

TEST(ExactSum, DataSetsEveryTypePair) {
  for_each_type_pair([]<class A, class T>() {
    for (exact_dataset d : all_exact_datasets)
      for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{(1 << 18) + 77},
                            std::size_t{1} << 20, std::size_t{(3 << 20) + 77}})
        expect_exact<A, T>(exact_data<T>(d, n, 7 + n), name_of(d));
  });
}

// The GPU fast path's window boundaries and zero signs at scale (tests/support/exact_inputs.hpp), on the CPU too: the
// same inputs are the GPU test's, so GPU == CPU == reference is checked on them.
TEST(ExactSum, WindowBoundariesAndCancellingPairs) {
  for_each_type_pair([]<class A, class T>() {
    for (std::size_t n : {std::size_t{9}, std::size_t{4097}, (std::size_t{1} << 18) + 77})
      expect_exact<A, T>(window_boundary_data<T>(n, 17 * n + 5), "window boundaries");
    for (std::size_t pairs : {std::size_t{3}, std::size_t{5000}}) {
      expect_exact<A, T>(cancelling_pairs<T>(pairs, pairs, false), "x, -x pairs");
      expect_exact<A, T>(cancelling_pairs<T>(pairs, pairs, true), "-0.0 only");
    }
  });
}

// The CPU's building blocks one by one (src/cpu/exact_blocks.hpp), the kernel this machine does not pick included:
// the portable and the AVX2 fast path accept the same blocks and then add exactly the block's value; the binary64
// exponent bins add exactly their terms (compared limb by limb with exact_accumulator::add after normalising).
template <class T>
void expect_same_limbs(exact_accumulator_for<T> got, exact_accumulator_for<T> expected, const std::string& what) {
  got.set_count(expected.count(), expected.flags(), 0);
  got.normalize();
  expected.normalize();
  for (int k = 0; k < exact_accumulator_for<T>::limb_count; ++k)
    ASSERT_EQ(got.limb(k), expected.limb(k)) << what << " limb " << k;
}

template <class T>
void expect_cpu_blocks_exact(const std::vector<T>& x, const std::string& what) {
  using S = exact_accumulator_for<T>;
  constexpr std::size_t B = cpu::exact::block;
  for (std::size_t b = 0; b + B <= x.size(); b += B) {
    S expected;
    expected.add(x.data() + b, B);
    S portable;
    const bool portable_took = cpu::exact::add_block_fast(portable, x.data() + b);
    if (portable_took) expect_same_limbs<T>(portable, expected, what + " (portable fast path)");
#if DETRED_EXACT_AVX2
    if (cpu::avx2::available()) {
      S avx2;
      const bool avx2_took = cpu::exact::add_block_fast_avx2(avx2, x.data() + b);
      ASSERT_EQ(avx2_took, portable_took) << what << " block at " << b;
      if (avx2_took) expect_same_limbs<T>(avx2, expected, what + " (AVX2 fast path)");
    }
#endif
  }
  if constexpr (std::same_as<T, double>) {
    S binned, expected;
    expected.add(x.data(), x.size());
    cpu::exact::exponent_bins<S> bins;
    bins.add(binned, x.data(), x.size());
    bins.fold(binned);
    expect_same_limbs<T>(binned, expected, what + " (exponent bins)");
  }
}

TEST(ExactSum, CpuBlocksEachExact) {
  const std::size_t n = 64 * cpu::exact::block;
  for (exact_dataset d : all_exact_datasets) {
    expect_cpu_blocks_exact(exact_data<double>(d, n, 5), name_of(d));
    expect_cpu_blocks_exact(exact_data<float>(d, n, 5), name_of(d));
  }
  expect_cpu_blocks_exact(window_boundary_data<double>(n, 9), "window boundaries");
  expect_cpu_blocks_exact(window_boundary_data<float>(n, 9), "window boundaries");
  // Specials inside otherwise fast blocks, and the window's bottom.
  std::vector<double> x = exact_data<double>(exact_dataset::uniform, n, 6);
  x[3] = std::numeric_limits<double>::quiet_NaN();
  x[cpu::exact::block + 5] = -std::numeric_limits<double>::infinity();
  x[2 * cpu::exact::block + 7] = 0.0;
  x[3 * cpu::exact::block + 9] = std::ldexp(1.0 + std::ldexp(1.0, -52), -38);
  x[4 * cpu::exact::block + 9] = std::ldexp(1.0 + std::ldexp(1.0, -52), -39);
  x[5 * cpu::exact::block + 11] = std::ldexp(1.0, -1074);
  expect_cpu_blocks_exact(x, "specials and the window's bottom");
}

TEST(ExactSum, EveryExponentPairCancels) {
  // x + y - x for x, y over every binade (doubles): the small term must survive any large one.
  std::vector<double> x;
  for (int e = -1074; e <= 1023; e += 37)
    for (int f = -1074; f <= 1023; f += 53) {
      const double a = std::ldexp(1.0, e), b = std::ldexp(1.5, f) / 1.5 * 1.25;
      x = {a, b, -a};
      expect_exact<double, double>(x, "x + y - x");
    }
}

TEST(ExactSum, BlocksWithATermBelowTheFastWindowOrASpecialValue) {
  // The CPU fast path takes blocks of 256 terms whose terms lie within 38 binades of the block's largest; a term below
  // that, a NaN or an Inf in such a block must send it to the term-by-term path (docs/EXACT.md).
  for (std::size_t at : {std::size_t{0}, std::size_t{37}, std::size_t{255}, std::size_t{256 * 5 + 1}}) {
    std::vector<double> x(256 * 8, 0.75);
    x[at] = std::ldexp(1.0, -200);
    expect_exact<double, double>(x, "below the window (double)");
    x[at] = -std::ldexp(1.5, -60);
    expect_exact<double, double>(x, "just below the window (double)");
    x[at] = std::numeric_limits<double>::quiet_NaN();
    expect_exact<double, double>(x, "NaN in a fast block");
    x[at] = -std::numeric_limits<double>::infinity();
    expect_exact<double, double>(x, "-Inf in a fast block");
    std::vector<float> f(256 * 8, 0.75f);
    f[at] = std::ldexp(1.0f, -140);
    expect_exact<float, float>(f, "below the window (float)");
    expect_exact<double, float>(f, "below the window (float -> double)");
  }
  // A tie that only a term far below the block's largest breaks: 1 + 0.5 + 2^-53 (half an ulp of 1.5) + t, the rest
  // +-0.5 cancelling. Dropping t (or any of its bits) gives 1.5 instead of 1.5 + 2^-52.
  for (int t_exponent : {-55, -60, -200, -1074}) {
    for (std::size_t at : {std::size_t{2}, std::size_t{200}, std::size_t{256 * 3 + 7}}) {
      std::vector<double> x(256 * 8);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? -0.5 : 0.5;
      const std::size_t base = at / 256 * 256;  // the four special terms share one block
      x[base + (at + 0) % 256] = 1.0;           // replaces +0.5 or -0.5: paired below
      x[base + (at + 1) % 256] = std::ldexp(1.0, -53);
      x[base + (at + 2) % 256] = std::ldexp(1.5, t_exponent);
      x[base + (at + 3) % 256] = 0.5;
      // Restore the cancellation of the +-0.5 that were replaced: the four slots held two +0.5 and two -0.5.
      double rest = 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (i < base + (at % 256) || i > base + (at % 256) + 3) rest += x[i];
      ASSERT_EQ(rest, 0.0);
      expect_exact<double, double>(x, "tie broken by a term below the window, 2^" + std::to_string(t_exponent));
      EXPECT_EQ(sum<double>(x.data(), x.size(), sum_method::exact), 1.5 + std::ldexp(1.0, -52));
    }
  }
  // The window's bottom: +-1.0 cancelling, and two terms y = (1 + 2^-52) * 2^e (lowest bit 52 places down) in one
  // block: the sum is exactly 2y. e >= -38: inside the window (the fast path must keep y's lowest bit); e <= -39: the
  // block must go term by term.
  for (int e : {-36, -37, -38, -39, -40, -60}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{254}, std::size_t{256 * 2 + 100}}) {
      std::vector<double> x(256 * 4);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? -1.0 : 1.0;
      const double y = std::ldexp(1.0 + std::ldexp(1.0, -52), e);
      x[at] = y;  // at is even: +1.0 and the -1.0 after it are replaced
      x[at + 1] = y;
      EXPECT_EQ(sum<double>(x.data(), x.size(), sum_method::exact), 2 * y) << "e = " << e << ", at " << at;
      expect_exact<double, double>(x, "two terms at the window's bottom, 2^" + std::to_string(e));
    }
  }
}

template <class State, floating_input T>
State state_of(const std::vector<T>& x, std::size_t begin, std::size_t end) {
  State s;
  s.add(x.data() + begin, end - begin);
  return s;
}

// The fast path's window (src/cpu/exact_blocks.hpp, docs/EXACT.md "The CPU backend"): a block is taken when its
// largest magnitude lies in [2^E, 2^(E+1)) with E in [E_low, 45] and its smallest in a binade >= E - 38. At each edge
// of that window (E = E_low and E_low - 1, E = 45 and 46; smallest binade E - 38 and E - 39), one block of 256 terms:
// +-1.5 * 2^E cancelling pairs, y = (1 + 2^-52) 2^f (the lowest bit of a double set) and c = -1.5 * 2^f, whose sum is
// -(2^51 - 1) 2^(f - 52): an odd significand, so a dropped last bit of y shows in the rounded result. The last binade
// accepted must take the fast path (both kernels), the first refused must not, and each gives the exact sum.
template <class T>
void expect_window_edge(int E, int f, bool accepted) {
  using S = exact_accumulator_for<T>;
  constexpr std::size_t B = cpu::exact::block;
  const T big = T(std::ldexp(1.5, E));
  const T y = std::same_as<T, double> ? T(std::ldexp(1.0 + std::ldexp(1.0, -52), f)) : T(std::ldexp(1.0 + 0x1p-23, f));
  const T c = T(-std::ldexp(1.5, f));
  for (std::size_t at : {std::size_t{0}, std::size_t{101}, std::size_t{254}}) {
    std::vector<T> x(B);
    for (std::size_t i = 0; i < B; ++i) x[i] = i % 2 ? -big : big;
    x[at] = y;  // replaces a +big; its -big partner below takes c
    x[at + 1] = c;
    const std::string what = std::string(float_traits<T>::name) + " E=" + std::to_string(E) + " smallest binade E" +
                             std::to_string(f - E) + " at " + std::to_string(at);
    S fast;
    EXPECT_EQ(cpu::exact::add_block_fast(fast, x.data()), accepted) << what;
    if (accepted) expect_same_limbs<T>(fast, state_of<S>(x, 0, B), what + " (portable fast path)");
#if DETRED_EXACT_AVX2
    if (cpu::avx2::available()) {
      S avx2;
      EXPECT_EQ(cpu::exact::add_block_fast_avx2(avx2, x.data()), accepted) << what << " (AVX2)";
      if (accepted) expect_same_limbs<T>(avx2, state_of<S>(x, 0, B), what + " (AVX2 fast path)");
    }
#endif
    const double expected = double(y) + double(c);  // exact: both in binade f, lowest bits at f - 52 (f - 23)
    ASSERT_EQ(sum<double>(x.data(), B, sum_method::exact), expected) << what;
    // Two blocks and a tail: the window edge inside a chunk, then the whole sum against the reference.
    std::vector<T> longer = x;
    longer.insert(longer.end(), x.begin(), x.end());
    longer.push_back(T(1));
    expect_exact<double, T>(longer, what);
  }
}

TEST(ExactSum, FastWindowEdgesKeepTheLowestBit) {
  // double layout: E in [-978, 45]; float layout: E in [-69, 45] (window_for's lowest_F and 1068).
  for (int E : {-978, 0, 45}) {
    expect_window_edge<double>(E, E - 38, true);
    expect_window_edge<double>(E, E - 39, false);
  }
  expect_window_edge<double>(-979, -979 - 30, false);
  expect_window_edge<double>(46, 46 - 30, false);
  for (int E : {-69, 0, 45}) {
    expect_window_edge<float>(E, E - 38, true);
    expect_window_edge<float>(E, E - 39, false);
  }
  expect_window_edge<float>(-70, -70 - 30, false);
  expect_window_edge<float>(46, 46 - 30, false);
}

template <class State>
std::vector<std::uint8_t> bytes_of(const State& s) {
  std::vector<std::uint8_t> b(State::serialized_bytes);
  s.serialize(b.data());
  return b;
}

template <floating_input T>
void merge_and_bytes() {
  using State = exact_accumulator_for<T>;
  for (exact_dataset d : all_exact_datasets) {
    const std::vector<T> x = exact_data<T>(d, 30000, 11);
    const State whole = state_of<State>(x, 0, x.size());
    // Permutation invariance: the same bytes.
    std::vector<T> shuffled = x;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(5));
    EXPECT_EQ(bytes_of(state_of<State>(shuffled, 0, x.size())), bytes_of(whole)) << name_of(d);
    // Split and merge in two groupings: (a + b) + c == a + (b + c) == whole, as bytes.
    const State a = state_of<State>(x, 0, 1000), b = state_of<State>(x, 1000, 17000),
                c = state_of<State>(x, 17000, 30000);
    State left = a;
    left.merge(b);
    left.merge(c);
    State right_inner = b;
    right_inner.merge(c);
    State right = a;
    right.merge(right_inner);
    EXPECT_EQ(bytes_of(left), bytes_of(whole)) << name_of(d);
    EXPECT_EQ(bytes_of(right), bytes_of(whole)) << name_of(d);
    // Round trip: deserialize(serialize(s)) rounds and serializes the same; a state merged from bytes too.
    State back;
    ASSERT_TRUE(back.deserialize(bytes_of(whole).data()));
    EXPECT_EQ(bytes_of(back), bytes_of(whole));
    EXPECT_EQ(raw(back.template rounded<T>()), raw(whole.template rounded<T>()));
    EXPECT_EQ(back.count(), x.size());
    // Invalid bytes are refused.
    std::vector<std::uint8_t> bad = bytes_of(whole);
    bad[4] ^= 3;
    EXPECT_FALSE(back.deserialize(bad.data()));
  }
}

TEST(ExactAccumulator, MergeAssociativePermutationInvariantAndByteRoundTrip) {
  merge_and_bytes<double>();
  merge_and_bytes<float>();
  merge_and_bytes<half>();
  merge_and_bytes<bfloat16>();
}

TEST(ExactAccumulator, ByteFormIsLittleEndianAndDocumented) {
  exact_accumulator<double> s;
  s.add(1.0);
  s.add(-0.0);
  const auto b = bytes_of(s);
  ASSERT_EQ(b.size(), 16u + 8u * 69u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), "DXA1");
  EXPECT_EQ(b[4], 2);
  EXPECT_EQ(b[5], 8);  // not only -0.0
  EXPECT_EQ(b[6] | (b[7] << 8), 69);
  EXPECT_EQ(b[8], 2);  // count 2
  // 1.0 = 2^1088 in units of bit 0: limb 34 (weight 2^1088) holds 1.
  EXPECT_EQ(b[16 + 8 * 34], 1);
}

TEST(ExactAccumulator, NormalisesPastTwoToTheThirtyAdditions) {
  // 2^31 + 5 additions of MAX-sized digits into the same limbs must not overflow: add() normalises every 2^30.
  exact_accumulator<float> s;
  const float big = std::ldexp(1.9999999f, 127), tiny = std::ldexp(1.0f, -149);
  exact_accumulator<float> part;
  {
    std::vector<float> x(1 << 20, big);
    for (int r = 0; r < 1030; ++r) part.add(x.data(), x.size());  // 1030 * 2^20 > 2^30 terms of big
  }
  s.merge(part);
  s.merge(part);
  s.add(tiny);
  verify::exact_sum reference;
  for (int i = 0; i < 2; ++i) {
    verify::exact_sum r;
    for (int j = 0; j < 1030; ++j) {
      verify::exact_sum q;
      q.add(double(big) * double(1 << 20));
      r.merge(q);
    }
    reference.merge(r);
  }
  reference.add(tiny);
  EXPECT_EQ(raw(s.rounded<double>()), raw(reference.rounded<double>()));
  EXPECT_EQ(raw(s.rounded<float>()), raw(std::numeric_limits<float>::infinity()));
}

}  // namespace
