// sum_method::exact on the GPU against cub::DeviceReduce::Sum (fp32, fp64) and cub::DeviceReduce::TransformReduce
// widening to float (fp16, bf16) in the same program (docs/PERFORMANCE.md, "Exact sum"). Data: the four exact data
// sets (tests/support/exact_inputs.hpp), 2^22 distinct elements generated on the host and repeated to fill 1 GiB on
// the device (64 to 256 copies: far larger than the L2). The exact result is checked against exact_accumulator
// states (the base block's state merged once per copy), bit for bit, on every timed call. Median of `reps` CUDA-event
// timings of one call each, workspaces preallocated; then the latency at n = 2^16.
// `bench_exact profile [log2 n]` (for ncu: -k regex:exact_block): binary64 only, n = 2^24 by default, the uniform,
// full range and ill-conditioned data sets, one call each, in the order it prints; the results are checked too.
// `bench_exact sweep [reps]`: kernel 1's variants (contiguous or interleaved block partition, exact.interleave; load
// flavours: plain, non-coherent without L1 allocation, with 256-byte L2 fetches) against CUB, the calls of every
// variant and CUB interleaved within each repetition, each result checked; medians.
// Usage: bench_exact [reps]   (default 15)   |   bench_exact profile [log2 n]   |   bench_exact sweep [reps]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "bench/support/bench_support.hpp"
#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "src/cuda/exact/exact_sum_kernels.cuh"
#include "tests/support/exact_inputs.hpp"

