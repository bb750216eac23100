// What the segment-sum probes (segment_chunked_probe.cu, segment_block_probe.cu) share: their data (2^26 fp32 or 2^25
// fp64 values, segment lengths of mean 16 to 16384 (bench_scatter's 16, 256 and 4096 and four more), and mean 4096 with
// the starts rounded down to 16-byte boundaries), their peers (cub::DeviceSegmentedReduce::Sum and the library's
// canonical segment_sum, without and with the values count) and their report: for each form the median of `reps` single
// calls, each after a 256 MiB memset that clears L2, as CUB's time over the form's, and the number of segments whose
// bits differ from the library's.
#pragma once

#include <cuda_runtime_api.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/support/segment_offsets.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/warp/row_warp.cuh"

namespace segment_probe {

inline void check(cudaError_t e, int line) {
  if (e != cudaSuccess) {
    std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e), line);
    std::exit(1);
  }
}

// Segment s is [offsets[s], offsets[s + 1]): the probes' kernels' bounds functor.
struct csr_bounds {
  const int* offsets;
  __device__ void operator()(std::uint64_t s, std::uint64_t& begin, std::uint64_t& end) const {
    begin = std::uint64_t(offsets[s]);
    end = std::uint64_t(offsets[s + 1]);
  }
};

// The probes' command line and device: `reps` from argv[1] (default 25), the SM count, and the library's launch of
// one block a segment up to 256 blocks an SM (grid). Prints the device's name.
struct probe_setup {
  int reps = 25;
  int sms = 0;
  unsigned grid(std::uint64_t segments) const {
    return unsigned(std::min<std::uint64_t>(segments, std::uint64_t(sms) * 256));
  }
};
inline probe_setup setup(int argc, char** argv) {
  probe_setup p;
  if (argc > 1) p.reps = std::atoi(argv[1]);
  check(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0), __LINE__);
  cudaDeviceProp properties;
  check(cudaGetDeviceProperties(&properties, 0), __LINE__);
  std::printf("%s; ratios are CUB's time over each form's\n", properties.name);
  return p;
}

// A form under test: its name and its launch, out[s] for s < segments on the legacy default stream.
template <class T>
struct form {
  std::string name;
  std::function<void(const T* values, const int* offsets, std::uint64_t segments, T* out)> launch;
};

inline float time_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), __LINE__);
  check(cudaEventCreate(&b), __LINE__);
  cudaEventRecord(a);
  f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times CUB, the library and `forms` on every data set of one type (T: float or double) and prints a line a data set.
// Returns the number of segments, over all forms and data sets, whose bits differ from the library's (the probes exit
// with status 1 when it is not 0: every form must give the library's bits).
template <class T>
std::uint64_t run(const char* name, std::uint64_t n, int reps, const std::vector<form<T>>& forms) {
  std::vector<T> host(n);
  std::uint64_t state = 99;
  for (auto& v : host) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = T(double(std::int64_t(state >> 40) - (std::int64_t{1} << 23)) / double(1 << 20));
  }
  T* values = nullptr;
  check(cudaMalloc(&values, n * sizeof(T)), __LINE__);
  check(cudaMemcpy(values, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), __LINE__);
  void* flush = nullptr;
  check(cudaMalloc(&flush, 256 << 20), __LINE__);
  std::uint64_t differing = 0;
  for (int aligned_starts = 0; aligned_starts < 2; ++aligned_starts)
    for (std::uint64_t mean : {16u, 256u, 512u, 1024u, 2048u, 4096u, 16384u}) {
      if (aligned_starts && mean != 4096) continue;
      std::vector<int> offsets = detred::bench::make_segment_offsets(n, mean);
      if (aligned_starts)
        for (std::size_t i = 0; i + 1 < offsets.size(); ++i) offsets[i] &= ~(16 / int(sizeof(T)) - 1);
      const std::uint64_t segments = offsets.size() - 1;
      int* d_offsets = nullptr;
      check(cudaMalloc(&d_offsets, offsets.size() * sizeof(int)), __LINE__);
      check(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice), __LINE__);
      std::size_t cub_bytes = 0;
      cub::DeviceSegmentedReduce::Sum(nullptr, cub_bytes, values, static_cast<T*>(nullptr), int(segments), d_offsets,
                                      d_offsets + 1);
      void* cub_workspace = nullptr;
      check(cudaMalloc(&cub_workspace, cub_bytes), __LINE__);
      std::size_t no_bytes = 0;
      std::vector<form<T>> all = {
          {"cub", [&](const T* v, const int* o, std::uint64_t s,
                      T* out) { cub::DeviceSegmentedReduce::Sum(cub_workspace, cub_bytes, v, out, int(s), o, o + 1); }},
          {"library", [&](const T* v, const int* o, std::uint64_t s,
                          T* out) { detred::cuda::segment_sum(out, no_bytes, v, o, out, s); }},
          {"library(n)", [&](const T* v, const int* o, std::uint64_t s, T* out) {
             detred::cuda::segment_sum(out, no_bytes, v, o, out, s, nullptr, {detred::sum_method::tree, 0, n});
           }}};
      all.insert(all.end(), forms.begin(), forms.end());
      std::vector<T*> out(all.size());
      for (auto& o : out) check(cudaMalloc(&o, segments * sizeof(T)), __LINE__);
      for (std::size_t k = 0; k < all.size(); ++k) all[k].launch(values, d_offsets, segments, out[k]);
      check(cudaDeviceSynchronize(), __LINE__);
      std::vector<std::vector<T>> results(all.size(), std::vector<T>(segments));
      for (std::size_t k = 0; k < all.size(); ++k)
        check(cudaMemcpy(results[k].data(), out[k], segments * sizeof(T), cudaMemcpyDeviceToHost), __LINE__);
      std::vector<std::vector<float>> times(all.size());
      for (int r = 0; r < reps; ++r)
        for (std::size_t k = 0; k < all.size(); ++k) {
          check(cudaMemset(flush, r, 256 << 20), __LINE__);
          times[k].push_back(time_ms([&] { all[k].launch(values, d_offsets, segments, out[k]); }));
        }
      check(cudaGetLastError(), __LINE__);
      std::printf("%s mean %5llu%s (%llu segments):", name, (unsigned long long)mean, aligned_starts ? " aligned" : "",
                  (unsigned long long)segments);
      const float t_cub = median(times[0]);
      for (std::size_t k = 0; k < all.size(); ++k) {
        std::printf("  %s %.4f ms (%.3fx)", all[k].name.c_str(), median(times[k]), t_cub / median(times[k]));
        if (k >= 2) {
          std::size_t differ = 0;
          for (std::uint64_t s = 0; s < segments; ++s)
            differ += std::memcmp(&results[k][s], &results[1][s], sizeof(T)) != 0;
          std::printf(" [%zu differ]", differ);
          differing += differ;
        }
      }
      std::printf("\n");
      for (auto& o : out) cudaFree(o);
      cudaFree(d_offsets);
      cudaFree(cub_workspace);
    }
  cudaFree(values);
  cudaFree(flush);
  return differing;
}

}  // namespace segment_probe
