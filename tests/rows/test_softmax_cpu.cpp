// The softmax family's CPU twins (detred/norms.hpp): softmax_forward, log_softmax_forward, softmax_backward,
// log_softmax_backward and row_logsumexp_backward against independent long double evaluations of their definitions and
// of the analytic gradients written out below, for float, bfloat16 and half, full, strided, per-row-length and causal
// rows; each analytic gradient against central finite differences of the long double forward pass; batch invariance
// (the first k rows of a batch give the bits of a batch of k; a row's bits do not move with its position). The GPU
// kernels are compared bit for bit with these twins (test_softmax_cuda.cpp). Label cpu.
//
// Bounds (u = 2^-24, h = ceil(log2 n) + 2 for a row of n elements; y, lse and dout taken as given):
//   softmax:              |y - e^(x - lse)| <= 2 (h + 4) u e^(x - lse)   (a faithful term, a sum, a division);
//   log_softmax:          |out - (x - lse)| <= 4 h u (|lse| + 2) + 2 u |x - lse| + rounding to T
//                         (row_logsumexp's bound, then one subtraction);
//   softmax_backward:     |dx - y (dy - s)| <= 2 (h + 4) u |y| (|dy| + sum|dy y|),   s = sum dy y;
//   log_softmax_backward: |dx - (dy - e^y s)| <= 2 (h + 4) u (|dy| + e^y sum|dy|),   s = sum dy;
//   logsumexp_backward:   |dx - dout e^(x - lse)| <= 2 (|x - lse| + 4) u |dx|;
// each plus the rounding to T. docs/ACCURACY.md states them. Planted bugs (the sum dropped from either backward, the
// exp dropped from log_softmax_backward) fail these bounds by orders of magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "detred/norms.hpp"
#include "detred/rows.hpp"
#include "tests/rows/gradient_inputs.hpp"