namespace exact_bench {
namespace cuda = detred::cuda;
using detred::bfloat16;
using detred::bits_of;
using detred::exact_accumulator_for;
using detred::half;
using detred::sum_method;
namespace test = detred::test;
using detred::cuda::check;

constexpr std::size_t kBytes = std::size_t{1} << 30;
constexpr std::size_t kBase = std::size_t{1} << 22;

template <class T>
using peer_out = detred::bench::cub_sum_result<T>;

// Median milliseconds of `reps` single calls.
template <class F>
float median_ms(int reps, F call) {
  return float(1e3 * detred::bench::single_call_seconds(call, reps));
}

template <class T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

namespace dd = detred::cuda::detail;
template <class Tune>
const char* algorithm_name() {
  return Tune::algorithm == dd::exact_block_algorithm::exponent_bins ? "bins" : "extract";
}

// Fills d[0..n) with the base data set (kBase elements) repeated; returns the exact accumulator's rounding of it.
template <class A, class T>
A fill(T* d, std::size_t n, test::exact_dataset set) {
  const std::vector<T> base = test::exact_data<T>(set, kBase, 11);
  check(cudaMemcpy(d, base.data(), kBase * sizeof(T), cudaMemcpyHostToDevice), "copy");
  for (std::size_t have = kBase; have < n; have *= 2)
    check(cudaMemcpy(d + have, d, std::min(have, n - have) * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
  exact_accumulator_for<T> one, all;
  one.add(base.data(), base.size());
  for (std::size_t c = 0; c < n / kBase; ++c) all.merge(one);
  return all.template rounded<A>();
}

template <class A, class T>
bool run(const char* tname, int reps) {
  const std::size_t n = kBytes / sizeof(T);
  T* d = nullptr;
  check(cudaMalloc(&d, kBytes), "cudaMalloc");
  A* d_out = nullptr;
  peer_out<T>* d_peer = nullptr;
  check(cudaMalloc(&d_out, sizeof(A)), "cudaMalloc");
  check(cudaMalloc(&d_peer, sizeof(peer_out<T>)), "cudaMalloc");
  const cuda::sum_options exact{.method = sum_method::exact};
  std::size_t ws_bytes = 0;
  cuda::sum<A>(nullptr, ws_bytes, d, d_out, n, nullptr, exact);
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  detred::bench::cub_sum_peer<T> cub(n);
  bool ok = true;
  for (test::exact_dataset set : test::all_exact_datasets) {
    const A expected = fill<A>(d, n, set);
    bool same = true;
    // Correctness outside the timed region, then timing of the call alone.
    for (int r = 0; r < 3; ++r) {
      cuda::sum<A>(ws, ws_bytes, d, d_out, n, nullptr, exact);
      A got;
      check(cudaMemcpy(&got, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
      same = same && raw(got) == raw(expected);
    }
    const float exact_ms = median_ms(reps, [&] { cuda::sum<A>(ws, ws_bytes, d, d_out, n, nullptr, exact); });
    A last;
    check(cudaMemcpy(&last, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
    same = same && raw(last) == raw(expected);
    const float cub_ms = median_ms(reps, [&] { cub(d, d_peer, n); });
    const double gb = double(kBytes) / 1e9;
    std::printf(
        "%-5s %-10s n=%zu [default %s]  CUB %7.1f GB/s (%.3f ms)  exact %7.1f GB/s (%.3f ms)  exact/CUB %.2f  "
        "exact==ref %s\n",
        tname, test::name_of(set), n, algorithm_name<dd::exact_default_tuning<T>>(), gb / (cub_ms * 1e-3), cub_ms,
        gb / (exact_ms * 1e-3), exact_ms, cub_ms / exact_ms, same ? "yes" : "NO");
    ok = ok && same;
  }
  // Latency at n = 2^16 (uniform data already in the buffer's start is overwritten by the last data set: refill).
  {
    const std::size_t m = std::size_t{1} << 16;
    const std::vector<T> base = test::exact_data<T>(test::exact_dataset::uniform, m, 5);
    check(cudaMemcpy(d, base.data(), m * sizeof(T), cudaMemcpyHostToDevice), "copy");
    auto ex = [&] { cuda::sum<A>(ws, ws_bytes, d, d_out, m, nullptr, exact); };
    auto cb = [&] { cub(d, d_peer, m); };
    for (int w = 0; w < 10; ++w) {
      ex();
      cb();
    }
    const float ex_one = 1000.0f * median_ms(51, ex), cb_one = 1000.0f * median_ms(51, cb);
    const float ex_b2b = float(1e6 * detred::bench::back_to_back_seconds(ex, 1, 200));
    const float cb_b2b = float(1e6 * detred::bench::back_to_back_seconds(cb, 1, 200));
    std::printf(
        "%-5s latency n=2^16 uniform: one call exact %.1f us (CUB %.1f us); back to back per call exact %.1f us "
        "(CUB %.1f us)\n",
        tname, ex_one, cb_one, ex_b2b, cb_b2b);
  }
  cudaFree(ws);
  cudaFree(d_peer);
  cudaFree(d_out);
  cudaFree(d);
  return ok;
}
// One call each on 2^log2n binary64 terms of the uniform, full-range and ill-conditioned data sets, for a profiler
// (ncu -k regex:exact_block): the launches come in the order printed. Results checked.
bool profile(int log2n) {
  using T = double;
  const std::size_t n = std::max(kBase, std::size_t{1} << log2n);
  T* d = nullptr;
  T* d_out = nullptr;
  check(cudaMalloc(&d, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&d_out, sizeof(T)), "cudaMalloc");
  const cuda::sum_options exact{.method = sum_method::exact};
  std::size_t ws_bytes = 0;
  cuda::sum(nullptr, ws_bytes, d, d_out, n, nullptr, exact);
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  bool ok = true;
  int launch = 0;
  for (test::exact_dataset set :
       {test::exact_dataset::uniform, test::exact_dataset::full_range, test::exact_dataset::ill}) {
    const T expected = fill<T>(d, n, set);
    cuda::sum(ws, ws_bytes, d, d_out, n, nullptr, exact);
    T got;
    check(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost), "copy");
    ok = ok && raw(got) == raw(expected);
    std::printf("profile launch %2d: f64 %-10s n=2^%d %s  exact==ref %s\n", launch++, test::name_of(set), log2n,
                algorithm_name<dd::exact_default_tuning<T>>(), raw(got) == raw(expected) ? "yes" : "NO");
  }
  cudaFree(ws);
  cudaFree(d_out);
  cudaFree(d);
  return ok;
}
// A type's default tuning with another load flavour (exact_load_kind) and block partition (exact_interleaved).
template <class Base, int Load, bool Interleave>
struct load_variant : Base {
  static constexpr int load = Load;
  static constexpr bool interleave = Interleave;
};

template <class Tune, class A, class T>
void launch_variant(const T* d, std::size_t n, A* out, void* ws) {
  long long* bl = nullptr;
  unsigned* bf = nullptr;
  const int blocks = dd::launch_exact_blocks<T, Tune>(d, n, ws, nullptr, bl, bf);
  dd::launch_finishing_block(dd::exact_finish_kernel<A, T>, dd::exact_finish_threads, nullptr, "variant finish",
                             static_cast<const long long*>(bl), static_cast<const unsigned*>(bf), blocks,
                             std::uint64_t(n), out);
}

struct variant {
  std::string name;
  std::string tuning;
  std::function<void()> call;
};

template <class A, class T>
bool sweep(const char* tname, int reps, const std::vector<test::exact_dataset>& sets) {
  const std::size_t n = kBytes / sizeof(T);
  T* d = nullptr;
  A* d_out = nullptr;
  peer_out<T>* d_peer = nullptr;
  check(cudaMalloc(&d, kBytes), "cudaMalloc");
  check(cudaMalloc(&d_out, sizeof(A)), "cudaMalloc");
  check(cudaMalloc(&d_peer, sizeof(peer_out<T>)), "cudaMalloc");
  const cuda::sum_options exact{.method = sum_method::exact};
  std::size_t ws_bytes = 0;
  cuda::sum<A>(nullptr, ws_bytes, d, d_out, n, nullptr, exact);
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  detred::bench::cub_sum_peer<T> cub(n);
  std::vector<variant> vs;
  auto lib = [&] { cuda::sum<A>(ws, ws_bytes, d, d_out, n, nullptr, exact); };
  vs.push_back({"contiguous", "exact.interleave=0", lib});
  vs.push_back({"streamed (key)", "exact.interleave=1", lib});
  using Base = dd::exact_default_tuning<T>;
  auto add = [&]<class Tune>(const char* name) {
    vs.push_back({name, "", [&, n] { launch_variant<Tune, A, T>(d, n, d_out, ws); }});
  };
  add.template operator()<load_variant<Base, 0, false>>("same (direct)");
  add.template operator()<load_variant<Base, 1, false>>("nc no-L1");
  add.template operator()<load_variant<Base, 2, false>>("nc L2::256B");
  add.template operator()<load_variant<Base, 0, true>>("interleave");
  add.template operator()<load_variant<Base, 2, true>>("interl. 256B");
  vs.push_back({"contiguous again", "exact.interleave=0", lib});
  bool ok = true;
  detred::bench::event_pair events;
  for (test::exact_dataset set : sets) {
    const A expected = fill<A>(d, n, set);
    std::vector<std::vector<double>> t(vs.size() + 1);
    std::vector<bool> same(vs.size(), true);
    for (int r = -2; r < reps; ++r) {
      for (std::size_t k = 0; k < vs.size(); ++k) {
        cuda::detail::set_tuning_overrides(vs[k].tuning.c_str());
        const double sec = events.seconds_per_call(vs[k].call, 1, nullptr);
        if (r >= 0) t[k].push_back(sec);
        A got;
        check(cudaMemcpy(&got, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
        same[k] = same[k] && raw(got) == raw(expected);
      }
      const double sec = events.seconds_per_call([&] { cub(d, d_peer, n); }, 1, nullptr);
      if (r >= 0) t[vs.size()].push_back(sec);
    }
    cuda::detail::set_tuning_overrides(nullptr);
    const double cub_ms = 1e3 * detred::bench::median(t[vs.size()]);
    const double gb = double(kBytes) / 1e9;
    std::printf("sweep %-4s %-10s CUB %7.1f GB/s (%.4f ms)\n", tname, test::name_of(set), gb / (cub_ms * 1e-3), cub_ms);
    for (std::size_t k = 0; k < vs.size(); ++k) {
      const double ms = 1e3 * detred::bench::median(t[k]);
      std::printf("sweep %-4s %-10s %-16s %7.1f GB/s (%.4f ms)  exact/CUB %.3f  exact==ref %s\n", tname,
                  test::name_of(set), vs[k].name.c_str(), gb / (ms * 1e-3), ms, cub_ms / ms, same[k] ? "yes" : "NO");
      ok = ok && same[k];
    }
  }
  cudaFree(ws);
  cudaFree(d_peer);
  cudaFree(d_out);
  cudaFree(d);
  return ok;
}
}  // namespace exact_bench

int main(int argc, char** argv) {
  using namespace exact_bench;
  if (argc > 1 && std::string(argv[1]) == "profile") {
    const bool ok = profile(argc > 2 ? std::atoi(argv[2]) : 24);
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
    using test::exact_dataset;
    bool ok = sweep<float, float>("f32", reps, {exact_dataset::uniform, exact_dataset::full_range, exact_dataset::ill});
    ok = sweep<double, double>("f64", reps, {exact_dataset::uniform, exact_dataset::full_range, exact_dataset::ill}) &&
         ok;
    ok = sweep<float, detred::half>("f16", reps, {exact_dataset::uniform, exact_dataset::full_range}) && ok;
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; 1 GiB per data set; median of %d CUDA-event timings per figure\n", prop.name,
              prop.multiProcessorCount, reps);
  bool ok = true;
  ok = run<float, float>("f32", reps) && ok;
  ok = run<double, double>("f64", reps) && ok;
  ok = run<float, detred::half>("f16", reps) && ok;
  ok = run<float, bfloat16>("bf16", reps) && ok;
  std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
  return ok ? 0 : 1;
}
