// The per-row and per-element formulas of LayerNorm's backward, log-softmax, and the backward passes of softmax,
// log-softmax and log-sum-exp, written once as DETRED_HD code for the CPU twins (detred/norms.hpp) and the CUDA
// kernels (src/cuda/rows/): float arithmetic, every operation rounded once in the order written (no FMA: host code
// -ffp-contract=off, device code --fmad=false), detred::specified's exp, NaN results canonical before the outputs are
// rounded to T (to nearest even), so that every backend writes the same bits.
#pragma once

#include <cstdint>

#include "detred/accumulators/plain.hpp"
#include "detred/config.hpp"
#include "detred/rows/norm_formulas.hpp"
#include "detred/rows/specified_math.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::norms {

// Two plain float sums carried through one canonical tree, merged componentwise: each component has the bits of its
// own canonical sum over the same leaves (the same tree, the same additions). Empty: (-0.0, -0.0).
struct sum_pair {
  using value_type = float;
  float first = negative_zero<float>();
  float second = negative_zero<float>();
  constexpr DETRED_HD void merge(const sum_pair& right) {
    first = first + right.first;
    second = second + right.second;
  }
};

// LayerNorm's normalised input xhat = (x - mean) rstd.
constexpr DETRED_HD float layernorm_xhat(float x, float mean, float rstd) { return (x - mean) * rstd; }

// The leaf of LayerNorm backward's row sums, the row being dy: (g, g xhat) with g = w dy; weight and x read by index
// (x points at the row's start).
template <class T>
struct layernorm_backward_leaf {
  const T* weight;
  const T* x;
  float mean, rstd;
  constexpr DETRED_HD sum_pair operator()(T dy, std::uint64_t i) const {
    const float g = widen<float>(weight[i]) * widen<float>(dy);
    return sum_pair{g, g * layernorm_xhat(widen<float>(x[i]), mean, rstd)};
  }
};

// dx = rstd ((g - mean_g) - xhat mean_gxhat), g = w dy, mean_g = (sum g) / C, mean_gxhat = (sum g xhat) / C.
template <class T>
constexpr DETRED_HD T layernorm_dx(T dy, T x, T w, float mean, float rstd, float mean_g, float mean_gxhat) {
  const float g = widen<float>(w) * widen<float>(dy);
  const float xhat = layernorm_xhat(widen<float>(x), mean, rstd);
  return from_float<T>(canonicalize_nan(rstd * ((g - mean_g) - xhat * mean_gxhat)));
}

// The dweight leaf of row t: dy xhat (dbias's leaf is dy itself).
constexpr DETRED_HD float layernorm_dweight_leaf(float dy, float x, float mean, float rstd) {
  return dy * layernorm_xhat(x, mean, rstd);
}

// The leaf dy y of softmax backward's row sum, the row being dy; y read by index (y points at the row's start).
template <class T>
struct product_leaf {
  const T* y;
  constexpr DETRED_HD plain_accumulator<float> operator()(T dy, std::uint64_t i) const {
    return plain_accumulator<float>::from_value(widen<float>(dy) * widen<float>(y[i]));
  }
};

// Softmax backward: dx = y (dy - s), s = sum dy y over the row.
template <class T>
constexpr DETRED_HD T softmax_dx(T y, T dy, float s) {
  return from_float<T>(canonicalize_nan(widen<float>(y) * (widen<float>(dy) - s)));
}

// Log-softmax: x - lse, lse the row's log-sum-exp (row_accumulators.hpp).
template <class T>
constexpr DETRED_HD T log_softmax_value(T x, float lse) {
  return from_float<T>(canonicalize_nan(widen<float>(x) - lse));
}

// Log-softmax backward: dx = dy - exp(y) s, s = sum dy over the row.
template <class T>
DETRED_HD inline T log_softmax_dx(T y, T dy, float s) {
  return from_float<T>(canonicalize_nan(widen<float>(dy) - specified::exp_float_fast(widen<float>(y)) * s));
}

// Log-sum-exp backward: dx = dout exp(x - lse), lse the forward's float result for the row, dout its gradient.
template <class T>
DETRED_HD inline T logsumexp_dx(T x, float lse, float dout) {
  return from_float<T>(canonicalize_nan(dout * specified::exp_float_fast(widen<float>(x) - lse)));
}

}  // namespace detred::norms
