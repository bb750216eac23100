// The norms' CPU references (detred/norms.hpp) against an independent long double evaluation of their mathematical
// definitions, every output: LayerNorm's out, mean and rstd; RMSNorm's out and rstd; RMSNorm backward's dx and
// dweight from the analytic gradient written out below; softmax's out. The GPU kernels are compared bit for bit with
// these references (tests/rows/test_norms_cuda.cpp), so they inherit the check. The analytic gradient is itself
// checked against central finite differences of the long double forward pass. Label cpu.
//
// Bounds (u = 2^-24, h = ceil(log2 C) + 2 the depth of a canonical tree over C terms plus one, inputs with
// |mean| <= a few standard deviations): a canonical sum of C terms is within h u sum|terms| of the exact one; rsqrt is
// faithful (2u); so mean is within (h + 1) u sum|x| / C and rstd within K = 4 (h + 8) u relative. Each output is then
// within K u times the sum of the magnitudes of the terms of its formula (K u |w| r (|x - mu| + sum|x| / C) + K u |b|
// for LayerNorm, and so on below), plus half an ulp of the output type (2^-8 relative for bfloat16). A planted
// rstd^2 in place of rstd^3 in RMSNorm backward is off by a factor r (here about 1e-3) and fails by far.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "detred/norms.hpp"
#include "tests/rows/row_inputs.hpp"

