// Test helpers for the reduce family on the GPU (product, extrema, dot/nrm2/asum, the generic reduce): host data
// copied to the device at a chosen misalignment, the launch shapes every test runs, and a runner that sizes the
// workspace with the call's own size query and brings the result back with cuda::to_host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/cuda/workspace.hpp"
#include "tests/support/gpu_test.hpp"

namespace detred::test {

// 30 launch shapes (5 in quick mode): the default, and shapes that move every chunk, tile and grid boundary.
inline std::vector<cuda::reduce_options> reduce_launch_options() {
  if (gpu_test_quick()) return {{}, {32, 1, 1}, {96, 0, 2}, {256, 3, 16}, {160, 1000, 4}};
  std::vector<cuda::reduce_options> shapes{{}};
  for (int block : {32, 96, 256})
    for (int tiles : {1, 2, 4, 16})
      for (int grid : {1, 0}) shapes.push_back({block, grid, tiles});
  for (cuda::reduce_options o :
       {cuda::reduce_options{64, 3, 8}, {128, 7, 16}, {160, 1000, 1}, {224, 133, 2}, {256, 4096, 4}})
    shapes.push_back(o);
  return shapes;
}

// A copy of host data in device memory, `offset` elements past a 256-byte boundary (offset 0: the 16-byte vector
// path; other offsets: the element path). Freed on scope exit.
template <class T>
struct device_input {
  void* base = nullptr;
  T* data = nullptr;
  explicit device_input(const std::vector<T>& host, std::size_t offset = 0) {
    cuda::check(cudaMalloc(&base, 256 + (offset + host.size()) * sizeof(T)), "cudaMalloc");
    data = reinterpret_cast<T*>(static_cast<unsigned char*>(base) + 256) + offset;
    if (!host.empty())
      cuda::check(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~device_input() { cudaFree(base); }
  device_input(const device_input&) = delete;
  device_input& operator=(const device_input&) = delete;
};

// Runs device calls of the shape call(d_workspace, workspace_bytes, d_out): first as a size query (null workspace,
// null output), then with a workspace of exactly the bytes the query gave (kept and grown across calls) and a result
// slot poisoned before the call, so that a call that writes nothing cannot pass with an earlier result. Returns the
// result through cuda::to_host.
class reduce_runner {
 public:
  reduce_runner() { cuda::check(cudaMalloc(&slot_, slot_bytes), "cudaMalloc"); }
  ~reduce_runner() {
    cudaFree(slot_);
    cudaFree(workspace_);
  }
  reduce_runner(const reduce_runner&) = delete;
  reduce_runner& operator=(const reduce_runner&) = delete;

  template <class R, class Call>
  R run(const Call& call) {
    static_assert(sizeof(R) <= slot_bytes);
    std::size_t bytes = 0;
    call(nullptr, bytes, static_cast<R*>(nullptr));
    void* d_workspace = workspace(bytes);
    cuda::check(cudaMemset(slot_, 0x5b, slot_bytes), "cudaMemset");
    call(d_workspace, bytes, static_cast<R*>(slot_));
    return cuda::to_host(static_cast<const R*>(slot_));
  }

  // A workspace of at least `bytes` bytes (never null; kept until the runner dies or a larger one is asked for).
  void* workspace(std::size_t bytes) {
    if (workspace_ == nullptr || bytes > capacity_) {
      cudaFree(workspace_);
      workspace_ = nullptr;
      cuda::check(cudaMalloc(&workspace_, bytes ? bytes : 1), "cudaMalloc");
      capacity_ = bytes;
    }
    return workspace_;
  }

 private:
  static constexpr std::size_t slot_bytes = 256;
  void* slot_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace detred::test
