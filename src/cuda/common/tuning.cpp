// The state behind include/detred/cuda/detail/tuning.hpp: per-device profiles (queried once), the process's overrides
// (DETRED_CUDA_TUNING, read once, or set_tuning_overrides) and a per-thread cache of the tuning in force.
#include "detred/cuda/detail/tuning.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "detred/cuda/error.hpp"

namespace detred::cuda::detail {
namespace {

struct overrides_state {
  std::mutex mutex;
  std::string spec;                     // guarded by mutex
  std::atomic<unsigned> generation{0};  // bumped on every change; per-thread caches compare it
};

// DETRED_CUDA_TUNING, or "" when it is unset or does not parse. The only environment variable the device calls read.
std::string environment_overrides() {
  const char* env = std::getenv("DETRED_CUDA_TUNING");
  return env && parse_tuning_overrides({}, env).ok ? env : "";
}

overrides_state& overrides() {
  static overrides_state* state = [] {
    auto* s = new overrides_state;  // never destroyed: launches from static destructors still find it
    s->spec = environment_overrides();
    return s;
  }();
  return *state;
}

device_profile query_profile(int device) {
  device_profile p;
  check(cudaDeviceGetAttribute(&p.multiprocessors, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  p.l2_bytes = std::size_t(l2);
  // Unknown (an error or 0) is allowed: classify() then says `standard`.
  if (cudaDeviceGetAttribute(&p.memory_clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) {
    (void)cudaGetLastError();
    p.memory_clock_khz = 0;
  }
  if (cudaDeviceGetAttribute(&p.memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    (void)cudaGetLastError();
    p.memory_bus_bits = 0;
  }
  return p;
}

device_profile profile_of(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<device_profile>> profiles;  // by device ordinal
  const std::lock_guard<std::mutex> lock(mutex);
  if (device >= int(profiles.size())) profiles.resize(std::size_t(device) + 1);
  if (!profiles[std::size_t(device)])
    profiles[std::size_t(device)] = std::make_unique<device_profile>(query_profile(device));
  return *profiles[std::size_t(device)];
}

}  // namespace

device_profile current_device_profile() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return profile_of(device);
}

tuning current_tuning() {
  struct entry {
    int device = -1;
    unsigned generation = ~0u;
    detail::tuning value;
  };
  thread_local entry recent;  // one device per thread is the common case
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  overrides_state& o = overrides();
  const unsigned generation = o.generation.load(std::memory_order_acquire);
  if (recent.device == device && recent.generation == generation) return recent.value;
  std::string spec;
  {
    const std::lock_guard<std::mutex> lock(o.mutex);
    spec = o.spec;
  }
  recent = {device, generation, tuning_for(profile_of(device), spec)};
  return recent.value;
}

bool set_tuning_overrides(const char* spec) {
  const std::string s = spec ? spec : "";
  if (!parse_tuning_overrides({}, s).ok) return false;
  overrides_state& o = overrides();
  {
    const std::lock_guard<std::mutex> lock(o.mutex);
    o.spec = s;
  }
  o.generation.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

}  // namespace detred::cuda::detail
