// AVX2 kernel for the plain canonical subtree of doubles, chosen at run time where the CPU has AVX2 (same bits as
// the SSE2 and generic kernels: shuffles only move values, each add is one node of the canonical tree).
//
// Two kinds of level alternate so that no level needs a separate reordering step:
//   level_a(a, b), a = (x0..x3), b = (x4..x7): unpack within 128-bit halves and add
//       -> (x0+x1, x4+x5, x2+x3, x6+x7), the pair sums in the order (0, 2, 1, 3);
//   level_b(s, t) on two such vectors: swap 128-bit halves and add
//       -> (P0+P1, P2+P3, Q0+Q1, Q2+Q3), the next level, back in order.
// Four levels (a, b, a, b) turn 64 consecutive doubles into 4 consecutive 16-element subtree roots.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstddef>

namespace detred::cpu::avx2 {

bool available();

__attribute__((target("avx2"))) inline __m256d level_a(__m256d a, __m256d b) {
  return _mm256_add_pd(_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
}
__attribute__((target("avx2"))) inline __m256d level_b(__m256d s, __m256d t) {
  return _mm256_add_pd(_mm256_permute2f128_pd(s, t, 0x20), _mm256_permute2f128_pd(s, t, 0x31));
}

// out[g] = T over in[16g .. 16g+16), g < groups, groups % 4 == 0.
__attribute__((target("avx2"))) inline void sixteen_sums(const double* in, double* out, std::size_t groups) {
  for (std::size_t g = 0; g < groups; g += 4) {
    const double* p = in + 16 * g;
    __m256d r[4];
    for (int k = 0; k < 4; ++k) {  // group g + k: 16 doubles -> 8 -> 4 -> (2 in a vector pair)
      const double* q = p + 16 * k;
      const __m256d pairs0 = level_a(_mm256_loadu_pd(q), _mm256_loadu_pd(q + 4));
      const __m256d pairs1 = level_a(_mm256_loadu_pd(q + 8), _mm256_loadu_pd(q + 12));
      r[k] = level_b(pairs0, pairs1);  // the 4 quad sums of group g + k, in order
    }
    // (quads of g, quads of g+1) -> eights in order (0,2,1,3) -> the 4 roots in order.
    _mm256_storeu_pd(out + g, level_b(level_a(r[0], r[1]), level_a(r[2], r[3])));
  }
}

__attribute__((target("avx2"))) inline double subtree_root(const double* x, int level, double* scratch) {
  std::size_t width = std::size_t{1} << (level - 4);
  sixteen_sums(x, scratch, width);
  for (; width > 1; width /= 2) {
    for (std::size_t i = 0; i < width / 2; ++i) scratch[i] = scratch[2 * i] + scratch[2 * i + 1];
  }
  return scratch[0];
}

}  // namespace detred::cpu::avx2
#endif
