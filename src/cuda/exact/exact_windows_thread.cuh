// Kernel 1's `adjacent_windows` algorithm for binary64 (docs/EXACT.md "Adjacent windows for binary64"): K register
// accumulators of 128 bits over K adjacent windows of 64 exponent fields each, just below the largest field the thread
// has met (`top`), so that data spanning up to 64K binades (normal, uniform, ill-conditioned to 1e30) never leave the
// registers; every other term (below all windows, zero, subnormal, NaN, infinity) takes a lean slow path straight from
// the bits into the thread's own limbs in shared memory. One path per 16-byte vector: a vector with any term outside
// the windows takes the slow path for all its terms, so lanes do not split term by term. Both paths add the same exact
// value, so the choice never shows in a bit. Exactness, headroom and flags: docs/EXACT.md.
// Also `adaptive_windows`: the same thread with two windows and a warp-uniform mode, narrow (window 0 alone, K = 1's
// instructions) or wide (both windows), chosen by a vote of the warp once a step (docs/EXACT.md "Adaptive windows").
// Since session 8 also a third mode, all_slow, for data mostly below both windows (docs/EXACT.md "The all_slow mode"),
// and a lean slow path of two digits whose limb rows are normalised every 2^10 terms ("Limb bounds").
#pragma once

#include <cstdint>
#include <type_traits>

#include "detred/accumulators/exact.hpp"
#include "detred/config.hpp"

