// detred::nccl (docs/DISTRIBUTED.md) on 1 and 2 GPUs (label gpu; skips, saying why, with fewer GPUs). One process
// drives the GPUs, a thread per GPU (tests/nccl/gpu_ranks.hpp). Sums: every rank gets the CPU's detred::sum bits and
// the single-GPU cuda::sum bits of the concatenated array, for several partitions. All-reduce: every element equals
// the CPU's sum of that element's values in rank order, for both methods, several chunk sizes and in place. Errors:
// mismatched or invalid arguments on one rank throw invalid_argument on every rank, which stay in step.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
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
#include "tests/support/device_sum.hpp"

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

// One sum case: the whole array, where each rank's part starts (cut[r]) and the options.
struct sum_case {
  std::string what;
  std::vector<std::size_t> cut;                                                          // gpus + 1 offsets
  std::function<std::uint64_t(nccl::context&, std::size_t begin, std::size_t end)> run;  // raw bits of nccl::sum
  std::uint64_t cpu = 0, one_gpu = 0;
};

template <class A, class T>
void add_sum_cases(std::vector<sum_case>& cases, int gpus, std::shared_ptr<const std::vector<T>> x,
                   const std::string& what) {
  const std::size_t n = x->size();
  std::vector<std::vector<std::size_t>> cuts;
  if (gpus == 1) {
    cuts = {{0, n}};
  } else {
    cuts = {{0, n / 2, n}, {0, std::min(n, n / 3 + 7), n}, {0, 0, n}, {0, n, n}};
  }
  // The launch fields of sum_options go to each rank's cuda::sum of its blocks: speed only, the same bits.
  const cuda::sum_options launch{
      .method = sum_method::tree, .block_threads = 64, .grid_blocks = 3, .tiles_per_chunk = 2};
  for (const cuda::sum_options& options :
       {cuda::sum_options{.method = sum_method::tree}, launch, cuda::sum_options{.method = sum_method::exact}}) {
    const std::uint64_t cpu = raw(sum<A>(x->data(), n, options.method));
    const std::uint64_t one_gpu = raw(test::sum_host_data<A>(std::span<const T>(*x), {.method = options.method}));
    const std::string name = std::string(to_string(options.method)) + (options.block_threads ? " (launch)" : "");
    for (const auto& cut : cuts) {
      sum_case c;
      c.what = what + " " + name + " " + float_traits<A>::name + "<-" + float_traits<T>::name +
               " n=" + std::to_string(n) + " cut at " + std::to_string(cut[1]);
      c.cut = cut;
      c.cpu = cpu;
      c.one_gpu = one_gpu;
      c.run = [x, options](nccl::context& ctx, std::size_t begin, std::size_t end) {
        T* d = upload(x->data() + begin, end - begin);
        const A r = nccl::sum<A>(ctx, d, end - begin, nullptr, options);
        cudaFree(d);
        return raw(r);
      };
      cases.push_back(std::move(c));
    }
  }
}

template <class T>
std::shared_ptr<const std::vector<T>> data(verify::distribution kind, std::size_t n, std::uint64_t seed,
                                           double condition = 1e16) {
  return std::make_shared<const std::vector<T>>(verify::generate<T>({kind, n, seed, condition}));
}

void sums_on(int gpus) {
  using verify::distribution;
  std::vector<sum_case> cases;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{(1 << 20) + 12345}}) {
    add_sum_cases<double, double>(cases, gpus, data<double>(distribution::ill, n, 7 + n), "ill");
    add_sum_cases<float, float>(cases, gpus, data<float>(distribution::ill, n, 8 + n, 1e7), "ill");
    add_sum_cases<double, float>(cases, gpus, data<float>(distribution::cancel, n, 9 + n), "cancel");
    add_sum_cases<float, bfloat16>(cases, gpus, data<bfloat16>(distribution::lognormal, n, 10 + n), "lognormal");
    add_sum_cases<float, detred::half>(cases, gpus, data<detred::half>(distribution::specials, n, 11 + n), "specials");
  }
  std::vector<std::vector<std::uint64_t>> got(cases.size(), std::vector<std::uint64_t>(std::size_t(gpus)));
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    for (std::size_t i = 0; i < cases.size(); ++i)
      got[i][std::size_t(rank)] =
          cases[i].run(ctx, cases[i].cut[std::size_t(rank)], cases[i].cut[std::size_t(rank) + 1]);
  });
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].one_gpu, cases[i].cpu) << cases[i].what << ": single-GPU cuda::sum differs from the CPU";
    for (int r = 0; r < gpus; ++r)
      EXPECT_EQ(got[i][std::size_t(r)], cases[i].cpu) << cases[i].what << " gpus=" << gpus << " rank " << r;
    if (cases[i].cut[1] == cases[i].cut.back() / 2 || gpus == 1)
      std::printf("%d GPU(s) %-44s 0x%llx (CPU 0x%llx, one GPU 0x%llx)\n", gpus, cases[i].what.c_str(),
                  (unsigned long long)got[i][0], (unsigned long long)cases[i].cpu,
                  (unsigned long long)cases[i].one_gpu);
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

