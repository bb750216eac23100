// detred::half: IEEE 754 binary16 as a storage type that works on a host without a GPU.
//
// C++20 has no host arithmetic for binary16, so detred never adds halves directly: every algorithm converts each
// input exactly to float (every binary16 value is a float) and accumulates there. Conversion back (from_float) rounds
// to nearest, ties to even, with overflow to +-Inf and gradual underflow, as IEEE 754 convertFormat does.
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred {

struct half {
  std::uint16_t bits = 0;

  static constexpr DETRED_HD half from_bits(std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }

  // Exact: binary16 is a subset of binary32. Branch-free so that loops over halves vectorise: the exponent and
  // mantissa bits, placed where binary32 keeps them, read as 2^-112 times the value (subnormals included), and the
  // multiplication by 2^112 is exact. It needs the default floating-point environment (no flush-to-zero, no DAZ),
  // which every detred result assumes.
  constexpr DETRED_HD float to_float() const {
    const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
    const std::uint32_t body = std::uint32_t(bits & 0x7fffu) << 13;
    if ((bits & 0x7c00u) == 0x7c00u) return detred::bit_cast<float>(sign | 0x7f800000u | body);  // Inf, NaN
    const float magnitude = detred::bit_cast<float>(body) * 0x1p112f;
    return detred::bit_cast<float>(sign | detred::bit_cast<std::uint32_t>(magnitude));
  }

  // Round to nearest, ties to even; overflow to +-Inf; subnormal results kept; NaN becomes the quiet NaN 0x7e00
  // with the input's sign.
  static constexpr DETRED_HD half from_float(float f) {
    const std::uint32_t x = detred::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = std::uint16_t((x >> 16) & 0x8000u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return from_bits(sign | 0x7e00u);
    if (ax >= 0x477ff000u) return from_bits(sign | 0x7c00u);  // >= 65520 = max + ulp/2: the tie goes to Inf
    if (ax >= 0x38800000u) {                                  // a binary16 normal number (>= 2^-14)
      std::uint32_t h = (ax - 0x38000000u) >> 13;
      const std::uint32_t rest = ax & 0x1fffu;
      if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
      return from_bits(std::uint16_t(sign | h));
    }
    if (ax <= 0x33000000u) return from_bits(sign);  // <= 2^-25: rounds to zero (2^-25 is a tie, 0 is even)
    // Subnormal result: count units of 2^-24.
    const std::uint32_t e = ax >> 23;
    const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;
    std::uint32_t h = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1u);
    const std::uint32_t tie = 1u << (shift - 1u);
    if (rest > tie || (rest == tie && (h & 1u))) ++h;
    return from_bits(std::uint16_t(sign | h));
  }
};

static_assert(sizeof(half) == 2);

}  // namespace detred
