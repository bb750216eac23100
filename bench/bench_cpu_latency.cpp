// Per-call latency of detred::sum (float, sum_method::tree) with the default options against threads = 1 (and, for
// reference, an explicit count of every core): the median
// over many back-to-back calls, interleaved in a rotating order so that machine load and cache state affect all alike.
// Prints a markdown row per size. Usage: bench_cpu_latency [calls per size, default 400]. docs/PERFORMANCE.md, "CPU
// backend under load".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "detred/reduce.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 400;
  const unsigned all = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "| n | default (us) | threads=1 (us) | default / threads=1 | threads=%u, explicit (us) |\n"
      "|---|---|---|---|---|\n",
      all);
  for (int log_n : {14, 17, 18, 20, 22}) {
    const std::size_t n = std::size_t{1} << log_n;
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = float((i * 2654435761u) % 1000) * 0.001f - 0.5f;
    const int k = log_n >= 22 ? std::max(calls / 8, 25) : calls;
    std::vector<double> fast, one, every;
    volatile float sink = 0;
    for (int r = 0; r < k + 5; ++r) {
      for (int step = 0; step < 3; ++step) {
        const int mode = (r + step) % 3;  // the order rotates: no mode always follows the same one
        const detred::cpu_options options{.threads = mode == 0 ? 0u : mode == 1 ? 1u : all};
        const auto t0 = std::chrono::steady_clock::now();
        sink = sink + detred::sum(x.data(), n, detred::sum_method::tree, options);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (r >= 5) (mode == 0 ? fast : mode == 1 ? one : every).push_back(us);
      }
    }
    const double a = median(fast), b = median(one);
    std::printf("| 2^%d | %.1f | %.1f | %.2f | %.1f |\n", log_n, a, b, a / b, median(every));
  }
  return 0;
}
