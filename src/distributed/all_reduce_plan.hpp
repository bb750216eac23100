// How detred::nccl::all_reduce cuts a vector of n elements over P ranks into pipelined chunks (docs/DISTRIBUTED.md,
// "The element-wise all-reduce"). Internal (not installed); host-only and pure, so that the layout is tested on the CPU
// (tests/test_distributed.cpp) apart from the transport. The cut never changes a result bit (each element is reduced
// alone); it sets the message sizes and the staging memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace detred::distributed {

struct all_reduce_chunk {
  std::uint64_t begin;  // the chunk covers [begin, begin + P * slice); rank j owns [begin + j * slice, ... + slice)
  std::uint64_t slice;  // >= 1
};

struct all_reduce_plan {
  std::vector<all_reduce_chunk> chunks;  // contiguous from 0, in order
  std::uint64_t tail_begin = 0;          // [tail_begin, n): fewer than P elements, gathered and combined by everyone
  std::uint64_t stride = 0;  // elements per rank slot of a staging area: >= every slice and >= P, whole 16-byte vectors
};

// Slices of chunk_bytes / P bytes (whole 16-byte vectors, so that chunks stay 16-byte aligned when the vector is),
// at most n / P elements; the last chunk takes what is left of the n / P * P body.
inline all_reduce_plan plan_all_reduce(std::uint64_t n, std::uint64_t ranks, std::uint64_t chunk_bytes,
                                       std::uint64_t element_bytes) {
  const std::uint64_t V = 16 / element_bytes;
  std::uint64_t slice = std::max<std::uint64_t>(V, chunk_bytes / element_bytes / ranks / V * V);
  slice = std::min(slice, std::max<std::uint64_t>(n / ranks, 1));
  all_reduce_plan plan;
  plan.stride = (std::max(slice, ranks) + V - 1) / V * V;
  std::uint64_t begin = 0;
  while (n - begin >= ranks) {
    const std::uint64_t s = std::min(slice, (n - begin) / ranks);
    plan.chunks.push_back({begin, s});
    begin += ranks * s;
  }
  plan.tail_begin = begin;
  return plan;
}

}  // namespace detred::distributed
