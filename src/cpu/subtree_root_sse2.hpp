// SSE2 (the x86-64 baseline) kernels for the plain canonical subtree: the same tree as subtree_root.hpp, written so
// that each level costs two shuffles and one vector add per four (float) or two (double) outputs.
//
// Order: a shuffle only moves values; every add is one node of the canonical tree, its left operand the lower-index
// subtree. Bits are therefore those of the generic kernel; tests/test_sum.cpp compares both with the definition.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>

#include <cstddef>

namespace detred::cpu::sse2 {

// Level 1 of the tree over 2*count values: out[i] = in[2i] + in[2i+1]. count % 4 == 0. out may equal in.
inline void pair_sums(const float* in, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; i += 4) {
    const __m128 a = _mm_loadu_ps(in + 2 * i);
    const __m128 b = _mm_loadu_ps(in + 2 * i + 4);
    const __m128 even = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2
    const __m128 odd = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));   // a1 a3 b1 b3
    _mm_storeu_ps(out + i, _mm_add_ps(even, odd));
  }
}
inline void pair_sums(const double* in, double* out, std::size_t count) {
  for (std::size_t i = 0; i < count; i += 2) {
    const __m128d a = _mm_loadu_pd(in + 2 * i);
    const __m128d b = _mm_loadu_pd(in + 2 * i + 2);
    _mm_storeu_pd(out + i, _mm_add_pd(_mm_unpacklo_pd(a, b), _mm_unpackhi_pd(a, b)));
  }
}

// Levels 1-3 fused: out[g] = T over in[8g .. 8g+8), for g < groups (groups % 4 == 0): 32 floats in, 4 roots out.
inline void eight_sums(const float* in, float* out, std::size_t groups) {
  auto level = [](__m128 a, __m128 b) {
    return _mm_add_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  };
  for (std::size_t g = 0; g < groups; g += 4) {
    const float* p = in + 8 * g;
    const __m128 l0 = level(_mm_loadu_ps(p), _mm_loadu_ps(p + 4));        // pairs of group g, g
    const __m128 l1 = level(_mm_loadu_ps(p + 8), _mm_loadu_ps(p + 12));   // group g+1
    const __m128 l2 = level(_mm_loadu_ps(p + 16), _mm_loadu_ps(p + 20));  // group g+2
    const __m128 l3 = level(_mm_loadu_ps(p + 24), _mm_loadu_ps(p + 28));  // group g+3
    const __m128 q0 = level(l0, l1);                                      // quads: g, g, g+1, g+1
    const __m128 q1 = level(l2, l3);                                      // quads: g+2, g+2, g+3, g+3
    _mm_storeu_ps(out + g, level(q0, q1));
  }
}
inline void eight_sums(const double* in, double* out, std::size_t groups) {
  auto level = [](__m128d a, __m128d b) { return _mm_add_pd(_mm_unpacklo_pd(a, b), _mm_unpackhi_pd(a, b)); };
  for (std::size_t g = 0; g < groups; g += 2) {
    const double* p = in + 8 * g;
    const __m128d a = level(_mm_loadu_pd(p), _mm_loadu_pd(p + 2));      // pairs (0+1, 2+3) of group g
    const __m128d b = level(_mm_loadu_pd(p + 4), _mm_loadu_pd(p + 6));  // pairs (4+5, 6+7) of group g
    const __m128d c = level(_mm_loadu_pd(p + 8), _mm_loadu_pd(p + 10));
    const __m128d d = level(_mm_loadu_pd(p + 12), _mm_loadu_pd(p + 14));
    _mm_storeu_pd(out + g, level(level(a, b), level(c, d)));  // quads (g: 0-3, 4-7), then the two group roots
  }
}

// Root of the complete tree over x[0 .. 2^level), level >= 5, using scratch of 2^(level-3) values.
template <class A>
A subtree_root(const A* x, int level, A* scratch) {
  std::size_t width = std::size_t{1} << (level - 3);
  eight_sums(x, scratch, width);
  constexpr std::size_t lanes = 16 / sizeof(A);
  while (width > 2 * lanes) {
    pair_sums(scratch, scratch, width / 2);  // in place: the store of step i lands at or below what step i read
    width /= 2;
  }
  for (; width > 1; width /= 2) {
    for (std::size_t i = 0; i < width / 2; ++i) scratch[i] = scratch[2 * i] + scratch[2 * i + 1];
  }
  return scratch[0];
}

}  // namespace detred::cpu::sse2
#endif
