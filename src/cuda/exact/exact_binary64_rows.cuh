// The binary64 exact thread's limb-row parts (docs/EXACT.md "Extracted levels", "Limb bounds", "The all_slow mode"):
// the bit geometry, the lean slow path straight from the bits into a thread's limb rows in shared memory, the rows'
// normalisation, the warp votes, and the rows' bookkeeping (exact_binary64_rows) that the extracted levels
// (exact_extract_thread.cuh) build on.
#pragma once

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/config.hpp"

namespace detred::cuda::detail {

// The double layout's geometry as the window and the lean slow path see binary64 bit patterns.
struct exact_binary64_geometry {
  using S = exact_accumulator<double>;
  static constexpr int fraction_bits = 52;
  static constexpr unsigned long long fraction_mask = (1ull << 52) - 1;
  static constexpr unsigned long long sign_bit = 1ull << 63;
  static constexpr int special_field = 0x7ff;
  // The last place of a term of field f >= 1 weighs 2^(f - 1075), a subnormal's (field 0) 2^-1074: bit position
  // max(f, 1) + 13 of the layout (whose bit 0 weighs 2^-1088).
  static constexpr int position_offset = -1075 - S::low_exponent;  // 13
  // Rows of limbs a thread touches: a finite term's digits reach limb (2046 + 13) / 32 + 1 = 65, a window's deposit
  // limb 66 (docs/EXACT.md); limbs 67 and 68 of the layout only ever receive carries, in the block's sum.
  static constexpr int limb_rows = 67;
  static_assert(S::low_exponent == -1088 && S::limb_count == 69, "the double layout docs/EXACT.md describes");
  static_assert((2046 + position_offset) / 32 + 1 < limb_rows, "a finite term's top digit stays in the thread's rows");
  static_assert((special_field + position_offset) / 32 + 1 < limb_rows, "so does a NaN's or infinity's (zero) digits");
  static_assert((2046 - 63 + position_offset) / 32 + 4 < limb_rows, "so does a window deposit's top digit");
  DETRED_HD DETRED_INLINE static int field_of(unsigned long long b) { return int(b >> fraction_bits) & special_field; }
};

// Whether `p` holds for some thread of the calling warp (device: a vote of the lanes active here), or for the thread
// itself (host: the emulation runs threads one by one). The vote only chooses which exact path adds a term, so a vote
// over fewer lanes (divergent tail) or over one thread cannot change a bit.
DETRED_HD DETRED_INLINE bool exact_warp_any(bool p) {
#ifdef __CUDA_ARCH__
  return __any_sync(__activemask(), p);
#else
  return p;
#endif
}

// The upper 32 bits of the 64-bit word hi:lo shifted left by `shift` (0 .. 31): the funnel shift (SHF.L on the device).
DETRED_HD DETRED_INLINE unsigned exact_funnel_left(unsigned lo, unsigned hi, int shift) {
#ifdef __CUDA_ARCH__
  return __funnelshift_l(lo, hi, unsigned(shift));
#else
  return unsigned(((((unsigned long long)hi << 32) | lo) << shift) >> 32);
#endif
}

// Adds the binary64 term with bits b exactly to the limb rows at `limbs` (row k at limbs[k * Stride]), with the flags
// add() would set, and no branch on the data but a predicated one for NaN and infinities. Contract: afterwards the
// rows hold their old value plus b's exact value (nothing for a zero, NaN or infinity), in units of 2^-1088, as two
// digits: one row changed by less than 2^32, the row above it by less than 2^52 (so the caller normalises its rows at
// least once every 2^10 terms: exact_binary64_rows::normalize_limbs); `flags` gets NaN / +-Inf as add() sets them;
// `others` is ORed with a word that is nonzero exactly when b is not -0.0 (the caller turns it into
// flag_not_only_negative_zero once, at its end).
template <int Stride>
DETRED_HD DETRED_INLINE void exact_binary64_slow(long long* limbs, unsigned long long b, unsigned& flags,
                                                 unsigned& others) {
  using G = exact_binary64_geometry;
  using S = G::S;
  // In 32-bit words, as the GPU computes (about 25 instructions a term besides the two read-modify-writes).
  const unsigned hi = unsigned(b >> 32), lo = unsigned(b);
  const int field = int(hi >> 20) & G::special_field;
  const bool special = field == G::special_field;
  // All ones for a negative term, else zero (an arithmetic shift of the sign).
  const unsigned sign = unsigned(int(hi) >> 31);
  others |= (hi ^ 0x80000000u) | lo;
  if (special)
    flags |= (hi & 0xfffffu) | lo ? S::flag_nan : (sign ? S::flag_negative_infinity : S::flag_positive_infinity);
  // The integer significand m = mh 2^32 + ml: the hidden bit for fields 1 .. 2046, none for field 0 (zero,
  // subnormal: field 1's weight); zero for NaN and infinities, whose two (zero) digits land in rows 64 and 65.
  const unsigned mh = special ? 0u : (hi & 0xfffffu) | (field != 0 ? 0x100000u : 0u);
  const unsigned ml = special ? 0u : lo;
  const int pos = (field > 1 ? field : 1) + G::position_offset;  // 14 .. 2060
  const int shift = pos & 31;
  // m << shift (m < 2^53, shift <= 31) = w2 2^64 + w1 2^32 + w0: the low digit w0 (its last 32 bits) into row k, the
  // high digit w2 2^32 + w1 = m >> (32 - shift) (below 2^52) into row k + 1.
  const unsigned w0 = ml << shift, w1 = exact_funnel_left(ml, mh, shift), w2 = exact_funnel_left(mh, 0u, shift);
  const unsigned long long d[2] = {w0, ((unsigned long long)w2 << 32) | w1};
  // (d ^ s) - s is d or -d as s is 0 or all ones.
  const unsigned long long s = ((unsigned long long)sign << 32) | sign;
  // Row pos / 32, addressed in bytes (a shift and a multiply-add).
  long long* row = reinterpret_cast<long long*>(reinterpret_cast<char*>(limbs) +
                                                (unsigned(pos) >> 5) * unsigned(Stride * sizeof(long long)));
#pragma unroll
  for (int i = 0; i < 2; ++i) row[i * Stride] += (long long)((d[i] ^ s) - s);
}

// exact_binary64_slow for the two terms of a vector, compiled once, out of line (a call), so that the windows' step
// bodies, which take the slow path rarely on narrow data, stay short. Returns the flags and `others` words to OR in.
template <int Stride>
__noinline__ DETRED_HD uint2 exact_binary64_slow_pair(long long* limbs, unsigned long long b0, unsigned long long b1) {
  unsigned flags = 0, others = 0;
  exact_binary64_slow<Stride>(limbs, b0, flags, others);
  exact_binary64_slow<Stride>(limbs, b1, flags, others);
  return uint2{flags, others};
}

// Carries each row's bits from 2^32 up into the next one, rows 0 .. Rows - 2 ending in [0, 2^32): the value of the
// rows (row k at limbs[k * Stride], weight 2^(32k)) is unchanged. One pass with a running carry (|carry| < 2^31 while
// every row is below 2^63 in magnitude), so a load does not wait for the previous row's store. Out of line: it runs
// once every 2^10 slow-path terms and at the end of a thread's terms, and inlined it costs the step bodies registers.
template <int Stride, int Rows>
__noinline__ DETRED_HD void exact_normalize_rows(long long* limbs) {
  long long carry = 0;
#pragma unroll 4
  for (int k = 0; k + 1 < Rows; ++k) {
    const long long x = limbs[k * Stride] + carry;
    carry = x >> 32;
    limbs[k * Stride] = x - (long long)((unsigned long long)carry << 32);
  }
  limbs[(Rows - 1) * Stride] += carry;
}

// The tag of a step whose vectors all go by the slow path (the all_slow mode).
struct exact_all_slow_step {};

// The largest of `x` over the calling warp (device: the lanes active here), or `x` itself (host). Used to place a
// window, never to choose a bit.
DETRED_HD DETRED_INLINE int exact_warp_max(int x) {
#ifdef __CUDA_ARCH__
  return __reduce_max_sync(__activemask(), x);
#else
  return x;
#endif
}

// Whether `p` holds for every thread of the calling warp (device: a vote of the lanes active here), or for the thread
// itself (host). The all_slow mode's vote: like exact_warp_any, it chooses a path, never a bit.
DETRED_HD DETRED_INLINE bool exact_warp_all(bool p) {
#ifdef __CUDA_ARCH__
  return __all_sync(__activemask(), p);
#else
  return p;
#endif
}

// The part of a binary64 thread that lives in its limb rows (exact_extract_thread.cuh builds on it): the rows (row k at
// limbs[k * BlockThreads]), the flags, the lean slow path, the normalisation period, and the all_slow mode's vote
// (SlowRun: 0 never; -1 for good once voted, exact_thread_terms then leaves its main loop; k > 0 for k steps). None of
// it can change a bit: every path adds the same exact value (docs/EXACT.md "Limb bounds", "The all_slow mode").
template <int BlockThreads, int SlowRun>
struct exact_binary64_rows {
  using G = exact_binary64_geometry;
  using S = G::S;
  using bits = unsigned long long;
  static_assert(SlowRun >= -1, "steps in the all_slow mode (-1: to the end of the thread's share)");
  static constexpr int limb_rows = G::limb_rows;
  // Slow-path terms between two normalisations of the rows: each adds less than 2^52 to a row (and less than 2^32 to
  // another), so with the deposits a row stays below 2^32 + 2^10 2^52 + 2^45 < 2^63 (docs/EXACT.md "Limb bounds").
  static constexpr unsigned normalize_period = 1u << 10;
  static constexpr int slow_run = SlowRun;
  static constexpr bool slow_for_good = SlowRun < 0;

