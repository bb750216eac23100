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
#include "src/cuda/exact/exact_binary64_rows.cuh"

namespace detred::cuda::detail {

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
struct exact_windows_thread : exact_binary64_rows<BlockThreads, SlowRun> {
  using Rows = exact_binary64_rows<BlockThreads, SlowRun>;
  using Rows::add_vector_slow;
  using Rows::all_slow;
  using Rows::flags;
  using Rows::limbs;
  using Rows::step_slow;
  using typename Rows::bits;
  using typename Rows::G;
  using typename Rows::S;
  using acc_t = __int128;
  using uacc = unsigned __int128;
  static_assert(Windows >= 1 && Windows <= 8, "adjacent windows: 1 to 8");
  static constexpr bool adaptive = AdaptShift >= 0;
  static_assert(!adaptive || (Windows == 2 && AdaptShift <= 31), "adaptive windows: two windows, a shift 0 .. 31");
  static_assert(SlowRun == 0 || adaptive, "the all_slow mode: adaptive windows only");
  static constexpr int width = 64;  // fields per window: shifts 0 .. 63, shifted significands below 2^116
  static constexpr int span = width * Windows;
  // The lowest `top` after a move: every window's bottom field top - span + 1 is then >= 1, so a fast term is normal.
  static constexpr int lowest_top = span;
  // Terms between deposits (all windows together; each term goes to one): |acc| <= 2^11 (2^53 - 1) 2^63 < 2^127.
  static constexpr unsigned headroom = 1u << 11;
  acc_t acc[Windows] = {};
  // The windows start empty: with top = -1, top - f < 0 for every field f, so no term is in a window; the first
  // vector with a nonzero finite term moves them (top = max(field, lowest_top)).
  int top = -1;
  unsigned room = headroom;
  // adaptive_windows: the mode (narrow at the start) and the thread's counts of vectors since its start: inside the
  // windows but not inside window 0 (`rescued`), outside every window after any move (`slow`).
  bool wide = !adaptive;
  unsigned rescued = 0;
  unsigned slow = 0;

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
    this->reserve_rows(count);
    // Only a narrow warp votes for the all_slow mode (the wide mode serves data in the windows: ill-conditioned sets).
    this->vote_all_slow(count, !wide);
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
#pragma unroll
    for (int j = 0; j < E; ++j) field[j] = G::field_of(b[j]);
    unsigned worst = exact_worst_distance(top, field);  // >= span (as unsigned) when f > top or f below the windows
    if (worst >= limit) {
      if (worst >= unsigned(span)) {
        const int highest = exact_highest_finite_field(field);
        if (highest > top && highest > 0) {
          // A nonzero finite term above the windows: deposit them all and move them up.
          deposit_all();
          top = highest > lowest_top ? highest : lowest_top;
          flags |= S::flag_not_only_negative_zero;
          worst = exact_worst_distance(top, field);
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
        this->template add_vector_slow_from_window<OutlineSlow>(b);
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < E; ++j) fast<Wide>(b[j], field[j]);
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

  // The end of the thread's terms: the windows into the limbs, then the rows' end (exact_binary64_rows::finish_rows).
  DETRED_HD DETRED_INLINE void deposit() {
    deposit_all();
    this->finish_rows();
  }
};

}  // namespace detred::cuda::detail
