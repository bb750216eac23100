// What detred's GPU benchmark programs share: the data they time on (filled on the device from a hash of the index,
// so every program and run sees the same values), CUDA-event timing in the two ways docs/PERFORMANCE.md reports
// (one call between two events; many back-to-back calls between two events, per call), medians, the read ceiling and
// the CUB peers. Compile the including file with nvcc: the fills, the read ceiling and the CUB peers are device code.
//
// Timing: every timer runs its call twice untimed first (the first call of a shape pays one-off host costs: device
// queries, the tuning's cache) and records its events on the legacy default stream, on which the calls are expected
// to be enqueued (pass the stream the calls use to time another).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_reduce.cuh>
#endif

namespace detred::bench {

using detred::cuda::check;

inline constexpr std::size_t one_gib = std::size_t{1} << 30;

// ---------------------------------------------------------------------------------------------------------------
// Medians.

// The median of `values` (the upper one of an even count); 0 for none. Takes a copy: the caller's order stays.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(values.size() / 2), values.end());
  return values[values.size() / 2];
}

// ---------------------------------------------------------------------------------------------------------------
// CUDA-event timing.

// Two CUDA events, created once and destroyed with the object.
class event_pair {
 public:
  event_pair() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~event_pair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;

  // Seconds between the two events around `calls` calls of f, per call (no warm-up: see the free functions).
  double seconds_per_call(const std::function<void()>& f, int calls = 1, cudaStream_t stream = nullptr) {
    check(cudaEventRecord(start_, stream), "cudaEventRecord");
    for (int c = 0; c < calls; ++c) f();
    check(cudaEventRecord(stop_, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return double(ms) / 1e3 / calls;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Runs f twice untimed and waits for the device.
inline void warm_up(const std::function<void()>& f) {
  f();
  f();
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
}

// Median seconds of `reps` timings of one call each, each call alone between two events ("single call"). `after`
// (optional) runs after each timing, outside the timed window (e.g. to read the result's bits).
inline double single_call_seconds(const std::function<void()>& f, int reps, const std::function<void()>& after = {},
                                  cudaStream_t stream = nullptr) {
  warm_up(f);
  event_pair events;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    t.push_back(events.seconds_per_call(f, 1, stream));
    if (after) after();
  }
  return median(std::move(t));
}

// Median, over `reps` timings, of the time per call of `calls` back-to-back calls between two events ("back to
// back": the steady state of a loop of calls, where launch gaps overlap).
inline double back_to_back_seconds(const std::function<void()>& f, int reps, int calls,
                                   const std::function<void()>& after = {}, cudaStream_t stream = nullptr) {
  warm_up(f);
  event_pair events;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    t.push_back(events.seconds_per_call(f, calls, stream));
    if (after) after();
  }
  return median(std::move(t));
}

// GB/s of `bytes` moved in `seconds`.
inline double gb_per_s(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

// ---------------------------------------------------------------------------------------------------------------
// Device memory for a benchmark's lifetime.

// cudaMalloc'd elements, freed with the object; uninitialised.
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    check(cudaMalloc(&ptr_, count ? count * sizeof(T) : 1), "cudaMalloc");
  }
  ~device_buffer() {
    if (ptr_) cudaFree(ptr_);
  }
  device_buffer(device_buffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

#ifdef __CUDACC__
// ---------------------------------------------------------------------------------------------------------------
// Data.

// A 64-bit hash of the element index (splitmix64's finaliser): the same values on every device and run.
__device__ inline std::uint64_t index_hash(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t h = (i + seed) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

// float -> T, rounded to nearest (for half and bfloat16 through CUDA's conversions).
template <class T>
__device__ inline T from_float(float u) {
  if constexpr (std::is_same_v<T, detred::half>)
    return T::from_bits(__half_as_ushort(__float2half_rn(u)));
  else if constexpr (std::is_same_v<T, detred::bfloat16>)
    return T::from_bits(__bfloat16_as_ushort(__float2bfloat16_rn(u)));
  else
    return T(u);
}

// x[i] = U[-1, 1) (24-bit values; exponent_spread > 0: times 2^e, e uniform in [-spread, spread]).
template <class T>
__global__ void fill_kernel(T* x, std::uint64_t n, std::uint64_t seed, int exponent_spread) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = index_hash(i, seed);
    float u = float(h >> 40) * 0x1p-23f - 1.0f;
    if (exponent_spread > 0) u = ldexpf(u, int((h >> 8) % std::uint64_t(2 * exponent_spread + 1)) - exponent_spread);
    x[i] = from_float<T>(u);
  }
}

// Uniform in [-1, 1): the default data of the sum, exact, reduce and rows benchmarks.
template <class T>
void fill_uniform(T* d_x, std::uint64_t n, std::uint64_t seed = 1, cudaStream_t stream = nullptr) {
  fill_kernel<T><<<1024, 256, 0, stream>>>(d_x, n, seed, 0);
  check(cudaGetLastError(), "fill_uniform");
  check(cudaStreamSynchronize(stream), "fill_uniform");
}

// U[-1, 1) x 2^[-20, 20]: sums round in fp32 and fp64 alike (uniform 24-bit values sum exactly in fp64, hiding every
// order effect); the canonical sum's bars harness times and compares bits on it.
template <class T>
void fill_scaled(T* d_x, std::uint64_t n, std::uint64_t seed = 1, cudaStream_t stream = nullptr) {
  fill_kernel<T><<<1024, 256, 0, stream>>>(d_x, n, seed, 20);
  check(cudaGetLastError(), "fill_scaled");
  check(cudaStreamSynchronize(stream), "fill_scaled");
}

// ---------------------------------------------------------------------------------------------------------------
// The read ceiling: a vectorised read of the same bytes, the bound any reduction of them is measured against.

// A template so that every program including this header may define it (one instantiation each).
template <class V = float4>
__global__ void read_ceiling_kernel(const V* x, std::size_t n4, float* out) {
  static_assert(sizeof(V) == 16);
  float s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 v = reinterpret_cast<const float4*>(x)[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1.2345f) *out = s;  // keeps the loads
}

// Enqueues one read of `bytes` (a multiple of 16) at d_x; d_scratch receives nothing in practice.
inline void read_bytes(const void* d_x, std::size_t bytes, float* d_scratch, cudaStream_t stream = nullptr) {
  int sms = 0, device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  read_ceiling_kernel<<<unsigned(sms) * 8, 256, 0, stream>>>(static_cast<const float4*>(d_x), bytes / 16, d_scratch);
  check(cudaGetLastError(), "read_ceiling_kernel");
}

// The copy ceiling: every 16 bytes read once and written once, the bound of a kernel that reads a matrix and writes
// one of the same size (the norms).
template <class V = float4>
__global__ void copy_ceiling_kernel(const V* x, V* y, std::size_t n16) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n16;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] = x[i];
}

