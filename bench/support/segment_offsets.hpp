// The segment offsets the segmented-sum benchmarks time on (bench_scatter and the segment probes in
// bench/experiments/): lengths uniform in [0, 2 mean] from a fixed LCG, until n values are used.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace detred::bench {

// offsets[0] = 0, offsets.back() = n, non-decreasing; segment s is [offsets[s], offsets[s + 1]).
inline std::vector<int> make_segment_offsets(std::uint64_t n, std::uint64_t mean) {
  std::vector<int> offsets{0};
  std::uint64_t state = 12345;
  while (std::uint64_t(offsets.back()) < n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    offsets.push_back(int(std::min<std::uint64_t>(n, std::uint64_t(offsets.back()) + (state >> 33) % (2 * mean + 1))));
  }
  return offsets;
}

}  // namespace detred::bench
