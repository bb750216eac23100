// The baselines (baselines/: the classic ladder, the atomics) beside detred's canonical sum and CUB, in one program:
// docs/PERFORMANCE.md's baseline table and the small-sum latency bars.
//
// Table: every ladder variant, every atomic baseline, detred::cuda::sum (tree) and cub::DeviceReduce::Sum (two-phase,
// workspace preallocated), fp32 and fp64, at n = 1,000, 10^6 and 1 GiB of input; inputs U[-1, 1) x 2^[-20, 20]. Each
// row: median of 30 single calls, each timed alone between two CUDA events after 2 untimed warm-up calls; GB/s of
// input bytes; the ratio to CUB's time; the distinct bit patterns of the 30 results.
// Bars: canonical sum and CUB at n = 2^16 and 2^20, fp32 and fp64, both ways: "single" (one call between two events,
// median of 30) and "back-to-back" (100 calls between two events, per call, median of 15); and 1 GiB (median of 30).
// The read ceiling (a vectorised read of the same 1 GiB) is measured in the same run.
//   usage: baselines_bench [table|bars|all]   (default all)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "detred/baselines/gpu.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"

namespace {
using detred::cuda::check;
constexpr std::size_t kBytes = std::size_t{1} << 30;

template <class T>
__global__ void fill_uniform(T* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    // U[-1, 1) times 2^e, e in [-20, 20]: sums round in fp32 and fp64 alike (uniform 24-bit values would sum
    // exactly in fp64, hiding every order effect).
    const int e = int((h >> 8) % 41) - 20;
    x[i] = T(ldexpf(float(h >> 40) * 0x1p-23f - 1.0f, e));
  }
}

__global__ void read_ceiling(const float4* x, std::size_t n4, float* out) {
  float s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1.2345f) *out = s;  // keeps the loads
}

struct timer {
  cudaEvent_t a, b;
  timer() {
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
  }
  // Median seconds of `reps` timings of `calls` back-to-back calls each, per call.
  double median(const std::function<void()>& f, int reps, int calls, const std::function<void()>& after = {}) {
    f();
    f();
    check(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      check(cudaEventRecord(a), "record");
      for (int c = 0; c < calls; ++c) f();
      check(cudaEventRecord(b), "record");
      check(cudaEventSynchronize(b), "sync");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, a, b), "elapsed");
      t.push_back(double(ms) / 1e3 / calls);
      if (after) after();
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

template <class T>
struct setup {
  T* in = nullptr;
  T* out = nullptr;
  void* ws = nullptr;
  std::size_t ws_bytes = 0;
  void* cub_ws = nullptr;
  std::size_t cub_bytes = 0;
  setup() {
    const std::size_t n = kBytes / sizeof(T);
    check(cudaMalloc(&in, kBytes), "cudaMalloc");
    check(cudaMalloc(&out, sizeof(T)), "cudaMalloc");
    fill_uniform<T><<<1024, 256>>>(in, n);
    ws_bytes = std::max(detred::baselines::ladder_workspace_bytes(n), detred::cuda::sum_workspace_bytes(n));
    check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
    check(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out, std::int64_t(n)), "cub size");
    check(cudaMalloc(&cub_ws, cub_bytes), "cudaMalloc");
    check(cudaDeviceSynchronize(), "setup");
  }
  ~setup() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(ws);
    cudaFree(cub_ws);
  }
  std::uint64_t result_bits() const {
    T r{};
    check(cudaMemcpy(&r, out, sizeof(T), cudaMemcpyDeviceToHost), "download");
    std::uint64_t b = 0;
    std::memcpy(&b, &r, sizeof(T));
    return b;
  }
  std::function<void()> canonical(std::uint64_t n) {
    return [this, n] { detred::cuda::sum(in, n, out, ws, ws_bytes, nullptr); };
  }
  std::function<void()> cub_sum(std::uint64_t n) {
    return [this, n] {
      std::size_t bytes = cub_bytes;
      check(cub::DeviceReduce::Sum(cub_ws, bytes, in, out, std::int64_t(n)), "cub");
    };
  }
};

const char* type_name(std::size_t size) { return size == 4 ? "f32" : "f64"; }

