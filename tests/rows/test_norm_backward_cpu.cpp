// LayerNorm backward's CPU twin (detred::layernorm_backward, detred/norms.hpp) against an independent long double
// evaluation of the analytic gradient written out below, every output (dx, dweight, dbias), for float, bfloat16 and
// half, dense and strided rows; the analytic gradient itself against central finite differences of the long double
// forward pass; batch invariance of dx (the first k rows of a batch give the bits of a batch of k, and a row's bits do
// not move with its position). RMSNorm forward and backward in half against the float-computed bf16/f32 formulas'
// reference. The GPU kernels are compared bit for bit with these twins (test_norm_backward_cuda.cpp). Label cpu.
//
// Bounds (u = 2^-24, h = ceil(log2 C) + 2, h_t the same over the rows; mean and rstd taken as given, as the backward
// receives them): with g = w dy and xhat = (x - mean) rstd, each leaf is within 3u of its value, a canonical sum of C
// leaves within h u of the sum of their magnitudes, and the few operations after it add a few u of their operands, so
//   |dx - ref| <= 2 (h + 8) u rstd (|g| + sum|g| / C + |xhat| sum|g xhat| / C) + rounding to T,
//   |dweight - ref| <= 2 (h_t + 4) u sum_t |dy xhat|,   |dbias - ref| <= 2 h_t u sum_t |dy|.
// docs/ACCURACY.md states them. A planted bug that drops the xhat mean(g xhat) term of dx fails the dx bound by orders
// of magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "detred/norms.hpp"
#include "tests/rows/gradient_inputs.hpp"
#include "tests/rows/row_inputs.hpp"

