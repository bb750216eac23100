// The exact fixed-point levels behind every scattered sum (docs/SCATTER.md): shared by the CPU backend
// (src/cpu/scatter.cpp) and the kernels (src/cuda/scatter/), host and device code alike, so both read and round the
// same integers.
//
// Representation. R is the output type (float for half, bfloat16 and float inputs; double for double). A finite
// nonzero term of effective field f (the exponent field, 1 for subnormals) is (-1)^s m 2^(f + lsb_offset), m its
// integer significand (< 2^p). For one call the "geometry" fixes bottom and top, the smallest and largest effective
// field of the call's finite nonzero values, and a width W(n) from the count n of terms; level j holds the fields
// bottom + jW .. bottom + jW + W - 1, as one signed integer word per output slot in units of 2^(bottom + jW +
// lsb_offset). A term of field f goes whole into level j = (f - bottom) / W as k = +-(m << s), s = (f - bottom) mod W:
// no bit is lost. |k| < 2^(p - 1 + W); a slot receives at most n < 2^C terms (C = bit_width(n)), and W = word_bits -
// p - C, so every slot's level sum stays below 2^(word_bits - 1) in magnitude: integer addition, in any order and
// grouping (atomics included, which wrap mod 2^word_bits and end in range), gives the exact level sum.
//   float: one int64 word a level (p = 24, W = 40 - C);  double: a 128-bit word, two uint64 (lo, hi), (W = 75 - C).
// The slot's value is sum_j S_j 2^(bottom + jW + lsb_offset); slot_result() moves it into an exact_accumulator<R>,
// adds the slot's prior output value, and rounds once (exact_rounding.hpp: correctly rounded, Inf exactly at
// MAX + ulp/2).
#pragma once

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::detail {

// A level word: float's is one int64 kept as uint64 (two's complement, wrapping adds); double's is 128 bits.
template <class R>
struct level_word;
template <>
struct level_word<float> {
  std::uint64_t lo;
};
template <>
struct level_word<double> {
  std::uint64_t lo;
  std::uint64_t hi;
};

template <class R>
struct scatter_format;
template <>
struct scatter_format<float> {
  using bits_type = std::uint32_t;
  static constexpr int precision = 24;
  static constexpr int fraction_bits = 23;
  static constexpr int max_field = 254;  // the largest finite exponent field
  static constexpr int word_bits = 64;
  static constexpr int lsb_offset = -150;  // a term of effective field f has its last bit at 2^(f - 150)
};
template <>
struct scatter_format<double> {
  using bits_type = std::uint64_t;
  static constexpr int precision = 53;
  static constexpr int fraction_bits = 52;
  static constexpr int max_field = 2046;
  static constexpr int word_bits = 128;
  static constexpr int lsb_offset = -1075;
};

// The most terms one call may add into one slot is below 2^max_headroom_bits (n < 2^36): W >= 4 (float), 39 (double).
inline constexpr int max_headroom_bits = 36;
inline constexpr std::uint64_t max_scatter_terms = (std::uint64_t{1} << max_headroom_bits) - 1;

// C = bit_width(n): a slot receives at most n < 2^C terms.
constexpr DETRED_HD int headroom_bits(std::uint64_t n) {
  int c = 0;
  while (c < 64 && (n >> c) != 0) ++c;
  return c;
}

// W(n) = word_bits - p - C (see the header comment).
template <class R>
constexpr DETRED_HD int level_width(std::uint64_t n) {
  return scatter_format<R>::word_bits - scatter_format<R>::precision - headroom_bits(n);
}

// The most levels any data can need for n terms: the fields 1 .. max_field cut into runs of W. Sizes the workspace.
template <class R>
constexpr DETRED_HD int max_levels(std::uint64_t n) {
  return (scatter_format<R>::max_field - 1) / level_width<R>(n) + 1;
}

// One call's levels. levels = 0 when the call has no finite nonzero value.
struct scatter_geometry {
  int bottom = 1;
  int top = 0;
  int width = 1;
  int levels = 0;
};

constexpr DETRED_HD scatter_geometry make_geometry(int bottom, int top, int width) {
  scatter_geometry g;
  g.width = width;
  if (top < bottom) return g;  // nothing finite and nonzero
  g.bottom = bottom;
  g.top = top;
  g.levels = (top - bottom) / width + 1;
  return g;
}

// A term read as bits (R's format; half and bfloat16 widened exactly to float first).
template <class R>
struct term_parts {
  int field;  // raw exponent field
  typename scatter_format<R>::bits_type fraction;
  bool negative;
};

template <class R>
DETRED_HD DETRED_INLINE term_parts<R> split_bits(typename scatter_format<R>::bits_type b) {
  using F = scatter_format<R>;
  using B = typename F::bits_type;
  constexpr int total = int(sizeof(B) * 8);
  term_parts<R> t;
  t.negative = (b >> (total - 1)) != 0;
  t.field = int((b >> F::fraction_bits) & B((B(1) << (total - 1 - F::fraction_bits)) - 1));
  t.fraction = B(b & ((B(1) << F::fraction_bits) - 1));
  return t;
}

// The effective field of a finite nonzero term (1 for a subnormal); 0 for a zero, NaN or infinity.
template <class R>
DETRED_HD DETRED_INLINE int effective_field(typename scatter_format<R>::bits_type b) {
  const term_parts<R> t = split_bits<R>(b);
  if (t.field > scatter_format<R>::max_field) return 0;
  if (t.field == 0) return t.fraction != 0 ? 1 : 0;
  return t.field;
}

// The table entry of effective field f: level << 8 | shift (shift < W <= 75; level < 64).
constexpr DETRED_HD std::uint16_t level_entry(const scatter_geometry& g, int f) {
  return std::uint16_t(((f - g.bottom) / g.width) << 8 | ((f - g.bottom) % g.width));
}

// The signed integer k a finite nonzero term adds to its level, as a word (two's complement). `entry` is the
// term's level_entry.
template <class R>
DETRED_HD DETRED_INLINE level_word<R> term_word(const term_parts<R>& t, int shift) {
  using F = scatter_format<R>;
  const std::uint64_t m = std::uint64_t(t.fraction) | (t.field != 0 ? std::uint64_t{1} << F::fraction_bits : 0);
  if constexpr (F::word_bits == 64) {
    const std::uint64_t k = m << shift;  // < 2^(23 + W) <= 2^63
    return {t.negative ? ~k + 1 : k};
  } else {
    std::uint64_t lo, hi;
    if (shift == 0) {
      lo = m;
      hi = 0;
    } else if (shift < 64) {
      lo = m << shift;
      hi = m >> (64 - shift);
    } else {
      lo = 0;
      hi = m << (shift - 64);
    }
    if (t.negative) {
      lo = ~lo + 1;
      hi = ~hi + (lo == 0 ? 1u : 0u);
    }
    return {lo, hi};
  }
}

// w += k (mod 2^word_bits): the non-atomic add of the CPU backend and of per-thread copies.
template <class R>
DETRED_HD DETRED_INLINE void add_word(level_word<R>& w, const level_word<R>& k) {
  if constexpr (scatter_format<R>::word_bits == 64) {
    w.lo += k.lo;
  } else {
    const std::uint64_t lo = w.lo + k.lo;
    w.hi += k.hi + (lo < w.lo ? 1u : 0u);
    w.lo = lo;
  }
}

template <class R>
DETRED_HD DETRED_INLINE bool is_zero_word(const level_word<R>& w) {
  if constexpr (scatter_format<R>::word_bits == 64)
    return w.lo == 0;
  else
    return (w.lo | w.hi) == 0;
}

// Adds the signed word S times 2^pos (in units of the accumulator's bit 0) to the limbs: |S| as 32-bit digits
// shifted by pos mod 32, each added or subtracted (S's sign) to the limb it falls in. Every digit lands inside the
// layout (docs/SCATTER.md, "Rounding"), and each limb changes by less than 2^32.
template <class R>
DETRED_HD DETRED_INLINE void add_level_to_limbs(std::int64_t* limbs, const level_word<R>& s, int pos) {
  constexpr int limb_count = exact_accumulator<R>::limb_count;
  std::uint64_t lo = s.lo, hi = 0;
  bool negative;
  if constexpr (scatter_format<R>::word_bits == 64) {
    negative = (lo >> 63) != 0;
    if (negative) lo = ~lo + 1;
  } else {
    hi = s.hi;
    negative = (hi >> 63) != 0;
    if (negative) {
      lo = ~lo + 1;
      hi = ~hi + (lo == 0 ? 1u : 0u);
    }
  }
  // |S| < 2^127: four 32-bit digits, then the shift spreads them over five.
  const std::uint32_t d[4] = {std::uint32_t(lo), std::uint32_t(lo >> 32), std::uint32_t(hi), std::uint32_t(hi >> 32)};
  const int first = pos >> 5, shift = pos & 31;
  for (int i = 0; i <= 4; ++i) {
    const std::uint64_t below = i > 0 ? std::uint64_t(d[i - 1]) : 0;
    const std::uint64_t here = i < 4 ? std::uint64_t(d[i]) : 0;
    const std::uint64_t digit = shift ? (((here << 32 | below) >> (32 - shift)) & 0xffffffffu) : here;
    if (digit == 0) continue;
    const int limb = first + i;
    if (limb >= limb_count) continue;  // unreachable for a valid state: the digit would be 0
    limbs[limb] += negative ? -std::int64_t(digit) : std::int64_t(digit);
  }
}

// The flags a slot carries besides its levels (exact_accumulator's flag bits).
inline constexpr std::uint32_t slot_nan = 1, slot_positive_infinity = 2, slot_negative_infinity = 4,
                               slot_not_only_negative_zero = 8;

// The flags a zero, NaN or infinite term sets (a -0.0 term sets none).
template <class R>
DETRED_HD DETRED_INLINE std::uint32_t special_flags(const term_parts<R>& t) {
  if (t.field > scatter_format<R>::max_field)
    return t.fraction != 0 ? slot_nan : (t.negative ? slot_negative_infinity : slot_positive_infinity);
  return t.negative ? 0u : slot_not_only_negative_zero;  // +0.0
}

// The slot's exact value (levels, the prior output value `prior`, flags) rounded once to R. `levels` points at the
// slot's word of level 0, the words of level j `stride` apart.
template <class R>
DETRED_HD R slot_result(const level_word<R>* levels, std::uint64_t stride, const scatter_geometry& g, R prior,
                        std::uint32_t flags) {
  using A = exact_accumulator<R>;
  std::int64_t limbs[A::limb_count] = {};
  bool any = false;
  for (int j = 0; j < g.levels; ++j) {
    const level_word<R> w = levels[std::uint64_t(j) * stride];
    if (is_zero_word<R>(w)) continue;
    any = true;
    add_level_to_limbs<R>(limbs, w, g.bottom + j * g.width + scatter_format<R>::lsb_offset - A::low_exponent);
  }
  A acc;
  for (int k = 0; k < A::limb_count; ++k) acc.set_raw(k, limbs[k]);
  acc.set_count(std::uint64_t(g.levels), flags | (any ? slot_not_only_negative_zero : 0u), std::uint32_t(g.levels));
  acc.add(prior);
  return acc.template rounded<R>();
}

// The float nearest (ties to even) to (-1)^negative u 2^(e0 - 150), u != 0, e0 >= 1: the integer u has its highest
// bit b; below 24 significant bits the value is representable (a multiple of 2^-149, the subnormal quantum, since
// e0 >= 1) unless its exponent is past the format's (e0 > 254: narrow words' units); from 24 bits on it is normal (>=
// 2^(e0 - 126)) and rounds once to nearest even at bit b - 23; an exponent field past 254 is infinity (the magnitude
// reached MAX + ulp(MAX)/2).
DETRED_HD DETRED_INLINE float round_units_to_float(unsigned __int128 u, bool negative, int e0) {
  const std::uint64_t hi = std::uint64_t(u >> 64), lo = std::uint64_t(u);
#ifdef __CUDA_ARCH__
  int b = hi != 0 ? 127 - __clzll((long long)hi) : 63 - __clzll((long long)lo);
#else
  int b = hi != 0 ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo);
#endif
  std::uint32_t bits;
  if (b < 24) {
    const std::uint32_t mant = std::uint32_t(lo);
    const int biased = b + e0 - 23;
    bits = biased >= 255 ? 0x7f800000u
           : biased >= 1 ? std::uint32_t(biased) << 23 | ((mant << (23 - b)) & 0x7fffffu)
                         : mant << (e0 - 1);
  } else {
    const int shift = b - 23;
    std::uint64_t mant = std::uint64_t(u >> shift);
    const unsigned __int128 rest = u & ((((unsigned __int128)1) << shift) - 1);
    const unsigned __int128 half = ((unsigned __int128)1) << (shift - 1);
    if (rest > half || (rest == half && (mant & 1u) != 0)) ++mant;
    if (mant == (std::uint64_t{1} << 24)) {
      mant >>= 1;
      ++b;
    }
    const int biased = b + e0 - 23;
    bits = biased >= 255 ? 0x7f800000u : std::uint32_t(biased) << 23 | (std::uint32_t(mant) & 0x7fffffu);
  }
  return bit_cast<float>(bits | (negative ? 0x80000000u : 0u));
}

