// LayerNorm, RMSNorm (forward and backward) and softmax on the CPU: the references of detred::cuda's kernels of the
// same names (detred/cuda/norms.hpp), the same bits. Rows of C elements, x[t * C + i]; T float or bfloat16; float
// accumulation. Every row reduction is the canonical one (docs/ORDER.md) of that row alone, so each row's outputs are
// batch-invariant; the formulas are in detred/rows/norm_formulas.hpp (exp and rsqrt from detred::specified).
#pragma once

#include <cstdint>
#include <vector>

#include "detred/rows.hpp"
#include "detred/rows/norm_formulas.hpp"

namespace detred {

// out = LayerNorm(x) w + b; mean[t], rstd[t] = 1/sqrt(var + eps) (population variance, two passes over the row).
template <class T>
void layernorm_forward(const T* x, const T* weight, const T* bias, std::uint64_t rows, std::uint64_t c, T* out,
                       float* mean, float* rstd, float eps = 1e-5f) {
  for (std::uint64_t t = 0; t < rows; ++t) {
    const T* row = x + t * c;
    using Acc = plain_accumulator<float>;
    const float m = norms::mean_of(canonical_row_root<Acc>(row, c, widened_leaf<Acc>{}).result(), c);
    const float rs = norms::rstd_of(canonical_row_root<Acc>(row, c, norms::centered_square_leaf{m}).result(), c, eps);
    for (std::uint64_t i = 0; i < c; ++i) out[t * c + i] = norms::layernorm_value(row[i], m, rs, weight[i], bias[i]);
    mean[t] = m;
    rstd[t] = rs;
  }
}

// out = x rstd w, rstd[t] = 1/sqrt(mean(x^2) + eps).
template <class T>
void rmsnorm_forward(const T* x, const T* weight, std::uint64_t rows, std::uint64_t c, T* out, float* rstd,
                     float eps = 1e-5f) {
  for (std::uint64_t t = 0; t < rows; ++t) {
    const T* row = x + t * c;
    using Acc = plain_accumulator<float>;
    const float rs = norms::rstd_of(canonical_row_root<Acc>(row, c, norms::square_leaf{}).result(), c, eps);
    for (std::uint64_t i = 0; i < c; ++i) out[t * c + i] = norms::rmsnorm_value(row[i], rs, weight[i]);
    rstd[t] = rs;
  }
}

// dx (row-wise, from the canonical dot of (w dy) and x) and dweight[i] = sum over t of (dy x) rstd_t (the column
// reduction, canonical over t).
template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* weight, const float* rstd, std::uint64_t rows, std::uint64_t c,
                      T* dx, float* dweight) {
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

// out[r, i] = exp(x[r, i] - lse_r) for i < shape.length(r) (full rows, or causal with shape.causal_period), same
// layout as x; entries past a row's length are not written.
template <class T>
void softmax_forward(const T* x, const row_shape& shape, T* out) {
  using Acc = logsumexp_accumulator<float>;
  for (std::uint64_t r = 0; r < shape.rows; ++r) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const float lse = canonical_row_root<Acc>(row, n, widened_leaf<Acc>{}).result();
    for (std::uint64_t i = 0; i < n; ++i) out[r * shape.stride + i] = norms::softmax_value(row[i], lse);
  }
}

}  // namespace detred
