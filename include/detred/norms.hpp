// LayerNorm, RMSNorm (forward and backward) and softmax on the CPU: the twins of the device calls of the same names
// (detred/cuda/norms.hpp), with the same arguments less the workspace and the stream, and the same bits.
//
// Contract. Every row reduction is the canonical one (docs/ORDER.md) of that row alone, so each row's outputs are
// batch-invariant (the first k rows of a batch give the bits of a batch of k, whatever the other rows) and the device
// calls give the same bits (determinism::cpu_gpu). T float, bfloat16 or half; float accumulation and statistics; the
// per-element formulas are in detred/rows/norm_formulas.hpp and detred/rows/gradient_formulas.hpp (every operation
// rounded once, no FMA; exp and rsqrt from detred::specified). LayerNorm's and RMSNorm's forward calls and
// rmsnorm_backward take a dense [rows x cols] shape (dense_rows); layernorm_backward takes full rows with any stride;
// the softmax family takes any row_shape (strided, per-row lengths, causal). A shape a call does not support throws
// detred::invalid_argument naming the field.
#pragma once

#include <cstdint>
#include <vector>

#include "detred/rows.hpp"
#include "detred/rows/gradient_formulas.hpp"
#include "detred/rows/norm_formulas.hpp"

namespace detred {

namespace detail {
// The shape of layernorm_backward: full rows of `cols` elements, `stride` apart (lengths and causal_period rejected).
inline void check_full_rows_shape(const row_shape& shape, const char* what) {
  if (shape.lengths != nullptr) throw_invalid(what, "row_shape.lengths must be null (rows of cols elements)");
  if (shape.causal_period != 0) throw_invalid(what, "row_shape.causal_period must be 0 (rows of cols elements)");
  if (shape.rows > 1 && shape.stride < shape.cols) throw_invalid(what, "row_shape.stride must be >= cols");
}
}  // namespace detail

// out = (x - mean) rstd weight + bias row by row; mean[t] and rstd[t] = 1/sqrt(var + eps) per row (population
// variance, from a second canonical pass over the centred row). NaN or Inf in a row makes its outputs NaN or Inf as the
// formulas do; rows of length 0 (cols = 0) write nothing.
template <class T>
void layernorm_forward(const T* x, const T* weight, const T* bias, T* out, float* mean, float* rstd,
                       const row_shape& shape, float eps = 1e-5f) {
  detail::check_dense_shape(shape, "layernorm_forward");
  const std::uint64_t c = shape.cols;
  if (c == 0) return;
  for (std::uint64_t t = 0; t < shape.rows; ++t) {
    const T* row = x + t * c;
    using Acc = plain_accumulator<float>;
    const float m = norms::mean_of(canonical_row_root<Acc>(row, c, widened_leaf<Acc>{}).result(), c);
    const float rs = norms::rstd_of(canonical_row_root<Acc>(row, c, norms::centered_square_leaf{m}).result(), c, eps);
    for (std::uint64_t i = 0; i < c; ++i) out[t * c + i] = norms::layernorm_value(row[i], m, rs, weight[i], bias[i]);
    mean[t] = m;
    rstd[t] = rs;
  }
}

// out = x rstd weight, rstd[t] = 1/sqrt(mean(x^2) + eps) per row (the canonical sum of the row's squares). NaN or
// Inf in a row propagate through the formulas; rows of length 0 (cols = 0) write nothing.
template <class T>
void rmsnorm_forward(const T* x, const T* weight, T* out, float* rstd, const row_shape& shape, float eps = 1e-5f) {
  detail::check_dense_shape(shape, "rmsnorm_forward");
  const std::uint64_t c = shape.cols;
  if (c == 0) return;
  for (std::uint64_t t = 0; t < shape.rows; ++t) {
    const T* row = x + t * c;
    using Acc = plain_accumulator<float>;
    const float rs = norms::rstd_of(canonical_row_root<Acc>(row, c, norms::square_leaf{}).result(), c, eps);
    for (std::uint64_t i = 0; i < c; ++i) out[t * c + i] = norms::rmsnorm_value(row[i], rs, weight[i]);
    rstd[t] = rs;
  }
}

// The gradients of rmsnorm_forward given dy and its rstd: dx row by row (from the canonical dot of (weight dy) and x)
// and dweight[i] = sum over t of (dy x)[t, i] rstd[t], canonical over t (a column reduction: the same bits as the
// device's for every launch). dweight is -0.0 when rows is 0.
template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* weight, const float* rstd, T* dx, float* dweight,
                      const row_shape& shape) {
  detail::check_dense_shape(shape, "rmsnorm_backward");
  const std::uint64_t rows = shape.rows, c = shape.cols;
  if (c == 0) return;
  for (std::uint64_t t = 0; t < rows; ++t) {
    const T* g = dy + t * c;
    const float dot =
        canonical_row_root<plain_accumulator<float>>(g, c, norms::weighted_dot_leaf<T>{weight, x + t * c}).result();
    const float k = norms::rmsnorm_backward_k(rstd[t], dot, c);
    for (std::uint64_t i = 0; i < c; ++i) dx[t * c + i] = norms::rmsnorm_dx(g[i], x[t * c + i], weight[i], rstd[t], k);
  }
  std::vector<pairwise_accumulator<plain_accumulator<float>>> acc(c);
  for (std::uint64_t t = 0; t < rows; ++t)
    for (std::uint64_t i = 0; i < c; ++i) acc[i].add(norms::rmsnorm_dweight_leaf(dy[t * c + i], x[t * c + i], rstd[t]));
  for (std::uint64_t i = 0; i < c; ++i) dweight[i] = canonicalize_nan(acc[i].result());
}