namespace {
using namespace detred;
using ld = long double;
using test::widened_value;
constexpr ld u = 0x1p-24L;

// The long double definitions on one row.
ld lse_of(const std::vector<ld>& x) {
  ld m = -INFINITY, s = 0;
  for (ld v : x) m = std::fmax(m, v);
  for (ld v : x) s += std::exp(v - m);
  return m + std::log(s);
}

template <class T>
std::vector<ld> row_values(const std::vector<T>& v, std::uint64_t at, std::uint64_t n) {
  std::vector<ld> out(n);
  for (std::uint64_t i = 0; i < n; ++i) out[i] = widened_value(v[at + i]);
  return out;
}

// The shapes every bound test runs: full, strided, per-row lengths (with empty rows), causal (period < cols).
struct shape_case {
  row_shape shape;
  std::vector<std::int32_t> lengths;
  const char* name;
};
std::vector<shape_case> shape_cases() {
  std::vector<shape_case> cases;
  cases.push_back({dense_rows(6, 300), {}, "full"});
  cases.push_back({row_shape{5, 77, 96}, {}, "strided"});
  cases.push_back({row_shape{9, 40, 40}, {0, 1, 2, 17, 40, 33, 0, 8, 39}, "lengths"});
  cases.push_back({row_shape{24, 16, 16, nullptr, 12}, {}, "causal"});
  for (auto& c : cases)
    if (!c.lengths.empty()) c.shape.lengths = c.lengths.data();
  return cases;
}

template <class T>
void expect_softmax_family_within_bounds(std::uint64_t seed) {
  for (const shape_case& sc : shape_cases()) {
    const row_shape& shape = sc.shape;
    SCOPED_TRACE(std::string(float_traits<T>::name) + " " + sc.name);
    const std::uint64_t total = shape.rows * shape.stride;
    const std::vector<T> x = test::values_in<T>(total, seed, -6, 6), dy = test::values_in<T>(total, seed + 1, -2, 2);
    std::vector<T> y(total, T{}), ly(total, T{}), dx(total, test::make<T>(7.0)), ldx(total, test::make<T>(7.0)),
        edx(total, test::make<T>(7.0));
    std::vector<float> lse(shape.rows), dout(shape.rows);
    for (std::uint64_t r = 0; r < shape.rows; ++r) dout[r] = 0.5f + float(r % 4);
    softmax_forward(x.data(), y.data(), shape);
    log_softmax_forward(x.data(), ly.data(), shape);
    softmax_backward(y.data(), dy.data(), dx.data(), shape);
    log_softmax_backward(ly.data(), dy.data(), ldx.data(), shape);
    row_logsumexp(x.data(), lse.data(), shape);
    row_logsumexp_backward(x.data(), lse.data(), dout.data(), edx.data(), shape);
    for (std::uint64_t r = 0; r < shape.rows; ++r) {
      const std::uint64_t at = r * shape.stride, n = shape.length(r);
      const ld h = test::tree_depth(n);
      const std::vector<ld> X = row_values(x, at, n), DY = row_values(dy, at, n), Y = row_values(y, at, n),
                            LY = row_values(ly, at, n);
      const ld lse_exact = lse_of(X);
      ld s_soft = 0, m_soft = 0, s_log = 0, m_log = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        s_soft += DY[i] * Y[i], m_soft += std::fabs(DY[i] * Y[i]);
        s_log += DY[i], m_log += std::fabs(DY[i]);
      }
      for (std::uint64_t i = 0; i < n; ++i) {
        // softmax: a faithful term, a sum of terms in [0, 1] (relative error h u), one division.
        const ld yref = std::exp(X[i] - lse_exact);
        ASSERT_LE(std::fabs(Y[i] - yref), 2 * (h + 4) * u * yref + test::output_rounding<T>(yref))
            << "softmax row " << r << " element " << i << ": got " << double(Y[i]) << ", reference " << double(yref);
        const ld lref = X[i] - lse_exact;
        ASSERT_LE(std::fabs(LY[i] - lref),
                  4 * h * u * (std::fabs(lse_exact) + 2) + 2 * u * std::fabs(lref) + test::output_rounding<T>(lref))
            << "log_softmax row " << r << " element " << i;
        const ld sref = Y[i] * (DY[i] - s_soft);
        ASSERT_LE(std::fabs(widened_value(dx[at + i]) - sref),
                  2 * (h + 4) * u * std::fabs(Y[i]) * (std::fabs(DY[i]) + m_soft) + test::output_rounding<T>(sref))
            << "softmax_backward row " << r << " element " << i << ": got " << double(widened_value(dx[at + i]))
            << ", reference " << double(sref);
        const ld e = std::exp(LY[i]), lgref = DY[i] - e * s_log;
        ASSERT_LE(std::fabs(widened_value(ldx[at + i]) - lgref),
                  2 * (h + 4) * u * (std::fabs(DY[i]) + e * m_log) + test::output_rounding<T>(lgref))
            << "log_softmax_backward row " << r << " element " << i << ": got " << double(widened_value(ldx[at + i]))
            << ", reference " << double(lgref);
        const ld d = ld(lse[r]) - X[i] < 0 ? X[i] - ld(lse[r]) : ld(lse[r]) - X[i];
        const ld eref = ld(dout[r]) * std::exp(X[i] - ld(lse[r]));
        ASSERT_LE(std::fabs(widened_value(edx[at + i]) - eref),
                  2 * (d + 4) * u * std::fabs(eref) + test::output_rounding<T>(eref))
            << "logsumexp_backward row " << r << " element " << i;
      }
      // Entries past the row's length are not written.
      for (std::uint64_t i = n; i < shape.stride && r + 1 < shape.rows; ++i) {
        ASSERT_EQ(bits_of(dx[at + i]), bits_of(test::make<T>(7.0)));
        ASSERT_EQ(bits_of(ldx[at + i]), bits_of(test::make<T>(7.0)));
        ASSERT_EQ(bits_of(edx[at + i]), bits_of(test::make<T>(7.0)));
      }
    }
  }
}

TEST(SoftmaxFamilyCpu, WithinBoundsOfTheDefinitions) {
  expect_softmax_family_within_bounds<float>(1);
  expect_softmax_family_within_bounds<bfloat16>(2);
  expect_softmax_family_within_bounds<half>(3);
}

