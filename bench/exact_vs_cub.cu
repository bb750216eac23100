// The exact sum against CUB in the plainest program: nothing but the two calls, interleaved, timed by CUDA events.
// A cross-check of bench_exact's figures (docs/PERFORMANCE.md, "Exact sum"): the same public calls a user makes
// (`detred::cuda::sum` with `sum_method::exact` on a preallocated workspace, `cub::DeviceReduce::Sum` on its own
// preallocated temporary storage), no harness of bench_exact's. Usage: exact_vs_cub [reps] (default 20).
//
// 1 GiB per data set (a 2^24-element block of the tests' generator repeated), for binary32 and binary64: the median of
// `reps` single calls of each, the order of the two alternating from one repetition to the next; every exact result
// compared, bit for bit, with the CPU's exact sum of the same data. Then back to back at 2^16 and 2^20 terms of the
// uniform set: five runs of 100 calls of each between two events, the order alternating (and, for the record, CUB
// with the signed 64-bit count bench_exact passes). CUB gets the narrowest count type that holds n.
#include <cub/device/device_reduce.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "tests/support/exact_inputs.hpp"

namespace {
using detred::sum_method;
namespace test = detred::test;

void check(cudaError_t e, const char* what) { detred::cuda::check(e, what); }

template <class T>
std::uint64_t bits(T x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds `calls` back-to-back calls of f take between two events on the default stream.
template <class F>
double seconds(F&& f, int calls = 1) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int c = 0; c < calls; ++c) f();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return ms * 1e-3;
}

