// The CPU twins of the row and column reductions (detred/rows.hpp) against independent references: row sums and
// column sums equal detred::sum of the same values (the canonical engine, another implementation of the same order);
// row maxima equal detred::max; means, variances and log-sum-exps are within their bounds of long double references;
// detred::specified's exp and log are faithful on many arguments. Label cpu (these run in CI).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "detred/reduce.hpp"
#include "detred/rows.hpp"
#include "detred/rows/specified_math.hpp"
#include "tests/rows/row_inputs.hpp"
#include "tests/support/column_sums.hpp"
#include "tests/support/signed_zeros.hpp"

namespace {
using namespace detred;

template <class T>
void expect_row_sums_match_detred_sum(bool specials) {
  const std::vector<std::int32_t> lengths = test::boundary_lengths<T>();
  std::int32_t longest = 0;
  for (auto n : lengths) longest = std::max(longest, n);
  const row_shape shape{lengths.size(), 0, std::uint64_t(longest) + 3, lengths.data(), 0};
  const std::vector<T> x = test::random_values<T>(shape.rows * shape.stride, 7, specials);
  std::vector<float> plain(shape.rows), comp(shape.rows), mx(shape.rows);
  row_sum(x.data(), plain.data(), shape, sum_method::tree);
  row_sum(x.data(), comp.data(), shape, sum_method::tree_neumaier);
  row_max(x.data(), mx.data(), shape);
  for (std::size_t r = 0; r < shape.rows; ++r) {
    const T* row = x.data() + r * shape.stride;
    const std::size_t n = std::size_t(lengths[r]);
    EXPECT_EQ(bits_of(plain[r]), bits_of(detred::sum<float>(row, n, sum_method::tree))) << "n = " << n;
    EXPECT_EQ(bits_of(comp[r]), bits_of(detred::sum<float>(row, n, sum_method::tree_neumaier))) << "n = " << n;
    if (n > 0) {
      EXPECT_EQ(bits_of(mx[r]), bits_of(widen<float>(detred::max(row, n)))) << "n = " << n;
    }
  }
}

TEST(RowsCpu, RowSumsAndMaximaEqualDetredSumAndMaxAtEveryBoundaryLength) {
  expect_row_sums_match_detred_sum<float>(false);
  expect_row_sums_match_detred_sum<bfloat16>(false);
  expect_row_sums_match_detred_sum<half>(false);
}

TEST(RowsCpu, SpecialValuesFollowIeeeAndCanonicalNan) {
  expect_row_sums_match_detred_sum<float>(true);
  expect_row_sums_match_detred_sum<bfloat16>(true);
}

TEST(RowsCpu, ColumnSumsEqualDetredSumOfEachColumn) {
  for (std::uint64_t rows : {0ull, 1ull, 7ull, 8ull, 255ull, 1000ull, 4099ull}) {
    const std::uint64_t cols = 37, stride = 40;
    const std::vector<float> x = test::random_values<float>(rows * stride + 1, rows + 1);
    std::vector<float> out(cols);
    column_sum(x.data(), out.data(), row_shape{rows, cols, stride});
    for (std::uint64_t j = 0; j < cols; ++j) {
      std::vector<float> column(rows);
      for (std::uint64_t i = 0; i < rows; ++i) column[i] = x[i * stride + j];
      EXPECT_EQ(bits_of(out[j]), bits_of(detred::sum<float>(column.data(), rows, sum_method::tree)))
          << rows << " rows, column " << j;
    }
  }
}

// detred/rows.hpp: "Column j's sum is the canonical sum over the row index i of x[i * stride + j]". Widths around every
// internal block of columns (tests/support/column_sums.hpp), strides larger than the width, row counts around the
// binary counter's carries; a block of columns that inherits the previous block's accumulators fails at width 65.
template <class T>
void expect_wide_column_sums(std::uint64_t max_rows_for_wide) {
  for (std::uint64_t cols : test::column_sum_widths())
    for (std::uint64_t stride : test::column_sum_strides(cols))
      for (std::uint64_t rows : {0ull, 1ull, 3ull, 8ull, 65ull, 300ull}) {
        if (cols > 300 && (rows > max_rows_for_wide || stride == cols + 3)) continue;
        const std::vector<T> x = test::random_values<T>(rows * stride + 1, rows * 7919 + cols * 31 + stride);
        std::vector<float> out(cols, -1.0f);
        column_sum(x.data(), out.data(), row_shape{rows, cols, stride});
        ASSERT_EQ(
            test::expect_column_sums_equal_detred_sum(x.data(), rows, cols, stride, out.data(), float_traits<T>::name),
            0u);
      }
}

TEST(RowsCpu, ColumnSumsWiderThanOneBlockOfColumnsEqualDetredSum) {
  expect_wide_column_sums<float>(65);
  expect_wide_column_sums<bfloat16>(8);
  expect_wide_column_sums<half>(3);
  // The smallest case of a block that keeps the previous block's sums: 3 x 65 ones, column 64 is 3.
  const std::vector<float> ones(3 * 65, 1.0f);
  std::vector<float> out(65);
  column_sum(ones.data(), out.data(), dense_rows(3, 65));
  for (float v : out) EXPECT_EQ(v, 3.0f);
}

// detred/rows.hpp: row maxima are IEEE maxima, "+0 above -0". Each zero-tie case of tests/support/signed_zeros.hpp is
// a row (rows of different lengths in one call, with a stride), the expected maximum from the direct rule.
template <class T>
void expect_row_max_zero_ties() {
  const auto cases = test::zero_tie_cases<T>();
  std::uint64_t stride = 0;
  for (const auto& c : cases) stride = std::max<std::uint64_t>(stride, c.x.size());
  stride += 2;
  std::vector<T> x(cases.size() * stride, test::make<T>(-0.0));
  std::vector<std::int32_t> lengths;
  for (std::size_t r = 0; r < cases.size(); ++r) {
    std::copy(cases[r].x.begin(), cases[r].x.end(), x.begin() + std::ptrdiff_t(r * stride));
    lengths.push_back(std::int32_t(cases[r].x.size()));
  }
  const row_shape shape{cases.size(), stride, stride, lengths.data(), 0};
  std::vector<float> mx(cases.size());
  row_max(x.data(), mx.data(), shape);
  for (std::size_t r = 0; r < cases.size(); ++r) {
    const T expected = cases[r].x[test::reference_argmax(cases[r].x)];
    EXPECT_EQ(bits_of(mx[r]), bits_of(widen<float>(expected))) << float_traits<T>::name << " " << cases[r].name;
  }
}

TEST(RowsCpu, RowMaxOfZeroTiesIsPositiveZero) {
  expect_row_max_zero_ties<float>();
  expect_row_max_zero_ties<bfloat16>();
  expect_row_max_zero_ties<half>();
}

TEST(RowsCpu, MeanVarianceAndLogSumExpWithinBoundsOfLongDoubleReferences) {
  const std::vector<std::int32_t> lengths = {1, 2, 3, 17, 128, 1000, 4096, 5000};
  const row_shape shape{lengths.size(), 0, 5000, lengths.data(), 0};
  std::vector<float> x = test::random_values<float>(shape.rows * shape.stride, 3);
  for (auto& v : x) v = v * 0x1p-8f + 3.0f;  // an offset mean: the case Welford exists for
  std::vector<float> mean(shape.rows), var(shape.rows), lse(shape.rows);
  row_mean_variance(x.data(), mean.data(), var.data(), shape);
  row_logsumexp(x.data(), lse.data(), shape);
  for (std::size_t r = 0; r < shape.rows; ++r) {
    const float* row = x.data() + r * shape.stride;
    const int n = lengths[r];
    long double m = 0, q = 0, big = -INFINITY, s = 0;
    for (int i = 0; i < n; ++i) m += row[i], big = std::max<long double>(big, row[i]);
    m /= n;
    for (int i = 0; i < n; ++i) q += (row[i] - m) * (row[i] - m), s += std::exp((long double)row[i] - big);
    q /= n;
    const long double l = big + std::log(s);
    // Chan's merges: error a small multiple of u (log2 n + 2) relative to |mean| and to the mean square.
    const double u = 0x1p-24, depth = std::log2(double(n)) + 2;
    EXPECT_LE(std::fabs(double(mean[r] - m)), 4 * u * depth * std::fabs(double(m))) << "n = " << n;
    EXPECT_LE(std::fabs(double(var[r] - q)), 8 * u * depth * double(q + m * m) * 1e-3 + 8 * u * depth * double(q))
        << "n = " << n;
    EXPECT_LE(std::fabs(double(lse[r] - l)), 4 * u * depth * std::fabs(double(l)) + 8 * u * depth) << "n = " << n;
  }
}

// exp_float_lite is faithful (one of the two binary32 neighbours of e^x) on a strided sample of every binade in
// [-104, 88.73], on every binary32 near the edges of its range (subnormal results, the +0 and +Inf cut-offs) and
// near 0, and exact where the contract says so. The GPU test (test_specified_exp_cuda) checks every binary32 in the
// range on the device and the device's bits against these.
TEST(RowsCpu, LiteExpIsFaithful) {
  std::uint64_t checked = 0;
  auto faithful = [&](float x) {
    const float e = specified::exp_float_lite(x);
    const long double exact = std::exp((long double)x);
    const float nearest = float(exact);
    const float other =
        (long double)nearest < exact ? std::nextafter(nearest, INFINITY) : std::nextafter(nearest, -INFINITY);
    EXPECT_TRUE(bits_of(e) == bits_of(nearest) || bits_of(e) == bits_of(other))
        << std::hexfloat << "x = " << x << ": " << e << " against e^x = " << double(exact);
    ++checked;
  };
  const std::uint32_t top = detred::bit_cast<std::uint32_t>(88.73f), bottom = detred::bit_cast<std::uint32_t>(-104.0f);
  for (std::uint32_t b = 0; b <= top; b += 251) faithful(detred::bit_cast<float>(b));
  for (std::uint32_t b = 0x80000000u; b <= bottom; b += 251) faithful(detred::bit_cast<float>(b));
  for (float edge : {-104.0f, -103.97208f, -87.33655f, -0.0f, 0.0f, 88.72283f, 88.7228394f}) {
    float down = edge, up = edge;
    for (int step = 0; step < 20000; ++step)
      faithful(down), faithful(up), down = std::nextafter(down, -INFINITY), up = std::nextafter(up, INFINITY);
  }
  EXPECT_GT(checked, 9000000u);
  EXPECT_EQ(bits_of(specified::exp_float_lite(0.0f)), bits_of(1.0f));
  EXPECT_EQ(bits_of(specified::exp_float_lite(-0.0f)), bits_of(1.0f));
  EXPECT_EQ(bits_of(specified::exp_float_lite(-INFINITY)), 0u);
  EXPECT_EQ(bits_of(specified::exp_float_lite(-104.0001f)), 0u);
  EXPECT_EQ(specified::exp_float_lite(INFINITY), INFINITY);
  EXPECT_EQ(specified::exp_float_lite(88.7228394f), INFINITY);
  EXPECT_NE(specified::exp_float_lite(NAN), specified::exp_float_lite(NAN));
}

// exp_float_lite_nonpositive has exp_float_lite's bits on its domain d <= 0: a strided sample of every negative
// binade, every binary32 near the -104 cut-off and near 0, and the special values (the GPU test checks every one).
TEST(RowsCpu, NonpositiveLiteExpHasExpFloatLiteBits) {
  std::uint64_t checked = 0;
  const auto same = [&](float d) {
    EXPECT_EQ(bits_of(specified::exp_float_lite_nonpositive(d)), bits_of(specified::exp_float_lite(d)))
        << std::hexfloat << "d = " << d;
    ++checked;
  };
  for (std::uint32_t b = 0x80000000u; b <= 0xff800000u && b >= 0x80000000u; b += 127) same(detred::bit_cast<float>(b));
  for (float edge : {-104.0f, -0.0f}) {
    float down = edge, up = edge;
    for (int step = 0; step < 20000; ++step) {
      same(down), down = std::nextafter(down, -INFINITY);
      if (up <= 0.0f) same(up), up = std::nextafter(up, INFINITY);
    }
  }
  for (float d : {0.0f, -0.0f, -INFINITY, -104.0001f, -1e30f}) same(d);
  EXPECT_GT(checked, 16000000u);
}

// exp_float_lite_one_step has exp_float_lite's bits on [exp_float_lite_one_step_min, 0]: a strided sample, every
// binary32 near both ends, and the signed zeros (the GPU test checks every one).
TEST(RowsCpu, OneStepLiteExpHasExpFloatLiteBits) {
  std::uint64_t checked = 0;
  const auto same = [&](float d) {
    EXPECT_EQ(bits_of(specified::exp_float_lite_one_step(d)), bits_of(specified::exp_float_lite(d)))
        << std::hexfloat << "d = " << d;
    ++checked;
  };
  const float lowest = specified::exp_float_lite_one_step_min;
  for (std::uint32_t b = 0x80000000u; b <= detred::bit_cast<std::uint32_t>(lowest); b += 61)
    same(detred::bit_cast<float>(b));
  float up = lowest, down = -0.0f;
  for (int step = 0; step < 20000; ++step) {
    same(up), up = std::nextafter(up, INFINITY);
    same(down), down = std::nextafter(down, -INFINITY);
  }
  for (float d : {0.0f, -0.0f, lowest}) same(d);
  EXPECT_GT(checked, 17000000u);
}

// The log-sum-exp passes (row_accumulators.hpp) by their definition, written out here: the maximum, the plain sum of
// exp_float_lite(x - max) in the canonical order (pairwise over a power of two), then max + log(sum) in binary64;
// and the special rows.
TEST(RowsCpu, LogSumExpIsTheMaximumPlusTheLogOfTheShiftedSum) {
  const std::vector<float> x = test::random_values<float>(64, 21);
  float max = -INFINITY;
  for (float v : x) max = std::max(max, v);
  std::vector<float> level(64);
  for (int i = 0; i < 64; ++i) level[i] = specified::exp_float_lite(x[i] - max);
  for (int width = 64; width > 1; width /= 2)
    for (int i = 0; i < width / 2; ++i) level[i] = level[2 * i] + level[2 * i + 1];
  const float expected = float(double(max) + specified::log_double(double(level[0])));
  float lse = 0;
  row_logsumexp(x.data(), &lse, row_shape{1, 64, 64});
  EXPECT_EQ(bits_of(lse), bits_of(expected));
  const float inf = INFINITY, nan = NAN;
  const std::vector<std::vector<float>> special = {{}, {-inf, -inf}, {1.0f, inf, -inf}, {1.0f, nan, inf}, {-inf, 2.0f}};
  const std::vector<float> expected_special = {-inf, -inf, inf, canonical_nan<float>(), 2.0f};
  for (std::size_t k = 0; k < special.size(); ++k) {
    float out = 0;
    row_logsumexp(special[k].data(), &out, row_shape{1, special[k].size(), special[k].size()});
    EXPECT_EQ(bits_of(out), bits_of(expected_special[k])) << "row " << k;
  }
}

// exp_float_fast is exp_float, bit for bit: a sample of the fast range, the range's edges, the special values, and
// neighbourhoods of the points where its reduction changes table entry (k ln2 / 64) and of binade edges. The GPU
// test (test_specified_exp_cuda) checks every binary32 in the fast range.
TEST(RowsCpu, FastExpHasTheSpecifiedBits) {
  auto same = [](float x) {
    const float fast = specified::exp_float_fast(x), reference = specified::exp_float(x);
    EXPECT_EQ(bits_of(fast), bits_of(reference)) << std::hexfloat << x;
  };
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-90.0, 90.0);
  for (int i = 0; i < 1000000; ++i) same(float(u(rng)));
  std::uniform_int_distribution<std::uint32_t> bits(0, 0xffffffffu);  // every exponent, both signs
  for (int i = 0; i < 200000; ++i) same(detred::bit_cast<float>(bits(rng)));
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, -87.0f, 88.0f, -87.5f, 88.5f, 88.72283f, 88.7229f, -103.97f, -104.0f,
                  -149.0f, 1e-30f, -1e-30f, 1e-45f, INFINITY, -INFINITY, NAN})
    same(x);
  for (int k = -8100; k <= 8200; ++k) {
    float x = float(double(k) * 0.693147180559945309417 / 64.0);
    for (int step = 0; step < 40; ++step) same(x), x = std::nextafter(x, INFINITY);
  }
  for (int e = -126; e <= 127; ++e) {
    float x = float(double(e) * 0.693147180559945309417);
    for (int step = 0; step < 40; ++step) same(x), x = std::nextafter(x, -INFINITY);
  }
}