// t += the finite float `prior` in units of 2^(e0 - 150); false when it has bits below the unit or lies more than 96
// binades above it (the caller then takes the exact accumulator).
DETRED_HD DETRED_INLINE bool add_prior_in_units(__int128& t, float prior, int e0) {
  const std::uint32_t pb = bit_cast<std::uint32_t>(prior);
  const int pf = int((pb >> 23) & 0xffu);
  if (pf == 0xff) return false;
  if ((pb & 0x7fffffffu) != 0) {
    const int f = pf != 0 ? pf : 1;
    if (f < e0 || f - e0 > 96) return false;
    const __int128 m = __int128((pb & 0x7fffffu) | (pf != 0 ? 0x800000u : 0u)) << (f - e0);
    t += (pb >> 31) != 0 ? -m : m;
  }
  return true;
}

// An exact zero's sign, as slot_result gives it: -0.0 when every contribution was -0.0 (no level word nonzero, no
// +0.0 term flagged, a prior of -0.0), else +0.0 (IEEE's exact cancellation under round-to-nearest).
DETRED_HD DETRED_INLINE float exact_zero(bool any_word, float prior, std::uint32_t flags) {
  const bool negative =
      !any_word && (flags & slot_not_only_negative_zero) == 0 && bit_cast<std::uint32_t>(prior) == 0x80000000u;
  return bit_cast<float>(negative ? 0x80000000u : 0u);
}

