// The host-side conveniences of include/detred/cuda/sum.hpp: the workspace size, sum_to_host and sum_host_data.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/device_buffer.hpp"
#include "src/cuda/common/workspace.hpp"

namespace detred::cuda {

std::size_t sum_workspace_bytes(std::uint64_t n) { return detail::workspace_bytes_for(n); }

namespace detail {

template <class A, class T>
A sum_to_host(const T* d_in, std::uint64_t n, void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream,
              sum_method method, const launch_config& config) {
  if (d_workspace == nullptr) detred::detail::throw_invalid("cuda::sum_to_host", "d_workspace is null");
  A* slot = static_cast<A*>(workspace_result_slot(d_workspace));
  sum_on_device(d_in, n, slot, d_workspace, workspace_bytes, stream, method, config);
  A result{};
  check(cudaMemcpyAsync(&result, slot, sizeof(A), cudaMemcpyDeviceToHost, stream),
        "cuda::sum_to_host: cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cuda::sum_to_host: cudaStreamSynchronize");
  return result;
}

template <class A, class T>
A sum_host_data(std::span<const T> host, sum_method method, const launch_config& config, std::size_t offset) {
  const std::size_t n = host.size();
  device_buffer input(256 + (offset + n) * sizeof(T));
  T* d_in = reinterpret_cast<T*>(input.get() + 256) + offset;
  if (n) check(cudaMemcpy(d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cuda::sum_host_data: cudaMemcpy");
  const std::size_t bytes = sum_workspace_bytes(n);
  device_buffer workspace(bytes);
  return sum_to_host<A>(static_cast<const T*>(d_in), n, workspace.get(), bytes, nullptr, method, config);
}

#define DETRED_INSTANTIATE_HOST_SUM(A, T)                                                             \
  template A sum_to_host<A, T>(const T*, std::uint64_t, void*, std::size_t, cudaStream_t, sum_method, \
                               const launch_config&);                                                 \
  template A sum_host_data<A, T>(std::span<const T>, sum_method, const launch_config&, std::size_t);
DETRED_INSTANTIATE_HOST_SUM(float, half)
DETRED_INSTANTIATE_HOST_SUM(double, half)
DETRED_INSTANTIATE_HOST_SUM(float, bfloat16)
DETRED_INSTANTIATE_HOST_SUM(double, bfloat16)
DETRED_INSTANTIATE_HOST_SUM(float, float)
DETRED_INSTANTIATE_HOST_SUM(double, float)
DETRED_INSTANTIATE_HOST_SUM(double, double)
#undef DETRED_INSTANTIATE_HOST_SUM

}  // namespace detail
}  // namespace detred::cuda