namespace {
using namespace detred;
using ld = long double;

template <class T>
ld val(T x) {
  return ld(widen<float>(x));
}

constexpr ld u = 0x1p-24L;

ld depth(std::uint64_t n) { return ld(std::ceil(std::log2(double(n < 1 ? 1 : n)))) + 2; }

template <class T>
ld output_rounding(ld reference) {
  return sizeof(T) == 2 ? std::fabs(reference) * 0x1p-8L : 0;
}

// rstd of a row by its definition: 1 / sqrt(mean((x - centre)^2) + eps).
ld reference_rstd(const std::vector<ld>& row, ld centre, ld eps) {
  ld q = 0;
  for (ld v : row) q += (v - centre) * (v - centre);
  return 1 / std::sqrt(q / ld(row.size()) + eps);
}

template <class T>
std::vector<ld> row_of(const std::vector<T>& x, std::uint64_t t, std::uint64_t c) {
  std::vector<ld> r(c);
  for (std::uint64_t i = 0; i < c; ++i) r[i] = val(x[t * c + i]);
  return r;
}

template <class T>
void expect_layernorm_within_bounds(std::uint64_t rows, std::uint64_t c, std::uint64_t seed) {
  const std::vector<T> x = test::random_values<T>(rows * c, seed), w = test::random_values<T>(c, seed + 1),
                       b = test::random_values<T>(c, seed + 2);
  std::vector<T> out(rows * c);
  std::vector<float> mean(rows), rstd(rows);
  layernorm_forward(x.data(), w.data(), b.data(), out.data(), mean.data(), rstd.data(), dense_rows(rows, c));
  const ld K = 4 * (depth(c) + 8) * u;
  for (std::uint64_t t = 0; t < rows; ++t) {
    const std::vector<ld> row = row_of(x, t, c);
    ld mu = 0, abs_sum = 0;
    for (ld v : row) mu += v, abs_sum += std::fabs(v);
    mu /= ld(c);
    const ld r = reference_rstd(row, mu, 1e-5L);
    const std::string where =
        std::string(float_traits<T>::name) + " C=" + std::to_string(c) + " row " + std::to_string(t);
    EXPECT_LE(std::fabs(ld(mean[t]) - mu), K * abs_sum / ld(c)) << "mean " << where;
    EXPECT_LE(std::fabs(ld(rstd[t]) - r), K * r) << "rstd " << where;
    for (std::uint64_t i = 0; i < c; ++i) {
      const ld ref = (row[i] - mu) * r * val(w[i]) + val(b[i]);
      const ld bound =
          K * (std::fabs(val(w[i])) * r * (std::fabs(row[i] - mu) + abs_sum / ld(c)) + std::fabs(val(b[i]))) +
          output_rounding<T>(ref);
      ASSERT_LE(std::fabs(val(out[t * c + i]) - ref), bound) << "out " << where << " column " << i;
    }
  }
}

// RMSNorm: y = x r w with r = 1 / sqrt(mean(x^2) + eps). For L = sum dy y the analytic gradient is
//   dL/dx_j = w_j dy_j r - x_j r^3 (sum_i w_i dy_i x_i) / C,    dL/dw_i = sum_t dy_ti x_ti r_t.
struct rms_reference {
  std::vector<ld> rstd, out, dx, dweight;
};

rms_reference reference_rmsnorm(const std::vector<ld>& x, const std::vector<ld>& w, const std::vector<ld>& dy,
                                std::uint64_t rows, std::uint64_t c, ld eps) {
  rms_reference ref{std::vector<ld>(rows), std::vector<ld>(rows * c), std::vector<ld>(rows * c), std::vector<ld>(c, 0)};
  for (std::uint64_t t = 0; t < rows; ++t) {
    ld q = 0, dot = 0;
    for (std::uint64_t i = 0; i < c; ++i) q += x[t * c + i] * x[t * c + i];
    const ld r = 1 / std::sqrt(q / ld(c) + eps);
    for (std::uint64_t i = 0; i < c; ++i) dot += w[i] * dy[t * c + i] * x[t * c + i];
    ref.rstd[t] = r;
    for (std::uint64_t i = 0; i < c; ++i) {
      ref.out[t * c + i] = x[t * c + i] * r * w[i];
      ref.dx[t * c + i] = w[i] * dy[t * c + i] * r - x[t * c + i] * r * r * r * dot / ld(c);
      ref.dweight[i] += dy[t * c + i] * x[t * c + i] * r;
    }
  }
  return ref;
}

template <class T>
std::vector<ld> widened(const std::vector<T>& v) {
  std::vector<ld> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = val(v[i]);
  return out;
}

template <class T>
void expect_rmsnorm_within_bounds(std::uint64_t rows, std::uint64_t c, std::uint64_t seed) {
  const std::vector<T> x = test::random_values<T>(rows * c, seed), w = test::random_values<T>(c, seed + 1),
                       dy = test::random_values<T>(rows * c, seed + 2);
  std::vector<T> out(rows * c), dx(rows * c);
  std::vector<float> rstd(rows), dweight(c);
  rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), dense_rows(rows, c));
  rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), dense_rows(rows, c));
  const std::vector<ld> X = widened(x), W = widened(w), DY = widened(dy);
  const rms_reference ref = reference_rmsnorm(X, W, DY, rows, c, 1e-5L);
  const ld K = 4 * (depth(c) + 8) * u;
  for (std::uint64_t t = 0; t < rows; ++t) {
    const std::string where =
        std::string(float_traits<T>::name) + " C=" + std::to_string(c) + " row " + std::to_string(t);
    const ld r = ref.rstd[t];
    EXPECT_LE(std::fabs(ld(rstd[t]) - r), K * r) << "rstd " << where;
    ld abs_dot = 0;
    for (std::uint64_t i = 0; i < c; ++i) abs_dot += std::fabs(W[i] * DY[t * c + i] * X[t * c + i]);
    for (std::uint64_t i = 0; i < c; ++i) {
      const std::size_t k = t * c + i;
      const ld out_bound = K * std::fabs(X[k] * r * W[i]) + output_rounding<T>(ref.out[k]);
      ASSERT_LE(std::fabs(val(out[k]) - ref.out[k]), out_bound) << "out " << where << " column " << i;
      const ld dx_bound = 3 * K * (std::fabs(W[i] * DY[k]) * r + std::fabs(X[k]) * r * r * r * abs_dot / ld(c)) +
                          output_rounding<T>(ref.dx[k]);
      ASSERT_LE(std::fabs(val(dx[k]) - ref.dx[k]), dx_bound)
          << "dx " << where << " column " << i << ": got " << double(val(dx[k])) << ", reference " << double(ref.dx[k]);
    }
  }
  const ld Kw = 4 * (depth(rows) + depth(c) + 8) * u;
  for (std::uint64_t i = 0; i < c; ++i) {
    ld magnitude = 0;
    for (std::uint64_t t = 0; t < rows; ++t) magnitude += std::fabs(DY[t * c + i] * X[t * c + i]) * ref.rstd[t];
    ASSERT_LE(std::fabs(ld(dweight[i]) - ref.dweight[i]), Kw * magnitude)
        << "dweight " << float_traits<T>::name << " C=" << c << " column " << i;
  }
}