// The analytic gradients used above against central finite differences of the long double forward passes, with
// L = sum dy softmax(x), sum dy log_softmax(x) and dout lse(x):
//   softmax:     dL/dx = y (dy - sum dy y);   log_softmax: dL/dx = dy - softmax(x) sum dy;
//   logsumexp:   dL/dx = dout exp(x - lse).
TEST(SoftmaxFamilyCpu, AnalyticGradientsMatchFiniteDifferences) {
  for (std::uint64_t n : {1ull, 2ull, 7ull, 30ull}) {
    std::vector<ld> x(n), dy(n);
    const std::vector<float> xs = test::values_in<float>(n, n, -3, 3), gs = test::values_in<float>(n, n + 1, -1, 1);
    for (std::uint64_t i = 0; i < n; ++i) x[i] = xs[i], dy[i] = gs[i];
    const ld dout = 1.75L;
    const auto losses = [&](const std::vector<ld>& v) {
      const ld l = lse_of(v);
      ld soft = 0, logsoft = 0;
      for (std::uint64_t i = 0; i < n; ++i) soft += dy[i] * std::exp(v[i] - l), logsoft += dy[i] * (v[i] - l);
      return std::vector<ld>{soft, logsoft, dout * l};
    };
    const ld l = lse_of(x);
    ld s_soft = 0, s_log = 0;
    for (std::uint64_t i = 0; i < n; ++i) s_soft += dy[i] * std::exp(x[i] - l), s_log += dy[i];
    const ld step = 1e-6L;
    for (std::uint64_t j = 0; j < n; ++j) {
      std::vector<ld> up = x, down = x;
      up[j] += step, down[j] -= step;
      const std::vector<ld> a = losses(up), b = losses(down);
      const ld y = std::exp(x[j] - l);
      EXPECT_NEAR(double((a[0] - b[0]) / (2 * step)), double(y * (dy[j] - s_soft)), 1e-8) << "softmax n " << n;
      EXPECT_NEAR(double((a[1] - b[1]) / (2 * step)), double(dy[j] - y * s_log), 1e-8) << "log_softmax n " << n;
      EXPECT_NEAR(double((a[2] - b[2]) / (2 * step)), double(dout * std::exp(x[j] - l)), 1e-8) << "lse n " << n;
    }
  }
}

// Batch invariance of every call of the family: the first k rows of a batch give the bits of a batch of k; the same
// rows after `shift` other rows give the same bits (causal rows: shifted by whole periods, so that each row keeps
// its length).
template <class T>
void expect_batch_invariant(const row_shape& shape, std::uint64_t shift_unit) {
  SCOPED_TRACE(std::string(float_traits<T>::name) + " causal " + std::to_string(shape.causal_period));
  const std::uint64_t total = shape.rows * shape.stride;
  const std::vector<T> x = test::values_in<T>(total, 5, -8, 8), dy = test::values_in<T>(total, 6, -1, 1);
  std::vector<float> lse(shape.rows), dout(shape.rows, 1.25f);
  row_logsumexp(x.data(), lse.data(), shape);
  const auto run_all = [&](const T* a, const T* g, const float* l, const float* d, const row_shape& s) {
    const std::uint64_t m = s.rows * s.stride;
    std::vector<T> out(4 * m, T{});
    log_softmax_forward(a, out.data(), s);
    softmax_backward(a, g, out.data() + m, s);
    log_softmax_backward(a, g, out.data() + 2 * m, s);
    row_logsumexp_backward(a, l, d, out.data() + 3 * m, s);
    return out;
  };
  const std::vector<T> all = run_all(x.data(), dy.data(), lse.data(), dout.data(), shape);
  for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{3}, shape.rows - 1}) {
    row_shape part = shape;
    part.rows = k;
    const std::vector<T> got = run_all(x.data(), dy.data(), lse.data(), dout.data(), part);
    const std::uint64_t m = k * shape.stride;
    for (int call = 0; call < 4; ++call)
      ASSERT_EQ(test::first_bit_difference(got.data() + call * m, all.data() + call * total, m), -1)
          << "call " << call << " k " << k;
  }
  const std::uint64_t shift = shift_unit;
  std::vector<T> xs = test::values_in<T>(shift * shape.stride, 11, -8, 8), gs = xs;
  xs.insert(xs.end(), x.begin(), x.end()), gs.insert(gs.end(), dy.begin(), dy.end());
  std::vector<float> ls(shift, 0.5f), ds(shift, 2.0f);
  ls.insert(ls.end(), lse.begin(), lse.end()), ds.insert(ds.end(), dout.begin(), dout.end());
  row_shape shifted = shape;
  shifted.rows += shift;
  const std::vector<T> got = run_all(xs.data(), gs.data(), ls.data(), ds.data(), shifted);
  const std::uint64_t m = shifted.rows * shape.stride;
  for (int call = 0; call < 4; ++call)
    ASSERT_EQ(
        test::first_bit_difference(got.data() + call * m + shift * shape.stride, all.data() + call * total, total), -1)
        << "call " << call << " shift " << shift;
}

