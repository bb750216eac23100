// Kernel 1's `exponent_bins` algorithm for the binary32 family (binary32, and binary16 / bfloat16 widened exactly to
// binary32): each thread keeps 16 binary64 bins plus one bin for NaN and infinities in shared memory, adds every term
// to the bin of its exponent field with one binary64 addition (no branch, no data-dependent path: the same work on
// every data set), and flushes the bins into its own integer limbs before any bin could round. Exactness, constants and
// the flags: docs/EXACT.md "On the GPU", "The exponent_bins algorithm".
#pragma once

#include <bit>
#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/config.hpp"

namespace detred::cuda::detail {

// Bin geometry for binary32 bit patterns b (docs/EXACT.md): u = b & 0x7fffffff, bin q = (u + 2^23) >> 27, i.e.
// q = (field + 1) >> 4. Bin q <= 15 holds the fields 16q - 1 .. 16q + 14 (bin 0: 0 .. 14), every such term an integer
// multiple of 2^(16q - 151) below 2^39 of those units in magnitude; bin 16 holds field 255 only (NaN, +-Inf).
struct exact_float_bins {
  static constexpr int finite_bins = 16;
  static constexpr int special_bin = 16;
  static constexpr int bin_count = 17;
  // Terms a thread adds between flushes (all bins together): 2^14 * 2^39 = 2^53 units, so every partial sum of a bin is
  // an integer multiple of its unit of magnitude at most 2^53 units: a binary64, and each addition is exact.
  static constexpr unsigned headroom = 1u << 14;
  // The limb rows a thread needs: a flushed bin q lands at bit 16q + 9 of the float layout (its unit
  // 2^(16q - 151) over the layout's 2^-160) as an integer of at most 54 bits: 3 digits from limb (16q + 9) / 32;
  // q = 15 reaches limb 9.
  static constexpr int limb_rows = 10;
  DETRED_HD static constexpr int unit_exponent(int q) { return 16 * q - 151; }
  DETRED_HD DETRED_INLINE static int bin_of(unsigned b) { return int(((b & 0x7fffffffu) + 0x00800000u) >> 27); }
};

// One thread's bins and limbs: bin q at bins[q * exact_block_threads], limb row k at limbs[k * exact_block_threads]
// (a warp's 64-bit accesses to one row touch 32 consecutive words: no bank conflicts, whichever bins its lanes use).
template <int BlockThreads>
struct exact_bins_thread {
  using S = exact_accumulator<float>;
  using G = exact_float_bins;
  static constexpr unsigned long long negative_zero = 0x8000000000000000ull;

  long long* limbs;
  double* bins;
  unsigned room = G::headroom;
  unsigned flags = 0;
  bool rescan = false;  // the special bin held a NaN: the thread's NaN/Inf flags are recomputed from its terms

  // Zeroes the limbs and sets every bin to -0.0: independent stores at constant offsets, unrolled.
  DETRED_HD DETRED_INLINE void clear() {
#pragma unroll
    for (int k = 0; k < G::limb_rows; ++k) limbs[k * BlockThreads] = 0;
#pragma unroll
    for (int q = 0; q < G::bin_count; ++q) bins[q * BlockThreads] = detred::bit_cast<double>(negative_zero);
  }

  // Called by exact_thread_terms once the first step's loads are issued: the clearing's stores then wait for nothing
  // and overlap the loads' latency (a thread of a small sum has one step: clearing first made it wait for both).
  DETRED_HD DETRED_INLINE void begin() { clear(); }

  // Every term: widened exactly to binary64 (NaN stays NaN, +-Inf stays +-Inf), added to its bin.
  DETRED_HD DETRED_INLINE void add(unsigned b, int /*column*/ = 0) {
    double* bin = bins + G::bin_of(b) * BlockThreads;
    *bin += double(detred::bit_cast<float>(b));
  }

  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const unsigned (&b)[E], int /*first*/) {
#pragma unroll
    for (int j = 0; j < E; ++j) add(b[j]);
  }

