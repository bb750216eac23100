// detred::bfloat16: the bfloat16 format (binary32's top 16 bits) as a storage type usable without a GPU.
//
// As with half, detred converts each bfloat16 exactly to float and accumulates there; from_float rounds to nearest,
// ties to even, with overflow to +-Inf and subnormals kept.
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred {

struct bfloat16 {
  std::uint16_t bits = 0;

  static constexpr DETRED_HD bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }

  // Exact: bfloat16 is binary32 with the low 16 mantissa bits zero.
  constexpr DETRED_HD float to_float() const { return detred::bit_cast<float>(std::uint32_t(bits) << 16); }

  // Round to nearest, ties to even; NaN becomes the quiet NaN 0x7fc0 with the input's sign.
  static constexpr DETRED_HD bfloat16 from_float(float f) {
    const std::uint32_t x = detred::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return from_bits(std::uint16_t(((x >> 16) & 0x8000u) | 0x7fc0u));
    // Adding 0x7fff plus the lowest kept bit rounds to nearest even; a carry out of the mantissa raises the exponent,
    // and out of the largest finite value gives Inf, both as IEEE requires.
    const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
    return from_bits(std::uint16_t(rounded >> 16));
  }
};

static_assert(sizeof(bfloat16) == 2);

}  // namespace detred