// The CPU's element-wise reference: each element summed over ranks in rank order.
template <class T>
T reference(const std::vector<std::vector<T>>& in, std::size_t e, sum_method method) {
  std::vector<T> values;
  for (const auto& v : in) values.push_back(v[e]);
  if (method == sum_method::exact) {
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

struct all_reduce_case {
  std::uint64_t n;
  nccl::all_reduce_options options;
  bool in_place;
  std::string what;
};

template <class T>
void all_reduces_on(int gpus) {
  std::vector<all_reduce_case> cases;
  for (sum_method method : {sum_method::tree, sum_method::exact})
    for (std::uint64_t n :
         {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1001}, std::uint64_t{(1 << 20) + 3}}) {
      const std::string m(to_string(method));
      cases.push_back({n, {.method = method}, false, m + " default"});
      // Many pipeline steps, slices not a power of two.
      cases.push_back({n, {.method = method, .chunk_bytes = 40000}, true, m + " small chunks, in place"});
      if (n <= 1001) cases.push_back({n, {.method = method, .chunk_bytes = 1}, false, m + " one vector a slice"});
    }
  // Inputs per (n, rank); outputs per (case, rank).
  std::map<std::size_t, std::vector<std::vector<T>>> in;
  for (const all_reduce_case& c : cases)
    if (!in.count(c.n)) {
      std::vector<std::vector<T>>& v = in[c.n];
      for (int r = 0; r < gpus; ++r)
        v.push_back(verify::generate<T>(
            {r % 2 ? verify::distribution::ill : verify::distribution::lognormal, c.n, std::uint64_t(100 + r), 1e6}));
      if (c.n > 10) v[0][3] = signed_infinity<T>(false);  // special values come out as IEEE gives them
    }
  std::vector<std::vector<std::vector<T>>> out(cases.size(), std::vector<std::vector<T>>(std::size_t(gpus)));
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const all_reduce_case& c = cases[i];
      const std::vector<T>& mine = in[c.n][std::size_t(rank)];
      T* d_in = upload(mine.data(), c.n);
      T* d_out = c.in_place ? d_in : upload(mine.data(), c.n);
      nccl::all_reduce(ctx, d_in, d_out, c.n, nullptr, c.options);
      std::vector<T>& o = out[i][std::size_t(rank)];
      o.resize(c.n);
      cuda::check(cudaMemcpy(o.data(), d_out, c.n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
      cudaFree(d_in);
      if (!c.in_place) cudaFree(d_out);
    }
  });
  std::map<std::pair<std::uint64_t, sum_method>, std::vector<T>> expected_for;  // computed once per (n, method)
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const all_reduce_case& c = cases[i];
    std::vector<T>& expected_values = expected_for[{c.n, c.options.method}];
    if (expected_values.size() != c.n)
      for (std::size_t e = 0; e < c.n; ++e) expected_values.push_back(reference(in[c.n], e, c.options.method));
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < c.n; ++e) {
      const T expected = expected_values[e];
      for (int r = 0; r < gpus; ++r)
        if (raw(out[i][std::size_t(r)][e]) != raw(expected) && wrong++ < 5)
          ADD_FAILURE() << c.what << " gpus=" << gpus << " n=" << c.n << " element " << e << " rank " << r << ": 0x"
                        << std::hex << raw(out[i][std::size_t(r)][e]) << " expected 0x" << raw(expected);
    }
    EXPECT_EQ(wrong, 0u) << c.what << " n=" << c.n;
  }
  std::printf("%d GPU(s), %s: %zu all-reduce cases, every element equal to the CPU's rank-order sum\n", gpus,
              float_traits<T>::name, cases.size());
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
    // An argument error that one rank alone can see (a method the all-reduce does not have, a null input) throws
    // on every rank, with that rank's message.
    try {
      nccl::all_reduce(ctx, f.ptr, f.ptr, 1000, nullptr, {.method = rank == 0 ? sum_method::kahan : sum_method::tree});
      ADD_FAILURE() << "no error";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0: options.method is sum_method::kahan"), std::string::npos)
          << e.what();
    }
    try {
      (void)nccl::sum(ctx, rank == 1 ? static_cast<const float*>(nullptr) : f.ptr, 1000);
      ADD_FAILURE() << "no error";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1: d_in is null but n_local > 0"), std::string::npos) << e.what();
    }
    // Still in step afterwards.
    EXPECT_EQ(nccl::sum(ctx, f.ptr, 1000), 0.0f);
    nccl::all_reduce(ctx, f.ptr, f.ptr, 1000);
  });
  for (const std::string& s : messages) {
    EXPECT_NE(s.find("rank 0 passes 1000 elements, rank 1 passes 999"), std::string::npos) << s;
    std::printf("mismatched sizes: %s\n", s.c_str());
  }
}

// Without the argument check, a rank's own argument errors still throw (on that rank, before any collective).
TEST(NcclErrors, InvalidOptionsThrowWithoutTheCheck) {
  DETRED_NEED_GPUS(1);
  test::run_on_gpus(1, [&](nccl::context& ctx, int) {
    device_array<float> f(16);
    EXPECT_THROW(nccl::all_reduce(ctx, f.ptr, f.ptr, 16, nullptr,
                                  {.method = sum_method::tree_neumaier, .check_arguments = false}),
                 invalid_argument);
    EXPECT_THROW(nccl::all_reduce(ctx, f.ptr, f.ptr, 16, nullptr, {.chunk_bytes = 0, .check_arguments = false}),
                 invalid_argument);
    EXPECT_THROW((void)nccl::sum(ctx, f.ptr, 16, nullptr, {.method = sum_method::kahan}), invalid_argument);
    EXPECT_THROW((void)nccl::sum(ctx, f.ptr, 16, nullptr, {.block_threads = 33}), invalid_argument);
  });
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
