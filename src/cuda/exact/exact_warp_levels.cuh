// binary64 small sums (docs/EXACT.md "Small sums"): the extracted levels with one window a warp. A small sum gives a
// thread a few terms, and kernel 1's fixed work a block (each thread clearing, normalising and adding 67 limb rows of
// its own) was most of its time. Here the 32 lanes of a warp share `top` (the largest finite field the warp has met),
// so their levels have the same grains: the warp adds them by shuffles and deposits them into 67 rows the warp shares
// (shared atomic additions of 32-bit digits, a few a deposit). Terms outside the window go by the lean slow path into
// the lane's own 67 rows, which a warp clears only when one of its steps first has such a term, and the block adds
// only the rows of warps that did: on narrow data a block clears and adds 8 x 67 rows instead of 256 x 67. Every term
// is still added once, exactly: the bits are the other forms'.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "src/cuda/exact/exact_binary64_rows.cuh"
#include "src/cuda/exact/exact_extract_thread.cuh"

namespace detred::cuda::detail {

// The lanes that share a window: a warp on the device; on the host (tests/cuda/test_exact_kernel_on_host.cu runs the
// threads one by one) each thread alone. The collectives below are then the identity.
DETRED_HD DETRED_INLINE int exact_window_lanes() {
#ifdef __CUDA_ARCH__
  return 32;
#else
  return 1;
#endif
}
DETRED_HD DETRED_INLINE int exact_window_lane() {
#ifdef __CUDA_ARCH__
  return int(threadIdx.x & 31u);
#else
  return 0;
#endif
}
// The largest of `v` over the lanes (every lane of the warp calls it at the same step).
DETRED_HD DETRED_INLINE int exact_window_max(int v) {
#ifdef __CUDA_ARCH__
  return __reduce_max_sync(0xffffffffu, v);
#else
  return v;
#endif
}
// Whether `p` holds in some lane (every lane of the warp calls it at the same step).
DETRED_HD DETRED_INLINE bool exact_window_any(bool p) {
#ifdef __CUDA_ARCH__
  return __any_sync(0xffffffffu, p);
#else
  return p;
#endif
}
// The sum of `v` over the lanes, every lane getting it (the caller keeps |sum| < 2^63).
DETRED_HD DETRED_INLINE long long exact_window_sum(long long v) {
#ifdef __CUDA_ARCH__
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#endif
  return v;
}
// row += d, exactly: atomically on the device (the lanes of a warp share their deposit rows), plainly on the host.
DETRED_HD DETRED_INLINE void exact_row_add(long long* row, long long d) {
#ifdef __CUDA_ARCH__
  atomicAdd(reinterpret_cast<unsigned long long*>(row), static_cast<unsigned long long>(d));
#else
  *row += d;
#endif
}

// A lane of a warp-shared window (binary64). The lane's own limb rows (row k at limbs[k * LaneStride]: the lean slow
// path, exact_binary64_rows) and the warp's deposit rows (row k at deposit_rows[k * DepositStride]). Contract, at every
// step: the warp's deposit rows plus its lanes' rows and level sums hold exactly the sum of the terms its lanes have
// read, and each lane's flags are those add() would set for its terms, except "a term other than -0.0", which the
// warp's move sets in every lane (a move needs a nonzero finite term in some lane; the flags are ORed over the block).
// `rows_ready`: whether the lane's rows are cleared (the kernel clears them at the warp's first slow step; the host
// emulation clears them first).
template <int Levels, int LaneStride, int DepositStride>
struct exact_warp_levels_thread : exact_binary64_rows<LaneStride, 0>, exact_levels_cut<Levels> {
  using Rows = exact_binary64_rows<LaneStride, 0>;
  using Cut = exact_levels_cut<Levels>;
  using G = exact_binary64_geometry;
  using S = G::S;
  using bits = unsigned long long;
  using Cut::acc;
  using Cut::fast;
  using Cut::highest_top;
  using Cut::lowest_top;
  using Cut::set_top;
  using Cut::span;
  using Cut::top;
  using Rows::flags;
  using Rows::limbs;
  using Rows::pending;
  static constexpr int limb_rows = G::limb_rows;
  // A lane's window terms between the warp's deposits: |k_j| <= 2^51, so a lane's level sum stays within 2^57 and the
  // warp's (32 lanes) within 2^62.
  static constexpr unsigned headroom = 1u << 6;
  static_assert(32.0 * headroom * 2251799813685248.0 <= 4611686018427387904.0, "a warp's level sum below 2^62");

