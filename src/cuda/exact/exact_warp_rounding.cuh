// The GPU exact sum's last step, by one warp: the limbs of the total (each |limb| < 2^62) rounded once to Out, bit for
// bit what exact_accumulator<R>::rounded<Out>() gives (exact_rounding.hpp), with the carry propagation, the sign, the
// top bit and the sticky bit found by the 32 lanes at once instead of one thread walking the limbs one by one (69 of
// them for the double layout: several microseconds of dependent steps, most of a small sum's time). docs/EXACT.md
// "Rounding by a warp"; tests/cuda/test_exact_rounding_cuda.cu checks it against rounded() on random and extreme
// states.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda::detail {

// Limbs (and magnitude digits) a lane holds for a layout of L limbs: lane l holds index l + 32 j, j < J; the
// magnitude has L + 1 digits.
template <int L>
inline constexpr int exact_warp_slots = (L + 1 + 31) / 32;

// Index l + 32 j's value, from whichever lane holds it, in every lane (k warp-uniform; 0 outside [0, 32 J)).
template <int J, class V>
__device__ DETRED_INLINE V exact_warp_slot(const V (&v)[J], int k) {
  if (k < 0 || k >= 32 * J) return V(0);
  V mine = 0;
#pragma unroll
  for (int j = 0; j < J; ++j)
    if (j == (k >> 5)) mine = v[j];
  return __shfl_sync(0xffffffffu, mine, k & 31);
}

// The carry-in mask of a chain of single-bit carries over the 32 J limbs of the warp (bit l of word j: limb l + 32 j):
// `generate` where a limb passes a carry up whatever it receives, `propagate` where it passes up the one it receives.
// It is the carry-in mask of the binary addition (generate | propagate) + generate, found by one addition of J words
// instead of a carry climbing one limb a step (generate and propagate never share a bit).
template <int J>
__device__ DETRED_INLINE void exact_warp_carry_in(const unsigned (&generate)[J], const unsigned (&propagate)[J],
                                                  unsigned (&carry_in)[J]) {
  unsigned long long carry = 0;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const unsigned a = generate[j] | propagate[j], b = generate[j];
    const unsigned long long sum = (unsigned long long)a + b + carry;
    carry = sum >> 32;
    carry_in[j] = unsigned(sum) ^ a ^ b;
  }
}

// One round in which every limb below the top passes floor(limb / 2^32) up one limb: the lane's limbs keep their
// digits in [0, 2^32) and `incoming` gets what each receives from the limb below (0 into limb 0).
template <int L, int J>
__device__ DETRED_INLINE void exact_warp_carry_round(long long (&t)[J], long long (&incoming)[J]) {
  const int lane = threadIdx.x & 31;
  long long carry[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int k = lane + 32 * j;
    carry[j] = k < L - 1 ? t[j] >> 32 : 0;  // arithmetic shift: floor(limb / 2^32)
    t[j] -= (long long)((unsigned long long)carry[j] << 32);
  }
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const long long below = __shfl_up_sync(0xffffffffu, carry[j], 1);
    const long long wrap = j > 0 ? __shfl_sync(0xffffffffu, carry[j > 0 ? j - 1 : 0], 31) : 0;
    incoming[j] = lane == 0 ? wrap : below;
  }
}

// Sign = +1: adds 1 to each limb below the top that received +1 (incoming > 0); Sign = -1: subtracts 1 from each
// that received -1. The limbs below the top hold digits in [0, 2^32) before and after; the carries (borrows) they pass
// are found at once (exact_warp_carry_in), and the top limb takes the one that reaches it. A limb generates a carry
// when digit + Sign leaves [0, 2^32) (2^32, or -1), and passes on the one it receives when digit + Sign is at the
// range's edge in that direction (2^32 - 1, or 0).
template <int L, int J, int Sign>
__device__ DETRED_INLINE void exact_warp_add_bits(long long (&t)[J], const long long (&incoming)[J]) {
  static_assert(Sign == 1 || Sign == -1, "one bit up or down");
  const int lane = threadIdx.x & 31;
  constexpr long long outside = Sign > 0 ? 1ll << 32 : -1;
  constexpr long long edge = Sign > 0 ? (1ll << 32) - 1 : 0;
  unsigned generate[J], propagate[J], carry_in[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const bool below_top = lane + 32 * j < L - 1;
    if (below_top && (Sign > 0 ? incoming[j] > 0 : incoming[j] < 0)) t[j] += Sign;
    generate[j] = __ballot_sync(0xffffffffu, below_top && t[j] == outside);
    propagate[j] = __ballot_sync(0xffffffffu, below_top && t[j] == edge);
  }
  exact_warp_carry_in<J>(generate, propagate, carry_in);
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int k = lane + 32 * j;
    const long long c = Sign * (long long)((carry_in[j] >> lane) & 1u);
    if (k < L - 1)
      t[j] = (t[j] + c) & 0xffffffffll;
    else if (k == L - 1)
      t[j] += c;
  }
}