namespace {
using namespace detred;
using ld = long double;
using test::widened_value;
constexpr ld u = 0x1p-24L;

// The long double LayerNorm of one row (exact mean and rstd) and L = sum dy y: the finite-difference target.
ld layernorm_loss(const std::vector<ld>& x, const std::vector<ld>& w, const std::vector<ld>& b,
                  const std::vector<ld>& dy, ld eps) {
  const ld c = ld(x.size());
  ld m = 0, q = 0, loss = 0;
  for (ld v : x) m += v;
  m /= c;
  for (ld v : x) q += (v - m) * (v - m);
  const ld r = 1 / std::sqrt(q / c + eps);
  for (std::size_t i = 0; i < x.size(); ++i) loss += dy[i] * ((x[i] - m) * r * w[i] + b[i]);
  return loss;
}

// The analytic gradient of one row, given its mean m and rstd r:
//   dL/dx_j = r (g_j - mean(g) - xhat_j mean(g xhat)),  g = w dy, xhat = (x - m) r;
//   dL/dw_j = dy_j xhat_j,  dL/db_j = dy_j (summed over the rows).
struct row_gradient {
  std::vector<ld> dx, dw, db;
};
row_gradient layernorm_gradient(const std::vector<ld>& x, const std::vector<ld>& w, const std::vector<ld>& dy, ld m,
                                ld r) {
  const std::size_t c = x.size();
  ld mean_g = 0, mean_gx = 0;
  for (std::size_t i = 0; i < c; ++i) mean_g += w[i] * dy[i], mean_gx += w[i] * dy[i] * (x[i] - m) * r;
  mean_g /= ld(c), mean_gx /= ld(c);
  row_gradient out{std::vector<ld>(c), std::vector<ld>(c), std::vector<ld>(c)};
  for (std::size_t i = 0; i < c; ++i) {
    const ld xhat = (x[i] - m) * r;
    out.dx[i] = r * (w[i] * dy[i] - mean_g - xhat * mean_gx);
    out.dw[i] = dy[i] * xhat;
    out.db[i] = dy[i];
  }
  return out;
}

TEST(LayerNormBackwardCpu, AnalyticGradientMatchesFiniteDifferences) {
  for (std::uint64_t c : {1ull, 2ull, 5ull, 16ull, 33ull}) {
    const std::vector<double> xs = [&] {
      std::vector<double> v;
      for (float f : test::values_in<float>(c, 10 + c, -2, 2)) v.push_back(f);
      return v;
    }();
    std::vector<ld> x(xs.begin(), xs.end()), w(c), b(c), dy(c);
    for (std::uint64_t i = 0; i < c; ++i) w[i] = 0.5L + ld(i % 3), b[i] = ld(i % 2) - 0.25L, dy[i] = ld(i % 5) - 1.5L;
    const ld eps = 1e-5L;
    ld m = 0, q = 0;
    for (ld v : x) m += v;
    m /= ld(c);
    for (ld v : x) q += (v - m) * (v - m);
    const ld r = 1 / std::sqrt(q / ld(c) + eps);
    const row_gradient g = layernorm_gradient(x, w, dy, m, r);
    const ld step = 1e-6L;
    for (std::uint64_t j = 0; j < c; ++j) {
      const auto central = [&](std::vector<ld>& v) {
        const ld keep = v[j];
        v[j] = keep + step;
        const ld up = layernorm_loss(x, w, b, dy, eps);
        v[j] = keep - step;
        const ld down = layernorm_loss(x, w, b, dy, eps);
        v[j] = keep;
        return (up - down) / (2 * step);
      };
      EXPECT_NEAR(double(central(x)), double(g.dx[j]), 1e-7 * double(1 + r)) << "dx, C " << c << " j " << j;
      EXPECT_NEAR(double(central(w)), double(g.dw[j]), 1e-7) << "dweight, C " << c << " j " << j;
      EXPECT_NEAR(double(central(b)), double(g.db[j]), 1e-7) << "dbias, C " << c << " j " << j;
    }
  }
}

// Runs layernorm_forward (for mean and rstd) and layernorm_backward on [rows x c] rows `stride` apart and checks every
// output against the analytic gradient, with the mean and rstd the forward gave.
template <class T>
void expect_layernorm_backward_within_bounds(std::uint64_t rows, std::uint64_t c, std::uint64_t stride,
                                             std::uint64_t seed) {
  const std::string where = std::string(float_traits<T>::name) + " " + std::to_string(rows) + " x " +
                            std::to_string(c) + " stride " + std::to_string(stride);
  SCOPED_TRACE(where);
  const std::uint64_t n = rows * stride;
  const std::vector<T> x = test::values_in<T>(n, seed, -3, 5), dy = test::values_in<T>(n, seed + 1, -2, 2);
  const std::vector<T> w = test::values_in<T>(c, seed + 2, -2, 2), b = test::values_in<T>(c, seed + 3, -1, 1);
  std::vector<float> mean(rows), rstd(rows), dweight(c), dbias(c);
  {  // The statistics: the forward of each row on its own (dense).
    std::vector<T> row(c), out(c);
    for (std::uint64_t t = 0; t < rows; ++t) {
      for (std::uint64_t i = 0; i < c; ++i) row[i] = x[t * stride + i];
      layernorm_forward(row.data(), w.data(), b.data(), out.data(), &mean[t], &rstd[t], dense_rows(1, c));
    }
  }
  std::vector<T> dx(n, test::make<T>(7.0));
  layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), dweight.data(), dbias.data(),
                     row_shape{rows, c, stride});
  const ld h = test::tree_depth(c), ht = test::tree_depth(rows);
  std::vector<ld> dw_ref(c, 0), db_ref(c, 0), dw_mag(c, 0), db_mag(c, 0);
  for (std::uint64_t t = 0; t < rows; ++t) {
    std::vector<ld> X(c), W(c), DY(c);
    for (std::uint64_t i = 0; i < c; ++i)
      X[i] = widened_value(x[t * stride + i]), W[i] = widened_value(w[i]), DY[i] = widened_value(dy[t * stride + i]);
    const ld m = mean[t], r = rstd[t];
    const row_gradient ref = layernorm_gradient(X, W, DY, m, r);
    ld sum_g = 0, sum_gx = 0;
    for (std::uint64_t i = 0; i < c; ++i)
      sum_g += std::fabs(W[i] * DY[i]), sum_gx += std::fabs(W[i] * DY[i] * (X[i] - m) * r);
    for (std::uint64_t i = 0; i < c; ++i) {
      const ld xhat = (X[i] - m) * r;
      const ld bound =
          2 * (h + 8) * u * r * (std::fabs(W[i] * DY[i]) + sum_g / ld(c) + std::fabs(xhat) * sum_gx / ld(c)) +
          test::output_rounding<T>(ref.dx[i]);
      ASSERT_LE(std::fabs(widened_value(dx[t * stride + i]) - ref.dx[i]), bound)
          << "dx row " << t << " column " << i << ": got " << double(widened_value(dx[t * stride + i]))
          << ", reference " << double(ref.dx[i]);
      dw_ref[i] += ref.dw[i], db_ref[i] += ref.db[i];
      dw_mag[i] += std::fabs(ref.dw[i]), db_mag[i] += std::fabs(ref.db[i]);
    }
    for (std::uint64_t i = c; i < stride && t + 1 < rows; ++i)
      ASSERT_EQ(bits_of(dx[t * stride + i]), bits_of(test::make<T>(7.0))) << "dx written past cols, row " << t;
  }
  for (std::uint64_t i = 0; i < c; ++i) {
    EXPECT_LE(std::fabs(ld(dweight[i]) - dw_ref[i]), 2 * (ht + 4) * u * dw_mag[i]) << "dweight column " << i;
    EXPECT_LE(std::fabs(ld(dbias[i]) - db_ref[i]), 2 * ht * u * db_mag[i]) << "dbias column " << i;
  }
}

