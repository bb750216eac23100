// Shared by the tune modes of bench_baselines and bench_scan: candidates timed in turns within each round, and
// the tuning overrides each candidate runs under (include/detred/cuda/detail/tuning.hpp syntax).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"

namespace detred::bench {

// Sets the process's tuning overrides; a malformed list ends the program (exit 2), naming it.
inline void use_tuning_overrides(const std::string& spec) {
  if (!detred::cuda::detail::set_tuning_overrides(spec.c_str())) {
    std::fprintf(stderr, "bad tuning overrides: %s\n", spec.c_str());
    std::exit(2);
  }
}

// Medians (seconds per call) of `rounds` timings of `calls` back-to-back calls of each function, between two CUDA
// events. In every round each function is timed once, after before(i) and one untimed call (which keeps the host's
// one-off costs of a changed tuning out of the timed window). Round r starts at function r mod count, so that each
// function takes every place in the order equally often: a function's place in a round measured worth about 1% at
// 1 GiB on the H200 (docs/PERFORMANCE.md).
inline std::vector<double> interleaved_seconds(const std::vector<std::function<void()>>& fs, int rounds, int calls,
                                               const std::function<void(std::size_t)>& before) {
  using detred::cuda::check;
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<std::vector<double>> t(fs.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < fs.size(); ++k) {
      const std::size_t i = (k + std::size_t(r)) % fs.size();
      before(i);
      fs[i]();
      check(cudaEventRecord(a), "cudaEventRecord");
      for (int c = 0; c < calls; ++c) fs[i]();
      check(cudaEventRecord(b), "cudaEventRecord");
      check(cudaEventSynchronize(b), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
      t[i].push_back(double(ms) / 1e3 / calls);
    }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::vector<double> medians;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

}  // namespace detred::bench
