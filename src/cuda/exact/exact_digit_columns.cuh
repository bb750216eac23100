// binary64 digit columns (docs/EXACT.md "Digit columns"): kernel 1 for large binary64 sums where every term goes
// straight from its bits into 16-bit digit rows in shared memory by atomics whose result is never read
// (exact_binary64_digit_add), and several threads share each column of rows. Sharing is what the atomics allow and
// what the per-thread limb rows of extract_levels (536 bytes a thread) do not: a block of 384 threads keeps its rows in
// 64 columns (34 KiB), so an SM holds 12 warps and their loads instead of 8, with most of its shared memory left to
// the L1 cache. The work a term costs is the same on every data set (no window, no vote).
//
// Layout: digit row r of column c at word r * C + c (so a warp's 32 atomics on one row hit 32 banks); thread t adds
// into column t % C. Row r weighs 2^(16 r) in the double layout's units (bit 0 = 2^-1088), as in the digit mode.
#pragma once

#include <cstdint>

#include "detred/config.hpp"
#include "src/cuda/exact/exact_binary64_digits.cuh"
#include "src/cuda/exact/exact_binary64_rows.cuh"

namespace detred::cuda::detail {

// The shape of a block's digit columns: B threads, C columns (B a multiple of C), U vectors a thread a step, 2^P terms
// a thread between two normalisations of the block's columns.
// Bounds (docs/EXACT.md "Digit columns"): a normalised column's rows lie in [0, 2^16) (the top row apart); a term adds
// less than 2^16 to a row (four unsigned digits and one signed one in [-16, 16), on different rows), so a row stays
// below 2^16 + 2^16 m < 2^31 while its column receives m < 2^15 - 1 terms. Between two normalisations each thread
// adds at most `period` terms in its steps, and after the last one at most 2U + 2 more (its vectors after the last
// whole chunk, fewer than U of them, and block 0's head and tail elements): the B / C sharers stay within that m.
template <int B, int C, int U, int P = 11>
struct exact_digit_columns_shape {
  static_assert(B % C == 0 && C % 32 == 0, "whole columns, whole warps of them");
  static constexpr int threads = B;
  static constexpr int columns = C;
  static constexpr int unroll = U;
  static constexpr int sharers = B / C;
  static constexpr int rows = exact_binary64_digits::rows;  // 134
  static constexpr unsigned period = 1u << P;               // terms a thread adds between normalisations
  static_assert(period >= 2u * U, "a step fits the period");
  static_assert(std::uint64_t(sharers) * (period + 2u * U + 2u) < (1u << 15) - 1u,
                "a column's rows stay below 2^31 between normalisations");
  static constexpr std::size_t shared_bytes = std::size_t(rows) * C * sizeof(unsigned);
};

// Normalises every column of the block's rows (exact_normalize_digits: the value each column holds is unchanged, its
// rows 0 .. rows - 2 end in [0, 2^16)). Device: called by every thread of the block at once (barriers; threads
// 0 .. C - 1 carry one column each). Host (the emulation runs a block's threads one after the other): every column,
// at once.
template <class Shape>
DETRED_HD void exact_normalize_columns(unsigned* rows) {
  constexpr int C = Shape::columns;
#ifdef __CUDA_ARCH__
  __syncthreads();
  if (threadIdx.x < C) exact_normalize_digits<C>(rows + threadIdx.x);
  __syncthreads();
#else
  for (int c = 0; c < C; ++c) exact_normalize_digits<C>(rows + c);
#endif
}

// Limb k (0 .. limb_count - 1) of the value the block's columns hold, as one integer: rows 2k and 2k + 1 of every
// column, read as signed 32-bit integers, weighted 1 and 2^16 (below 2^48 a column, C 2^48 in all: far below 2^63;
// limbs from 67 up are 0).
template <class Shape>
DETRED_HD DETRED_INLINE long long exact_column_limb_part(const unsigned* rows, int k, int c) {
  constexpr int C = Shape::columns;
  if (2 * k + 1 >= Shape::rows) return 0;
  return (long long)int(rows[2 * k * C + c]) + (long long)int(rows[(2 * k + 1) * C + c]) * 65536;
}

// Thread `tid`'s share of block `block` (the interleaved partition of exact_thread_terms: in each chunk
// c = block + j G of U B vectors below the last whole chunk, the vectors c U B + tid + u B; after the last whole
// chunk (at v0) the vectors v0 + (block + k G) B + tid; block 0 also the elements tid of the head [0, head) and of the
// tail [head + 2 vectors, n)), every term into column tid % C of `rows` (the block's rows, cleared, at their 32-bit
// shared-memory address `rows_address` on the device). Every thread of a block takes the same steps, so the
// normalisations are at the same points for all (device: barriers). Returns the largest exponent field met (2047:
// a NaN or an infinity, whose flags the caller recomputes) and ORs `others` with a word that is nonzero exactly when
// some term is not -0.0. `load(p)` reads the vector at p (the launch's load flavour: speed only).
template <class Shape, class Load>
DETRED_HD DETRED_INLINE int exact_digit_columns_terms(unsigned* rows, unsigned rows_address, const double* x,
                                                      std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                                                      std::uint64_t blocks, std::uint64_t block, int tid,
                                                      unsigned& others, Load load) {
  constexpr int B = Shape::threads, C = Shape::columns;
  constexpr int U = Shape::unroll;
  const uint4* __restrict__ v = reinterpret_cast<const uint4*>(x + head);
  const exact_digit_rows column{rows + tid % C, rows_address + unsigned(tid % C) * unsigned(sizeof(unsigned))};
  int highest = 0;
  auto add_vector = [&](const uint4& c) {
    exact_binary64_digit_add<C>(column, (static_cast<unsigned long long>(c.y) << 32) | c.x, highest, others);
    exact_binary64_digit_add<C>(column, (static_cast<unsigned long long>(c.w) << 32) | c.z, highest, others);
  };
  constexpr std::uint64_t chunk = std::uint64_t(U) * B;
  const std::uint64_t end = vectors / chunk * chunk, stride = blocks * chunk;
  std::uint64_t i = block * chunk + std::uint64_t(tid);
  // Whole chunks, one step a turn: `next` holds the step's vectors; each is added and its registers then take the
  // same vector of the step after (or, after the last step, the same vector again: cache hits, never used), as the
  // digit mode's loop does (exact_thread_terms).
  bool more = i + std::uint64_t(U - 1) * B < end;  // the same for every thread of the block
  if (more) {
    uint4 next[U];
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = load(v + i + std::uint64_t(u) * B);
    unsigned since = 0;
    while (more) {
      if (since + 2u * U > Shape::period) {
        exact_normalize_columns<Shape>(rows);
        since = 0;
      }
      since += 2u * U;
      const std::uint64_t after = i + stride;
      more = after + std::uint64_t(U - 1) * B < end;
      const uint4* const refill = v + (more ? after : i);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        add_vector(next[u]);
        next[u] = load(refill + std::uint64_t(u) * B);
      }
      i = after;
    }
  }
  // The vectors after the last whole chunk, row r of B vectors to block r mod G; then block 0's head and tail.
  for (i = end + block * B + std::uint64_t(tid); i < vectors; i += blocks * B) add_vector(v[i]);
  if (block == 0) {
    const std::uint64_t tail = head + vectors * 2;
    if (std::uint64_t(tid) < head)
      exact_binary64_digit_add<C>(column, detred::bit_cast<unsigned long long>(x[tid]), highest, others);
    if (tail + std::uint64_t(tid) < n)
      exact_binary64_digit_add<C>(column, detred::bit_cast<unsigned long long>(x[tail + tid]), highest, others);
  }
  return highest;
}

}  // namespace detred::cuda::detail