  long long* limbs;
  unsigned flags = 0;
  unsigned others = 0;   // nonzero once the slow path met a term other than -0.0 (fast terms: a move set the flag)
  unsigned pending = 0;  // slow-path terms since the rows were last normalised
  // The all_slow mode: whether the coming steps are all_slow, steps left (SlowRun > 0), and the terms the thread sent
  // slow in its last step outside the mode (the vote's count; the thread adds to it).
  bool all_slow = false;
  int slow_left = 0;
  unsigned step_slow = 0;

  // The rows normalised (exact_normalize_rows): the value they hold is unchanged.
  DETRED_HD DETRED_INLINE void normalize_limbs() { exact_normalize_rows<BlockThreads, limb_rows>(limbs); }

  // Before a step of `count` terms: the rows normalised first if `count` more slow terms could pass the period.
  DETRED_HD DETRED_INLINE void reserve_rows(unsigned count) {
    if (pending + count > normalize_period) {
      normalize_limbs();
      pending = 0;
    }
  }

  // Once a step, after reserve_rows: the warp's all_slow vote (SlowRun != 0). `voting` (warp-uniform): whether this
  // warp votes at all. A voting warp goes all_slow iff every active lane sent at least 3/4 of the step's `count` terms
  // slow (exact_warp_all).
  DETRED_HD DETRED_INLINE void vote_all_slow(unsigned count, bool voting) {
    if constexpr (SlowRun != 0) {
      if (all_slow) {
        if constexpr (SlowRun > 0) all_slow = --slow_left > 0;
      } else if (voting && exact_warp_all(4 * step_slow >= 3 * count)) {
        all_slow = true;
        slow_left = SlowRun;
      }
      step_slow = 0;
    }
  }