TEST(LayerNormBackwardCpu, WithinBoundsOfTheAnalyticGradient) {
  for (std::uint64_t c : {1ull, 3ull, 64ull, 100ull, 768ull, 1031ull}) {
    expect_layernorm_backward_within_bounds<float>(9, c, c, 1 + c);
    expect_layernorm_backward_within_bounds<bfloat16>(9, c, c, 2 + c);
    expect_layernorm_backward_within_bounds<half>(9, c, c, 3 + c);
  }
  expect_layernorm_backward_within_bounds<float>(300, 40, 40, 4);     // dweight / dbias over many rows
  expect_layernorm_backward_within_bounds<bfloat16>(7, 100, 136, 5);  // strided rows
  expect_layernorm_backward_within_bounds<half>(5, 13, 21, 6);
}

// The first k rows of a batch give the bits of a batch of k, and a row's dx bits do not depend on its position: the
// same rows after `shift` other rows give the same dx.
template <class T>
void expect_layernorm_backward_batch_invariant(std::uint64_t rows, std::uint64_t c) {
  SCOPED_TRACE(std::string(float_traits<T>::name) + " C " + std::to_string(c));
  const std::vector<T> x = test::values_in<T>(rows * c, 1, -3, 3), dy = test::values_in<T>(rows * c, 2, -1, 1),
                       w = test::values_in<T>(c, 3, -2, 2);
  std::vector<float> mean(rows), rstd(rows), dw(c), db(c);
  for (std::uint64_t t = 0; t < rows; ++t) mean[t] = float(t % 3) * 0.25f, rstd[t] = 1.0f + float(t % 5);
  std::vector<T> all(rows * c);
  layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), all.data(), dw.data(), db.data(),
                     dense_rows(rows, c));
  for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{7}, rows - 1}) {
    std::vector<T> part(k * c);
    layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), part.data(), dw.data(), db.data(),
                       dense_rows(k, c));
    ASSERT_EQ(test::first_bit_difference(part.data(), all.data(), k * c), -1) << "k " << k;
  }
  for (std::uint64_t shift : {1ull, 5ull}) {
    std::vector<T> xs = test::values_in<T>(shift * c, 9, -3, 3), dys = test::values_in<T>(shift * c, 8, -1, 1);
    xs.insert(xs.end(), x.begin(), x.end()), dys.insert(dys.end(), dy.begin(), dy.end());
    std::vector<float> ms(shift, 0.5f), rs(shift, 2.0f);
    ms.insert(ms.end(), mean.begin(), mean.end()), rs.insert(rs.end(), rstd.begin(), rstd.end());
    std::vector<T> out((rows + shift) * c);
    layernorm_backward(dys.data(), xs.data(), w.data(), ms.data(), rs.data(), out.data(), dw.data(), db.data(),
                       dense_rows(rows + shift, c));
    ASSERT_EQ(test::first_bit_difference(out.data() + shift * c, all.data(), rows * c), -1) << "shift " << shift;
  }
}

TEST(LayerNormBackwardCpu, BatchInvariantAndPositionFree) {
  expect_layernorm_backward_batch_invariant<float>(33, 70);
  expect_layernorm_backward_batch_invariant<bfloat16>(33, 257);
  expect_layernorm_backward_batch_invariant<half>(20, 64);
}