TEST(RowsCpu, SpecifiedExpAndLogAreFaithful) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-104.0, 89.0);
  int not_nearest = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = float(u(rng));
    const float e = specified::exp_float(x);
    const long double exact = std::exp((long double)x);
    const float nearest = float(exact);
    const float other =
        (long double)nearest < exact ? std::nextafter(nearest, INFINITY) : std::nextafter(nearest, -INFINITY);
    if (e != nearest) ++not_nearest;
    EXPECT_TRUE(e == nearest || e == other) << std::hexfloat << x;
    const float y = std::fabs(x) * 1e3f + 1e-30f;
    const float l = specified::log_float(y);
    EXPECT_LE(std::fabs((long double)l - std::log((long double)y)),
              std::fabs((long double)std::nextafter(l, INFINITY) - l))
        << std::hexfloat << y;
  }
  EXPECT_LE(not_nearest, 2) << "exp_float not correctly rounded in " << not_nearest << " of 200000 cases";
  EXPECT_EQ(specified::exp_float(0.0f), 1.0f);
  EXPECT_EQ(bits_of(specified::exp_float(-INFINITY)), 0u);
  EXPECT_EQ(specified::exp_float(INFINITY), INFINITY);
  EXPECT_EQ(specified::log_float(1.0f), 0.0f);
  EXPECT_EQ(specified::rsqrt_float(4.0f), 0.5f);
}

}  // namespace

