// The per-row and per-element formulas of detred's LayerNorm, RMSNorm and softmax, written once as DETRED_HD code
// for the CPU twins (detred/norms.hpp) and the CUDA kernels (detred/cuda/norms.hpp): float arithmetic, every
// operation rounded once in the order written (no FMA), detred::specified's rsqrt and exp, outputs rounded to T to
// nearest even.
#pragma once

#include <cstdint>

#include "detred/accumulators/plain.hpp"
#include "detred/config.hpp"
#include "detred/rows/row_accumulators.hpp"
#include "detred/rows/specified_math.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::norms {

template <class T>
constexpr DETRED_HD T from_float(float v) {
  if constexpr (sizeof(T) == 4)
    return v;
  else
    return T::from_float(v);
}

// Leaf (widen(x) - mean)^2: LayerNorm's second pass.
struct centered_square_leaf {
  float mean;
  template <class T>
  constexpr DETRED_HD plain_accumulator<float> operator()(T x, std::uint64_t) const {
    const float d = widen<float>(x) - mean;
    return plain_accumulator<float>::from_value(d * d);
  }
};

// Leaf x^2: RMSNorm's sum of squares.
struct square_leaf {
  template <class T>
  constexpr DETRED_HD plain_accumulator<float> operator()(T x, std::uint64_t) const {
    const float v = widen<float>(x);
    return plain_accumulator<float>::from_value(v * v);
  }
};

// Leaf (w_i dy_i) x_i of RMSNorm's backward, the row being dy; w and x read by index.
template <class T>
struct weighted_dot_leaf {
  const T* weight;
  const T* x;
  constexpr DETRED_HD plain_accumulator<float> operator()(T dy, std::uint64_t i) const {
    return plain_accumulator<float>::from_value((widen<float>(weight[i]) * widen<float>(dy)) * widen<float>(x[i]));
  }
};

// LayerNorm: mean = sum / C; rstd = rsqrt(sum of squared deviations / C + eps); out = ((x - mean) rstd) w + b.
constexpr DETRED_HD float mean_of(float sum, std::uint64_t c) { return sum / float(c); }
DETRED_HD inline float rstd_of(float sum_of_squares, std::uint64_t c, float eps) {
  return specified::rsqrt_float(sum_of_squares / float(c) + eps);
}
template <class T>
constexpr DETRED_HD T layernorm_value(T x, float mean, float rstd, T w, T b) {
  return from_float<T>(((widen<float>(x) - mean) * rstd) * widen<float>(w) + widen<float>(b));
}
// RMSNorm: rstd = rsqrt(sum x^2 / C + eps); out = (x rstd) w.
template <class T>
constexpr DETRED_HD T rmsnorm_value(T x, float rstd, T w) {
  return from_float<T>((widen<float>(x) * rstd) * widen<float>(w));
}
// RMSNorm backward: k = (rstd^3) (dot / C), dot = sum (w dy) x; dx = (w dy) rstd - x k.
constexpr DETRED_HD float rmsnorm_backward_k(float rstd, float dot, std::uint64_t c) {
  return ((rstd * rstd) * rstd) * (dot / float(c));
}
template <class T>
constexpr DETRED_HD T rmsnorm_dx(T dy, T x, T w, float rstd, float k) {
  return from_float<T>((widen<float>(w) * widen<float>(dy)) * rstd - widen<float>(x) * k);
}
// The dweight leaf of row t: (dy x) rstd_t.
template <class T>
constexpr DETRED_HD float rmsnorm_dweight_leaf(T dy, T x, float rstd) {
  return (widen<float>(dy) * widen<float>(x)) * rstd;
}
// Softmax: e / s, e = exp_float_lite(x - m) (the row's log-sum-exp leaf of x: the same bits) and (m, s) the row's
// log-sum-exp passes; NaN (canonical) throughout a row whose maximum m is not finite.
// The values softmax_forward and log_softmax_forward write past a row's length when asked (fill_past_length): what a
// causal mask leaves, +0 and -Inf.
template <class T>
constexpr DETRED_HD T softmax_fill() {
  return from_float<T>(0.0f);
}
template <class T>
constexpr DETRED_HD T log_softmax_fill() {
  return from_float<T>(minus_infinity<float>());
}

// softmax_of_term is the same from the term e itself (kernels that keep the row's terms).
template <class T>
constexpr DETRED_HD T softmax_of_term(float e, const logsumexp_parts<float>& parts) {
  if (!is_finite(parts.max)) return from_float<T>(canonical_nan<float>());
  return from_float<T>(canonicalize_nan(e / parts.sum));
}
template <class T>
constexpr DETRED_HD T softmax_value(T x, const logsumexp_parts<float>& parts) {
  if (!is_finite(parts.max)) return from_float<T>(canonical_nan<float>());
  return softmax_of_term<T>(specified::exp_float_lite_nonpositive(widen<float>(x) - parts.max), parts);
}

}  // namespace detred::norms