  // Adds the integer m (|m| <= 2^53) at bit `pos` of the float layout to the limbs, as three signed 32-bit digits.
  DETRED_HD DETRED_INLINE void deposit_integer(long long m, int pos) {
    const bool negative = m < 0;
    const unsigned long long magnitude = negative ? 0ull - (unsigned long long)m : (unsigned long long)m;
    const int k = pos >> 5, shift = pos & 31;
    const unsigned long long low = magnitude << shift;  // 54 + 31 bits: the top digit comes from the high part
    const long long d0 = (long long)(low & 0xffffffffu), d1 = (long long)(low >> 32);
    const long long d2 = shift ? (long long)(magnitude >> (64 - shift)) : 0;
    limbs[k * BlockThreads] += negative ? -d0 : d0;
    limbs[(k + 1) * BlockThreads] += negative ? -d1 : d1;
    limbs[(k + 2) * BlockThreads] += negative ? -d2 : d2;
  }

  // Moves every bin into the limbs (exactly: bin q is an integer multiple of 2^unit_exponent(q) of at most 2^53 units)
  // and resets it to -0.0. A bin other than -0.0 means a term other than -0.0 reached it (docs/EXACT.md). The 17 bins
  // are read at once (independent loads) into a mask of the bins other than -0.0; only those are read again and
  // moved (narrow data fill one or two), so a flush costs one round trip to shared memory plus the bins in use.
  DETRED_HD DETRED_INLINE void flush() {
    unsigned used = 0;
#pragma unroll
    for (int q = 0; q < G::bin_count; ++q)
      if (detred::bit_cast<unsigned long long>(bins[q * BlockThreads]) != negative_zero) used |= 1u << q;
    if (used == 0) return;
    flags |= S::flag_not_only_negative_zero;
    const unsigned special = used >> G::special_bin;
    for (unsigned finite = used & ((1u << G::finite_bins) - 1); finite != 0; finite &= finite - 1) {
      const int q = lowest_bit(finite);
      double* bin = bins + q * BlockThreads;
      const double v = *bin;
      *bin = detred::bit_cast<double>(negative_zero);
      if (v == 0.0) continue;
      // v * 2^-unit_exponent(q): an integer below 2^53 in magnitude, so the product and the conversion are exact.
      const double scale = detred::bit_cast<double>((unsigned long long)(1023 - G::unit_exponent(q)) << 52);
      deposit_integer((long long)(v * scale), G::unit_exponent(q) - S::low_exponent);
    }
    if (special) {
      double* bin = bins + G::special_bin * BlockThreads;
      const double v = *bin;
      // Only NaN and infinities reach this bin: +Inf means +Inf terms only, -Inf -Inf only, NaN a NaN or both.
      if (v == v)
        flags |= v > 0 ? S::flag_positive_infinity : S::flag_negative_infinity;
      else
        rescan = true;
      *bin = detred::bit_cast<double>(negative_zero);
    }
  }

  // The index of the lowest set bit of m (m != 0).
  DETRED_HD DETRED_INLINE static int lowest_bit(unsigned m) {
#ifdef __CUDA_ARCH__
    return __ffs(int(m)) - 1;
#else
    return std::countr_zero(m);
#endif
  }

  DETRED_HD DETRED_INLINE void reserve(unsigned count) {
    if (room < count) {
      flush();
      room = G::headroom;
    }
    room -= count;
  }

  // The end of the thread's terms (the window algorithm's name for it).
  DETRED_HD DETRED_INLINE void deposit() { flush(); }

  // The NaN / infinity flags of one term's binary32 bits (used by the rescan).
  DETRED_HD DETRED_INLINE static unsigned special_flags(unsigned b) {
    if ((b & 0x7f800000u) != 0x7f800000u) return 0;
    if (b & 0x007fffffu) return S::flag_nan;
    return (b >> 31) ? S::flag_negative_infinity : S::flag_positive_infinity;
  }
};

}  // namespace detred::cuda::detail
