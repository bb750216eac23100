// The exact accumulator: a fixed-point superaccumulator that holds the exact sum of any number of floating-point
// terms (up to 2^64, the count's range), mergeable and serializable, on the host and in CUDA device code.
// docs/EXACT.md gives the representation, the proof sketch and the limits.
//
// Two layouts, named by the widest input they take (the "range" type R):
//   exact_accumulator<double>: binary64 inputs (and every narrower one); 69 limbs, bit 0 weighs 2^-1088.
//   exact_accumulator<float>:  binary32, bfloat16 and binary16 inputs; 12 limbs, bit 0 weighs 2^-160.
// Limb k is a signed 64-bit integer of weight 2^(32k) in units of bit 0: a 32-bit digit plus 31 bits of carry-save
// headroom. A term adds its integer significand, shifted to its exponent, as two or three signed 32-bit digits;
// so 2^30 terms fit between normalisations (carry propagation), which add() does by itself.
// NaN and infinite terms are not added to the limbs: they set flags, and rounded() returns what IEEE addition gives
// (canonical NaN for any NaN or for +Inf and -Inf together, else the infinity). Zero: an exact zero sum is -0.0 when
// every term was -0.0 (or there were none), else +0.0, as IEEE addition under round-to-nearest gives.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

template <class R>
requires std::same_as<R, float> || std::same_as<R, double>
class exact_accumulator {
 public:
  using range_type = R;
  static constexpr bool is_double = std::same_as<R, double>;
  static constexpr int limb_count = is_double ? 69 : 12;
  static constexpr int low_exponent = is_double ? -1088 : -160;  // the weight of bit 0 is 2^low_exponent
  static constexpr std::uint32_t max_pending = std::uint32_t{1} << 30;
  // The fixed serialized size (docs/EXACT.md, "Byte form").
  static constexpr std::size_t serialized_bytes = 16 + 8 * std::size_t(limb_count);
  static constexpr std::uint8_t format_id = is_double ? 2 : 1;

  enum flag : std::uint32_t {
    flag_nan = 1,
    flag_positive_infinity = 2,
    flag_negative_infinity = 4,
    flag_not_only_negative_zero = 8,  // some term other than -0.0 was added
  };

  // Inputs this layout takes exactly: every input for the double layout; 32- and 16-bit ones for the float layout.
  template <class T>
  static constexpr bool accepts = floating_input<T> && (is_double || !std::same_as<T, double>);

  // Adds x exactly. Any order of add() and merge() calls over the same terms gives the same state value.
  template <class T>
  requires accepts<T> DETRED_HD DETRED_INLINE void add(T x) {
    if (pending_ >= max_pending) normalize();
    add_unchecked(x);
    ++pending_;
    ++count_;
  }

  // Adds xs[0..n), normalising every 2^30 terms; the hot loop of the CPU backend.
  template <class T>
  requires accepts<T> DETRED_HD void add(const T* xs, std::uint64_t n) {
    while (n > 0) {
      if (pending_ >= max_pending) normalize();
      const std::uint64_t room = max_pending - pending_;
      const std::uint64_t m = n < room ? n : room;
      for (std::uint64_t i = 0; i < m; ++i) add_unchecked(xs[i]);
      pending_ += std::uint32_t(m);
      count_ += m;
      xs += m;
      n -= m;
    }
  }

  // Adds every term `other` holds: the state then equals one that accumulated both inputs.
  DETRED_HD void merge(const exact_accumulator& other) {
    if (pending_ + std::uint64_t(other.pending_) + 1 > max_pending) normalize();
    exact_accumulator o = other;
    if (o.pending_ + std::uint64_t(pending_) + 1 > max_pending) o.normalize();
    for (int k = 0; k < limb_count; ++k) limb_[k] += o.limb_[k];
    pending_ += o.pending_ + 1;
    count_ += o.count_;
    flags_ |= o.flags_;
  }

  // Carry propagation: afterwards limbs 0 .. L-2 are digits in [0, 2^32) and limb L-1 is signed. Same value.
  DETRED_HD void normalize() {
    for (int k = 0; k + 1 < limb_count; ++k) {
      const std::int64_t carry = limb_[k] >> 32;  // arithmetic shift: floor(limb / 2^32)
      limb_[k] -= std::int64_t(std::uint64_t(carry) << 32);
      limb_[k + 1] += carry;
    }
    pending_ = 0;
  }

