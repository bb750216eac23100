// LayerNorm, RMSNorm (forward and backward) and softmax on the CPU: the twins of the device calls of the same names
// (detred/cuda/norms.hpp), with the same arguments less the workspace and the stream, and the same bits.
//
// Contract. Every row reduction is the canonical one (docs/ORDER.md) of that row alone, so each row's outputs are
// batch-invariant (the first k rows of a batch give the bits of a batch of k, whatever the other rows) and the device
// calls give the same bits (determinism::cpu_gpu). T float or bfloat16; float accumulation; the per-element formulas
// are in detred/rows/norm_formulas.hpp (every operation rounded once, no FMA; exp and rsqrt from detred::specified).
// LayerNorm and RMSNorm take a dense [rows x cols] shape (dense_rows); softmax takes any row_shape (strided, per-row
// lengths, causal). A shape a call does not support throws detred::invalid_argument naming the field.
#pragma once

#include <cstdint>
#include <vector>

#include "detred/rows.hpp"
#include "detred/rows/norm_formulas.hpp"

namespace detred {

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

// out[r, i] = exp(x[r, i] - lse_r) for i < shape.length(r), lse_r = row_logsumexp of row r (full, strided, per-row
// lengths or causal rows); out has x's layout; entries past a row's length are not written. A NaN makes its row NaN;
// a row holding +Inf gives NaN at its +Inf entries and 0 elsewhere; an all -Inf row gives NaN (canonical NaN).
template <class T>
void softmax_forward(const T* x, T* out, const row_shape& shape) {
  detail::check_row_shape(shape, "softmax_forward");
  using Acc = logsumexp_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const float lse = canonical_row_root<Acc>(row, n, widened_leaf<Acc>{}).result();
    for (std::uint64_t i = 0; i < n; ++i) out[r * shape.stride + i] = norms::softmax_value(row[i], lse);
  }
}

}  // namespace detred
