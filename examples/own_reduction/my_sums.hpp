// A user's own reductions (plain C++, nothing from detred): what examples/own_reduction tests and audits.
//
//   fixed_order_sum   the order is fixed by n alone: tiles of 2048 values, in each tile 256 lanes summing a strided
//                     column of 8 then a halving tree over the lanes, then the tile results in the same way. The
//                     CUDA kernel (my_cuda_sums.cu) computes exactly this order; on the CPU `threads` only splits the
//                     tiles among threads. Same bits for every thread count and launch shape.
//   chunked_sum       each of `threads` threads sums a contiguous share left to right, then the shares are added:
//                     deterministic for one thread count, but the bits depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace mine {

inline constexpr std::size_t lanes = 256;
inline constexpr std::size_t per_lane = 8;
inline constexpr std::size_t tile = lanes * per_lane;

// One tile (or the tile results) in the fixed order; n <= tile values at x.
inline float fixed_order_tile(const float* x, std::size_t n) {
  float lane[lanes];
  for (std::size_t t = 0; t < lanes; ++t) {
    float acc = -0.0f;  // the identity of IEEE addition: an all -0.0 input sums to -0.0
    for (std::size_t k = 0; k < per_lane; ++k)
      if (t + lanes * k < n) acc = acc + x[t + lanes * k];
    lane[t] = acc;
  }
  for (std::size_t s = lanes / 2; s > 0; s /= 2)
    for (std::size_t t = 0; t < s; ++t) lane[t] = lane[t] + lane[t + s];
  return lane[0];
}

inline float fixed_order_sum(const float* x, std::size_t n, unsigned threads = 1) {
  if (n <= tile) return fixed_order_tile(x, n);
  const std::size_t tiles = (n + tile - 1) / tile;
  std::vector<float> partial(tiles);
  std::vector<std::thread> pool;
  threads = std::max(1u, threads);
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (std::size_t i = w; i < tiles; i += threads)
        partial[i] = fixed_order_tile(x + i * tile, std::min(tile, n - i * tile));
    });
  for (auto& t : pool) t.join();
  return fixed_order_sum(partial.data(), tiles, 1);
}

inline float chunked_sum(const float* x, std::size_t n, unsigned threads) {
  threads = std::max(1u, threads);
  std::vector<float> share(threads, 0.0f);
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      const std::size_t begin = n * w / threads, end = n * (w + 1) / threads;
      float acc = 0.0f;
      for (std::size_t i = begin; i < end; ++i) acc += x[i];
      share[w] = acc;
    });
  for (auto& t : pool) t.join();
  float total = 0.0f;
  for (float s : share) total += s;
  return total;
}

}  // namespace mine
