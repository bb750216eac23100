// Kernel 1's `extract_levels` algorithm for binary64 (docs/EXACT.md "Extracted levels"): a register window of exponent
// fields below the largest the thread has met, whose terms are cut into integers by floating-point additions. The
// window holds the span = 52 L - 53 exponent fields top - span + 1 .. top (L = Levels: 51 fields for L = 2, 103 for
// L = 3); level j (0 = coarsest) has a grain g_j = 2^(lowest field's ulp exponent + 52 (L - 1 - j)) and a constant
// c_j = 1.5 2^52 g_j. A term x of the window (normal, ulp(x) >= g_{L-1}, |x| <= 2^51 g_0) goes through
//     t_j = RN(r_j + c_j),   k_j = bits(t_j) - bits(c_j),   r_{j+1} = r_j - (t_j - c_j),   r_0 = x,
// and then x = sum_j k_j g_j exactly, |k_j| <= 2^51: the 64-bit integers k_j are added to one 64-bit accumulator a
// level (mod 2^64, exact while 2^11 terms a deposit keep |sum| <= 2^62). Four additions and four integer adds a term
// for L = 2, seven and six for L = 3, against about 25 integer instructions for a 128-bit shift-and-add. Every other
// term (outside the window, zero, subnormal, NaN, infinity) takes the lean slow path (exact_binary64_rows.cuh) into the
// thread's limb rows in shared memory, and the all_slow mode serves data mostly outside the window (full range). Both
// paths add the same exact value, so the choice never shows in a bit. The proof: docs/EXACT.md.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "src/cuda/exact/exact_binary64_digits.cuh"
#include "src/cuda/exact/exact_binary64_rows.cuh"

namespace detred::cuda::detail {

// Round-to-nearest-even double addition and subtraction, never contracted or reassociated (device: the explicit
// intrinsics; host: plain operators under -ffp-contract=off, SSE2 double arithmetic).
DETRED_HD DETRED_INLINE double exact_add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
DETRED_HD DETRED_INLINE double exact_sub_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// The window of `Levels` levels and the cut of its terms (the header's comment; docs/EXACT.md "Extracted levels"):
// `top`, the constants, the levels' integer sums, and the extraction of one window term. The thread of kernel 1
// (exact_extract_thread) and the warp-shared window of small sums (exact_warp_levels.cuh) both build on it.
template <int Levels>
struct exact_levels_cut {
  using bits = unsigned long long;
  static_assert(Levels == 2 || Levels == 3, "extract_levels: two levels (51 fields) or three (103 fields)");
  static constexpr int levels = Levels;
  // Fields in the window: the last level's grain is the lowest field's ulp, and the coarsest level takes |x| up to
  // 2^51 g_0 = 2^(51 + 52 (L - 1)) g_{L-1}, so a term of the top field (below 2^53 of its own ulps) fits when
  // top - lowest <= 52 L - 54.
  static constexpr int span = 52 * Levels - 53;
  // The lowest top: the window's lowest field top - span + 1 is then >= 1, so a window term is normal and every c_j
  // is normal.
  static constexpr int lowest_top = span;
  // The highest top: c_0 = 1.5 2^(top - 1021) and t_0 <= 2^(top - 1020) must stay finite. Terms of fields 2044 ..
  // 2046 take the slow path.
  static constexpr int highest_top = 2043;

  bits acc[Levels] = {};        // level j's sum of k_j, mod 2^64
  double c[Levels] = {};        // c_j = 1.5 2^52 g_j
  bits negated_c[Levels] = {};  // -bits(c_j) mod 2^64: acc_j += bits(t_j) + negated_c_j adds k_j
  // The window starts empty: with top = -1 no field is in it; the first vector with a nonzero finite term moves it.
  int top = -1;

  // The lowest field of the window for the current top.
  DETRED_HD DETRED_INLINE int lowest_field() const { return top - span + 1; }
  // The bit position of level j's grain g_j in the double layout (g_j = 2^(lowest - 1075 + 52 (L - 1 - j))).
  DETRED_HD DETRED_INLINE int level_position(int j) const {
    return lowest_field() + exact_binary64_geometry::position_offset + 52 * (Levels - 1 - j);
  }