template <class T>
void table(timer& tm) {
  setup<T> s;
  for (std::uint64_t n : {std::uint64_t{1000}, std::uint64_t{1000000}, std::uint64_t(kBytes / sizeof(T))}) {
    const double bytes = double(n) * sizeof(T);
    struct row {
      std::string name, guarantee;
      std::function<void()> f;
    };
    std::vector<row> rows = {{"cub::DeviceReduce::Sum", "run_to_run", s.cub_sum(n)},
                             {"detred::cuda::sum (tree)", "cpu_gpu", s.canonical(n)}};
    for (auto v : detred::baselines::all_ladder_variants)
      rows.push_back({"ladder/" + std::string(detred::baselines::facts(v).name),
                      std::string(to_string(detred::baselines::facts(v).guarantee)), [&s, v, n] {
                        detred::baselines::ladder_sum<T, T>(v, s.in, n, s.out, s.ws, s.ws_bytes, nullptr);
                      }});
    for (auto v : detred::baselines::all_atomic_variants)
      rows.push_back({"atomic_" + std::string(detred::baselines::facts(v).name), "not_guaranteed",
                      [&s, v, n] { detred::baselines::atomic_sum<T, T>(v, s.in, n, s.out, nullptr); }});
    double cub_time = 0;
    for (const auto& r : rows) {
      std::set<std::uint64_t> distinct;
      const double t = tm.median(r.f, 30, 1, [&] { distinct.insert(s.result_bits()); });
      if (r.name.rfind("cub", 0) == 0) cub_time = t;
      std::printf("| %s | %llu | %s | %s | %.1f | %.0f | %s | %zu/30 |\n", type_name(sizeof(T)), (unsigned long long)n,
                  r.name.c_str(), r.guarantee.c_str(), t * 1e6, bytes / t / 1e9,
                  cub_time > 0 ? (std::to_string(cub_time / t).substr(0, 5)).c_str() : "-", distinct.size());
      std::fflush(stdout);
    }
  }
}

// The canonical sum both ways: the single pass (default) and the two-kernel path (DETRED_CUDA_SUM_TWO_PASS=1).
template <class T>
void bars(timer& tm, double ceiling) {
  setup<T> s;
  const std::uint64_t big = kBytes / sizeof(T);
  for (std::uint64_t n : {std::uint64_t{1} << 16, std::uint64_t{1} << 20, big}) {
    const bool large = n == big;
    const int reps = large ? 30 : 15, calls = large ? 1 : 100;
    const double u100 = tm.median(s.cub_sum(n), reps, calls);
    const double c100 = tm.median(s.canonical(n), reps, calls);
    setenv("DETRED_CUDA_SUM_TWO_PASS", "1", 1);
    const double t100 = tm.median(s.canonical(n), reps, calls);
    unsetenv("DETRED_CUDA_SUM_TWO_PASS");
    const std::uint64_t single_pass_bits = (s.canonical(n)(), check(cudaDeviceSynchronize(), "s"), s.result_bits());
    setenv("DETRED_CUDA_SUM_TWO_PASS", "1", 1);
    const std::uint64_t two_pass_bits = (s.canonical(n)(), check(cudaDeviceSynchronize(), "s"), s.result_bits());
    unsetenv("DETRED_CUDA_SUM_TWO_PASS");
    if (large) {
      std::printf(
          "bar %s 1 GiB (single call, median of 30): CUB %.0f GB/s; detred single pass %.0f GB/s (%.4fx CUB, "
          "%.3f of the read ceiling); two-pass %.0f GB/s (%.4fx); same bits both ways: %s\n",
          type_name(sizeof(T)), kBytes / u100 / 1e9, kBytes / c100 / 1e9, u100 / c100, kBytes / c100 / 1e9 / ceiling,
          kBytes / t100 / 1e9, u100 / t100, single_pass_bits == two_pass_bits ? "yes" : "NO");
    } else {
      const double u1 = tm.median(s.cub_sum(n), 30, 1), c1 = tm.median(s.canonical(n), 30, 1);
      std::printf(
          "bar %s n=2^%d back-to-back (100 calls between 2 events, per call, median of 15): CUB %.2f us, "
          "detred single pass %.2f us (%.3fx CUB's time), two-pass %.2f us | single call (median of 30): CUB "
          "%.2f us, detred %.2f us | same bits: %s\n",
          type_name(sizeof(T)), n == (1u << 16) ? 16 : 20, u100 * 1e6, c100 * 1e6, c100 / u100, t100 * 1e6, u1 * 1e6,
          c1 * 1e6, single_pass_bits == two_pass_bits ? "yes" : "NO");
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "properties");
  timer tm;
  float* buf = nullptr;
  check(cudaMalloc(&buf, kBytes + 4), "cudaMalloc");
  fill_uniform<float><<<1024, 256>>>(buf, kBytes / 4);
  const double tr = tm.median(
      [&] {
        read_ceiling<<<p.multiProcessorCount * 8, 256>>>(reinterpret_cast<const float4*>(buf), kBytes / 16,
                                                         buf + kBytes / 4);
      },
      30, 1);
  cudaFree(buf);
  const double ceiling = kBytes / tr / 1e9;
  std::printf("device: %s (%d SMs); read ceiling %.0f GB/s\n", p.name, p.multiProcessorCount, ceiling);
  if (mode == "bars" || mode == "all") {
    bars<float>(tm, ceiling);
    bars<double>(tm, ceiling);
  }
  if (mode == "table" || mode == "all") {
    std::printf("| type | n | algorithm | guarantee | median us (single call) | GB/s | CUB time / time | distinct |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    table<float>(tm);
    table<double>(tm);
  }
  return 0;
}