// out[r, i] = exp(x[r, i] - m_r) / s_r for i < shape.length(r), m_r and s_r the two passes of row_logsumexp of row r
// (the maximum, and the canonical sum of the same exp(x - m) terms; full, strided, per-row lengths or causal rows);
// out has x's layout; entries past a row's length are not written. Error: the term's (under 1 ulp), the sum's
// (row_sum's bound over terms in [0, 1]) and the division's rounding. A row whose maximum is not finite (a NaN, a
// +Inf, or only -Inf) is NaN (canonical) throughout. fill_past_length: also write +0 into the entries
// [length(r), cols) of every row (what a causal mask leaves; cuda::row_options::fill_past_length).
template <class T>
void softmax_forward(const T* x, T* out, const row_shape& shape, bool fill_past_length = false) {
  detail::check_row_shape(shape, "softmax_forward");
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const logsumexp_parts<float> parts = canonical_row_logsumexp<float>(row, n);
    for (std::uint64_t i = 0; i < n; ++i) out[r * shape.stride + i] = norms::softmax_value(row[i], parts);
    if (fill_past_length)
      for (std::uint64_t i = n; i < shape.cols; ++i) out[r * shape.stride + i] = norms::softmax_fill<T>();
  }
}

// The gradients of layernorm_forward given dy and its mean and rstd (xhat = (x - mean) rstd, g = weight dy): dx row by
// row, dx = rstd ((g - sum(g) / C) - xhat sum(g xhat) / C), the two row sums canonical over the row (one tree,
// componentwise); dweight[i] = sum over t of (dy xhat)[t, i] and dbias[i] = sum over t of dy[t, i], canonical over t
// (column reductions: the device's bits for every launch). Rows of `cols` elements, `stride` apart (dy, x and dx share
// the layout); lengths and causal_period are rejected. dweight and dbias are -0.0 when rows is 0; cols = 0 writes
// nothing. NaN or Inf in a row make its dx NaN or Inf as the formula does (NaN canonical).
template <class T>
void layernorm_backward(const T* dy, const T* x, const T* weight, const float* mean, const float* rstd, T* dx,
                        float* dweight, float* dbias, const row_shape& shape) {
  detail::check_full_rows_shape(shape, "layernorm_backward");
  const std::uint64_t rows = shape.rows, c = shape.cols, stride = shape.stride;
  if (c == 0) return;
  for (std::uint64_t t = 0; t < rows; ++t) {
    const T* g = dy + t * stride;
    const T* xr = x + t * stride;
    const norms::sum_pair s =
        canonical_row_root<norms::sum_pair>(g, c, norms::layernorm_backward_leaf<T>{weight, xr, mean[t], rstd[t]});
    const float mean_g = s.first / float(c), mean_gxhat = s.second / float(c);
    for (std::uint64_t i = 0; i < c; ++i)
      dx[t * stride + i] = norms::layernorm_dx(g[i], xr[i], weight[i], mean[t], rstd[t], mean_g, mean_gxhat);
  }
  std::vector<pairwise_accumulator<plain_accumulator<float>>> w_acc(c), b_acc(c);
  for (std::uint64_t t = 0; t < rows; ++t)
    for (std::uint64_t i = 0; i < c; ++i) {
      const float g = widen<float>(dy[t * stride + i]);
      w_acc[i].add(norms::layernorm_dweight_leaf(g, widen<float>(x[t * stride + i]), mean[t], rstd[t]));
      b_acc[i].add(g);
    }
  for (std::uint64_t i = 0; i < c; ++i) {
    dweight[i] = canonicalize_nan(w_acc[i].result());
    dbias[i] = canonicalize_nan(b_acc[i].result());
  }
}

