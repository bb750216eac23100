// detred-demo: why a parallel float sum needs a fixed order. Sums one embedded, ill-conditioned data set (2^22
// floats whose large terms cancel) with the loops people write and with detred, on 1 to 8 threads, and prints how
// far each result is from a reference and how many different bit patterns the thread counts produced.
// (The audit tool, detred-audit, replaces this demo as the main job once it exists.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "detred/detred.hpp"

namespace {

// Large terms that cancel pairwise at scattered places, plus small terms that carry the true sum.
std::vector<float> embedded_input() {
  std::vector<float> x(std::size_t{1} << 22);
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<float> small(0.0f, 1.0f);
  std::uniform_real_distribution<float> large(1e6f, 1e8f);
  for (std::size_t i = 0; i < x.size(); i += 2) {
    const float big = large(rng);
    x[i] = big;
    x[i + 1] = -big + small(rng);  // rounds: the cancellation leaves roundoff-sized noise behind
  }
  std::shuffle(x.begin(), x.end(), rng);
  return x;
}

// What an OpenMP-style "parallel for reduction(+)" does: each thread sums its contiguous share, then the partial
// sums are added in thread order. The result depends on the number of threads.
float naive_parallel(const std::vector<float>& x, unsigned threads) {
  std::vector<float> partial(threads, 0.0f);
  std::vector<std::jthread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::size_t begin = x.size() * t / threads, end = x.size() * (t + 1) / threads;
      float s = 0.0f;
      for (std::size_t i = begin; i < end; ++i) s += x[i];
      partial[t] = s;
    });
  }
  pool.clear();
  float total = 0.0f;
  for (float p : partial) total += p;
  return total;
}

}  // namespace

int main() {
  const std::vector<float> x = embedded_input();
  std::vector<double> magnitudes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) magnitudes[i] = std::fabs(double(x[i]));
  const double abs_sum = detred::sum(magnitudes, detred::sum_method::tree_neumaier);
  // Reference: the tree-Neumaier sum in double. Its a-priori bound (docs/ACCURACY.md), u|s| + gamma_{h+1}^2 sum|x|,
  // is printed so that the reader can see it is far below every error in the table.
  const double reference = detred::sum<double>(x, detred::sum_method::tree_neumaier);
  const double u = 0x1p-53, h = detred::canonical_depth(x.size()) + 1;
  const double gamma = h * u / (1 - h * u);
  const double bound = u * std::fabs(reference) + gamma * gamma * abs_sum;
  std::printf("detred-demo: %zu floats, sum|x| = %.6g, reference sum = %.10g +- %.2g, condition number %.3g\n\n",
              x.size(), abs_sum, reference, bound, abs_sum / std::fabs(reference));
  std::printf("%-34s %-16s %-14s %s\n", "method", "result (1 thread)", "rel. error", "distinct results, 1-8 threads");

  auto row = [&](const std::string& name, const std::function<float(unsigned)>& run) {
    std::set<std::uint32_t> patterns;
    for (unsigned t = 1; t <= 8; ++t) patterns.insert(detred::bits_of(run(t)));
    const float one = run(1);
    std::printf("%-34s %-16.9g %-14.3g %zu\n", name.c_str(), one, std::fabs(one - reference) / std::fabs(reference),
                patterns.size());
    return patterns.size();
  };
  row("naive loop, threads sum shares", [&](unsigned t) { return naive_parallel(x, t); });
  for (detred::sum_method m : detred::all_sum_methods) {
    const bool parallel = detred::guarantee(m) == detred::determinism::cpu_gpu;
    row(std::string("detred ") + std::string(detred::to_string(m)) + (parallel ? " (parallel)" : " (one thread)"),
        [&](unsigned t) { return detred::sum(x, m, {.threads = t}); });
  }
  std::printf("\nThe naive loop changes its bits with the thread count; detred's tree sums cannot (docs/ORDER.md).\n");
  return 0;
}
