// The host-side parts of include/detred/cuda/scan.hpp: the workspace size and the host-data convenience for tests.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.hpp"
#include "src/cuda/common/device_buffer.hpp"

namespace detred::cuda {

std::size_t scan_workspace_bytes(std::uint64_t n, std::size_t value_bytes) {
  const std::uint64_t tiles = (n + 127) / 128;  // the smallest tile: 32 threads x 4 items
  const auto align16 = [](std::uint64_t b) { return (b + 15) / 16 * 16; };
  // Packed look-back words (values of 4 or 8 bytes): 32 bytes per tile; otherwise a status word and two values.
  const std::uint64_t packed = tiles * 32;
  const std::uint64_t separate = align16(tiles * 4) + 2 * align16(tiles * value_bytes);
  return std::size_t((packed > separate ? packed : separate) + 256);
}

namespace detail {
template <class A, class T>
std::vector<A> sum_scan_host_data(std::span<const T> host, bool exclusive, const scan_launch_config& config,
                                  std::size_t offset, bool in_place) {
  const std::size_t n = host.size();
  std::vector<A> result(n);
  device_buffer input(256 + (offset + n) * sizeof(T));
  T* d_in = reinterpret_cast<T*>(input.get() + 256) + offset;
  if (n) check(cudaMemcpy(d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  const std::size_t bytes = scan_workspace_bytes(n, sizeof(A));
  device_buffer workspace(bytes);
  A* d_out = nullptr;
  device_buffer output(in_place && sizeof(A) == sizeof(T) ? 1 : 256 + (offset + n) * sizeof(A));
  if constexpr (std::is_same_v<A, T>) {
    if (in_place) d_out = d_in;
  }
  if (d_out == nullptr) d_out = reinterpret_cast<A*>(output.get() + 256) + offset;
  sum_scan_on_device(static_cast<const T*>(d_in), d_out, n, exclusive, workspace.get(), bytes, nullptr, config);
  if (n) check(cudaMemcpy(result.data(), d_out, n * sizeof(A), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}

#define DETRED_INSTANTIATE_HOST_SCAN(A, T)                                                                           \
  template std::vector<A> sum_scan_host_data<A, T>(std::span<const T>, bool, const scan_launch_config&, std::size_t, \
                                                   bool);
DETRED_INSTANTIATE_HOST_SCAN(float, half)
DETRED_INSTANTIATE_HOST_SCAN(float, bfloat16)
DETRED_INSTANTIATE_HOST_SCAN(float, float)
DETRED_INSTANTIATE_HOST_SCAN(double, float)
DETRED_INSTANTIATE_HOST_SCAN(double, double)
#undef DETRED_INSTANTIATE_HOST_SCAN

}  // namespace detail
}  // namespace detred::cuda
