// detred::nccl (docs/DISTRIBUTED.md) on 1 and 2 GPUs (label gpu; skips, saying why, with fewer GPUs). One process
// drives the GPUs, a thread per GPU (tests/nccl/gpu_ranks.hpp). Sums: every rank gets the CPU's detred::sum bits and
// the single-GPU cuda::sum bits of the concatenated array, for several partitions. All-reduce: every element equals
// the CPU's reduce of that element's values in rank order, for every chunk size, exchange and algorithm.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/nccl.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/generators.hpp"
#include "tests/nccl/gpu_ranks.hpp"
#include "tests/support/device_array.hpp"

namespace {
using namespace detred;
using test::device_array;

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

#define DETRED_NEED_GPUS(k)                                                 \
  if (test::gpu_count() < (k))                                              \
  GTEST_SKIP() << "needs " << (k) << " GPU(s), found " << test::gpu_count() \
               << ": detred's NCCL tests run on the GPU machine (ctest -L gpu)"

template <class T>
T* upload(const T* host, std::size_t n) {
  T* d = nullptr;
  cuda::check(cudaMalloc(&d, (n ? n : 1) * sizeof(T)), "cudaMalloc");
  if (n) cuda::check(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

template <class A, class T>
void expect_sum_on(int gpus, const std::vector<T>& x, const std::string& what) {
  for (sum_method method : {sum_method::tree, sum_method::exact}) {
    const A cpu = sum<A>(x.data(), x.size(), method);
    const A one_gpu = cuda::sum_host_data<A>(std::span<const T>(x), method);
    ASSERT_EQ(raw(one_gpu), raw(cpu)) << what << ": single-GPU cuda::sum differs from the CPU";
    const std::size_t n = x.size();
    const std::vector<std::vector<std::size_t>> cuts = {
        {0, n / 2, n}, {0, n / 3 + 7 > n ? n : n / 3 + 7, n}, {0, 0, n}, {0, n, n}};
    for (const auto& cut : cuts) {
      std::mutex m;
      std::vector<A> got(static_cast<std::size_t>(gpus));
      test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
        const std::size_t begin = gpus == 1 ? 0 : cut[std::size_t(rank)];
        const std::size_t end = gpus == 1 ? n : cut[std::size_t(rank) + 1];
        T* d = upload(x.data() + begin, end - begin);
        const A r = nccl::sum<A>(ctx, d, end - begin, nullptr, method);
        cudaFree(d);
        std::lock_guard<std::mutex> lock(m);
        got[std::size_t(rank)] = r;
      });
      for (int r = 0; r < gpus; ++r)
        EXPECT_EQ(raw(got[std::size_t(r)]), raw(cpu))
            << what << " " << to_string(method) << " " << float_traits<A>::name << "<-" << float_traits<T>::name
            << " n=" << n << " gpus=" << gpus << " rank " << r << " cut at " << cut[1];
      if (gpus == 1) break;
    }
    std::printf("%d GPU(s) %-7s %-6s %s<-%s n=%zu: 0x%llx (CPU 0x%llx, one GPU 0x%llx)\n", gpus, what.c_str(),
                std::string(to_string(method)).c_str(), float_traits<A>::name, float_traits<T>::name, n,
                (unsigned long long)raw(cpu), (unsigned long long)raw(cpu), (unsigned long long)raw(one_gpu));
  }
}

void sums_on(int gpus) {
  using verify::distribution;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{(1 << 20) + 12345}}) {
    expect_sum_on<double, double>(gpus, verify::generate<double>({distribution::ill, n, 7 + n, 1e16}), "ill");
    expect_sum_on<float, float>(gpus, verify::generate<float>({distribution::ill, n, 8 + n, 1e7}), "ill");
    expect_sum_on<double, float>(gpus, verify::generate<float>({distribution::cancel, n, 9 + n}), "cancel");
    expect_sum_on<float, bfloat16>(gpus, verify::generate<bfloat16>({distribution::lognormal, n, 10 + n}), "lognorm");
    expect_sum_on<float, detred::half>(gpus, verify::generate<detred::half>({distribution::specials, n, 11 + n}),
                                       "specials");
  }
}

TEST(NcclSum, OneGpuGivesTheCpuBits) {
  DETRED_NEED_GPUS(1);
  sums_on(1);
}
TEST(NcclSum, TwoGpusGiveTheCpuBitsForEveryPartition) {
  DETRED_NEED_GPUS(2);
  sums_on(2);
}

// The CPU's element-wise reference: each element reduced over ranks in rank order.
template <class T>
T reference(const std::vector<std::vector<T>>& in, std::size_t e, nccl::all_reduce_mode mode) {
  std::vector<T> values;
  for (const auto& v : in) values.push_back(v[e]);
  if (mode == nccl::all_reduce_mode::exact) {
    exact_accumulator<float> acc;
    acc.add(values.data(), values.size());
    return acc.rounded<T>();
  }
  const float s = sum<float>(values.data(), values.size(), sum_method::tree);
  if constexpr (std::is_same_v<T, bfloat16>)
    return canonicalize_nan(bfloat16::from_float(s));
  else
    return s;
}

