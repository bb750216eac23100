// detred::baselines on the GPU (baselines/include/detred/baselines/gpu.hpp): every ladder variant and atomic baseline
// for fp32, fp64 and fp16 -> fp32, checked against what variants.hpp states in detred's words:
// - every variant's result is within gamma_{n-1} S of the exact sum, and the empty sum is -0.0;
// - run_to_run variants give the same bits twice in one configuration, and more than one result over several
//   configurations on order-sensitive data (the guarantee really is no stronger);
// - the gpu_to_gpu variant (one_kernel_per_level) gives one result over every configuration;
// - not_guaranteed atomics give more than one distinct result over 30 runs of the same input (the count is printed).
// Label gpu: every test skips, saying why, without a device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "detred/baselines/gpu.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"
#include "tests/baselines/baselines_data.hpp"

namespace {
using namespace detred;

#define DETRED_SKIP_WITHOUT_GPU() \
  if (cuda::device_count() == 0)  \
  GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)"

template <class A>
std::uint64_t bits(A a) {
  if constexpr (sizeof(A) == 4)
    return std::bit_cast<std::uint32_t>(a);
  else
    return std::bit_cast<std::uint64_t>(a);
}

// The input, the result slot and a ladder workspace on the device.
template <class A, class T>
struct device_case {
  std::vector<T> host;
  T* in = nullptr;
  A* out = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  explicit device_case(std::vector<T> xs) : host(std::move(xs)) {
    cuda::check(cudaMalloc(reinterpret_cast<void**>(&in), host.size() * sizeof(T) + 16), "cudaMalloc");
    if (!host.empty())
      cuda::check(cudaMemcpy(in, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda::check(cudaMalloc(reinterpret_cast<void**>(&out), sizeof(A)), "cudaMalloc");
    workspace_bytes = baselines::ladder_workspace_bytes(host.size());
    cuda::check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc");
  }
  ~device_case() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(workspace);
  }
  A result() const {
    A r{};
    cuda::check(cudaMemcpy(&r, out, sizeof(A), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return r;
  }
  A ladder(baselines::ladder_variant v, baselines::gpu_launch launch = {}) {
    baselines::ladder_sum<A, T>(v, in, host.size(), out, workspace, workspace_bytes, nullptr, launch);
    return result();
  }
  A atomic(baselines::atomic_variant v, baselines::gpu_launch launch = {}) {
    baselines::atomic_sum<A, T>(v, in, host.size(), out, nullptr, launch);
    return result();
  }
};

template <class A, class T, class Run>
void expect_within_bound(const std::vector<T>& xs, A r, const std::string& what) {
  const std::span<const T> span(xs);
  const auto s = verify::exact_sum_of(span);
  const auto S = verify::exact_sum_of_magnitudes(span);
  const double bound = verify::error_bound<A>(sum_method::sequential, s, S);
  EXPECT_LE(verify::measure_error<A>(s, r).absolute, bound) << what << " n=" << xs.size();
}

// DETRED_GPU_TEST_QUICK=1 (under compute-sanitizer) keeps the sizes small: 2^17 + 1 for the ladder, 2^18 for the
// atomics, whose distinct-result count is then printed but not asserted (the sanitizer serialises much of the work).
bool quick() { return std::getenv("DETRED_GPU_TEST_QUICK") != nullptr; }
std::size_t large_n() { return quick() ? (std::size_t{1} << 17) + 1 : (std::size_t{1} << 20) + 123; }

const std::vector<baselines::gpu_launch> configurations = {{256, 0}, {128, 0},   {1024, 0},
                                                           {64, 0},  {512, 100}, {256, 37}};

template <class A, class T>
void check_ladder() {
  for (auto v : baselines::all_ladder_variants) {
    const auto f = baselines::facts(v);
    const std::string name(f.name);
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{1000}, large_n()}) {
      device_case<A, T> c(test::order_sensitive<T>(n));
      const A r = c.ladder(v);
      if (n == 0) {
        EXPECT_EQ(bits(r), bits(A(-0.0))) << name << ": the empty sum is -0.0";
        continue;
      }
      expect_within_bound<A, T, void>(c.host, r, name);
      EXPECT_EQ(bits(c.ladder(v)), bits(r)) << name << ": same configuration, same bits (run_to_run)";
    }
    device_case<A, T> c(test::order_sensitive<T>(large_n()));
    std::set<std::uint64_t> distinct;
    for (const auto& launch : configurations) {
      const A r = c.ladder(v, launch);
      distinct.insert(bits(r));
      expect_within_bound<A, T, void>(c.host, r, name + " block=" + std::to_string(launch.block_threads));
    }
    if (f.guarantee == determinism::gpu_to_gpu)
      EXPECT_EQ(distinct.size(), 1u) << name << " promises gpu_to_gpu: one result over every configuration";
    else
      EXPECT_GT(distinct.size(), 1u) << name << " is run_to_run only: its bits follow the configuration";
    std::printf("%-22s %zu distinct results over %zu configurations\n", name.c_str(), distinct.size(),
                configurations.size());
  }
  cuda::check(cudaDeviceSynchronize(), "sync");
}

TEST(Ladder, Float) {
  DETRED_SKIP_WITHOUT_GPU();
  check_ladder<float, float>();
}
TEST(Ladder, Double) {
  DETRED_SKIP_WITHOUT_GPU();
  check_ladder<double, double>();
}
TEST(Ladder, HalfIntoFloat) {
  DETRED_SKIP_WITHOUT_GPU();
  check_ladder<float, half>();
}
TEST(Ladder, Bfloat16IntoFloat) {
  DETRED_SKIP_WITHOUT_GPU();
  check_ladder<float, bfloat16>();
}

template <class A, class T>
void check_atomics() {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
    device_case<A, T> c(test::order_sensitive<T>(n));
    for (auto v : baselines::all_atomic_variants) {
      const A r = c.atomic(v);
      if (n == 0)
        EXPECT_EQ(bits(r), bits(A(-0.0)));
      else
        expect_within_bound<A, T, void>(c.host, r, std::string(baselines::facts(v).name));
    }
  }
  device_case<A, T> c(test::order_sensitive<T>(std::size_t{1} << (quick() ? 18 : 22)));
  for (auto v : baselines::all_atomic_variants) {
    std::set<std::uint64_t> distinct;
    for (int run = 0; run < 30; ++run) distinct.insert(bits(c.atomic(v)));
    expect_within_bound<A, T, void>(c.host, c.atomic(v), std::string(baselines::facts(v).name));
    // not_guaranteed is real: repeated runs on the same input differ.
    if (!quick()) EXPECT_GT(distinct.size(), 1u) << "atomic_" << baselines::facts(v).name;
    std::printf("atomic_%-8s %zu distinct results over 30 runs (n = 2^%d, %s)\n", baselines::facts(v).name.data(),
                distinct.size(), quick() ? 18 : 22, sizeof(A) == 4 ? "fp32" : "fp64");
  }
}

TEST(Atomic, Float) {
  DETRED_SKIP_WITHOUT_GPU();
  check_atomics<float, float>();
}
TEST(Atomic, Double) {
  DETRED_SKIP_WITHOUT_GPU();
  check_atomics<double, double>();
}

}  // namespace
