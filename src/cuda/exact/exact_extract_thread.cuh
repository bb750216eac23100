// Kernel 1's `extract_levels` algorithm for binary64 (docs/EXACT.md "Extracted levels"): the register window of
// adjacent_windows, but each term is cut into integers by floating-point additions instead of integer shifts. The
// window holds the span = 52 L - 53 exponent fields top - span + 1 .. top (L = Levels: 51 fields for L = 2, 103 for
// L = 3); level j (0 = coarsest) has a grain g_j = 2^(lowest field's ulp exponent + 52 (L - 1 - j)) and a constant
// c_j = 1.5 2^52 g_j. A term x of the window (normal, ulp(x) >= g_{L-1}, |x| <= 2^51 g_0) goes through
//     t_j = RN(r_j + c_j),   k_j = bits(t_j) - bits(c_j),   r_{j+1} = r_j - (t_j - c_j),   r_0 = x,
// and then x = sum_j k_j g_j exactly, |k_j| <= 2^51: the 64-bit integers k_j are added to one 64-bit accumulator a
// level (mod 2^64, exact while 2^11 terms a deposit keep |sum| <= 2^62). Four additions and four integer adds a term
// for L = 2, seven and six for L = 3, against about 25 integer instructions for a 128-bit shift-and-add. Every other
// term (outside the window, zero, subnormal, NaN, infinity) takes adjacent_windows' lean slow path into the thread's
// limb rows in shared memory, and the all_slow mode serves data mostly outside the window (full range). Both paths
// add the same exact value, so the choice never shows in a bit. The proof: docs/EXACT.md.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "src/cuda/exact/exact_windows_thread.cuh"

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

// One thread's accumulation under `extract_levels` (binary64 only). Limb row k of the thread at
// limbs[k * BlockThreads]. SlowRun: adaptive_windows' all_slow mode (0: never; -1: for good once voted; > 0: that many
// steps). StepTest: one window test for a whole step's terms, then the extraction of all of them as straight-line code
// (the per-vector path only for a step with a term outside the window). Speed only.
template <int Levels, int BlockThreads, int SlowRun = -1, bool StepTest = true>
struct exact_extract_thread {
  using G = exact_binary64_geometry;
  using S = G::S;
  using bits = unsigned long long;
  static_assert(Levels == 2 || Levels == 3, "extract_levels: two levels (51 fields) or three (103 fields)");
  static_assert(SlowRun >= -1, "steps in the all_slow mode (-1: to the end of the thread's share)");
  static constexpr bool adaptive = false;  // exact_thread_terms: no narrow / wide mode
  static constexpr int slow_run = SlowRun;
  static constexpr bool slow_for_good = SlowRun < 0;
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
  // Terms between deposits: |k_j| <= 2^51, so 2^11 of them keep |acc_j| <= 2^62.
  static constexpr unsigned headroom = 1u << 11;
  static constexpr int limb_rows = G::limb_rows;
  // As adjacent_windows (docs/EXACT.md "Limb bounds"): each slow term adds less than 2^52 to a row.
  static constexpr unsigned normalize_period = 1u << 10;

  long long* limbs;
  bits acc[Levels] = {};        // level j's sum of k_j, mod 2^64 (|value| <= 2^62 between deposits)
  double c[Levels] = {};        // c_j = 1.5 2^52 g_j
  bits negated_c[Levels] = {};  // -bits(c_j) mod 2^64: acc_j += bits(t_j) + negated_c_j adds k_j
  // The window starts empty: with top = -1 no field is in it; the first vector with a nonzero finite term moves it.
  int top = -1;
  unsigned room = headroom;
  unsigned flags = 0;
  unsigned others = 0;   // nonzero once the slow path met a term other than -0.0 (window terms: a move set the flag)
  unsigned pending = 0;  // slow-path terms since the rows were last normalised
  // The all_slow mode: whether the coming steps are all_slow, steps left (SlowRun > 0), and the terms outside the
  // window in the thread's last step (the vote's count).
  bool all_slow = false;
  int slow_left = 0;
  unsigned step_slow = 0;