TEST(SoftmaxFamilyCpu, BatchInvariantAndPositionFree) {
  expect_batch_invariant<float>(dense_rows(20, 129), 3);
  expect_batch_invariant<bfloat16>(row_shape{20, 100, 104}, 1);
  expect_batch_invariant<half>(row_shape{30, 10, 10, nullptr, 10}, 10);
}

// Special values: a NaN makes its row's outputs the canonical NaN; an all -Inf row's log-softmax is NaN; an empty
// row writes nothing; a bad shape throws naming the field.
TEST(SoftmaxFamilyCpu, SpecialValuesAndShapes) {
  const std::uint64_t c = 8;
  std::vector<float> x = test::values_in<float>(3 * c, 1, -1, 1), dy = test::values_in<float>(3 * c, 2, -1, 1);
  x[c + 2] = std::nanf("");
  dy[c + 2] = std::nanf("");
  for (std::uint64_t i = 2 * c; i < 3 * c; ++i) x[i] = -INFINITY;
  std::vector<float> out(3 * c), dx(3 * c), ldx(3 * c);
  log_softmax_forward(x.data(), out.data(), dense_rows(3, c));
  softmax_backward(x.data(), dy.data(), dx.data(), dense_rows(3, c));
  log_softmax_backward(x.data(), dy.data(), ldx.data(), dense_rows(3, c));
  const auto nan_bits = bits_of(canonical_nan<float>());
  for (std::uint64_t i = c; i < 2 * c; ++i) {
    EXPECT_EQ(bits_of(out[i]), nan_bits) << i;
    EXPECT_EQ(bits_of(dx[i]), nan_bits) << i;
    EXPECT_EQ(bits_of(ldx[i]), nan_bits) << i;
  }
  for (std::uint64_t i = 2 * c; i < 3 * c; ++i) EXPECT_EQ(bits_of(out[i]), nan_bits) << i;
  EXPECT_THROW(log_softmax_forward(x.data(), out.data(), row_shape{3, c, c - 1}), invalid_argument);
  EXPECT_THROW(softmax_backward(x.data(), dy.data(), dx.data(), row_shape{3, 4, 4, nullptr, 5}), invalid_argument);
}

// fill_past_length on causal rows: every masked entry (past the row's length) is +0 (softmax) or -Inf (log_softmax),
// and every kept entry has the bits of the call without the fill.
TEST(SoftmaxFamilyCpu, FillPastLengthWritesTheMaskedEntriesOnly) {
  const std::uint64_t t = 9, rows = 2 * t;
  const row_shape causal{rows, t, t, nullptr, t};
  const std::vector<float> x = test::values_in<float>(rows * t, 3, -4, 4);
  std::vector<float> plain(rows * t, 7.0f), filled(rows * t, 7.0f), lplain(rows * t, 7.0f), lfilled(rows * t, 7.0f);
  softmax_forward(x.data(), plain.data(), causal);
  softmax_forward(x.data(), filled.data(), causal, true);
  log_softmax_forward(x.data(), lplain.data(), causal);
  log_softmax_forward(x.data(), lfilled.data(), causal, true);
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t i = 0; i < t; ++i) {
      const std::uint64_t at = r * t + i;
      if (i <= r % t) {
        EXPECT_EQ(bits_of(filled[at]), bits_of(plain[at])) << r << " " << i;
        EXPECT_EQ(bits_of(lfilled[at]), bits_of(lplain[at])) << r << " " << i;
      } else {
        EXPECT_EQ(bits_of(plain[at]), bits_of(7.0f)) << r << " " << i;  // not written without the fill
        EXPECT_EQ(bits_of(filled[at]), bits_of(0.0f)) << r << " " << i;
        EXPECT_EQ(bits_of(lfilled[at]), bits_of(-INFINITY)) << r << " " << i;
      }
    }
}

}  // namespace