// Enqueues one copy of `bytes` (a multiple of 16) from d_x to d_y (16 blocks of 256 threads an SM).
inline void copy_bytes(const void* d_x, void* d_y, std::size_t bytes, cudaStream_t stream = nullptr) {
  int sms = 0, device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  copy_ceiling_kernel<<<unsigned(sms) * 16, 256, 0, stream>>>(static_cast<const float4*>(d_x),
                                                              static_cast<float4*>(d_y), bytes / 16);
  check(cudaGetLastError(), "copy_ceiling_kernel");
}

// ---------------------------------------------------------------------------------------------------------------
// CUB peers: the two-phase call with its workspace preallocated (the fastest way to call CUB).

// Widens a 16-bit float to float on the device (CUB's TransformReduce peer of the 16-bit sums).
struct widen_to_float {
  __device__ float operator()(detred::half h) const { return __half2float(__ushort_as_half(h.bits)); }
  __device__ float operator()(detred::bfloat16 h) const { return __uint_as_float(unsigned(h.bits) << 16); }
};

// The type CUB's peer sums into: T for float and double, float for the 16-bit types.
template <class T>
using cub_sum_result = std::conditional_t<std::is_same_v<T, double>, double, float>;

// cub::DeviceReduce::Sum of fp32/fp64, cub::DeviceReduce::TransformReduce (widen to float, plus) of fp16/bf16: the
// sum's peer. Holds its workspace, sized for up to max_n elements.
template <class T>
class cub_sum_peer {
 public:
  using result_type = cub_sum_result<T>;
  explicit cub_sum_peer(std::uint64_t max_n) {
    std::size_t bytes = 0;
    run(nullptr, bytes, nullptr, nullptr, max_n, nullptr);
    workspace_ = device_buffer<unsigned char>(bytes);
  }
  // Enqueues the sum of d_in[0..n) into *d_out on `stream`.
  void operator()(const T* d_in, result_type* d_out, std::uint64_t n, cudaStream_t stream = nullptr) {
    std::size_t bytes = workspace_.bytes();
    run(workspace_.get(), bytes, d_in, d_out, n, stream);
  }

 private:
  static void run(void* ws, std::size_t& bytes, const T* d_in, result_type* d_out, std::uint64_t n,
                  cudaStream_t stream) {
    if constexpr (sizeof(T) >= 4)
      check(cub::DeviceReduce::Sum(ws, bytes, d_in, d_out, std::int64_t(n), stream), "cub::DeviceReduce::Sum");
    else
      check(cub::DeviceReduce::TransformReduce(ws, bytes, d_in, d_out, std::int64_t(n), ::cuda::std::plus<float>{},
                                               widen_to_float{}, 0.0f, stream),
            "cub::DeviceReduce::TransformReduce");
  }
  device_buffer<unsigned char> workspace_;
};
#endif  // __CUDACC__

}  // namespace detred::bench