#include "detred/norms.hpp"

namespace {
// The CPU references of the norms against long double: LayerNorm's mean and rstd, RMSNorm's rstd, softmax rows
// summing to 1, and RMSNorm's dweight equal to detred::sum of each column's leaves.
TEST(NormsCpu, WithinBoundsOfLongDoubleReferences) {
  using namespace detred;
  const std::uint64_t rows = 9, c = 768;
  const std::vector<float> x = test::random_values<float>(rows * c, 8), w = test::random_values<float>(c, 9);
  std::vector<float> out(rows * c), mean(rows), rstd(rows);
  layernorm_forward(x.data(), w.data(), w.data(), out.data(), mean.data(), rstd.data(), dense_rows(rows, c));
  for (std::uint64_t t = 0; t < rows; ++t) {
    long double m = 0, q = 0;
    for (std::uint64_t i = 0; i < c; ++i) m += x[t * c + i];
    m /= c;
    for (std::uint64_t i = 0; i < c; ++i) q += (x[t * c + i] - m) * (x[t * c + i] - m);
    const long double r = 1 / std::sqrt(q / c + 1e-5L);
    EXPECT_LE(std::fabs(double(mean[t] - m)), 1e-4 * std::sqrt(double(q / c))) << t;
    EXPECT_LE(std::fabs(double(rstd[t] - r)), 1e-5 * double(r)) << t;
  }
  const row_shape causal{rows, c, c, nullptr, 5};
  std::vector<float> s(rows * c, 0.0f);
  softmax_forward(x.data(), s.data(), causal);
  for (std::uint64_t t = 0; t < rows; ++t) {
    long double total = 0;
    for (std::uint64_t i = 0; i < causal.length(t); ++i) total += s[t * c + i];
    EXPECT_NEAR(double(total), 1.0, 1e-5) << t;
  }
  std::vector<float> dx(rows * c), dweight(c);
  rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), dense_rows(rows, c));
  rmsnorm_backward(x.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), dense_rows(rows, c));
  for (std::uint64_t i = 0; i < c; ++i) {
    std::vector<float> leaves(rows);
    for (std::uint64_t t = 0; t < rows; ++t)
      leaves[t] = norms::rmsnorm_dweight_leaf(x[t * c + i], x[t * c + i], rstd[t]);
    EXPECT_EQ(bits_of(dweight[i]), bits_of(detred::sum<float>(leaves.data(), rows, sum_method::tree))) << i;
  }
}
}  // namespace