// The float slot's value rounded without the exact accumulator, where its exact value fits a 128-bit integer in units
// of 2^(bottom + lsb_offset): at most 8 levels spanning at most 56 bits of shifts (|sum| < 2^(63 + 56 + 3)), and a
// prior value that is zero or of effective field in [bottom, bottom + 96]. Returns false (the caller takes
// slot_result) for NaN/Inf flags and a prior value outside that range. Otherwise `result` is the correctly rounded
// value, as slot_result gives it (round_units_to_float; an exact zero by exact_zero).
DETRED_HD DETRED_INLINE bool slot_result_float_fast(const level_word<float>* levels, std::uint64_t stride,
                                                    const scatter_geometry& g, float prior, std::uint32_t flags,
                                                    float& result) {
  if ((flags & (slot_nan | slot_positive_infinity | slot_negative_infinity)) != 0) return false;
  if (g.levels == 0 || g.levels > 8 || (g.levels - 1) * g.width > 56) return false;
  __int128 t = 0;
  bool any = false;
  for (int j = 0; j < g.levels; ++j) {
    const std::int64_t w = std::int64_t(levels[std::uint64_t(j) * stride].lo);
    any |= w != 0;
    t += __int128(w) << (j * g.width);
  }
  if (!add_prior_in_units(t, prior, g.bottom)) return false;
  if (t == 0) {
    result = exact_zero(any, prior, flags);
    return true;
  }
  result = round_units_to_float(t < 0 ? (unsigned __int128)(-t) : (unsigned __int128)t, t < 0, g.bottom);
  return true;
}

