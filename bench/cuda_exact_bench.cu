// sum_method::exact on the GPU against cub::DeviceReduce::Sum (fp32, fp64) and cub::DeviceReduce::TransformReduce
// widening to float (fp16, bf16) in the same program (docs/PERFORMANCE.md, "Exact sum"). Data: the issue's four data
// sets (tests/support/exact_inputs.hpp), 2^22 distinct elements generated on the host and repeated to fill 1 GiB on
// the device (64 to 256 copies: far larger than the L2). The exact result is checked against exact_accumulator
// states (the base block's state merged once per copy), bit for bit, on every timed call. Median of `reps` CUDA-event
// timings of one call each, workspaces preallocated; then the latency at n = 2^16.
// With --variants, kernel 1's other algorithms and tunings (src/cuda/exact/exact_sum_kernels.cuh: exact_tuning_of for
// the register window, exact_bins_tuning for the exponent bins, exact_windows_tuning for binary64's adjacent windows)
// are timed and checked the same way, for every type.
// `bench_cuda_exact profile [log2 n]` (for ncu: -k regex:exact_block): binary64 only, n = 2^24 by default, uniform, the
// full range and ill-conditioned data sets, one call of the default and of each binary64 variant each, in the order it
// prints; the results are checked too.
// Usage: bench_cuda_exact [reps] [--variants]   (default 15)   |   bench_cuda_exact profile [log2 n]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <string>
#include <tuple>
#include <vector>

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

struct widen {
  __device__ float operator()(half h) const { return __half2float(__ushort_as_half(h.bits)); }
  __device__ float operator()(bfloat16 h) const { return __uint_as_float(unsigned(h.bits) << 16); }
};

template <class T>
using peer_out = std::conditional_t<std::same_as<T, double>, double, float>;

// CUB's sum of the same bytes: DeviceReduce::Sum for fp32/fp64, TransformReduce (widen to float, plus) for 16 bits.
template <class T>
void cub_sum(void* temp, std::size_t& temp_bytes, const T* d, peer_out<T>* out, std::size_t n, cudaStream_t s) {
  if constexpr (sizeof(T) >= 4)
    check(cub::DeviceReduce::Sum(temp, temp_bytes, d, out, n, s), "cub Sum");
  else
    check(cub::DeviceReduce::TransformReduce(temp, temp_bytes, d, out, n, ::cuda::std::plus<float>{}, widen{}, 0.0f, s),
          "cub TransformReduce");
}

template <class F>
float median_ms(int reps, F call) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a), "record");
    call();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Mean per-call time of `calls` back-to-back calls between two events.
template <class F>
float back_to_back_us(int calls, F call) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  check(cudaEventRecord(a), "record");
  for (int c = 0; c < calls; ++c) call();
  check(cudaEventRecord(b), "record");
  check(cudaEventSynchronize(b), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "elapsed");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 1000.0f * ms / float(calls);
}

template <class T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

// Tunings compared by --variants (the default's figures are the main lines): for the binary32 family the register
// window (the former default, exact_window_tuning) beside the exponent bins at other unrolls, so one run compares the
// two algorithms on every data set; for binary64 (issue 17) the register window, one and two adjacent windows (the two
// with the slow path out of line), the adaptive windows of session 6 (inline slow path, no all_slow mode), and the
// default's neighbours: out of line without the all_slow mode, with it for 16 and 64 steps, sticky, and 12 vectors a
// step (faster on uniform, normal and full-range data, slower on ill-conditioned ones: docs/PERFORMANCE.md). Earlier
// sessions' lists (docs/PERFORMANCE.md) had more; each is one line of this tuple to bring back.
namespace dd = detred::cuda::detail;
template <class T>
using variants = std::conditional_t<
    std::same_as<T, double>,
    std::tuple<dd::exact_outlined_tuning<dd::exact_adaptive_windows_tuning<T, 8, 256, 4, -1>>,
               dd::exact_extract_tuning<T, 8, 3>, dd::exact_extract_tuning<T, 12, 3>,
               dd::exact_extract_tuning<T, 10, 3, -1, false>, dd::exact_extract_tuning<T, 8, 2>,
               dd::exact_extract_tuning<T, 8, 3, -1, true, 384>, dd::exact_extract_tuning<T, 8, 3, -1, true, 256, 1>>,
    std::tuple<dd::exact_window_tuning<T>, dd::exact_tuning_of<T, 4, 1, false>, dd::exact_bins_tuning<T, 2>,
               dd::exact_bins_tuning<T, 4>, dd::exact_bins_tuning<T, 6>, dd::exact_bins_tuning<T, 12>>>;

