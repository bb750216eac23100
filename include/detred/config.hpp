// Build-wide macros shared by host and device code.
#pragma once

#include <cstdint>

// DETRED_HD marks functions that must compile, and give the same bits, in host and CUDA device code.
#if defined(__CUDACC__)
#define DETRED_HD __host__ __device__
#else
#define DETRED_HD
#endif

// DETRED_INLINE forces inlining of the tiny arithmetic helpers that sit in every inner loop.
#if defined(__CUDACC__)
#define DETRED_INLINE __forceinline__
#elif defined(__GNUC__)
#define DETRED_INLINE inline __attribute__((always_inline))
#else
#define DETRED_INLINE inline
#endif

namespace detred {

// std::bit_cast is not usable in device code without --expt-relaxed-constexpr; the builtin works in both.
template <class To, class From>
constexpr DETRED_HD To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From));
  return __builtin_bit_cast(To, from);
}

// Semantic version of the library. The canonical order has its own version (order.hpp).
inline constexpr int version_major = 0;
inline constexpr int version_minor = 1;
inline constexpr int version_patch = 0;
}  // namespace detred