// out[r, i] = x[r, i] - lse_r for i < shape.length(r), lse_r = row_logsumexp of row r (full, strided, per-row lengths
// or causal rows); out has x's layout; entries past a row's length are not written. Error: |lse| error (row_logsumexp)
// plus the roundings of the subtraction and of T. A NaN makes its row NaN; a row holding +Inf gives NaN at its +Inf
// entries and -Inf elsewhere; an all -Inf row gives NaN (canonical NaN). fill_past_length: also write -Inf into the
// entries [length(r), cols) of every row (as softmax_forward's).
template <class T>
void log_softmax_forward(const T* x, T* out, const row_shape& shape, bool fill_past_length = false) {
  detail::check_row_shape(shape, "log_softmax_forward");
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const float lse = canonical_row_logsumexp<float>(row, n).result();
    for (std::uint64_t i = 0; i < n; ++i) out[r * shape.stride + i] = norms::log_softmax_value(row[i], lse);
    if (fill_past_length)
      for (std::uint64_t i = n; i < shape.cols; ++i) out[r * shape.stride + i] = norms::log_softmax_fill<T>();
  }
}

// The gradient of softmax_forward given its output y and dy: dx[r, i] = y (dy - s_r), s_r = sum over the row of dy y,
// canonical over the row's length(r) elements (any row_shape; y, dy and dx share the layout; entries past a row's
// length are not written). NaN canonical.
template <class T>
void softmax_backward(const T* y, const T* dy, T* dx, const row_shape& shape) {
  detail::check_row_shape(shape, "softmax_backward");
  using Acc = plain_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const std::uint64_t at = r * shape.stride, n = shape.length(r);
    const float s = canonical_row_root<Acc>(dy + at, n, norms::product_leaf<T>{y + at}).result();
    for (std::uint64_t i = 0; i < n; ++i) dx[at + i] = norms::softmax_dx(y[at + i], dy[at + i], s);
  }
}

// The gradient of log_softmax_forward given its output y and dy: dx[r, i] = dy - exp(y) s_r, s_r = sum over the row of
// dy, canonical over the row's length(r) elements (any row_shape; y, dy and dx share the layout; entries past a row's
// length are not written). NaN canonical.
template <class T>
void log_softmax_backward(const T* y, const T* dy, T* dx, const row_shape& shape) {
  detail::check_row_shape(shape, "log_softmax_backward");
  using Acc = plain_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const std::uint64_t at = r * shape.stride, n = shape.length(r);
    const float s = canonical_row_root<Acc>(dy + at, n, widened_leaf<Acc>{}).result();
    for (std::uint64_t i = 0; i < n; ++i) dx[at + i] = norms::log_softmax_dx(y[at + i], dy[at + i], s);
  }
}

// The gradient of row_logsumexp: dx[r, i] = dout[r] exp(x[r, i] - lse[r]) for i < shape.length(r), lse the forward's
// float result and dout its gradient (one float per row each); element-wise, no reduction (any row_shape; dx has x's
// layout; entries past a row's length are not written). NaN canonical.
template <class T>
void row_logsumexp_backward(const T* x, const float* lse, const float* dout, T* dx, const row_shape& shape) {
  detail::check_row_shape(shape, "row_logsumexp_backward");
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const std::uint64_t at = r * shape.stride, n = shape.length(r);
    for (std::uint64_t i = 0; i < n; ++i) dx[at + i] = norms::logsumexp_dx(x[at + i], lse[r], dout[r]);
  }
}

}  // namespace detred