namespace detred::cuda::detail {

// The double layout's geometry as the windows and the lean slow path see binary64 bit patterns.
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
// itself (host: the emulation runs threads one by one). adaptive_windows' mode vote: the vote only chooses which exact
// path adds a term, so a vote over fewer lanes (divergent tail) or over one thread cannot change a bit.
DETRED_HD DETRED_INLINE bool exact_warp_any(bool p) {
#ifdef __CUDA_ARCH__
  return __any_sync(__activemask(), p);
#else
  return p;
#endif
}

// Adds the binary64 term with bits b exactly to the limb rows at `limbs` (row k at limbs[k * Stride]), with the flags
// add() would set, and no branch on the data but a predicated one for NaN and infinities. Contract: afterwards the
// rows hold their old value plus b's exact value (nothing for a zero, NaN or infinity), in units of 2^-1088, as two
// digits: one row changed by less than 2^32, the row above it by less than 2^52 (so the caller normalises its rows at
// least once every 2^10 terms: exact_windows_thread::normalize_limbs); `flags` gets NaN / +-Inf as add() sets them;
// `others` is ORed with a word that is nonzero exactly when b is not -0.0 (the caller turns it into
// flag_not_only_negative_zero once, at its end).
template <int Stride>
DETRED_HD DETRED_INLINE void exact_binary64_slow(long long* limbs, unsigned long long b, unsigned& flags,
                                                 unsigned& others) {
  using G = exact_binary64_geometry;
  using S = G::S;
  const int field = G::field_of(b);
  const unsigned long long fraction = b & G::fraction_mask;
  const bool special = field == G::special_field;
  const bool negative = (b >> 63) != 0;
  others |= (unsigned(b >> 32) ^ 0x80000000u) | unsigned(b);
  if (special) flags |= fraction ? S::flag_nan : (negative ? S::flag_negative_infinity : S::flag_positive_infinity);
  // The integer significand: the hidden bit for fields 1 .. 2046, none for field 0 (zero, subnormal: field 1's
  // weight); zero for NaN and infinities, whose two (zero) digits land in rows 64 and 65.
  const unsigned long long hidden = field != 0 ? (1ull << G::fraction_bits) : 0ull;
  const unsigned long long m = special ? 0ull : (fraction | hidden);
  const int pos = (field > 1 ? field : 1) + G::position_offset;  // 14 .. 2060
  const int k = pos >> 5, shift = pos & 31;
  // m << shift = high 2^32 + low (m < 2^53, shift <= 31): low = its last 32 bits, high = m >> (32 - shift) < 2^52.
  const unsigned long long d[2] = {(m << shift) & 0xffffffffull, m >> (32 - shift)};
  // (d ^ s) - s is d or -d as s is 0 or all ones.
  const unsigned long long s = negative ? ~0ull : 0ull;
  long long* row = limbs + k * Stride;
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

// The tag of a step whose vectors all go by the slow path (adaptive_windows' third mode, `all_slow`).
struct exact_all_slow_step {};

// Whether `p` holds for every thread of the calling warp (device: a vote of the lanes active here), or for the thread
// itself (host). adaptive_windows' slow-mode vote: like exact_warp_any, it chooses a path, never a bit.
DETRED_HD DETRED_INLINE bool exact_warp_all(bool p) {
#ifdef __CUDA_ARCH__
  return __all_sync(__activemask(), p);
#else
  return p;
#endif
}

// One thread's accumulation under `adjacent_windows` (binary64 only). Window w (0 <= w < Windows) holds the fields
// top - 64w - 63 .. top - 64w in acc[w], in units of 2^(base_w - 1075), base_w = top - 64w - 63; a term of field f
// in it is its integer significand shifted left by f - base_w = 63 - ((top - f) mod 64). Limb row k of the thread at
// limbs[k * BlockThreads].
// AdaptShift >= 0: `adaptive_windows` (Windows = 2). The same layout and deposits, and a mode, `wide`: narrow takes
// only vectors inside window 0 by the fast path (K = 1's test and add), wide every vector inside the windows (K = 2's).
// Each step (reserve) the warp votes: wide while some lane has met more vectors that only the wide mode takes fast
// (`rescued`, counted in the narrow mode only: the wide mode's step bodies stay as lean as K = 2's) than 2^-AdaptShift
// times the vectors below every window (`slow`); AdaptShift = 31: wide from the first rescued vector on, for good
// (sticky). The mode only chooses the path; acc[1] is kept, moved and deposited in both.
// SlowRun != 0 (adaptive only): a third mode, `all_slow`: once every lane of a narrow warp sent at least 3/4 of a
// step's terms by the slow path from below both windows, the next SlowRun steps (SlowRun = -1: every remaining step)
// send every term there without testing the windows (full-range data: no window test, no move, no count), then one
// step in the windows mode votes again. Still only a choice of exact path. OutlineSlow: the windows modes send a
// vector's terms to the slow path by a call (exact_binary64_slow_pair) instead of inline code (the all_slow mode keeps
// it inline: there it is the hot path). Speed only.
template <int Windows, int BlockThreads, int AdaptShift = -1, int SlowRun = 0, bool OutlineSlow = false>
struct exact_windows_thread {
  using G = exact_binary64_geometry;
  using S = G::S;
  using bits = unsigned long long;
  using acc_t = __int128;
  using uacc = unsigned __int128;
  static_assert(Windows >= 1 && Windows <= 8, "adjacent windows: 1 to 8");
  static constexpr bool adaptive = AdaptShift >= 0;
  static_assert(!adaptive || (Windows == 2 && AdaptShift <= 31), "adaptive windows: two windows, a shift 0 .. 31");
  static_assert(SlowRun >= -1 && (SlowRun == 0 || adaptive), "the all_slow mode: adaptive windows only");
  static constexpr int slow_run = SlowRun;
  // SlowRun = -1: once voted, the all_slow mode lasts to the end of the thread's steps (exact_thread_terms then leaves
  // its main loop for a loop of all_slow steps: the main loop's bodies stay as without the mode).
  static constexpr bool slow_for_good = SlowRun < 0;
  static constexpr int width = 64;  // fields per window: shifts 0 .. 63, shifted significands below 2^116
  static constexpr int span = width * Windows;
  // The lowest `top` after a move: every window's bottom field top - span + 1 is then >= 1, so a fast term is normal.
  static constexpr int lowest_top = span;
  // Terms between deposits (all windows together; each term goes to one): |acc| <= 2^11 (2^53 - 1) 2^63 < 2^127.
  static constexpr unsigned headroom = 1u << 11;
  static constexpr int limb_rows = G::limb_rows;
  // Slow-path terms between two normalisations of the limb rows: each adds less than 2^52 to a row (and less than 2^32
  // to another), so with deposits (each digit below 2^32, at most 2 K per move or headroom period) a row stays below
  // 2^32 + 2^10 2^52 + 2^45 < 2^63 (docs/EXACT.md "Limb bounds").
  static constexpr unsigned normalize_period = 1u << 10;

  long long* limbs;
  acc_t acc[Windows] = {};
  // The windows start empty: with top = -1, top - f < 0 for every field f, so no term is in a window; the first
  // vector with a nonzero finite term moves them (top = max(field, lowest_top)).
  int top = -1;
  unsigned room = headroom;
  unsigned flags = 0;
  unsigned others = 0;  // nonzero once the slow path met a term other than -0.0 (fast terms: a move set the flag)
  // adaptive_windows: the mode (narrow at the start) and the thread's counts of vectors since its start: inside the
  // windows but not inside window 0 (`rescued`), outside every window after any move (`slow`).
  bool wide = !adaptive;
  unsigned rescued = 0;
  unsigned slow = 0;
  // Slow-path terms since the rows were last normalised.
  unsigned pending = 0;
  // The all_slow mode (SlowRun != 0): whether the coming step is one, how many such steps are left (SlowRun > 0), and
  // the terms below both windows in the thread's last step in a windows mode (the vote's count).
  bool all_slow = false;
  int slow_left = 0;
  unsigned step_slow = 0;

  // The rows normalised (exact_normalize_rows): the value they hold is unchanged.
  DETRED_HD DETRED_INLINE void normalize_limbs() { exact_normalize_rows<BlockThreads, limb_rows>(limbs); }

  // acc[w] * 2^(base_w - 1075) into the limbs: |acc[w]| < 2^127 shifted to bit pos = base_w + 13 of the layout
  // (14 <= pos <= 2046 - 63 + 13 = 1996) as five 32-bit digits, limbs pos / 32 .. pos / 32 + 4 <= 66, with acc's sign.
  DETRED_HD DETRED_INLINE void deposit_window(int w) {
    const acc_t a = acc[w];
    if (a == 0) return;
    const bool negative = a < 0;
    const uacc magnitude = negative ? uacc(0) - uacc(a) : uacc(a);
    const int pos = top - width * w - (width - 1) + G::position_offset;
    const int k = pos >> 5, shift = pos & 31;
    const uacc low = magnitude << shift;
    const unsigned high = shift ? unsigned(magnitude >> (128 - shift)) : 0u;
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      const long long d = i < 4 ? (long long)(unsigned(low >> (32 * i))) : (long long)high;
      limbs[(k + i) * BlockThreads] += negative ? -d : d;
    }
    acc[w] = 0;
  }

  // Every window into the limbs, each accumulator back to 0: the value the thread holds is unchanged.
  DETRED_HD DETRED_INLINE void deposit_all() {
#pragma unroll
    for (int w = 0; w < Windows; ++w) deposit_window(w);
  }

  // Makes room for `count` more fast adds and as many slow ones (called once per step, before its terms);
  // adaptive_windows: then the warp's votes on the mode of the step (after the deposit: the mode never touches the
  // accumulators).
  DETRED_HD DETRED_INLINE void reserve(unsigned count) {
    if (room < count) {
      deposit_all();
      room = headroom;
    }
    room -= count;
    if (pending + count > normalize_period) {
      normalize_limbs();
      pending = 0;
    }
    if constexpr (SlowRun != 0) {
      // Only a narrow warp votes (the wide mode serves data in the windows: ill-conditioned sets).
      if (all_slow) {
        if constexpr (SlowRun > 0) all_slow = --slow_left > 0;
      } else if (!wide && exact_warp_all(4 * step_slow >= 3 * count)) {
        all_slow = true;
        slow_left = SlowRun;
      }
      step_slow = 0;
    }
    if constexpr (adaptive) wide = exact_warp_any(rescued > (slow >> AdaptShift));
  }

  // A normal term of field f, top - span < f <= top (Wide) or top - width < f <= top (narrow: window 0 only):
  // (-1)^s m << shift into its window's accumulator.
  template <bool Wide>
  DETRED_HD DETRED_INLINE void fast(bits b, int field) {
    const int d = top - field;  // 0 .. span - 1
    const int shift = (width - 1) - (d & (width - 1));
    const bits m = (b & G::fraction_mask) | (G::fraction_mask + 1);
    // m < 2^53, shift <= 63: the 128-bit m << shift from two 64-bit shifts.
    const uacc v = (uacc((m >> 1) >> (63 - shift)) << 64) | uacc(m << shift);
    // -v = (v ^ all ones) + 1: the sign mask and the sign bit as the carry in.
    const uacc sign = uacc(acc_t((long long)b >> 63));
    const acc_t x = acc_t((v ^ sign) + uacc(b >> 63));
    if constexpr (Windows == 1 || !Wide) {
      acc[0] += x;
    } else {
      const int w = d >> 6;
#pragma unroll
      for (int i = 0; i < Windows; ++i)
        if (w == i) acc[i] += x;
    }
  }

  // The E terms of one vector, all by one path: the windows (Wide: all of them; narrow: window 0) when every term is
  // in them (one test), else the slow path for every term, after moving the windows up if a finite term lies above
  // `top`.
  template <bool Wide, int E>
  DETRED_HD DETRED_INLINE void add_vector_in(const bits (&b)[E]) {
    constexpr unsigned limit = Wide ? unsigned(span) : unsigned(width);
    int field[E];
    unsigned worst = 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      field[j] = G::field_of(b[j]);
      const unsigned d = unsigned(top - field[j]);  // >= span (as unsigned) when f > top or f below the windows
      worst = d > worst ? d : worst;
    }
    if (worst >= limit) {
      if (worst >= unsigned(span)) {
        int highest = 0;  // the vector's largest finite field
#pragma unroll
        for (int j = 0; j < E; ++j) {
          const int f = field[j] == G::special_field ? 0 : field[j];
          highest = f > highest ? f : highest;
        }
        if (highest > top && highest > 0) {
          // A nonzero finite term above the windows: deposit them all and move them up.
          deposit_all();
          top = highest > lowest_top ? highest : lowest_top;
          flags |= S::flag_not_only_negative_zero;
          worst = 0;
#pragma unroll
          for (int j = 0; j < E; ++j) {
            const unsigned d = unsigned(top - field[j]);
            worst = d > worst ? d : worst;
          }
        }
      }
      if (worst >= limit) {
        if constexpr (adaptive) {
          const bool inside = worst < unsigned(span);  // only narrow mode gets here with a vector inside the windows
          rescued += inside;
          slow += !inside;
          // The all_slow vote counts the vectors that both windows modes send slow (not window 1's in narrow mode).
          if constexpr (SlowRun != 0) step_slow += inside ? 0u : unsigned(E);
        }
        if constexpr (OutlineSlow && E == 2) {
          pending += E;
          const uint2 r = exact_binary64_slow_pair<BlockThreads>(limbs, b[0], b[1]);
          flags |= r.x;
          others |= r.y;
        } else {
          add_vector_slow(b);
        }
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < E; ++j) fast<Wide>(b[j], field[j]);
  }

  // The E terms of one vector by the slow path, whatever their fields.
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector_slow(const bits (&b)[E]) {
    pending += E;
#pragma unroll
    for (int j = 0; j < E; ++j) exact_binary64_slow<BlockThreads>(limbs, b[j], flags, others);
  }

  // One vector in the thread's current mode (adjacent_windows: always all windows).
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/ = 0) {
    if (!adaptive || wide)
      add_vector_in<true>(b);
    else
      add_vector_in<false>(b);
  }
  // One vector of a step in the mode the step was dispatched on (exact_thread_terms: one branch a step, not a vector).
  template <int E, bool Wide>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/, std::bool_constant<Wide>) {
    add_vector_in<Wide || !adaptive>(b);
  }
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/, exact_all_slow_step) {
    add_vector_slow(b);
  }

  // One term (the head and tail elements of block 0).
  DETRED_HD DETRED_INLINE void add(bits b, int /*column*/ = 0) {
    const bits one[1] = {b};
    add_vector<1>(one);
  }

  // The end of the thread's terms: the windows into the limbs, the rows normalised if a slow-path term came since the
  // last normalisation (then rows 0 .. limb_rows - 2 are in [0, 2^32); else every row changed by less than 2^32 a
  // deposit since: either way a block's threads add up without overflow, docs/EXACT.md), the flags complete.
  DETRED_HD DETRED_INLINE void deposit() {
    deposit_all();
    if (pending) normalize_limbs();
    pending = 0;
    if (others) flags |= S::flag_not_only_negative_zero;
  }
};

}  // namespace detred::cuda::detail