// extract_levels' levels and whole-step test (0 for the other algorithms).
template <class Tune>
int levels_of() {
  if constexpr (requires { Tune::levels; })
    return Tune::levels;
  else
    return 0;
}
template <class Tune>
int step_test_of() {
  if constexpr (requires { Tune::step_test; })
    return int(Tune::step_test);
  else
    return 0;
}

template <class Tune>
int prefetch_of() {
  return dd::exact_prefetch_steps<Tune>();
}

template <class Tune>
const char* algorithm_name() {
  switch (Tune::algorithm) {
    case dd::exact_block_algorithm::exponent_bins:
      return "bins";
    case dd::exact_block_algorithm::adjacent_windows:
      return "windows";
    case dd::exact_block_algorithm::extract_levels:
      return "extract";
    case dd::exact_block_algorithm::adaptive_windows:
      return dd::exact_adapt_shift<Tune>() >= 31 ? "sticky" : "adaptive";
    default:
      return "window";
  }
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
bool run(const char* tname, int reps, bool with_variants) {
  const std::size_t n = kBytes / sizeof(T);
  T* d = nullptr;
  check(cudaMalloc(&d, kBytes), "cudaMalloc");
  A* d_out = nullptr;
  peer_out<T>* d_peer = nullptr;
  check(cudaMalloc(&d_out, sizeof(A)), "cudaMalloc");
  check(cudaMalloc(&d_peer, sizeof(peer_out<T>)), "cudaMalloc");
  const std::size_t ws_bytes = cuda::sum_workspace_bytes(n);
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  std::size_t temp_bytes = 0;
  cub_sum<T>(nullptr, temp_bytes, d, d_peer, n, nullptr);
  void* temp = nullptr;
  check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
  bool ok = true;
  for (test::exact_dataset set : test::all_exact_datasets) {
    const A expected = fill<A>(d, n, set);
    bool same = true;
    // Correctness outside the timed region, then timing of the call alone.
    for (int r = 0; r < 3; ++r) {
      cuda::sum<A>(d, n, d_out, ws, ws_bytes, nullptr, sum_method::exact);
      A got;
      check(cudaMemcpy(&got, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
      same = same && raw(got) == raw(expected);
    }
    const float exact_ms =
        median_ms(reps, [&] { cuda::sum<A>(d, n, d_out, ws, ws_bytes, nullptr, sum_method::exact); });
    A last;
    check(cudaMemcpy(&last, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
    same = same && raw(last) == raw(expected);
    cub_sum<T>(temp, temp_bytes, d, d_peer, n, nullptr);
    const float cub_ms = median_ms(reps, [&] { cub_sum<T>(temp, temp_bytes, d, d_peer, n, nullptr); });
    const double gb = double(kBytes) / 1e9;
    std::printf(
        "%-5s %-10s n=%zu [default %s]  CUB %7.1f GB/s (%.3f ms)  exact %7.1f GB/s (%.3f ms)  exact/CUB %.2f  "
        "exact==ref %s\n",
        tname, test::name_of(set), n, algorithm_name<dd::exact_default_tuning<T>>(), gb / (cub_ms * 1e-3), cub_ms,
        gb / (exact_ms * 1e-3), exact_ms, cub_ms / exact_ms, same ? "yes" : "NO");
    ok = ok && same;
    if (with_variants) {
      std::apply(
          [&]<class... Tune>(Tune...) {
            (
                [&] {
                  auto call = [&] { cuda::detail::launch_exact_sum_tuned<A, T, Tune>(d, n, d_out, ws, nullptr); };
                  call();
                  const float ms = median_ms(reps, call);
                  A got;
                  check(cudaMemcpy(&got, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
                  const bool v_same = raw(got) == raw(expected);
                  ok = ok && v_same;
                  std::printf(
                      "      variant %-8s unroll=%d columns=%d atomic=%d windows=%d threads=%d slow=%d outlined=%d "
                      "levels=%d steptest=%d prefetch=%d: %7.1f GB/s (%.3f ms)  /CUB %.2f  exact==ref %s\n",
                      algorithm_name<Tune>(), Tune::unroll, Tune::columns, int(Tune::atomic), Tune::windows,
                      Tune::block_threads, dd::exact_slow_run<Tune>(), int(dd::exact_outline_slow<Tune>()),
                      levels_of<Tune>(), step_test_of<Tune>(), prefetch_of<Tune>(), gb / (ms * 1e-3), ms, cub_ms / ms,
                      v_same ? "yes" : "NO");
                }(),
                ...);
          },
          variants<T>{});
    }
  }
  // Latency at n = 2^16 (uniform data already in the buffer's start is overwritten by the last data set: refill).
  {
    const std::size_t m = std::size_t{1} << 16;
    const std::vector<T> base = test::exact_data<T>(test::exact_dataset::uniform, m, 5);
    check(cudaMemcpy(d, base.data(), m * sizeof(T), cudaMemcpyHostToDevice), "copy");
    auto ex = [&] { cuda::sum<A>(d, m, d_out, ws, ws_bytes, nullptr, sum_method::exact); };
    auto cb = [&] { cub_sum<T>(temp, temp_bytes, d, d_peer, m, nullptr); };
    for (int w = 0; w < 10; ++w) {
      ex();
      cb();
    }
    const float ex_one = 1000.0f * median_ms(51, ex), cb_one = 1000.0f * median_ms(51, cb);
    const float ex_b2b = back_to_back_us(200, ex), cb_b2b = back_to_back_us(200, cb);
    std::printf(
        "%-5s latency n=2^16 uniform: one call exact %.1f us (CUB %.1f us); back to back per call exact %.1f us "
        "(CUB %.1f us)\n",
        tname, ex_one, cb_one, ex_b2b, cb_b2b);
  }
  cudaFree(temp);
  cudaFree(ws);
  cudaFree(d_peer);
  cudaFree(d_out);
  cudaFree(d);
  return ok;
}
// One call each of the binary64 default and variants on 2^log2n terms of the full-range and ill-conditioned data sets,
// for a profiler (ncu -k regex:exact_block): the launches come in the order printed. Results checked.
bool profile(int log2n) {
  using T = double;
  const std::size_t n = std::max(kBase, std::size_t{1} << log2n);
  T* d = nullptr;
  T* d_out = nullptr;
  check(cudaMalloc(&d, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&d_out, sizeof(T)), "cudaMalloc");
  const std::size_t ws_bytes = cuda::sum_workspace_bytes(n);
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  bool ok = true;
  int launch = 0;
  for (test::exact_dataset set :
       {test::exact_dataset::uniform, test::exact_dataset::full_range, test::exact_dataset::ill}) {
    const T expected = fill<T>(d, n, set);
    auto one = [&]<class Tune>(Tune) {
      cuda::detail::launch_exact_sum_tuned<T, T, Tune>(d, n, d_out, ws, nullptr);
      T got;
      check(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost), "copy");
      ok = ok && raw(got) == raw(expected);
      std::printf(
          "profile launch %2d: f64 %-10s n=2^%d %-7s unroll=%d columns=%d atomic=%d windows=%d threads=%d slow=%d "
          "outlined=%d levels=%d steptest=%d  exact==ref %s\n",
          launch++, test::name_of(set), log2n, algorithm_name<Tune>(), Tune::unroll, Tune::columns, int(Tune::atomic),
          Tune::windows, Tune::block_threads, dd::exact_slow_run<Tune>(), int(dd::exact_outline_slow<Tune>()),
          levels_of<Tune>(), step_test_of<Tune>(), raw(got) == raw(expected) ? "yes" : "NO");
    };
    one(dd::exact_default_tuning<T>{});
    std::apply([&]<class... Tune>(Tune... t) { (one(t), ...); }, variants<T>{});
  }
  cudaFree(ws);
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
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  const bool with_variants = argc > 2 && std::string(argv[2]) == "--variants";
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; 1 GiB per data set; median of %d CUDA-event timings per figure\n", prop.name,
              prop.multiProcessorCount, reps);
  bool ok = true;
  ok = run<float, float>("f32", reps, with_variants) && ok;
  ok = run<double, double>("f64", reps, with_variants) && ok;
  ok = run<float, detred::half>("f16", reps, with_variants) && ok;
  ok = run<float, bfloat16>("bf16", reps, with_variants) && ok;
  std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
  return ok ? 0 : 1;
}