// Narrow words: the representation for inputs of 16 bits (bfloat16, p = 8; half, p = 11) into float outputs, whose
// terms have few significant bits. Level j is one int32 a slot, in units of 2^(bottom + jW + lsb_offset + 24 - p)
// (the input's own units: a widened term's 24-bit significand ends in 24 - p zeros), and a term adds
// k = +-(m >> (24 - p)) << s, |k| <= (2^p - 1) 2^(W - 1). W = 32 - p - C with C = bit_width(M), M the most terms any
// slot receives (counted from the index, not bounded by n), so every subset's sum stays below 2^31: the word is exact
// (docs/SCATTER.md, "Narrow words"). 0 when no W >= 1 fits.
constexpr DETRED_HD int narrow_width(int p, std::uint64_t max_count) {
  const int w = 32 - p - headroom_bits(max_count);
  return w >= 1 ? w : 0;
}

// The int32 a finite nonzero term (float bits widened from a format of precision p) adds to its narrow level.
DETRED_HD DETRED_INLINE std::int32_t narrow_term(const term_parts<float>& t, int p, int shift) {
  const std::uint32_t m = (t.fraction | (t.field != 0 ? std::uint32_t{1} << 23 : 0u)) >> (24 - p);
  const std::int32_t k = std::int32_t(m << shift);
  return t.negative ? -k : k;
}