  DETRED_HD std::uint64_t count() const { return count_; }
  DETRED_HD std::uint32_t flags() const { return flags_; }
  DETRED_HD std::int64_t limb(int k) const { return limb_[k]; }
  // For kernels that accumulate limbs elsewhere (shared memory) and hand them over: sets limb k, flags and count.
  DETRED_HD void set_raw(int k, std::int64_t value) { limb_[k] = value; }
  DETRED_HD void set_count(std::uint64_t count, std::uint32_t flags, std::uint32_t pending) {
    count_ = count;
    flags_ = flags;
    pending_ = pending;
  }

  // The exact sum rounded once to Out (round to nearest, ties to even; subnormals; overflow to +-Inf exactly when
  // |s| >= MAX + ulp(MAX)/2); specials and zero signs as in the header comment. Out: half, bfloat16, float, double.
  template <floating_input Out>
  DETRED_HD Out rounded() const;

  // The normalised limbs, flags and count as documented little-endian bytes (docs/EXACT.md): equal states (same
  // value, flags and count) give equal bytes, whatever their history. `out` has serialized_bytes bytes.
  DETRED_HD void serialize(std::uint8_t* out) const;
  // The inverse; false (state unchanged) when the bytes are not a valid state of this layout.
  DETRED_HD bool deserialize(const std::uint8_t* in);

  // The digit (0 .. 2^32 - 1) that add() puts in limb k for one term; public for kernels that add terms themselves.
  template <class T>
  struct decoded {
    int limb;            // the lowest limb the term touches; -1 for a zero, NaN or infinite term
    std::uint64_t low;   // significand << shift: digits limb, limb+1
    std::uint32_t high;  // digit limb+2 (double layout only)
    bool negative;
    std::uint32_t flags;  // flags the term sets
  };
  template <class T>
  requires accepts<T>
  static DETRED_HD DETRED_INLINE decoded<T> decode(T x) {
    using traits = float_traits<T>;
    using B = typename traits::bits_type;
    constexpr int bits = int(sizeof(B) * 8);
    constexpr int p = traits::precision;
    constexpr int exponent_bits = bits - p;
    constexpr B exponent_mask = B((B(1) << exponent_bits) - 1);
    constexpr B fraction_mask = B((B(1) << (p - 1)) - 1);
    constexpr B sign_bit = B(B(1) << (bits - 1));
    B b;
    if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
      b = x.bits;
    else
      b = detred::bit_cast<B>(x);
    const int field = int((b >> (p - 1)) & exponent_mask);
    const B fraction = B(b & fraction_mask);
    decoded<T> d{-1, 0, 0, (b & sign_bit) != 0, b == sign_bit ? 0u : std::uint32_t(flag_not_only_negative_zero)};
    if (field == int(exponent_mask)) {
      d.flags |= fraction != 0 ? flag_nan : (d.negative ? flag_negative_infinity : flag_positive_infinity);
      return d;
    }
    if (field == 0 && fraction == 0) return d;
    const std::uint64_t m = std::uint64_t(fraction) | (field ? std::uint64_t(1) << (p - 1) : 0);
    // lsb exponent = max(field, 1) + emin - p; position in the fixed point = that - low_exponent (>= 0).
    const int pos = (field ? field : 1) + traits::min_exponent - p - low_exponent;
    const int shift = pos & 31;
    d.limb = pos >> 5;
    d.low = m << shift;
    if constexpr (std::same_as<T, double>) d.high = shift ? std::uint32_t(m >> (64 - shift)) : 0u;
    return d;
  }

 private:
  template <class T>
  DETRED_HD DETRED_INLINE void add_unchecked(T x) {
    const decoded<T> d = decode(x);
    flags_ |= d.flags;
    if (d.limb < 0) return;
    const std::int64_t lo = std::int64_t(d.low & 0xffffffffu), mid = std::int64_t(d.low >> 32);
    if (d.negative) {
      limb_[d.limb] -= lo;
      limb_[d.limb + 1] -= mid;
      if constexpr (std::same_as<T, double>) limb_[d.limb + 2] -= std::int64_t(d.high);
    } else {
      limb_[d.limb] += lo;
      limb_[d.limb + 1] += mid;
      if constexpr (std::same_as<T, double>) limb_[d.limb + 2] += std::int64_t(d.high);
    }
  }

  std::int64_t limb_[limb_count] = {};
  std::uint64_t count_ = 0;
  std::uint32_t pending_ = 0;  // additions (of at most 2^32 per limb) since the last normalisation
  std::uint32_t flags_ = 0;
};

// The layout for input type T: double for binary64, float for the rest.
template <floating_input T>
using exact_accumulator_for = exact_accumulator<std::conditional_t<std::same_as<T, double>, double, float>>;

}  // namespace detred

#include "detred/accumulators/exact_rounding.hpp"