  long long* deposit_rows = nullptr;
  bool rows_ready = false;
  unsigned room = headroom;

  // The warp's level sums into its deposit rows: |sum_j| <= 2^62 at level_position(j) (14 .. 2058) as three 32-bit
  // digits, rows pos / 32 .. pos / 32 + 2 <= 66, one digit a lane (all by the thread on the host); each digit changes a
  // row by less than 2^32. Every lane of the warp calls it at the same step; the level sums start again from zero.
  DETRED_HD DETRED_INLINE void deposit_warp() {
    long long s[Levels];
#pragma unroll
    for (int j = 0; j < Levels; ++j) {
      s[j] = exact_window_sum((long long)acc[j]);
      acc[j] = 0;
    }
    for (int d = exact_window_lane(); d < 3 * Levels; d += exact_window_lanes()) {
      const int j = d / 3, i = d - 3 * j;
      long long a = s[0];
#pragma unroll
      for (int q = 1; q < Levels; ++q)
        if (j == q) a = s[q];
      if (a == 0) continue;
      const bits magnitude = a < 0 ? 0ull - bits(a) : bits(a);
      const int pos = this->level_position(j);
      const int shift = pos & 31;
      const bits low = magnitude << shift;
      const bits digit = i == 0   ? (low & 0xffffffffull)
                         : i == 1 ? (low >> 32)
                                  : (shift ? magnitude >> (64 - shift) : 0);
      if (digit)
        exact_row_add(deposit_rows + ((pos >> 5) + i) * DepositStride, a < 0 ? -(long long)digit : (long long)digit);
    }
  }

  // A step of K terms a lane (the same K in every lane of the warp; a missing term is -0.0, which adds nothing and sets
  // no flag). The warp's window first moves up to the warp's largest finite field if that lies above `top`
  // (depositing the levels at the grains they were built for), the warp deposits when K more terms could pass the
  // headroom; if some lane has a term outside the window, the warp's lanes make their rows ready (cleared once) and
  // normalised if K more slow terms could pass the period; then each lane adds its terms: by the cut when they all lie
  // in the window, else term by term (the lean slow path for the others).
  template <int K>
  DETRED_HD DETRED_INLINE void add_step(const bits (&b)[K]) {
    int field[K];
#pragma unroll
    for (int j = 0; j < K; ++j) field[j] = G::field_of(b[j]);
    const int high = exact_window_max(exact_highest_finite_field(field));
    if (high > top && high > 0 && top < highest_top) {
      deposit_warp();
      set_top(high < lowest_top ? lowest_top : (high > highest_top ? highest_top : high));
      flags |= S::flag_not_only_negative_zero;
    }
    if (room < unsigned(K)) {
      deposit_warp();
      room = headroom;
    }
    room -= unsigned(K);
    const bool in_window = exact_worst_distance(top, field) < unsigned(span);
    if (exact_window_any(!in_window)) {
      if (!rows_ready) {
#pragma unroll 1
        for (int k = 0; k < limb_rows; ++k) limbs[k * LaneStride] = 0;
        rows_ready = true;
      }
      this->reserve_rows(unsigned(K));
    }
    if (in_window) {
#pragma unroll
      for (int j = 0; j < K; ++j) fast(b[j]);
      return;
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (unsigned(top - field[j]) < unsigned(span)) {
        fast(b[j]);
      } else {
        ++pending;
        exact_binary64_slow<LaneStride>(limbs, b[j], flags, this->others);
      }
    }
  }

  // The end of the lane's terms (every lane of the warp at once): the levels into the deposit rows, the lane's rows
  // normalised if a slow term came since the last normalisation, the flags complete.
  DETRED_HD DETRED_INLINE void deposit() {
    deposit_warp();
    this->finish_rows();
  }
};

}  // namespace detred::cuda::detail