// The lane's limbs of an L-limb value brought to the normal form exact_accumulator::normalize() gives (limbs
// 0 .. L-2 in [0, 2^32), limb L-1 signed; unique for the value). Slots past L - 1 hold 0 and stay 0.
// Two rounds pass each limb's floor(limb / 2^32) up one limb: with |limb| < 2^62 the first round's carries are below
// 2^30 in magnitude, so before the second each limb below the top is in [-2^30, 2^32 + 2^30) and the second's carries
// e are in {-1, 0, 1}. The value is then D + E+ - E-: digits D in [0, 2^32), E+ the limbs that received +1, E- those
// that received -1 (the top limb takes what it receives as it is). D + E+ and then the subtraction of E- are
// additions of single-bit digits, whose carries (borrows) are found at once (exact_warp_carry_in: two ballots and
// one multi-word addition each). A carry that climbed one limb a round took as many rounds as the limbs a borrow
// crosses (33 for the small negative block totals of binary64 sums, about half of the finishing kernel's time).
template <int L, int J>
__device__ DETRED_INLINE void exact_warp_normalize(long long (&t)[J]) {
  const int lane = threadIdx.x & 31;
  long long incoming[J];
  exact_warp_carry_round<L, J>(t, incoming);
#pragma unroll
  for (int j = 0; j < J; ++j) t[j] += incoming[j];
  exact_warp_carry_round<L, J>(t, incoming);
#pragma unroll
  for (int j = 0; j < J; ++j)
    if (lane + 32 * j == L - 1) t[j] += incoming[j];  // the top limb takes +-1 as it is
  exact_warp_add_bits<L, J, 1>(t, incoming);          // D + E+
  exact_warp_add_bits<L, J, -1>(t, incoming);         // - E-
}

