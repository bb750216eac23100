// How a distributed backend cuts a contiguous piece of the global array into complete canonical subtrees
// (docs/ORDER.md, docs/DISTRIBUTED.md). Internal to detred::mpi and detred::nccl (not installed); host-only, no MPI
// or NCCL dependency, tested on the CPU (tests/test_distributed.cpp).
//
// A rank that holds the global range [begin, end) splits it greedily, from `begin` up, into the largest aligned
// power-of-two block that starts there and fits: each block [a, a + 2^k) has a % 2^k == 0, so it is a complete
// subtree T(a, 2^k) of the canonical tree of ANY global n >= end. Pushing every rank's block roots, rank by rank and
// in index order, into one binary_counter gives the canonical reduce of the whole array: the same bits as one process
// summing it, whatever the number of ranks and the partition. A range has at most 2 * 64 blocks (the sizes first grow
// with the low bits of `begin`, then shrink with those of `end`).
#pragma once

#include <cstdint>
#include <vector>

#include "detred/detail/bits.hpp"

namespace detred::distributed {

struct aligned_block {
  std::uint64_t begin;  // global index of the block's first element, a multiple of 2^level
  int level;            // the block holds 2^level elements
};

inline std::vector<aligned_block> aligned_blocks(std::uint64_t begin, std::uint64_t end) {
  std::vector<aligned_block> blocks;
  while (begin < end) {
    int level = detail::highest_bit(end - begin);
    if (begin != 0 && detail::lowest_bit(begin) < level) level = detail::lowest_bit(begin);
    blocks.push_back({begin, level});
    begin += std::uint64_t{1} << level;
  }
  return blocks;
}

}  // namespace detred::distributed
