// Bit counting that gives the same answers in host and device code. <bit>'s functions are constexpr host functions
// whose builtins nvcc does not lower for the device (the device test caught wrong results there), so device code
// uses CUDA's intrinsics instead.
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred::detail {

// Index of the highest set bit of x; x != 0.
constexpr DETRED_HD int highest_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(x));
#else
  return 63 - __builtin_clzll(x);
#endif
}

// Index of the lowest set bit of x; x != 0.
constexpr DETRED_HD int lowest_bit(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

constexpr DETRED_HD int popcount(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

}  // namespace detred::detail
