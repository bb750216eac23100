// detred::cuda device queries and error checking (cuda/error.hpp, cuda/device.hpp).
#include <string>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"

namespace detred::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw cuda_error(status, std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

int device_count() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  check(status, "cudaGetDeviceCount");
  return count;
}

device_summary describe_device(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  device_summary s;
  s.name = prop.name;
  s.compute_capability_major = prop.major;
  s.compute_capability_minor = prop.minor;
  s.multiprocessors = prop.multiProcessorCount;
  s.l2_cache_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  s.global_memory_bytes = prop.totalGlobalMem;
  return s;
}

}  // namespace detred::cuda
