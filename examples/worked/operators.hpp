// Three associative operators for detred's generic reduce (CPU: detred::reduce / transform_reduce; GPU:
// detred::cuda::reduce / transform_reduce in detred/cuda/transform_reduce.cuh), each with a sequential reference.
// None of the three is commutative: operands are never swapped.
//
// 1. Maximum segment sum (MSSP): the largest sum of a non-empty contiguous segment of an int32 array. A segment's
//    node is (sum, best prefix, best suffix, best segment); joining two neighbours is associative (the classic
//    divide-and-conquer formulation). Arithmetic in int64, so no overflow for n < 2^32.
// 2. The product of 2x2 int32 matrices, in index order, modulo 2^32 (uint32 arithmetic: int32 wrap-around, defined).
// 3. The composition of affine maps x -> a x + b, applied in index order (map 0 first): the linear recurrence
//    h_i = a_i h_{i-1} + b_i of scan-based sequence models. Over uint32 (mod 2^32) it is exact, hence equal to the
//    left-to-right reference for any association; over float it is the canonical order's rounding, equal to the
//    CPU's detred::reduce bit for bit.
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred::examples {

struct mssp_node {
  std::int64_t sum, prefix, suffix, best;
};
DETRED_HD inline std::int64_t max64(std::int64_t a, std::int64_t b) { return a < b ? b : a; }
// The node of N consecutive elements, left to right over the prefix sums S_0 = 0, S_1, ..., S_N in I: sum S_N,
// prefix max S_k, suffix S_N - min_{k<N} S_k, best max_{j<k} (S_k - S_j). Every field is an exact integer, so this
// is the node every association of mssp_op gives.
template <class I, int N>
DETRED_HD mssp_node mssp_run(const std::int32_t (&x)[N]) {
  I s = x[0], lowest = s < 0 ? s : 0, prefix = s, best = s, suffix = s;
  for (int k = 1; k < N; ++k) {
    s += x[k];
    best = best < s - lowest ? s - lowest : best;
    prefix = prefix < s ? s : prefix;
    if (k + 1 < N) lowest = s < lowest ? s : lowest;
  }
  if (N > 1) suffix = s - lowest;
  return {std::int64_t(s), std::int64_t(prefix), std::int64_t(suffix), std::int64_t(best)};
}
// The leaf of x: every non-empty segment of [x] is x itself. run_root: the node of a run of N <= 32 elements (the
// GPU engine's per-lane subtree, detred/cuda/transform_reduce.cuh), in int32 arithmetic when every |x| < 2^26 (no
// sum of 32 of them overflows), else in int64.
struct mssp_leaf {
  DETRED_HD mssp_node operator()(std::int32_t x) const { return {x, x, x, x}; }
  template <int N>
  DETRED_HD mssp_node run_root(const std::int32_t (&x)[N]) const {
    static_assert(N <= 32, "mssp_leaf::run_root: at most 32 elements");
    std::uint32_t spread = 0;  // the OR of x for x >= 0 and of -x - 1 for x < 0: < 2^26 iff every x in [-2^26, 2^26)
    for (int k = 0; k < N; ++k) spread |= std::uint32_t(x[k] ^ (x[k] >> 31));
    return spread < (1u << 26) ? mssp_run<std::int32_t>(x) : mssp_run<std::int64_t>(x);
  }
};
struct mssp_op {
  DETRED_HD mssp_node operator()(const mssp_node& l, const mssp_node& r) const {
    return {l.sum + r.sum, max64(l.prefix, l.sum + r.prefix), max64(r.suffix, l.suffix + r.sum),
            max64(max64(l.best, r.best), l.suffix + r.prefix)};
  }
};
// Kadane's algorithm, left to right: the reference. n >= 1.
inline std::int64_t mssp_sequential(const std::int32_t* x, std::uint64_t n) {
  std::int64_t best = x[0], ending = x[0];
  for (std::uint64_t i = 1; i < n; ++i) {
    ending = max64(ending + x[i], x[i]);
    best = max64(best, ending);
  }
  return best;
}

struct mat2 {
  std::uint32_t a, b, c, d;  // [[a, b], [c, d]]
  friend DETRED_HD bool operator==(const mat2&, const mat2&) = default;
};
struct mat2_op {
  DETRED_HD mat2 operator()(const mat2& l, const mat2& r) const {
    return {l.a * r.a + l.b * r.c, l.a * r.b + l.b * r.d, l.c * r.a + l.d * r.c, l.c * r.b + l.d * r.d};
  }
};
inline constexpr mat2 mat2_identity{1, 0, 0, 1};

template <class S>
struct affine {
  S a, b;  // x -> a x + b
};
// compose(f, g) = "f, then g": x -> g.a (f.a x + f.b) + g.b. The left operand (lower indices) is applied first.
template <class S>
struct affine_then {
  DETRED_HD affine<S> operator()(const affine<S>& f, const affine<S>& g) const { return {g.a * f.a, g.a * f.b + g.b}; }
};

}  // namespace detred::examples