  // The E terms of one vector by the slow path, inline.
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector_slow(const bits (&b)[E]) {
    pending += E;
#pragma unroll
    for (int j = 0; j < E; ++j) exact_binary64_slow<BlockThreads>(limbs, b[j], flags, others);
  }

  // The same, Outline: a two-term vector by the out-of-line call (exact_binary64_slow_pair), so that the caller's
  // step body stays short.
  template <bool Outline, int E>
  DETRED_HD DETRED_INLINE void add_vector_slow_from_window(const bits (&b)[E]) {
    if constexpr (Outline && E == 2) {
      pending += E;
      const uint2 r = exact_binary64_slow_pair<BlockThreads>(limbs, b[0], b[1]);
      flags |= r.x;
      others |= r.y;
    } else {
      add_vector_slow(b);
    }
  }

  // The end of the thread's terms (after its register accumulators are deposited): the rows normalised if a slow
  // term came since the last normalisation (then rows 0 .. limb_rows - 2 are in [0, 2^32); else every row changed by
  // less than 2^32 a deposit since: either way a block's threads add up without overflow, docs/EXACT.md), the flags
  // complete.
  DETRED_HD DETRED_INLINE void finish_rows() {
    if (pending) normalize_limbs();
    pending = 0;
    if (others) flags |= S::flag_not_only_negative_zero;
  }
};

// A vector's largest `top - field` over its terms, as unsigned: at least `span` when a term lies above `top` or
// `span` or more fields below it (the window test of the binary64 threads).
template <int E>
DETRED_HD DETRED_INLINE unsigned exact_worst_distance(int top, const int (&field)[E]) {
  unsigned worst = 0;
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const unsigned d = unsigned(top - field[j]);
    worst = d > worst ? d : worst;
  }
  return worst;
}

// A vector's largest finite exponent field (0 when it holds only zeros, subnormals, NaN and infinities): the field a
// window move takes `top` to.
template <int E>
DETRED_HD DETRED_INLINE int exact_highest_finite_field(const int (&field)[E]) {
  int highest = 0;
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const int f = field[j] == exact_binary64_geometry::special_field ? 0 : field[j];
    highest = f > highest ? f : highest;
  }
  return highest;
}

}  // namespace detred::cuda::detail
