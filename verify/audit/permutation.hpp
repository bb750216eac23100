// Seeded random permutations of an input, the same on every platform: Fisher-Yates driven by std::mt19937_64 (whose
// output the C++ standard fixes) with unbiased bounded integers by rejection; std::shuffle is not used because its
// algorithm differs between standard libraries.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace detred::audit {

// A uniformly random integer in [0, bound), bound > 0.
inline std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t limit = std::uint64_t(0) - (std::uint64_t(0) - bound) % bound;  // a multiple of bound (mod 2^64)
  for (;;) {
    const std::uint64_t r = engine();
    if (limit == 0 || r < limit) return r % bound;
  }
}

// data permuted uniformly at random by `engine`.
template <class T>
std::vector<T> permuted(std::span<const T> data, std::mt19937_64& engine) {
  std::vector<T> out(data.begin(), data.end());
  for (std::size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[uniform_below(engine, i)]);
  return out;
}

}  // namespace detred::audit
