// The user's CUDA kernels (my_cuda_sums.hpp). Compiled with --fmad=false; the adds are __fadd_rn anyway.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "my_cuda_sums.hpp"
#include "my_sums.hpp"

namespace mine::cuda {
namespace {

void check(cudaError_t e) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
    std::abort();
  }
}

__global__ void atomic_kernel(const float* x, std::size_t n, float* result) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    atomicAdd(result, x[i]);
}

// One tile of mine::tile values per iteration, tiles spread over the blocks: the order inside a tile is fixed
// (mine::fixed_order_tile), whichever block takes it.
__global__ void tile_kernel(const float* x, std::size_t n, float* partial) {
  __shared__ float lane[mine::lanes];
  const std::size_t tiles = (n + mine::tile - 1) / mine::tile;
  for (std::size_t i = blockIdx.x; i < tiles; i += gridDim.x) {
    const float* t = x + i * mine::tile;
    const std::size_t m = n - i * mine::tile < mine::tile ? n - i * mine::tile : mine::tile;
    float acc = -0.0f;
    for (std::size_t k = 0; k < mine::per_lane; ++k)
      if (threadIdx.x + mine::lanes * k < m) acc = __fadd_rn(acc, t[threadIdx.x + mine::lanes * k]);
    lane[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = mine::lanes / 2; s > 0; s /= 2) {
      if (threadIdx.x < s) lane[threadIdx.x] = __fadd_rn(lane[threadIdx.x], lane[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) partial[i] = lane[0];
    __syncthreads();
  }
}

struct device_input {
  float* x = nullptr;
  float* work = nullptr;
  device_input(const float* host, std::size_t n) {
    check(cudaMalloc(&x, (n + 1) * sizeof(float)));
    check(cudaMalloc(&work, ((n + mine::tile - 1) / mine::tile + 2) * sizeof(float)));
    if (n) check(cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~device_input() {
    cudaFree(x);
    cudaFree(work);
  }
};

}  // namespace

bool available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

float atomic_sum(const float* host_x, std::size_t n, unsigned blocks) {
  device_input d(host_x, n);
  check(cudaMemset(d.work, 0, sizeof(float)));  // +0.0: the naive start
  atomic_kernel<<<blocks, 256>>>(d.x, n, d.work);
  float result = 0;
  check(cudaMemcpy(&result, d.work, sizeof(float), cudaMemcpyDeviceToHost));
  return result;
}

float fixed_order_sum(const float* host_x, std::size_t n, unsigned blocks) {
  device_input d(host_x, n);
  float* in = d.x;
  std::size_t m = n;
  float* buffers[2] = {d.work, nullptr};
  check(cudaMalloc(&buffers[1], ((n + mine::tile - 1) / mine::tile + 2) * sizeof(float)));
  int b = 0;
  do {  // tiles, then tiles of the tile results, down to one value (n == 0: one empty tile, -0.0)
    tile_kernel<<<blocks, mine::lanes>>>(in, m, buffers[b]);
    if (m == 0) {
      float zero = -0.0f;
      check(cudaMemcpy(buffers[b], &zero, sizeof(float), cudaMemcpyHostToDevice));
    }
    m = m == 0 ? 1 : (m + mine::tile - 1) / mine::tile;
    in = buffers[b];
    b ^= 1;
  } while (m > 1);
  float result = 0;
  check(cudaMemcpy(&result, in, sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(buffers[1]);
  return result;
}

}  // namespace mine::cuda