template <class T>
void all_reduce_on(int gpus, std::size_t n, nccl::all_reduce_mode mode, nccl::all_reduce_options options, bool in_place,
                   const std::string& what) {
  std::vector<std::vector<T>> in;
  for (int r = 0; r < gpus; ++r)
    in.push_back(verify::generate<T>(
        {r % 2 ? verify::distribution::ill : verify::distribution::lognormal, n, std::uint64_t(100 + r), 1e6}));
  if (n > 10) in[0][3] = signed_infinity<T>(false);  // special values survive as IEEE gives them
  std::vector<std::vector<T>> out(static_cast<std::size_t>(gpus), std::vector<T>(n));
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    T* d_in = upload(in[std::size_t(rank)].data(), n);
    T* d_out = in_place ? d_in : upload(in[std::size_t(rank)].data(), n);
    nccl::all_reduce(ctx, d_in, d_out, n, nullptr, mode, options);
    cuda::check(cudaMemcpy(out[std::size_t(rank)].data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(d_in);
    if (!in_place) cudaFree(d_out);
  });
  std::size_t wrong = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const T expected = reference(in, e, mode);
    for (int r = 0; r < gpus; ++r)
      if (raw(out[std::size_t(r)][e]) != raw(expected) && wrong++ < 5)
        ADD_FAILURE() << what << " gpus=" << gpus << " n=" << n << " element " << e << " rank " << r << ": 0x"
                      << std::hex << raw(out[std::size_t(r)][e]) << " expected 0x" << raw(expected);
  }
  EXPECT_EQ(wrong, 0u) << what;
}

template <class T>
void all_reduces_on(int gpus) {
  using nccl::all_reduce_algorithm;
  using nccl::all_reduce_exchange;
  using nccl::all_reduce_mode;
  for (all_reduce_mode mode : {all_reduce_mode::canonical, all_reduce_mode::exact})
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1001}, std::size_t{(1 << 20) + 3}}) {
      const std::string m = mode == all_reduce_mode::exact ? "exact" : "canonical";
      all_reduce_on<T>(gpus, n, mode, {}, false, m + " default");
      nccl::all_reduce_options small_chunks;
      small_chunks.chunk_bytes = 40000;  // many pipeline steps, slices not a power of two
      all_reduce_on<T>(gpus, n, mode, small_chunks, true, m + " small chunks, in place");
      nccl::all_reduce_options naive;
      naive.algorithm = all_reduce_algorithm::naive_all_gather;
      all_reduce_on<T>(gpus, n, mode, naive, false, m + " naive all-gather");
      if (gpus == 2) {
        nccl::all_reduce_options by_all_gather = small_chunks;
        by_all_gather.exchange = all_reduce_exchange::all_gather;
        all_reduce_on<T>(gpus, n, mode, by_all_gather, false, m + " exchange by all-gather");
      }
    }
}

TEST(NcclAllReduce, OneGpuFloatAndBfloat16) {
  DETRED_NEED_GPUS(1);
  all_reduces_on<float>(1);
  all_reduces_on<bfloat16>(1);
}
TEST(NcclAllReduce, TwoGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(2);
  all_reduces_on<float>(2);
  all_reduces_on<bfloat16>(2);
  std::printf("2 GPUs: every element of every all-reduce equals the CPU's rank-order reduce\n");
}

// Mismatched arguments: every rank throws the same invalid_argument; nothing hangs.
TEST(NcclErrors, MismatchedSizesOrTypesThrowOnEveryRank) {
  DETRED_NEED_GPUS(2);
  std::vector<std::string> messages(2);
  std::mutex m;
  test::run_on_gpus(2, [&](nccl::context& ctx, int rank) {
    device_array<float> f(1000);
    device_array<double> d(1000);
    cuda::check(cudaMemset(f.ptr, 0, 4000), "cudaMemset");
    cuda::check(cudaMemset(d.ptr, 0, 8000), "cudaMemset");
    try {
      nccl::all_reduce(ctx, f.ptr, f.ptr, rank == 0 ? 1000 : 999);
      ADD_FAILURE() << "no error";
    } catch (const invalid_argument& e) {
      std::lock_guard<std::mutex> lock(m);
      messages[std::size_t(rank)] = e.what();
    }
    try {
      if (rank == 0)
        (void)nccl::sum(ctx, f.ptr, 1000);
      else
        (void)nccl::sum(ctx, d.ptr, 1000);
      ADD_FAILURE() << "no error";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0 passes float data"), std::string::npos) << e.what();
    }
    // Still in step afterwards.
    EXPECT_EQ(nccl::sum(ctx, f.ptr, 1000), 0.0f);
  });
  for (const std::string& s : messages) {
    EXPECT_NE(s.find("rank 0 passes 1000 elements, rank 1 passes 999"), std::string::npos) << s;
    std::printf("mismatched sizes: %s\n", s.c_str());
  }
}

TEST(NcclErrors, NcclFailuresCarryNcclsMessage) {
  try {
    nccl::context ctx(nullptr);
    FAIL() << "no error";
  } catch (const nccl::nccl_error& e) {
    EXPECT_NE(std::string(e.what()).find("detred::nccl: ncclCommCount: "), std::string::npos) << e.what();
    std::printf("a null communicator gives: %s\n", e.what());
  }
}

}  // namespace