// Softmax: out_i = exp(x_i - lse), lse = log sum exp(x). detred's lse is within 4 u (log2 n + 2)(|lse| + 2)
// (detred/rows.hpp); exp adds 2u, the subtraction u |x_i - lse|, the output rounding half an ulp of T (and 2^-132
// absolute where the result is subnormal). Logits uniform in [-8, 8).
template <class T>
void expect_softmax_within_bounds(const row_shape& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> logits(-8.0, 8.0);
  std::vector<T> x(shape.rows * shape.stride), out(x.size(), test::make<T>(0.0));
  for (T& v : x) v = test::make<T>(logits(rng));
  softmax_forward(x.data(), out.data(), shape);
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const std::uint64_t n = shape.length(r);
    ld big = -INFINITY, s = 0;
    for (std::uint64_t i = 0; i < n; ++i) big = std::fmax(big, val(x[r * shape.stride + i]));
    for (std::uint64_t i = 0; i < n; ++i) s += std::exp(val(x[r * shape.stride + i]) - big);
    const ld lse = big + std::log(s);
    const ld lse_error = 4 * u * (std::log2(ld(n)) + 2) * (std::fabs(lse) + 2);
    for (std::uint64_t i = 0; i < n; ++i) {
      const ld xi = val(x[r * shape.stride + i]), ref = std::exp(xi - lse);
      const ld bound =
          ref * 1.01L * (lse_error + u * std::fabs(xi - lse) + 4 * u) + output_rounding<T>(ref) + 0x1p-132L;
      ASSERT_LE(std::fabs(val(out[r * shape.stride + i]) - ref), bound)
          << float_traits<T>::name << " row " << r << " of length " << n << " column " << i;
    }
  }
}

TEST(NormsCpu, LayerNormOutputsWithinStatedBoundsOfLongDouble) {
  for (std::uint64_t c : {1u, 7u, 64u, 768u, 1000u}) {
    expect_layernorm_within_bounds<float>(4, c, c + 11);
    expect_layernorm_within_bounds<bfloat16>(4, c, c + 12);
  }
}

TEST(NormsCpu, RmsNormOutputsAndGradientsWithinStatedBoundsOfTheAnalyticGradient) {
  for (std::uint64_t c : {1u, 7u, 64u, 768u, 1000u}) {
    expect_rmsnorm_within_bounds<float>(5, c, c + 21);
    expect_rmsnorm_within_bounds<bfloat16>(5, c, c + 22);
  }
}

TEST(NormsCpu, SoftmaxOutputsWithinStatedBoundsOfLongDouble) {
  expect_softmax_within_bounds<float>(dense_rows(6, 100), 31);
  expect_softmax_within_bounds<bfloat16>(dense_rows(6, 1000), 32);
  expect_softmax_within_bounds<float>(row_shape{9, 64, 70, nullptr, 5}, 33);
}

// The analytic gradient above against central differences of the long double forward pass L(x, w) = sum dy y: each
// dL/dx_j and dL/dw_i within 1e-6 relative of (L(+h) - L(-h)) / 2h, h = 1e-5 |x_j| (the difference's error is
// O(h^2) relative plus 2^-64 / h).
TEST(NormsCpu, RmsNormAnalyticGradientEqualsFiniteDifferences) {
  const std::uint64_t rows = 3, c = 9;
  const std::vector<float> xf = test::random_values<float>(rows * c, 41), wf = test::random_values<float>(c, 42),
                           dyf = test::random_values<float>(rows * c, 43);
  std::vector<ld> x = widened(xf), w = widened(wf);
  const std::vector<ld> dy = widened(dyf);
  const rms_reference ref = reference_rmsnorm(x, w, dy, rows, c, 1e-5L);
  auto loss = [&] {
    const rms_reference f = reference_rmsnorm(x, w, dy, rows, c, 1e-5L);
    ld l = 0;
    for (std::size_t k = 0; k < f.out.size(); ++k) l += dy[k] * f.out[k];
    return l;
  };
  auto central = [&](ld& v) {
    const ld keep = v, h = 1e-5L * std::fabs(keep);
    v = keep + h;
    const ld up = loss();
    v = keep - h;
    const ld down = loss();
    v = keep;
    return (up - down) / (2 * h);
  };
  ld scale = 0;
  for (ld g : ref.dx) scale = std::fmax(scale, std::fabs(g));
  for (std::size_t k = 0; k < x.size(); ++k)
    EXPECT_NEAR(double(central(x[k])), double(ref.dx[k]), 1e-6 * double(scale)) << k;
  scale = 0;
  for (ld g : ref.dweight) scale = std::fmax(scale, std::fabs(g));
  for (std::size_t i = 0; i < c; ++i)
    EXPECT_NEAR(double(central(w[i])), double(ref.dweight[i]), 1e-6 * double(scale)) << i;
}

}  // namespace