  // Moves the window to `new_top` (lowest_top <= new_top <= highest_top) and sets the constants: c_j's biased
  // exponent field is lowest + 52 (L - 1 - j) (its ulp g_j = 2^(lowest - 1075 + 52 (L - 1 - j))).
  DETRED_HD DETRED_INLINE void set_top(int new_top) {
    top = new_top;
#pragma unroll
    for (int j = 0; j < Levels; ++j) {
      const bits field = bits(lowest_field() + 52 * (Levels - 1 - j));
      const bits c_bits = (field << 52) | (1ull << 51);
      c[j] = detred::bit_cast<double>(c_bits);
      negated_c[j] = 0ull - c_bits;
    }
  }

  // A term of the window: its levels' integers into the accumulators (the extraction in the header's comment).
  DETRED_HD DETRED_INLINE void fast(bits b) {
    double r = detred::bit_cast<double>(b);
#pragma unroll
    for (int j = 0; j < Levels; ++j) {
      const double t = exact_add_rn(r, c[j]);
      acc[j] += detred::bit_cast<bits>(t) + negated_c[j];
      if (j + 1 < Levels) r = exact_sub_rn(r, exact_sub_rn(t, c[j]));
    }
  }
};

// One thread's accumulation under `extract_levels` (binary64 only). Limb row k of the thread at
// limbs[k * BlockThreads]. SlowRun: the all_slow mode (the GPU kernel's: -1, for good once voted; the host tests also
// drive 0: never, and k > 0: k steps). StepTest: one window test for a whole step's terms, then the extraction of all
// of them as straight-line code (the per-vector path only for a step with a term outside the window). Speed only.
template <int Levels, int BlockThreads, int SlowRun = -1, bool StepTest = true>
struct exact_extract_thread : exact_binary64_rows<BlockThreads, SlowRun>, exact_levels_cut<Levels> {
  using Rows = exact_binary64_rows<BlockThreads, SlowRun>;
  using Cut = exact_levels_cut<Levels>;
  using Cut::acc;
  using Cut::fast;
  using Cut::highest_top;
  using Cut::lowest_field;
  using Cut::lowest_top;
  using Cut::set_top;
  using Cut::span;
  using Cut::top;
  using Rows::add_vector_slow;
  using Rows::flags;
  using Rows::limbs;
  using Rows::step_slow;
  using typename Rows::bits;
  using typename Rows::G;
  using typename Rows::S;
  static constexpr bool adaptive = false;  // exact_thread_terms: no narrow / wide mode
  // Terms between deposits: |k_j| <= 2^51, so 2^11 of them keep |acc_j| <= 2^62.
  static constexpr unsigned headroom = 1u << 11;

  unsigned room = headroom;

  // acc_j g_j into the limbs: |acc_j| <= 2^62 at bit position lowest + 13 + 52 (L - 1 - j) of the layout (14 ..
  // 2043 - span + 1 + 13 + 52 (L - 1) = 2058) as three 32-bit digits, limbs pos / 32 .. pos / 32 + 2 <= 66.
  DETRED_HD DETRED_INLINE void deposit_level(int j) {
    const long long a = (long long)acc[j];
    if (a == 0) return;
    const bool negative = a < 0;
    const bits magnitude = negative ? 0ull - bits(a) : bits(a);
    const int pos = this->level_position(j);
    const int k = pos >> 5, shift = pos & 31;
    const bits low = magnitude << shift;
    const unsigned high = shift ? unsigned(magnitude >> (64 - shift)) : 0u;
    const long long d[3] = {(long long)(low & 0xffffffffull), (long long)(low >> 32), (long long)high};
#pragma unroll
    for (int i = 0; i < 3; ++i) limbs[(k + i) * BlockThreads] += negative ? -d[i] : d[i];
    acc[j] = 0;
  }

  DETRED_HD DETRED_INLINE void deposit_all() {
#pragma unroll
    for (int j = 0; j < Levels; ++j) deposit_level(j);
  }

  // Moves the window up to `highest` (a finite field above top, top below highest_top), clamped to [lowest_top,
  // highest_top]: the levels deposited first, at the grains they were built for.
  DETRED_HD DETRED_INLINE void move_to(int highest) {
    deposit_all();
    set_top(highest < lowest_top ? lowest_top : (highest > highest_top ? highest_top : highest));
  }

  // Before the first step: the window placed at the largest finite field among the step's terms of the whole warp
  // (exact_warp_max), so that a thread whose own first terms are small does not move its window again and again, or
  // send its next terms by the slow path, as it meets larger ones (ill-conditioned data span about 101 of the 103
  // fields). Any top gives the same bits: this only chooses which exact path a term takes.
  template <int U>
  DETRED_HD DETRED_INLINE void first_step(const uint4 (&v)[U]) {
    int highest = -1;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int f0 = int(v[u].y >> 20) & G::special_field, f1 = int(v[u].w >> 20) & G::special_field;
      highest = f0 != G::special_field && f0 > highest ? f0 : highest;
      highest = f1 != G::special_field && f1 > highest ? f1 : highest;
    }
    highest = exact_warp_max(highest);
    if (highest > top && highest > 0 && top < highest_top) move_to(highest);
  }