  DETRED_HD DETRED_INLINE void normalize_limbs() { exact_normalize_rows<BlockThreads, limb_rows>(limbs); }

  // The lowest field of the window, and level j's grain exponent (g_j = 2^grain_exponent(j)), for the current top.
  DETRED_HD DETRED_INLINE int lowest_field() const { return top - span + 1; }

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

  // acc_j g_j into the limbs: |acc_j| <= 2^62 at bit position lowest + 13 + 52 (L - 1 - j) of the layout (14 ..
  // 2043 - span + 1 + 13 + 52 (L - 1) = 2058) as three 32-bit digits, limbs pos / 32 .. pos / 32 + 2 <= 66.
  DETRED_HD DETRED_INLINE void deposit_level(int j) {
    const long long a = (long long)acc[j];
    if (a == 0) return;
    const bool negative = a < 0;
    const bits magnitude = negative ? 0ull - bits(a) : bits(a);
    const int pos = lowest_field() + G::position_offset + 52 * (Levels - 1 - j);
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

  // Makes room for `count` more window terms and as many slow ones (once a step, before its terms), then the warp's
  // all_slow vote.
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
      if (all_slow) {
        if constexpr (SlowRun > 0) all_slow = --slow_left > 0;
      } else if (exact_warp_all(4 * step_slow >= 3 * count)) {
        all_slow = true;
        slow_left = SlowRun;
      }
      step_slow = 0;
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

  // The E terms of one vector, all by one path: the window when every term is in it (one test), else the slow path
  // for every term, after moving the window up if a finite term lies above `top` (and top can still rise).
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int /*first*/ = 0) {
    int field[E];
    unsigned worst = 0;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      field[j] = G::field_of(b[j]);
      const unsigned d = unsigned(top - field[j]);  // >= span (as unsigned) when f > top or f below the window
      worst = d > worst ? d : worst;
    }
    if (worst >= unsigned(span)) {
      int highest = 0;  // the vector's largest finite field
#pragma unroll
      for (int j = 0; j < E; ++j) {
        const int f = field[j] == G::special_field ? 0 : field[j];
        highest = f > highest ? f : highest;
      }
      if (highest > top && highest > 0 && top < highest_top) {
        deposit_all();
        set_top(highest < lowest_top ? lowest_top : (highest > highest_top ? highest_top : highest));
        flags |= S::flag_not_only_negative_zero;
        worst = 0;
#pragma unroll
        for (int j = 0; j < E; ++j) {
          const unsigned d = unsigned(top - field[j]);
          worst = d > worst ? d : worst;
        }
      }
      if (worst >= unsigned(span)) {
        if constexpr (SlowRun != 0) step_slow += unsigned(E);
        if constexpr (E == 2) {
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
    for (int j = 0; j < E; ++j) fast(b[j]);
  }

  // The E terms of one vector by the slow path, whatever their fields.
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector_slow(const bits (&b)[E]) {
    pending += E;
#pragma unroll
    for (int j = 0; j < E; ++j) exact_binary64_slow<BlockThreads>(limbs, b[j], flags, others);
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
#pragma unroll
      for (int u = 0; u < U; ++u) {
        fast((bits(v[u].y) << 32) | v[u].x);
        fast((bits(v[u].w) << 32) | v[u].z);
      }
      return true;
    }
  }

  // One term (the head and tail elements of block 0).
  DETRED_HD DETRED_INLINE void add(bits b, int /*column*/ = 0) {
    const bits one[1] = {b};
    add_vector<1>(one);
  }

  // The end of the thread's terms: the levels into the limbs, the rows normalised if a slow-path term came since the
  // last normalisation, the flags complete (as exact_windows_thread::deposit).
  DETRED_HD DETRED_INLINE void deposit() {
    deposit_all();
    if (pending) normalize_limbs();
    pending = 0;
    if (others) flags |= S::flag_not_only_negative_zero;
  }
};

}  // namespace detred::cuda::detail
