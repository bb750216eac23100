// Test helpers for cuda::sum (detred/cuda/sum.hpp): a host input copied to the device at a chosen misalignment, and
// one sum brought back to the host. They allocate on every call: for tests and tools, not for hot loops.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/workspace.hpp"

namespace detred::test {

// cudaMalloc'd bytes, freed on scope exit (also when a later call throws).
class device_bytes {
 public:
  explicit device_bytes(std::size_t bytes) { cuda::check(cudaMalloc(&ptr_, bytes ? bytes : 1), "cudaMalloc"); }
  ~device_bytes() { cudaFree(ptr_); }
  device_bytes(const device_bytes&) = delete;
  device_bytes& operator=(const device_bytes&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// A device copy of host data placed `offset` elements past a 256-byte boundary (offset > 0 exercises inputs that are
// not 16-byte aligned), with a result slot and a workspace large enough for every sum method on it.
template <class T>
class device_sum_input {
 public:
  explicit device_sum_input(std::span<const T> host, std::size_t offset = 0)
      : n_(host.size()), input_(256 + (offset + host.size()) * sizeof(T)), result_(16), workspace_(bytes_for(n_)) {
    data_ = reinterpret_cast<T*>(input_.get() + 256) + offset;
    if (n_) cuda::check(cudaMemcpy(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    workspace_bytes_ = bytes_for(n_);
  }
  explicit device_sum_input(const std::vector<T>& host, std::size_t offset = 0)
      : device_sum_input(std::span<const T>(host), offset) {}

  const T* data() const { return data_; }
  std::uint64_t size() const { return n_; }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // The sum of the data with `options`, on `stream`, brought back to the host (waits for `stream`).
  template <class Acc = default_accumulation>
  accumulation_for<Acc, T> sum(const cuda::sum_options& options = {}, cudaStream_t stream = nullptr) const {
    using A = accumulation_for<Acc, T>;
    A* d_out = reinterpret_cast<A*>(result_.get());
    std::size_t bytes = workspace_bytes_;
    cuda::sum<Acc>(workspace_.get(), bytes, static_cast<const T*>(data_), d_out, n_, stream, options);
    return cuda::to_host(static_cast<const A*>(d_out), stream);
  }

  // The largest workspace any method needs for n elements.
  static std::size_t bytes_for(std::uint64_t n) {
    std::size_t most = 0;
    for (sum_method m : {sum_method::tree, sum_method::tree_neumaier, sum_method::exact}) {
      std::size_t bytes = 0;
      cuda::sum(nullptr, bytes, static_cast<const T*>(nullptr),
                static_cast<accumulation_for<default_accumulation, T>*>(nullptr), n, nullptr,
                cuda::sum_options{.method = m});
      if (bytes > most) most = bytes;
    }
    return most;
  }

 private:
  std::uint64_t n_;
  device_bytes input_, result_, workspace_;
  T* data_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

// The sum of host data on the device (copied `offset` elements past a 256-byte boundary), returned to the host.
template <class Acc = default_accumulation, class T>
accumulation_for<Acc, T> sum_host_data(std::span<const T> host, const cuda::sum_options& options = {},
                                       std::size_t offset = 0) {
  return device_sum_input<T>(host, offset).template sum<Acc>(options);
}

// The sum of device data d_in[0..n) with a workspace and a result slot of its own, returned to the host (waits for
// `stream`).
template <class Acc = default_accumulation, class T>
accumulation_for<Acc, T> sum_to_host(const T* d_in, std::uint64_t n, const cuda::sum_options& options = {},
                                     cudaStream_t stream = nullptr) {
  using A = accumulation_for<Acc, T>;
  std::size_t bytes = 0;
  cuda::sum<Acc>(nullptr, bytes, d_in, static_cast<A*>(nullptr), n, stream, options);
  device_bytes workspace(bytes), result(sizeof(A));
  A* d_out = reinterpret_cast<A*>(result.get());
  cuda::sum<Acc>(workspace.get(), bytes, d_in, d_out, n, stream, options);
  return cuda::to_host(static_cast<const A*>(d_out), stream);
}

}  // namespace detred::test
