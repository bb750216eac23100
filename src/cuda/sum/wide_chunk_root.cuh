// The chunk root of Neumaier sums of doubles (neumaier_accumulator<double> over double inputs, 16-byte aligned): the
// same node as warp_chunk_root (warp_tile.cuh) computes, with fewer instructions a pass.
//
// A pass is the same aligned 8 KiB as there (1,024 doubles, a complete subtree), read as 8 wide rows of 1 KiB: lane l
// reads the 32 contiguous bytes 4l .. 4l + 3 of each wide row (two 16-byte loads) and reduces them in registers, so
// the cross-lane part (transpose and butterfly, warp_rows_root) runs over 8 rows instead of 16: 40% fewer shuffles and
// selects. The next pass's loads go into a second register set before the current pass is reduced (ping-pong), so
// the compiler needs no register copies to issue them early: 932 -> 567 instructions a pass. H200, 1 GiB, in one
// program with the former pipeline: 0.952-0.954 -> 0.957-0.961x CUB's bandwidth (docs/PERFORMANCE.md, log
// 2026-11-28-h200-neumaier-feeds-and-balance.txt, run 10).
// Speed only: the result is warp_chunk_root's, bit for bit.
#pragma once

#include <cstdint>

#include "detred/cuda/warp/warp_tile.cuh"

namespace detred::cuda::detail {

// Root of `tiles` (1, 2, 4, 8 or 16; warp-uniform) consecutive warp tiles of doubles starting at `chunk` (16-byte
// aligned), returned in every lane. All 32 lanes must call it.
template <class Acc>
__device__ __forceinline__ Acc warp_chunk_root_wide(const double* __restrict__ chunk, int tiles) {
  constexpr int rows = 8;                                 // wide rows a pass
  constexpr int vectors = 2 * rows;                       // 16-byte vectors a lane a pass
  constexpr std::uint64_t pass_elements = rows * 32 * 4;  // 1,024 doubles
  static_assert(pass_elements * 2 == tile_shape<double>::elements, "two passes a tile");
  const int lane = threadIdx.x & 31;
  const int passes = 2 * tiles;
  register_tree<Acc, 5> joined;
  Acc root{};
  const auto load = [&](uint4(&raw)[vectors], int p) {
    const double* pass = chunk + std::uint64_t(p) * pass_elements + 4 * lane;
#pragma unroll
    for (int row = 0; row < rows; ++row) {
      raw[2 * row] = load_lane_vector<double, true>(pass + row * 128);
      raw[2 * row + 1] = load_lane_vector<double, true>(pass + row * 128 + 2);
    }
  };
  const auto reduce = [&](const uint4(&raw)[vectors], int p) {
    Acc v[rows];
#pragma unroll
    for (int row = 0; row < rows; ++row)
      v[row] = merged(lane_vector_root<Acc, double>(raw[2 * row]), lane_vector_root<Acc, double>(raw[2 * row + 1]));
    root = joined.push(warp_rows_root<rows>(v), p);
  };
  uint4 even[vectors], odd[vectors];
  load(even, 0);
#pragma unroll 1
  for (int p = 0; p < passes; p += 2) {  // passes is even
    load(odd, p + 1);
    reduce(even, p);
    if (p + 2 < passes) load(even, p + 2);
    reduce(odd, p + 1);
  }
  return root;  // after the last pass (p = passes - 1, all ones) every pending root has been merged in
}

}  // namespace detred::cuda::detail
