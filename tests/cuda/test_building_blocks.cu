// The device-side building blocks (include/detred/cuda/warp/warp_reduce.cuh, warp_tile.cuh, block_reduce.cuh) used
// the way a user's kernel uses them, each result compared bit for bit with the CPU's canonical sum of the same block:
// every piece computes a node of the canonical tree, so over an aligned power-of-two block it must equal
// detred::sum(block, tree / tree_neumaier). Label `gpu`: skipped, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/cuda/block/block_reduce.cuh"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/warp/warp_reduce.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/reduce.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;

using test::device_array;
using test::have_gpu;

// One warp per tile: the root of tile `blockIdx.x`.
template <class Acc, class T>
__global__ void tile_roots(const T* x, typename Acc::value_type* out) {
  const Acc root = cuda::warp_tile_root<Acc, T, true>(x + blockIdx.x * cuda::tile_shape<T>::elements);
  if (threadIdx.x == 0) out[blockIdx.x] = root.result();
}

// Lane l's leaf is x[l]; out[levels] = the root of lanes [0, 2^levels).
template <class Acc>
__global__ void warp_roots(const typename Acc::value_type* x, typename Acc::value_type* out) {
  for (int levels = 0; levels <= 5; ++levels) {
    const Acc root = cuda::warp_tree_reduce(Acc::from_value(x[threadIdx.x]), levels);
    if (threadIdx.x == 0) out[levels] = root.result();
  }
}

// out[level] = the block's root of x[0 .. 2^level), level = 0 .. 14 (256 threads; from 2^9 on, several per thread).
template <class Acc>
__global__ void block_roots(const typename Acc::value_type* x, typename Acc::value_type* out) {
  __shared__ Acc warp_scratch[256 / 32];
  for (int level = 0; level <= 14; ++level) {
    const auto load = [&](std::uint64_t i) { return Acc::from_value(x[i]); };
    const Acc root = cuda::block_subtree_root<256, Acc>(load, level, warp_scratch);
    if (threadIdx.x == 0) out[level] = root.result();
  }
}

template <class T>
std::vector<T> values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  std::vector<T> x(n);
  for (auto& e : x) e = test::make<T>(std::ldexp(v(rng), int(rng() % 20) - 10));
  return x;
}

template <class Acc, class T>
void expect_tiles_match(sum_method method) {
  using A = typename Acc::value_type;
  constexpr std::size_t tile = cuda::tile_shape<T>::elements;
  const int tiles = 5;
  const std::vector<T> x = values<T>(tiles * tile, 11);
  device_array<T> dx(x.size());
  device_array<A> dout(tiles);
  cuda::check(cudaMemcpy(dx.ptr, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  tile_roots<Acc, T><<<tiles, 32>>>(dx.ptr, dout.ptr);
  cuda::check(cudaGetLastError(), "launch");
  std::vector<A> device(tiles);
  cuda::check(cudaMemcpy(device.data(), dout.ptr, tiles * sizeof(A), cudaMemcpyDeviceToHost), "copy out");
  for (int t = 0; t < tiles; ++t)
    EXPECT_EQ(bits_of(device[t]), bits_of(detred::sum<A>(x.data() + t * tile, tile, method))) << "tile " << t;
}

TEST(DeviceBuildingBlocks, WarpTileRootIsTheCanonicalSubtree) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  expect_tiles_match<plain_accumulator<float>, float>(sum_method::tree);
  expect_tiles_match<neumaier_accumulator<float>, float>(sum_method::tree_neumaier);
  expect_tiles_match<plain_accumulator<double>, double>(sum_method::tree);
  expect_tiles_match<neumaier_accumulator<double>, double>(sum_method::tree_neumaier);
  expect_tiles_match<plain_accumulator<float>, detred::half>(sum_method::tree);
  expect_tiles_match<plain_accumulator<double>, bfloat16>(sum_method::tree);
}

template <class Acc>
void expect_warp_and_block_match(sum_method method) {
  using A = typename Acc::value_type;
  const std::vector<A> x = values<A>(std::size_t{1} << 14, 5);
  device_array<A> dx(x.size()), dout(15);
  cuda::check(cudaMemcpy(dx.ptr, x.data(), x.size() * sizeof(A), cudaMemcpyHostToDevice), "copy in");
  std::vector<A> device(15);
  warp_roots<Acc><<<1, 32>>>(dx.ptr, dout.ptr);
  cuda::check(cudaGetLastError(), "launch");
  cuda::check(cudaMemcpy(device.data(), dout.ptr, 6 * sizeof(A), cudaMemcpyDeviceToHost), "copy out");
  for (int levels = 0; levels <= 5; ++levels)
    EXPECT_EQ(bits_of(device[levels]), bits_of(detred::sum(x.data(), std::size_t{1} << levels, method)))
        << "warp_tree_reduce, levels " << levels;
  block_roots<Acc><<<1, 256>>>(dx.ptr, dout.ptr);
  cuda::check(cudaGetLastError(), "launch");
  cuda::check(cudaMemcpy(device.data(), dout.ptr, 15 * sizeof(A), cudaMemcpyDeviceToHost), "copy out");
  for (int level = 0; level <= 14; ++level)
    EXPECT_EQ(bits_of(device[level]), bits_of(detred::sum(x.data(), std::size_t{1} << level, method)))
        << "block_subtree_root, level " << level;
}

TEST(DeviceBuildingBlocks, WarpAndBlockReductionsAreCanonicalSubtrees) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  expect_warp_and_block_match<plain_accumulator<float>>(sum_method::tree);
  expect_warp_and_block_match<neumaier_accumulator<float>>(sum_method::tree_neumaier);
  expect_warp_and_block_match<plain_accumulator<double>>(sum_method::tree);
  expect_warp_and_block_match<neumaier_accumulator<double>>(sum_method::tree_neumaier);
}

}  // namespace
