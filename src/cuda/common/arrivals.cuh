// The single pass's arrival count (the workspace header's arrival word, workspace.hpp): the blocks of one launch
// count themselves, and the last to arrive finishes the reduction in the same launch (the canonical sum's single pass,
// the exact sum's small-input path).
#pragma once

#include <cuda_runtime.h>

namespace detred::cuda::detail {

inline constexpr int arrival_count_bits = 24;  // the single pass needs grids below 2^24 blocks

// The arrival word's resting state between calls: tag `clean_tag`, count 0 (the last block of each call puts it back).
inline constexpr unsigned long long clean_tag = 0x9E3779B97Full;  // 40 bits, an arbitrary constant
inline constexpr unsigned long long arrival_count_mask = (1ull << arrival_count_bits) - 1;

// Counts this block's arrival (the arrival word, workspace.hpp); true for the grid's last block. In the steady state
// the word rests at (clean_tag, 0) and each block makes one atomicAdd. A word with another tag (a workspace never
// used by a single pass: whatever memory held) is first set to (clean_tag, 1) by a compare-and-swap loop of the
// blocks that found it so, each counting itself; an add that found the word stale came before that installation and
// is overwritten by it, so every block is counted exactly once. (A workspace whose stale bits happen to read
// (clean_tag, k > 0) would be miscounted: 2^-40 for random bits.)
__device__ inline bool arrive_last(unsigned long long* word, unsigned grid) {
  unsigned long long old = atomicAdd(word, 1ull), assumed = 0, arrived = 0;
  if ((old >> arrival_count_bits) == clean_tag) return (old & arrival_count_mask) + 1 == grid;
  do {
    assumed = old;
    const bool current = (assumed >> arrival_count_bits) == clean_tag;
    arrived = (current ? (assumed & arrival_count_mask) : 0) + 1;
    old = atomicCAS(word, assumed, (clean_tag << arrival_count_bits) | arrived);
  } while (old != assumed);
  return arrived == grid;
}

}  // namespace detred::cuda::detail
