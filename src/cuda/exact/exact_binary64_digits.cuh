// The digit form of a block's binary64 limb rows (docs/EXACT.md "The digit mode"): for full-range data the block adds
// every term by shared-memory atomics whose result it never reads, so that no term waits for the previous term's
// read-modify-write of the rows (the two-digit slow path of exact_binary64_rows.cuh does).
//
// Digit row r weighs 2^(16 r) in the double layout's units (bit 0 = 2^-1088): 134 rows of 32-bit words a thread,
// exactly the bytes of its 67 rows of 64-bit limbs. A term m 2^pos (pos = max(f, 1) + 13 as in the slow path) goes in
// as five signed 16-bit digits at rows pos / 16 .. pos / 16 + 4. On the device the block's rows are reinterpreted in
// place (row k of 64-bit limbs of every thread holds the digit rows 2k and 2k + 1 of every thread): digit row r of
// thread t at 32-bit word r * B + t, so that a warp's 32 atomics on one row hit 32 banks.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "src/cuda/exact/exact_binary64_rows.cuh"

namespace detred::cuda::detail {

struct exact_binary64_digits {
  using G = exact_binary64_geometry;
  static constexpr int digit_bits = 16;
  static constexpr int rows = 2 * G::limb_rows;  // 134
  // A term's five digits reach row (2060 >> 4) + 4 = 132; row 133 receives carries only.
  static_assert(((G::special_field + G::position_offset) >> 4) + 4 < rows, "a term's top digit stays in the rows");
  // Terms between two normalisations: a row starts in [0, 2^16) and gains less than 2^16 a term (four unsigned digits
  // and one signed digit of magnitude at most 16 land on different rows), so 2^14 terms keep it below 2^31.
  static constexpr unsigned normalize_period = 1u << 14;
};

// The thread's digit rows: row r at digits[r * Stride]; on the device also as the 32-bit shared-memory address of row
// 0, so that a term's five atomics take one address computation and immediate offsets.
struct exact_digit_rows {
  unsigned* digits;
  unsigned shared_address;  // device only
};

// row[q * Stride] += v (mod 2^32), row = `rows`' row r, for a thread's own word: on the device a shared-memory
// reduction (red.shared.add.u32: an atomic whose result is not returned, so the thread does not wait for it; its later
// plain accesses of the word see it, program order on one address), on the host a plain addition.
template <int Stride, int Q>
DETRED_HD DETRED_INLINE void exact_digit_add(const exact_digit_rows& rows, int r, unsigned v) {
#ifdef __CUDA_ARCH__
  const unsigned address = rows.shared_address + unsigned(r) * unsigned(Stride * sizeof(unsigned));
  asm volatile("red.shared.add.u32 [%0+%2], %1;" ::"r"(address), "r"(v), "n"(Q * Stride * int(sizeof(unsigned)))
               : "memory");
#else
  rows.digits[(r + Q) * Stride] += v;
#endif
}

// Adds the binary64 term with bits b exactly to the thread's digit rows. Contract: afterwards the rows, read as signed
// 32-bit integers (sum over r of row_r 2^(16 r)), hold their old value plus b's exact value (nothing for a zero);
// rows pos / 16 .. pos / 16 + 3 each gain a digit in [0, 2^16), row pos / 16 + 4 one in [-16, 16). A NaN or an
// infinity (field 2047) adds digits within the same bounds but of no meaning: the sum is then a NaN or an infinity
// whatever the rows hold, and `highest` (the largest exponent field met) reaching 2047 tells the caller to recompute
// the flags from the terms (exact_special_scan). `others` is ORed with a word that is nonzero exactly when b is not
// -0.0 (as in exact_binary64_slow). About 30 instructions a term, five of them the reductions.
template <int Stride>
DETRED_HD DETRED_INLINE void exact_binary64_digit_add(const exact_digit_rows& rows, unsigned long long b, int& highest,
                                                      unsigned& others) {
  using G = exact_binary64_geometry;
  const unsigned hi = unsigned(b >> 32), lo = unsigned(b);
  const int field = int(hi >> 20) & G::special_field;
  const unsigned sign = unsigned(int(hi) >> 31);
  others |= (hi ^ 0x80000000u) | lo;
  highest = field > highest ? field : highest;
  // The integer significand m = mh 2^32 + lo: the hidden bit 2^52 for fields 1 .. 2047, none for field 0 (zero,
  // subnormal: field 1's weight).
  const unsigned mh = (hi & 0xfffffu) | (field != 0 ? 0x100000u : 0u);
  // x = +-m (|x| < 2^53) as a 64-bit two's complement integer xh 2^32 + xl.
  const unsigned long long s = ((unsigned long long)sign << 32) | sign;
  const unsigned long long x = ((((unsigned long long)mh << 32) | lo) ^ s) - s;
  const unsigned xl = unsigned(x), xh = unsigned(x >> 32);
  const unsigned xs = unsigned(int(xh) >> 31);                   // x's sign word (zero for -0.0: x = 0)
  const int pos = (field > 1 ? field : 1) + G::position_offset;  // 14 .. 2060
  const int shift = pos & 15;
  // x 2^shift (|.| < 2^68) as 96-bit two's complement w2 2^64 + w1 2^32 + w0 (w2 signed, in [-16, 16)); digits:
  // w0 = d0 + d1 2^16, w1 = d2 + d3 2^16 (unsigned), d4 = w2.
  const unsigned w0 = xl << shift, w1 = exact_funnel_left(xl, xh, shift), w2 = exact_funnel_left(xh, xs, shift);
  const int r = pos >> 4;
  exact_digit_add<Stride, 0>(rows, r, w0 & 0xffffu);
  exact_digit_add<Stride, 1>(rows, r, w0 >> 16);
  exact_digit_add<Stride, 2>(rows, r, w1 & 0xffffu);
  exact_digit_add<Stride, 3>(rows, r, w1 >> 16);
  exact_digit_add<Stride, 4>(rows, r, w2);
}

// The NaN and infinity flags exact_accumulator<double>::add sets for the term with bits b (zero for a finite term).
DETRED_HD DETRED_INLINE unsigned exact_binary64_special_flags(unsigned long long b) {
  using S = exact_binary64_geometry::S;
  if (((b >> 52) & 0x7ffu) != 0x7ffu) return 0;
  if (b & exact_binary64_geometry::fraction_mask) return S::flag_nan;
  return (b >> 63) ? S::flag_negative_infinity : S::flag_positive_infinity;
}

// Carries each digit row's bits from 2^16 up into the next (rows 0 .. rows - 2 end in [0, 2^16), the top row keeps
// the rest), read as signed 32-bit integers: the value is unchanged. Out of line: once every 2^14 terms.
template <int Stride>
__noinline__ DETRED_HD void exact_normalize_digits(unsigned* digits) {
  constexpr int R = exact_binary64_digits::rows;
  int carry = 0;
#pragma unroll 4
  for (int r = 0; r + 1 < R; ++r) {
    const int x = int(digits[r * Stride]) + carry;
    carry = x >> 16;
    digits[r * Stride] = unsigned(x & 0xffff);
  }
  digits[(R - 1) * Stride] = unsigned(int(digits[(R - 1) * Stride]) + carry);
}

// Limb row k's value v (|v| < 2^47) as the digit rows 2k (v mod 2^16) and 2k + 1 (v >> 16, arithmetic), and back.
DETRED_HD DETRED_INLINE void exact_row_to_digits(long long v, unsigned& low, unsigned& high) {
  low = unsigned(v & 0xffff);
  high = unsigned(int(v >> 16));
}
DETRED_HD DETRED_INLINE long long exact_digits_to_row(unsigned low, unsigned high) {
  return (long long)int(low) + (long long)int(high) * 65536;
}

// Whether `p` holds for every thread of the block (device: __syncthreads_and, which every thread of the block must
// reach), or false on the host, whose emulation runs a block's threads one by one: the digit mode, which this vote
// enters, is then never taken there (the per-thread arithmetic is tested on its own, tests/cuda/
// test_exact_kernel_on_host.cu). It chooses a path, never a bit.
DETRED_HD DETRED_INLINE bool exact_block_all(bool p) {
#ifdef __CUDA_ARCH__
  return __syncthreads_and(p) != 0;
#else
  (void)p;
  return false;
#endif
}

// The block's 64-bit limb rows (row k of thread t at rows[k * B + t]; every thread's rows normalised: rows 0 .. 65 in
// [0, 2^32)) rewritten as digit rows (row r of thread t at word r * B + t of the same memory), or back (every thread's
// digits normalised: the 64-bit rows then come out normalised). Called by every thread of the block at once (device
// only: barriers); 64-bit row k and digit rows 2k, 2k + 1 share their bytes, so a group of rows is read, the block
// waits, and then written.
template <int B>
DETRED_HD void exact_block_rows_to_digits(long long* rows) {
#ifdef __CUDA_ARCH__
  constexpr int K = exact_binary64_geometry::limb_rows, group = 8;
  unsigned* digits = reinterpret_cast<unsigned*>(rows);
  const int t = threadIdx.x;
  for (int k0 = 0; k0 < K; k0 += group) {
    long long v[group];
#pragma unroll
    for (int j = 0; j < group; ++j) v[j] = k0 + j < K ? rows[(k0 + j) * B + t] : 0;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < group; ++j) {
      if (k0 + j < K) exact_row_to_digits(v[j], digits[2 * (k0 + j) * B + t], digits[(2 * (k0 + j) + 1) * B + t]);
    }
  }
  __syncthreads();
#else
  (void)rows;
#endif
}

template <int B>
DETRED_HD void exact_block_digits_to_rows(long long* rows) {
#ifdef __CUDA_ARCH__
  constexpr int K = exact_binary64_geometry::limb_rows, group = 8;
  unsigned* digits = reinterpret_cast<unsigned*>(rows);
  const int t = threadIdx.x;
  for (int k0 = 0; k0 < K; k0 += group) {
    long long v[group];
#pragma unroll
    for (int j = 0; j < group; ++j) {
      v[j] = k0 + j < K ? exact_digits_to_row(digits[2 * (k0 + j) * B + t], digits[(2 * (k0 + j) + 1) * B + t]) : 0;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < group; ++j) {
      if (k0 + j < K) rows[(k0 + j) * B + t] = v[j];
    }
  }
  __syncthreads();
#else
  (void)rows;
#endif
}

}  // namespace detred::cuda::detail