// A slot of narrow words rounded once, exactly as slot_result rounds the same value: the levels' integers into the
// exact accumulator's limbs at their weights, the prior value added, one rounding.
DETRED_HD inline float narrow_slot_result(const std::int32_t* words, std::uint64_t stride, const scatter_geometry& g,
                                          int p, float prior, std::uint32_t flags) {
  using A = exact_accumulator<float>;
  std::int64_t limbs[A::limb_count] = {};
  bool any = false;
  for (int j = 0; j < g.levels; ++j) {
    const std::int32_t w = words[std::uint64_t(j) * stride];
    if (w == 0) continue;
    any = true;
    add_level_to_limbs<float>(limbs, level_word<float>{std::uint64_t(std::int64_t(w))},
                              g.bottom + j * g.width + scatter_format<float>::lsb_offset + 24 - p - A::low_exponent);
  }
  A acc;
  for (int k = 0; k < A::limb_count; ++k) acc.set_raw(k, limbs[k]);
  acc.set_count(std::uint64_t(g.levels), flags | (any ? slot_not_only_negative_zero : 0u), std::uint32_t(g.levels));
  acc.add(prior);
  return acc.template rounded<float>();
}

// Whether narrow_slot_result_fast's integer can hold the geometry's levels: at most 32 spanning at most 64 bits of
// shifts (|sum| < 2^(31 + 64 + 5)).
DETRED_HD DETRED_INLINE bool narrow_fast_geometry(const scatter_geometry& g) {
  return g.levels != 0 && g.levels <= 32 && (g.levels - 1) * g.width <= 64;
}

// Word j of a narrow slot added to its integer in units of 2^(bottom + 24 - p - 150).
DETRED_HD DETRED_INLINE void add_narrow_word(__int128& t, std::int32_t w, int j, const scatter_geometry& g) {
  t += __int128(w) << (j * g.width);
}

// The rounding half of narrow_slot_result_fast: `t` the levels' integer (add_narrow_word), `any` whether a word was
// nonzero. False for NaN/Inf flags and a prior value outside the range, as narrow_slot_result_fast.
DETRED_HD DETRED_INLINE bool narrow_units_result(__int128 t, bool any, const scatter_geometry& g, int p, float prior,
                                                 std::uint32_t flags, float& result) {
  if ((flags & (slot_nan | slot_positive_infinity | slot_negative_infinity)) != 0) return false;
  const int e0 = g.bottom + 24 - p;
  if (!add_prior_in_units(t, prior, e0)) return false;
  if (t == 0) {
    result = exact_zero(any, prior, flags);
    return true;
  }
  result = round_units_to_float(t < 0 ? (unsigned __int128)(-t) : (unsigned __int128)t, t < 0, e0);
  return true;
}

// narrow_slot_result in registers where the exact value fits a 128-bit integer in units of 2^(bottom + 24 - p - 150)
// (narrow_fast_geometry); false (take narrow_slot_result) as slot_result_float_fast, for NaN/Inf flags and a prior
// value outside the range.
DETRED_HD DETRED_INLINE bool narrow_slot_result_fast(const std::int32_t* words, std::uint64_t stride,
                                                     const scatter_geometry& g, int p, float prior, std::uint32_t flags,
                                                     float& result) {
  if (!narrow_fast_geometry(g)) return false;
  __int128 t = 0;
  bool any = false;
  for (int j = 0; j < g.levels; ++j) {
    const std::int32_t w = words[std::uint64_t(j) * stride];
    any |= w != 0;
    add_narrow_word(t, w, j, g);
  }
  return narrow_units_result(t, any, g, p, prior, flags, result);
}

}  // namespace detred::detail