// dweight and dbias: column reductions canonical over the rows, so their bits are those of detred::column_sum of the
// leaves (dbias: of dy itself); -0.0 for no rows; NaN in dx, dweight and dbias canonical.
TEST(LayerNormBackwardCpu, ColumnSumsAreCanonicalAndEdgesHold) {
  const std::uint64_t rows = 45, c = 24;
  const std::vector<float> x = test::values_in<float>(rows * c, 1, -3, 3),
                           dy = test::values_in<float>(rows * c, 2, -1, 1), w = test::values_in<float>(c, 3, -2, 2);
  std::vector<float> mean(rows, 0.125f), rstd(rows, 1.5f), dw(c), db(c), dx(rows * c), leaves(rows * c), ref(c);
  layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), dw.data(), db.data(),
                     dense_rows(rows, c));
  column_sum(dy.data(), ref.data(), dense_rows(rows, c));
  EXPECT_EQ(test::first_bit_difference(db.data(), ref.data(), c), -1);
  for (std::uint64_t k = 0; k < rows * c; ++k) leaves[k] = norms::layernorm_dweight_leaf(dy[k], x[k], 0.125f, 1.5f);
  column_sum(leaves.data(), ref.data(), dense_rows(rows, c));
  EXPECT_EQ(test::first_bit_difference(dw.data(), ref.data(), c), -1);

  std::vector<float> none_w(c, 1.0f), none_b(c, 1.0f);
  layernorm_backward<float>(nullptr, nullptr, w.data(), nullptr, nullptr, nullptr, none_w.data(), none_b.data(),
                            dense_rows(0, c));
  for (std::uint64_t i = 0; i < c; ++i) {
    EXPECT_EQ(bits_of(none_w[i]), 0x80000000u);
    EXPECT_EQ(bits_of(none_b[i]), 0x80000000u);
  }

  std::vector<float> xn = x;
  xn[3] = std::nanf("");
  layernorm_backward(dy.data(), xn.data(), w.data(), mean.data(), rstd.data(), dx.data(), dw.data(), db.data(),
                     dense_rows(rows, c));
  for (std::uint64_t i = 0; i < c; ++i) EXPECT_EQ(bits_of(dx[i]), bits_of(canonical_nan<float>())) << i;
  EXPECT_EQ(bits_of(dw[3]), bits_of(canonical_nan<float>()));

  EXPECT_THROW(layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), dw.data(),
                                  db.data(), row_shape{rows, c, c, nullptr, c}),
               invalid_argument);
  EXPECT_THROW(layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), dw.data(),
                                  db.data(), row_shape{rows, c, c - 1}),
               invalid_argument);
}

// RMSNorm forward and backward in half: the same formulas as float and bfloat16, against the long double gradient
// rmsnorm's twin documents (dx = w dy r - x r^3 sum(w dy x) / C), within the bound of test_norms_cpu.cpp.
TEST(RmsNormCpu, HalfWithinBounds) {
  const std::uint64_t rows = 6, c = 200;
  const std::vector<half> x = test::values_in<half>(rows * c, 1, -3, 3), w = test::values_in<half>(c, 2, -2, 2),
                          dy = test::values_in<half>(rows * c, 3, -1, 1);
  std::vector<half> out(rows * c), dx(rows * c);
  std::vector<float> rstd(rows), dweight(c);
  rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), dense_rows(rows, c));
  rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), dense_rows(rows, c));
  const ld K = 4 * (test::tree_depth(c) + 8) * u;
  for (std::uint64_t t = 0; t < rows; ++t) {
    ld q = 0, dot = 0, abs_dot = 0;
    for (std::uint64_t i = 0; i < c; ++i) {
      const ld X = widened_value(x[t * c + i]), W = widened_value(w[i]), G = widened_value(dy[t * c + i]);
      q += X * X, dot += W * G * X, abs_dot += std::fabs(W * G * X);
    }
    const ld r = 1 / std::sqrt(q / ld(c) + 1e-5L);
    EXPECT_LE(std::fabs(ld(rstd[t]) - r), K * r);
    for (std::uint64_t i = 0; i < c; ++i) {
      const ld X = widened_value(x[t * c + i]), W = widened_value(w[i]), G = widened_value(dy[t * c + i]);
      const ld y = X * r * W, d = W * G * r - X * r * r * r * dot / ld(c);
      EXPECT_LE(std::fabs(widened_value(out[t * c + i]) - y), K * std::fabs(y) + test::output_rounding<half>(y));
      EXPECT_LE(
          std::fabs(widened_value(dx[t * c + i]) - d),
          3 * K * (std::fabs(W * G) * r + std::fabs(X) * r * r * r * abs_dot / ld(c)) + test::output_rounding<half>(d));
    }
  }
}

}  // namespace