  // Makes room for `count` more window terms and as many slow ones (once a step, before its terms), then the warp's
  // all_slow vote (every warp votes: there is no wide mode).
  DETRED_HD DETRED_INLINE void reserve(unsigned count) {
    if (room < count) {
      deposit_all();
      room = headroom;
    }
    room -= count;
    this->reserve_rows(count);
    this->vote_all_slow(count, true);
  }

  // The E terms of one vector, all by one path: the window when every term is in it (one test), else the slow path
  // for every term, after moving the window up if a finite term lies above `top` (and top can still rise).
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/ = 0) {
    int field[E];
#pragma unroll
    for (int j = 0; j < E; ++j) field[j] = G::field_of(b[j]);
    unsigned worst = exact_worst_distance(top, field);  // >= span (as unsigned) when f > top or f below the window
    if (worst >= unsigned(span)) {
      const int highest = exact_highest_finite_field(field);
      if (highest > top && highest > 0 && top < highest_top) {
        move_to(highest);
        worst = exact_worst_distance(top, field);
      }
      if (worst >= unsigned(span)) {
        if constexpr (SlowRun != 0) step_slow += unsigned(E);
        this->template add_vector_slow_from_window<true>(b);
        return;
      }
    }
    // Window terms are normal, so other than -0.0.
    flags |= S::flag_not_only_negative_zero;
#pragma unroll
    for (int j = 0; j < E; ++j) fast(b[j]);
  }

  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/, exact_all_slow_step) {
    add_vector_slow(b);
  }

  // StepTest: the U vectors of a step (two binary64 terms each) by the window alone when every term lies in it (one
  // test for the step: the field of each high word), returning true; false (nothing added) otherwise.
  template <int U>
  DETRED_HD DETRED_INLINE bool try_window_step(const uint4 (&v)[U]) {
    if constexpr (!StepTest) {
      return false;
    } else {
      unsigned worst = 0;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const unsigned f0 = (v[u].y >> 20) & 0x7ffu, f1 = (v[u].w >> 20) & 0x7ffu;
        const unsigned d0 = unsigned(top - int(f0)), d1 = unsigned(top - int(f1));
        worst = d0 > worst ? d0 : worst;
        worst = d1 > worst ? d1 : worst;
      }
      if (worst >= unsigned(span)) return false;
      flags |= S::flag_not_only_negative_zero;  // window terms are normal
#pragma unroll
      for (int u = 0; u < U; ++u) {
        fast((bits(v[u].y) << 32) | v[u].x);
        fast((bits(v[u].w) << 32) | v[u].z);
      }
      return true;
    }
  }

  // The digit mode (exact_binary64_digits.cuh; exact_thread_terms enters it for the whole block): first the levels
  // deposited and the rows normalised, so that the block can rewrite every thread's rows as digit rows.
  DETRED_HD DETRED_INLINE void begin_digits() {
    deposit_all();
    this->normalize_limbs();
    this->pending = 0;
  }

  // The E terms of one vector into the thread's digit rows (row r at digits[r * BlockThreads]). A NaN or infinity
  // among them leaves its flag to exact_thread_share, which then recomputes the thread's NaN and infinity flags from
  // its terms (exact_special_scan): `digit_highest` reaches 2047.
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector_digits(const exact_digit_rows& rows, const bits (&b)[E]) {
#pragma unroll
    for (int j = 0; j < E; ++j) exact_binary64_digit_add<BlockThreads>(rows, b[j], digit_highest, this->others);
  }
  int digit_highest = 0;  // the largest exponent field the digit mode met
  DETRED_HD DETRED_INLINE bool digits_met_special() const { return digit_highest == G::special_field; }

  // One term (the head and tail elements of block 0).
  DETRED_HD DETRED_INLINE void add(bits b, int /*column*/ = 0) {
    const bits one[1] = {b};
    add_vector<1>(one);
  }

  // The end of the thread's terms: the levels into the limbs, then the rows' end (exact_binary64_rows::finish_rows).
  DETRED_HD DETRED_INLINE void deposit() {
    deposit_all();
    this->finish_rows();
  }
};

}  // namespace detred::cuda::detail