template <class T>
bool compare(const char* type_name, int reps) {
  const std::uint64_t n = (std::uint64_t{1} << 30) / sizeof(T);
  const std::uint64_t block = std::uint64_t{1} << 24;
  T *d_x = nullptr, *d_cub = nullptr, *d_exact = nullptr;
  check(cudaMalloc(&d_x, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&d_cub, sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&d_exact, sizeof(T)), "cudaMalloc");
  std::size_t exact_bytes = 0, cub_bytes = 0;
  const detred::cuda::sum_options exact{.method = sum_method::exact};
  detred::cuda::sum(nullptr, exact_bytes, d_x, d_exact, n, nullptr, exact);
  check(cub::DeviceReduce::Sum(nullptr, cub_bytes, d_x, d_cub, n), "cub::DeviceReduce::Sum (size)");
  void *d_exact_ws = nullptr, *d_cub_ws = nullptr;
  check(cudaMalloc(&d_exact_ws, exact_bytes), "cudaMalloc");
  check(cudaMalloc(&d_cub_ws, cub_bytes), "cudaMalloc");
  auto run_exact = [&](std::uint64_t m) {
    std::size_t b = exact_bytes;
    detred::cuda::sum(d_exact_ws, b, d_x, d_exact, m, nullptr, exact);
  };
  // CUB with the narrowest count that holds m (an int, as in CUB's own examples, below 2^31: its 32-bit offsets),
  // else a 64-bit one.
  auto run_cub = [&](std::uint64_t m) {
    std::size_t b = cub_bytes;
    if (m <= std::uint64_t(INT_MAX))
      check(cub::DeviceReduce::Sum(d_cub_ws, b, d_x, d_cub, int(m)), "cub::DeviceReduce::Sum");
    else
      check(cub::DeviceReduce::Sum(d_cub_ws, b, d_x, d_cub, m), "cub::DeviceReduce::Sum");
  };
  // CUB with a signed 64-bit count (bench_exact's peer, bench/support/bench_support.hpp): timed beside the two in
  // the back-to-back runs, to tell the count type's share of CUB's time a call.
  auto run_cub_int64 = [&](std::uint64_t m) {
    std::size_t b = cub_bytes;
    check(cub::DeviceReduce::Sum(d_cub_ws, b, d_x, d_cub, std::int64_t(m)), "cub::DeviceReduce::Sum");
  };
  bool all_exact = true;
  std::vector<T> host(n);
  for (test::exact_dataset set : test::all_exact_datasets) {
    const std::vector<T> base = test::exact_data<T>(set, block, 7);
    for (std::uint64_t i = 0; i < n; i += block) std::copy(base.begin(), base.end(), host.begin() + i);
    check(cudaMemcpy(d_x, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    const T expected = detred::sum<T>(host.data(), n, sum_method::exact);
    run_exact(n);
    run_cub(n);
    std::vector<double> t_exact, t_cub;
    for (int r = 0; r < reps; ++r) {
      if (r % 2 == 0) {
        t_cub.push_back(seconds([&] { run_cub(n); }));
        t_exact.push_back(seconds([&] { run_exact(n); }));
      } else {
        t_exact.push_back(seconds([&] { run_exact(n); }));
        t_cub.push_back(seconds([&] { run_cub(n); }));
      }
    }
    T got;
    check(cudaMemcpy(&got, d_exact, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    const bool same = bits(got) == bits(expected);
    all_exact = all_exact && same;
    const double gb = double(n * sizeof(T)) / 1e9, cub_s = median(t_cub), exact_s = median(t_exact);
    std::printf("plain %-3s %-10s 1 GiB: CUB %7.1f GB/s, exact %7.1f GB/s, exact/CUB %.3f, exact == CPU exact %s\n",
                type_name, test::name_of(set), gb / cub_s, gb / exact_s, cub_s / exact_s, same ? "yes" : "NO");
  }
  // Back to back, uniform data (the set's block at the buffer's start).
  const std::vector<T> uniform = test::exact_data<T>(test::exact_dataset::uniform, block, 7);
  check(cudaMemcpy(d_x, uniform.data(), block * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  for (int log2m : {16, 20}) {
    const std::uint64_t m = std::uint64_t{1} << log2m;
    const T expected = detred::sum<T>(uniform.data(), m, sum_method::exact);
    for (int c = 0; c < 10; ++c) run_exact(m), run_cub(m), run_cub_int64(m);
    for (int run = 0; run < 5; ++run) {
      double exact_s, cub_s, cub64_s;
      if (run % 2 == 0) {
        cub_s = seconds([&] { run_cub(m); }, 100);
        exact_s = seconds([&] { run_exact(m); }, 100);
        cub64_s = seconds([&] { run_cub_int64(m); }, 100);
      } else {
        cub64_s = seconds([&] { run_cub_int64(m); }, 100);
        exact_s = seconds([&] { run_exact(m); }, 100);
        cub_s = seconds([&] { run_cub(m); }, 100);
      }
      T got;
      check(cudaMemcpy(&got, d_exact, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
      const bool same = bits(got) == bits(expected);
      all_exact = all_exact && same;
      std::printf(
          "plain %-3s back to back n=2^%d run %d: exact %.2f us a call, CUB %.2f us, exact/CUB time %.3f %s, "
          "exact == CPU exact %s; CUB with a 64-bit count %.2f us\n",
          type_name, log2m, run, exact_s / 100 * 1e6, cub_s / 100 * 1e6, exact_s / cub_s,
          exact_s <= cub_s ? "<= CUB" : "ABOVE CUB", same ? "yes" : "NO", cub64_s / 100 * 1e6);
    }
  }
  for (void* p :
       {static_cast<void*>(d_x), static_cast<void*>(d_cub), static_cast<void*>(d_exact), d_exact_ws, d_cub_ws})
    check(cudaFree(p), "cudaFree");
  return all_exact;
}
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; exact_vs_cub, median of %d interleaved single calls a figure\n", prop.name,
              prop.multiProcessorCount, reps);
  bool ok = compare<float>("f32", reps);
  ok = compare<double>("f64", reps) && ok;
  std::printf("%s\n", ok ? "all exact results equal the CPU's exact sum" : "SOME EXACT RESULT DIFFERS");
  return ok ? 0 : 1;
}