// The correctly rounded Out of the value whose limbs the calling warp holds (lane l: limbs l + 32 j of the R layout,
// exact_warp_slots<L> slots, 0 past the last limb) with the state's flags; every lane of a full warp calls it and
// gets the result. The same steps as exact_accumulator<R>::rounded(): specials first, then the normal form, the sign
// from the top limb (a negative value negated and normalised again), the magnitude's top bit P, the p bits from the
// result's last place q up, the half bit below them and the sticky bit below that.
template <floating_input Out, class R>
__device__ Out exact_warp_rounded(long long (&t)[exact_warp_slots<exact_accumulator<R>::limb_count>],
                                  std::uint32_t flags) {
  using S = exact_accumulator<R>;
  constexpr int L = S::limb_count;
  constexpr int J = exact_warp_slots<L>;
  using traits = float_traits<Out>;
  using B = typename traits::bits_type;
  constexpr int p = traits::precision;
  constexpr int bits_total = int(sizeof(B) * 8);
  auto from_bits = [](B b) -> Out {
    if constexpr (std::same_as<Out, half> || std::same_as<Out, bfloat16>)
      return Out::from_bits(b);
    else
      return detred::bit_cast<Out>(b);
  };
  constexpr B sign_bit = B(B(1) << (bits_total - 1));
  constexpr B infinity_bits = B(B(traits::max_exponent + 2 - traits::min_exponent) << (p - 1));
  if ((flags & S::flag_nan) || ((flags & S::flag_positive_infinity) && (flags & S::flag_negative_infinity)))
    return canonical_nan<Out>();
  if (flags & S::flag_positive_infinity) return from_bits(infinity_bits);
  if (flags & S::flag_negative_infinity) return from_bits(B(infinity_bits | sign_bit));

  const int lane = threadIdx.x & 31;
  exact_warp_normalize<L, J>(t);
  const bool negative = exact_warp_slot<J>(t, L - 1) < 0;
  if (negative) {
#pragma unroll
    for (int j = 0; j < J; ++j) t[j] = -t[j];
    exact_warp_normalize<L, J>(t);
  }
  // The magnitude's L + 1 digits of 32 bits: the L - 1 low limbs, then the top limb's two halves (>= 0 now).
  const unsigned long long top = (unsigned long long)exact_warp_slot<J>(t, L - 1);
  std::uint32_t d[J];
  bool nonzero = false;
  int highest = -1;  // the lane's highest nonzero digit
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int k = lane + 32 * j;
    d[j] = k < L - 1 ? std::uint32_t(t[j]) : k == L - 1 ? std::uint32_t(top) : k == L ? std::uint32_t(top >> 32) : 0u;
    if (d[j]) {
      nonzero = true;
      highest = k;
    }
  }
  const B sign = negative ? sign_bit : B(0);
  if (!__any_sync(0xffffffffu, nonzero)) return from_bits((flags & S::flag_not_only_negative_zero) ? B(0) : sign_bit);

  const int top_digit = int(__reduce_max_sync(0xffffffffu, unsigned(highest + 1))) - 1;
  const int P = 32 * top_digit + 31 - __clz(exact_warp_slot<J>(d, top_digit));
  const int E = P + S::low_exponent;  // |s| in [2^E, 2^(E+1))
  if (E > traits::max_exponent) return from_bits(B(infinity_bits | sign));
  constexpr int q_min = traits::min_exponent - p + 1;       // exponent of the smallest subnormal
  const int q = (E - p + 1) > q_min ? (E - p + 1) : q_min;  // exponent of the result's last place
  const int qpos = q - S::low_exponent;                     // its bit index (below 0: the sum is exact in Out)
  // Bits [qpos, qpos + p) (p <= 53), bits below index 0 reading as zero: from the three digits from max(qpos, 0) up.
  const int lo = qpos > 0 ? qpos : 0;
  const int s = lo & 31;
  const unsigned long long w01 =
      (unsigned long long)exact_warp_slot<J>(d, (lo >> 5) + 1) << 32 | exact_warp_slot<J>(d, lo >> 5);
  const unsigned long long w2 = exact_warp_slot<J>(d, (lo >> 5) + 2);
  const unsigned long long from_lo = (w01 >> s) | (s ? w2 << (64 - s) : 0ull);
  const int count = p - (lo - qpos);  // bits of the window at or above index 0
  std::uint64_t M = count <= 0 ? 0 : (from_lo & ((1ull << count) - 1)) << (lo - qpos);
  const bool half_bit = qpos >= 1 && ((exact_warp_slot<J>(d, (qpos - 1) >> 5) >> ((qpos - 1) & 31)) & 1u) != 0;
  // Sticky: some bit below qpos - 1.
  bool below = false;
  if (qpos - 1 > 0) {
    const int whole = (qpos - 1) >> 5, rest = (qpos - 1) & 31;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int k = lane + 32 * j;
      if (k < whole) below = below || d[j] != 0;
      if (k == whole && rest) below = below || (d[j] & ((1u << rest) - 1u)) != 0;
    }
  }
  const bool sticky = __any_sync(0xffffffffu, below);
  if (half_bit && (sticky || (M & 1u))) ++M;
  // Normal and subnormal alike: bits = (q - q_min) * 2^(p-1) + M (a carry M = 2^p moves into the exponent field).
  const std::uint64_t magnitude_bits = (std::uint64_t(q - q_min) << (p - 1)) + M;
  if (magnitude_bits >= std::uint64_t(infinity_bits)) return from_bits(B(infinity_bits | sign));
  return from_bits(B(B(magnitude_bits) | sign));
}

}  // namespace detred::cuda::detail
