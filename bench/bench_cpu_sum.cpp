// CPU throughput of the canonical tree sum against the loops a user would otherwise write, in one binary:
//   eight_accumulators: x[i] added into acc[i % 8], a hand-written loop the compiler vectorises (not reproducible
//                       across SIMD widths, but fast: the bar in docs/PERFORMANCE.md);
//   sequential:         the plain left-to-right loop (one dependent add per element).
// Sizes: 2^26 floats and 2^25 doubles (256 MiB each, far beyond any cache). Bytes/s counts the input bytes read.
//   read_ceiling:       64-bit integer additions over the same bytes: the single-core read ceiling.
// Run: bench/bench_cpu_sum_table.sh (or the command inside it).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "detred/reduce.hpp"

namespace {

template <class T>
const std::vector<T>& input() {
  static const std::vector<T> data = [] {
    const std::size_t n = (std::size_t{256} << 20) / sizeof(T);
    std::vector<T> v(n);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<T> dist(-1, 1);
    for (T& e : v) e = dist(rng);
    return v;
  }();
  return data;
}

template <class T>
T eight_accumulators(const T* x, std::size_t n) {
  T acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += x[i + k];
  }
  for (; i < n; ++i) acc[0] += x[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <class T>
T sequential_loop(const T* x, std::size_t n) {
  T s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

// The read ceiling: integer additions over the same bytes. Integer addition is associative, so the compiler
// vectorises and unrolls this freely; it moves bytes as fast as one core can read them.
std::uint64_t read_ceiling(const std::uint64_t* x, std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}

template <class T>
void finish(benchmark::State& state, std::size_t n) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(T)));
}

template <class T>
void BM_canonical_tree(benchmark::State& state) {
  const std::vector<T>& x = input<T>();
  const detred::cpu_options options{.threads = static_cast<unsigned>(state.range(0))};
  for (auto _ : state) benchmark::DoNotOptimize(detred::sum(x, detred::sum_method::tree, options));
  finish<T>(state, x.size());
}

template <class T>
void BM_eight_accumulators(benchmark::State& state) {
  const std::vector<T>& x = input<T>();
  for (auto _ : state) benchmark::DoNotOptimize(eight_accumulators(x.data(), x.size()));
  finish<T>(state, x.size());
}

template <class T>
void BM_sequential_loop(benchmark::State& state) {
  const std::vector<T>& x = input<T>();
  for (auto _ : state) benchmark::DoNotOptimize(sequential_loop(x.data(), x.size()));
  finish<T>(state, x.size());
}

template <class T>
void BM_read_ceiling(benchmark::State& state) {
  const std::vector<T>& x = input<T>();
  const auto* words = reinterpret_cast<const std::uint64_t*>(x.data());
  for (auto _ : state) benchmark::DoNotOptimize(read_ceiling(words, x.size() * sizeof(T) / 8));
  finish<T>(state, x.size());
}

const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

BENCHMARK(BM_read_ceiling<float>)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_canonical_tree<float>)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(all_threads)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_eight_accumulators<float>)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sequential_loop<float>)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_canonical_tree<double>)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(all_threads)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_eight_accumulators<double>)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sequential_loop<double>)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
