// exact_accumulator's rounding and byte form (included by exact.hpp; docs/EXACT.md "Rounding" and "Byte form").
#pragma once

#include "detred/accumulators/exact.hpp"

namespace detred {
namespace exact_detail {

// A nonnegative big integer as 32-bit digits (little-endian), digit count D.
template <int D>
struct magnitude {
  std::uint32_t digit[D];

  DETRED_HD bool is_zero() const {
    for (int k = 0; k < D; ++k)
      if (digit[k]) return false;
    return true;
  }
  // Index of the highest set bit; -1 for zero.
  DETRED_HD int top_bit() const {
    for (int k = D - 1; k >= 0; --k) {
      if (digit[k]) {
        int b = 31;
        while (!((digit[k] >> b) & 1u)) --b;
        return 32 * k + b;
      }
    }
    return -1;
  }
  DETRED_HD std::uint32_t digit_at(int k) const { return (k >= 0 && k < D) ? digit[k] : 0u; }
  // Bits [lo, lo + count), count <= 64; bits below 0 read as zero.
  DETRED_HD std::uint64_t bits(int lo, int count) const {
    std::uint64_t r = 0;
    for (int i = count - 1; i >= 0; --i) {
      const int b = lo + i;
      const std::uint64_t bit = b < 0 ? 0u : (digit_at(b >> 5) >> (b & 31)) & 1u;
      r = (r << 1) | bit;
    }
    return r;
  }
  // True when some bit below `lo` is set.
  DETRED_HD bool any_below(int lo) const {
    if (lo <= 0) return false;
    for (int k = 0; k < (lo >> 5) && k < D; ++k)
      if (digit[k]) return true;
    const int rest = lo & 31;
    return rest && (lo >> 5) < D && (digit[lo >> 5] & ((1u << rest) - 1u)) != 0;
  }
};

}  // namespace exact_detail

template <class R>
requires std::same_as<R, float> || std::same_as<R, double>
template <floating_input Out>
DETRED_HD Out exact_accumulator<R>::rounded() const {
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
  constexpr B infinity_bits =
      B(B(traits::max_exponent + 2 - traits::min_exponent) << (p - 1));  // field emax + bias + 1
  if ((flags_ & flag_nan) || ((flags_ & flag_positive_infinity) && (flags_ & flag_negative_infinity)))
    return canonical_nan<Out>();
  if (flags_ & flag_positive_infinity) return from_bits(infinity_bits);
  if (flags_ & flag_negative_infinity) return from_bits(B(infinity_bits | sign_bit));

  // Normalise a copy, take the sign from the top limb, and the magnitude as 32-bit digits.
  exact_accumulator t = *this;
  t.normalize();
  const bool negative = t.limb_[limb_count - 1] < 0;
  if (negative) {
    for (int k = 0; k < limb_count; ++k) t.limb_[k] = -t.limb_[k];
    t.normalize();
  }
  exact_detail::magnitude<limb_count + 1> m;
  for (int k = 0; k + 1 < limb_count; ++k) m.digit[k] = std::uint32_t(t.limb_[k]);
  const std::uint64_t top = std::uint64_t(t.limb_[limb_count - 1]);  // >= 0 now
  m.digit[limb_count - 1] = std::uint32_t(top);
  m.digit[limb_count] = std::uint32_t(top >> 32);
  const B sign = negative ? sign_bit : B(0);
  if (m.is_zero()) return from_bits((flags_ & flag_not_only_negative_zero) ? B(0) : sign_bit);

  const int P = m.top_bit();
  const int E = P + low_exponent;  // |s| in [2^E, 2^(E+1))
  if (E > traits::max_exponent) return from_bits(B(infinity_bits | sign));
  constexpr int q_min = traits::min_exponent - p + 1;       // exponent of the smallest subnormal
  const int q = (E - p + 1) > q_min ? (E - p + 1) : q_min;  // exponent of the result's last place
  const int qpos = q - low_exponent;                        // its bit index (may be < 0: then s is exact)
  std::uint64_t M = m.bits(qpos, p);                        // at most p bits
  const bool half_bit = qpos >= 1 && m.bits(qpos - 1, 1) != 0;
  const bool sticky = m.any_below(qpos - 1);
  if (half_bit && (sticky || (M & 1u))) ++M;
  // Normal and subnormal alike: bits = (q - q_min) * 2^(p-1) + M (a carry M = 2^p moves into the exponent field).
  const std::uint64_t magnitude_bits = (std::uint64_t(q - q_min) << (p - 1)) + M;
  if (magnitude_bits >= std::uint64_t(infinity_bits)) return from_bits(B(infinity_bits | sign));
  return from_bits(B(B(magnitude_bits) | sign));
}

// Byte form: 0-3 "DXA1"; 4 format (1 float layout, 2 double layout); 5 flags; 6-7 limb count (little-endian);
// 8-15 count (little-endian); then each normalised limb as 8 little-endian bytes, two's complement.
template <class R>
requires std::same_as<R, float> || std::same_as<R, double> DETRED_HD void exact_accumulator<R>::serialize(
    std::uint8_t* out) const {
  exact_accumulator t = *this;
  t.normalize();
  out[0] = 'D';
  out[1] = 'X';
  out[2] = 'A';
  out[3] = '1';
  out[4] = format_id;
  out[5] = std::uint8_t(flags_);
  out[6] = std::uint8_t(limb_count & 0xff);
  out[7] = std::uint8_t(limb_count >> 8);
  for (int i = 0; i < 8; ++i) out[8 + i] = std::uint8_t(count_ >> (8 * i));
  for (int k = 0; k < limb_count; ++k) {
    const std::uint64_t v = std::uint64_t(t.limb_[k]);
    for (int i = 0; i < 8; ++i) out[16 + 8 * k + i] = std::uint8_t(v >> (8 * i));
  }
}

template <class R>
requires std::same_as<R, float> || std::same_as<R, double> DETRED_HD bool exact_accumulator<R>::deserialize(
    const std::uint8_t* in) {
  if (in[0] != 'D' || in[1] != 'X' || in[2] != 'A' || in[3] != '1' || in[4] != format_id || (in[5] & ~0xfu) ||
      in[6] != (limb_count & 0xff) || in[7] != (limb_count >> 8))
    return false;
  exact_accumulator t;
  for (int k = 0; k < limb_count; ++k) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(in[16 + 8 * k + i]) << (8 * i);
    t.limb_[k] = std::int64_t(v);
    if (k + 1 < limb_count && (v >> 32) != 0) return false;  // a normalised digit
  }
  std::uint64_t count = 0;
  for (int i = 0; i < 8; ++i) count |= std::uint64_t(in[8 + i]) << (8 * i);
  t.count_ = count;
  t.flags_ = in[5];
  t.pending_ = 0;
  *this = t;
  return true;
}

}  // namespace detred
