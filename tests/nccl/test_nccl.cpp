// detred::nccl (docs/DISTRIBUTED.md) on 1, 2, 3 and 4 GPUs (label gpu; each test skips, saying why, where fewer GPUs
// are visible: run the program under CUDA_VISIBLE_DEVICES subsets for each count). One process
// drives the GPUs, a thread per GPU (tests/nccl/gpu_ranks.hpp). Sums: every rank gets the CPU's detred::sum bits and
// the single-GPU cuda::sum bits of the concatenated array, for several partitions. All-reduce: every element equals
// the CPU's sum of that element's values in rank order, for both methods, several chunk sizes and in place. Errors:
// mismatched or invalid arguments on one rank throw invalid_argument on every rank, which stay in step.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  } else if (gpus == 2) {
    cuts = {{0, n / 2, n}, {0, std::min(n, n / 3 + 7), n}, {0, 0, n}, {0, n, n}};
  } else {
    // Even parts (the first cut, printed), uneven ones, empty ranks at either end and in the middle.
    std::vector<std::size_t> even, uneven, empty_first, all_last;
    for (int r = 0; r <= gpus; ++r) {
      even.push_back(n * std::size_t(r) / std::size_t(gpus));
      uneven.push_back(std::min(n, std::size_t(r) * std::size_t(r) * (n / std::size_t(gpus * gpus) + 3)));
      empty_first.push_back(r == 0 ? 0 : n * std::size_t(r - 1) / std::size_t(gpus - 1));
      all_last.push_back(r == gpus ? n : 0);
    }
    uneven.back() = n;
    cuts = {even, uneven, empty_first, all_last};
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
    if (cases[i].cut[1] == cases[i].cut.back() / std::size_t(gpus))
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
TEST(NcclSum, ThreeGpusGiveTheCpuBitsForEveryPartition) {
  DETRED_NEED_GPUS(3);
  sums_on(3);
}
TEST(NcclSum, FourGpusGiveTheCpuBitsForEveryPartition) {
  DETRED_NEED_GPUS(4);
  sums_on(4);
}

// The same ill-conditioned array summed on 1 .. G GPUs (G: the GPUs present, at least 2): each rank's part summed
// with cuda::sum and the partial sums combined by a plain ncclAllReduce give bits that depend on the GPU count;
// nccl::sum gives the CPU's bits on every count. The plain bits are printed (they differ where NCCL's order and the
// partition change the rounding); detred's are asserted.
TEST(NcclSum, PlainNcclAllReduceDependsOnTheGpuCountDetredDoesNot) {
  DETRED_NEED_GPUS(2);
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const std::vector<float> x = verify::generate<float>({verify::distribution::ill, n, 77, 1e7});
  const std::uint64_t cpu = raw(sum<float>(x.data(), n, sum_method::tree));
  std::vector<std::uint64_t> plain, ours;
  for (int gpus = 1; gpus <= std::min(test::gpu_count(), 4); ++gpus) {
    std::vector<std::uint64_t> p(static_cast<std::size_t>(gpus)), d(static_cast<std::size_t>(gpus));
    test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
      const std::size_t b = n * std::size_t(rank) / std::size_t(gpus),
                        e = n * std::size_t(rank + 1) / std::size_t(gpus);
      float* part = upload(x.data() + b, e - b);
      float* partial = nullptr;
      cuda::check(cudaMalloc(&partial, sizeof(float)), "cudaMalloc");
      std::size_t wb = 0;
      cuda::sum(nullptr, wb, part, partial, e - b);
      void* w = nullptr;
      cuda::check(cudaMalloc(&w, wb), "cudaMalloc");
      cuda::sum(w, wb, part, partial, e - b);
      nccl::check(ncclAllReduce(partial, partial, 1, ncclFloat32, ncclSum, ctx.comm(), nullptr), "ncclAllReduce");
      p[std::size_t(rank)] = raw(cuda::to_host(partial));
      d[std::size_t(rank)] = raw(nccl::sum(ctx, part, e - b));
      cudaFree(w);
      cudaFree(partial);
      cudaFree(part);
    });
    plain.push_back(p[0]);
    ours.push_back(d[0]);
    for (int r = 0; r < gpus; ++r) EXPECT_EQ(d[std::size_t(r)], cpu) << gpus << " GPUs, rank " << r;
    std::printf("%d GPU(s): cuda::sum parts + plain ncclAllReduce 0x%08llx, nccl::sum 0x%08llx (CPU 0x%08llx)\n", gpus,
                (unsigned long long)p[0], (unsigned long long)d[0], (unsigned long long)cpu);
  }
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < plain.size(); ++i)
    distinct += std::count(plain.begin(), plain.begin() + i, plain[i]) == 0;
  std::printf("plain ncclAllReduce: %zu distinct results over 1 .. %zu GPUs; nccl::sum: one\n", distinct, plain.size());
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
  if constexpr (std::is_same_v<T, float>)
    return s;
  else
    return canonicalize_nan(T::from_float(s));
}

struct all_reduce_case {
  std::uint64_t n;
  nccl::all_reduce_options options;
  bool in_place;
  std::string what;
  bool offset = false;  // buffers one element past a 16-byte boundary: the element-wise kernels
};

// The transports and data flows every all-reduce case runs with: the same bits from each.
const std::vector<std::pair<std::string, nccl::all_reduce_options>>& transports() {
  static const std::vector<std::pair<std::string, nccl::all_reduce_options>> t = {
      {"auto", {}},
      {"nccl calls", {.transport = nccl::transport::nccl_calls}},
      {"one-shot", {.transport = nccl::transport::peer_memory, .algorithm = nccl::peer_algorithm::one_shot}},
      {"two-shot", {.transport = nccl::transport::peer_memory, .algorithm = nccl::peer_algorithm::two_shot}},
      {"two-shot 3 blocks",
       {.transport = nccl::transport::peer_memory, .algorithm = nccl::peer_algorithm::two_shot, .blocks = 3}},
  };
  return t;
}

template <class T>
void all_reduces_on(int gpus) {
  std::vector<all_reduce_case> cases;
  for (const auto& [name, base] : transports())
    for (sum_method method : {sum_method::tree, sum_method::exact})
      for (std::uint64_t n :
           {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1001}, std::uint64_t{(1 << 20) + 3}}) {
        if (method == sum_method::exact && n > 1001 && name != "auto") continue;
        const std::string m = std::string(to_string(method)) + " " + name;
        nccl::all_reduce_options o = base;
        o.method = method;
        cases.push_back({n, o, false, m + " default"});
        // Many pipeline steps (rounds), slices not a power of two.
        o.chunk_bytes = 40000;
        cases.push_back({n, o, true, m + " small chunks, in place"});
        o.chunk_bytes = 1;
        if (n <= 1001) cases.push_back({n, o, false, m + " one vector a slice"});
        o.chunk_bytes = 100000;
        cases.push_back({n, o, false, m + " misaligned", true});
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
      std::vector<T> padded(c.n + 1);
      std::copy(mine.begin(), mine.end(), padded.begin() + (c.offset ? 1 : 0));
      T* a_in = upload(padded.data(), c.n + 1);
      T* a_out = c.in_place ? a_in : upload(padded.data(), c.n + 1);
      T* d_in = a_in + (c.offset ? 1 : 0);
      T* d_out = a_out + (c.offset ? 1 : 0);
      nccl::all_reduce(ctx, d_in, d_out, c.n, nullptr, c.options);
      std::vector<T>& o = out[i][std::size_t(rank)];
      o.resize(c.n);
      cuda::check(cudaMemcpy(o.data(), d_out, c.n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
      cudaFree(a_in);
      if (!c.in_place) cudaFree(a_out);
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

TEST(NcclAllReduce, OneGpuFloatBfloat16AndHalf) {
  DETRED_NEED_GPUS(1);
  all_reduces_on<float>(1);
  all_reduces_on<bfloat16>(1);
  all_reduces_on<detred::half>(1);
}
TEST(NcclAllReduce, TwoGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(2);
  all_reduces_on<float>(2);
  all_reduces_on<bfloat16>(2);
  all_reduces_on<detred::half>(2);
}
TEST(NcclAllReduce, ThreeGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(3);
  all_reduces_on<float>(3);
  all_reduces_on<bfloat16>(3);
}
TEST(NcclAllReduce, FourGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(4);
  all_reduces_on<float>(4);
  all_reduces_on<bfloat16>(4);
}

// Reduce-scatter: rank r's shard equals elements r * n_shard .. of the CPU's element-wise rank-order reduce;
// all-gather: every rank's shards, in rank order, bit for bit. Both transports, in place and not, aligned and not.
template <class T>
void shards_on(int gpus) {
  struct shard_case {
    std::uint64_t shard;
    std::string name;
    nccl::all_reduce_options options;
    std::vector<std::vector<T>> in, scattered, gathered;
  };
  std::vector<shard_case> cases;
  for (std::uint64_t shard : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{4096}, std::uint64_t{(1 << 19) + 1}})
    for (const auto& [name, base] : transports())
      for (sum_method method : {sum_method::tree, sum_method::exact}) {
        if (method == sum_method::exact && shard > 4096) continue;
        shard_case c{shard, name, base, {}, {}, {}};
        c.options.method = method;
        if (shard > 4096) c.options.chunk_bytes = 300000;
        const std::uint64_t n = shard * std::uint64_t(gpus);
        for (int r = 0; r < gpus; ++r) {
          c.in.push_back(verify::generate<T>(
              {r % 2 ? verify::distribution::ill : verify::distribution::lognormal, n, std::uint64_t(300 + r), 1e6}));
          c.scattered.emplace_back(shard);
          c.gathered.emplace_back(n);
        }
        cases.push_back(std::move(c));
      }
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    for (shard_case& c : cases) {
      const std::uint64_t shard = c.shard, n = shard * std::uint64_t(gpus);
      const bool in_place = shard % 2 == 1;
      const std::vector<T>& mine = c.in[std::size_t(rank)];
      T* d_in = upload(mine.data(), n);
      T* d_out = in_place ? d_in + std::uint64_t(rank) * shard : upload(mine.data(), shard);
      nccl::reduce_scatter(ctx, d_in, d_out, shard, nullptr, c.options);
      cuda::check(cudaMemcpy(c.scattered[std::size_t(rank)].data(), d_out, shard * sizeof(T), cudaMemcpyDeviceToHost),
                  "cudaMemcpy");
      // All-gather of the reduced shards: every rank then holds the all-reduce.
      T* d_full = upload(mine.data(), n);
      if (in_place) {
        cuda::check(
            cudaMemcpy(d_full + std::uint64_t(rank) * shard, d_out, shard * sizeof(T), cudaMemcpyDeviceToDevice),
            "cudaMemcpy");
        nccl::all_gather(ctx, d_full + std::uint64_t(rank) * shard, d_full, shard, nullptr, c.options);
      } else {
        nccl::all_gather(ctx, d_out, d_full, shard, nullptr, c.options);
      }
      cuda::check(cudaMemcpy(c.gathered[std::size_t(rank)].data(), d_full, n * sizeof(T), cudaMemcpyDeviceToHost),
                  "cudaMemcpy");
      cudaFree(d_full);
      cudaFree(d_in);
      if (!in_place) cudaFree(d_out);
    }
  });
  for (const shard_case& c : cases) {
    const std::uint64_t shard = c.shard, n = shard * std::uint64_t(gpus);
    const sum_method method = c.options.method;
    std::size_t wrong = 0;
    for (std::uint64_t e = 0; e < n; ++e) {
      const T expected = reference(c.in, e, method);
      const std::size_t owner = std::size_t(e / shard);
      if (raw(c.scattered[owner][e % shard]) != raw(expected) && wrong++ < 5)
        ADD_FAILURE() << "reduce_scatter " << c.name << " " << to_string(method) << " shard=" << shard << " element "
                      << e << ": 0x" << std::hex << raw(c.scattered[owner][e % shard]) << " expected 0x"
                      << raw(expected);
      for (int r = 0; r < gpus; ++r)
        if (raw(c.gathered[std::size_t(r)][e]) != raw(expected) && wrong++ < 5)
          ADD_FAILURE() << "all_gather " << c.name << " shard=" << shard << " rank " << r << " element " << e;
    }
    EXPECT_EQ(wrong, 0u) << c.name << " " << to_string(method) << " shard=" << shard;
  }
  std::printf("%d GPU(s), %s: %zu reduce-scatter + all-gather cases, every element the CPU's rank-order sum\n", gpus,
              float_traits<T>::name, cases.size());
}

TEST(NcclReduceScatterAllGather, OneGpu) {
  DETRED_NEED_GPUS(1);
  shards_on<float>(1);
  shards_on<bfloat16>(1);
}
TEST(NcclReduceScatterAllGather, TwoGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(2);
  shards_on<float>(2);
  shards_on<bfloat16>(2);
  shards_on<detred::half>(2);
}
TEST(NcclReduceScatterAllGather, ThreeGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(3);
  shards_on<float>(3);
}
TEST(NcclReduceScatterAllGather, FourGpusEqualTheRankOrderReduceOnTheCpu) {
  DETRED_NEED_GPUS(4);
  shards_on<float>(4);
  shards_on<bfloat16>(4);
}

// all_reduce_micro_batches (docs/DISTRIBUTED.md, "Gradients that do not depend on the GPU count"): M micro-batch
// gradients in one global order give the CPU's canonical reduce over the M values (tree) or its correctly rounded sum
// (exact) on 1 GPU holding all M rows and on every GPU count that splits them into whole ranks.
template <class T>
void micro_batches_on(int max_gpus) {
  const std::uint64_t n = 70001;  // odd: the 16-byte vectors end in a partial one
  for (int M : {8, 6, 12})
    for (sum_method method : {sum_method::tree, sum_method::exact}) {
      std::vector<std::vector<T>> grads;  // M rows in global order
      for (int g = 0; g < M; ++g)
        grads.push_back(verify::generate<T>(
            {g % 3 ? verify::distribution::ill : verify::distribution::cancel, n, std::uint64_t(500 + g), 1e6}));
      std::vector<T> expected(n);
      for (std::uint64_t e = 0; e < n; ++e) expected[e] = reference(grads, e, method);
      for (int gpus = 1; gpus <= max_gpus; ++gpus) {
        if (M % gpus != 0) continue;
        const int rows = M / gpus;
        const std::uint64_t stride = n + 3;
        std::vector<std::vector<T>> out(static_cast<std::size_t>(gpus), std::vector<T>(n));
        test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
          std::vector<T> block(stride * std::uint64_t(rows));
          for (int k = 0; k < rows; ++k)
            std::copy(grads[std::size_t(rank * rows + k)].begin(), grads[std::size_t(rank * rows + k)].end(),
                      block.begin() + std::ptrdiff_t(std::uint64_t(k) * stride));
          T* d = upload(block.data(), block.size());
          T* d_out = nullptr;
          cuda::check(cudaMalloc(&d_out, n * sizeof(T)), "cudaMalloc");
          nccl::all_reduce_micro_batches(ctx, d, stride, rows, d_out, n, nullptr, {.method = method});
          cuda::check(cudaMemcpy(out[std::size_t(rank)].data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost),
                      "cudaMemcpy");
          cudaFree(d);
          cudaFree(d_out);
        });
        std::size_t wrong = 0;
        for (int r = 0; r < gpus; ++r)
          for (std::uint64_t e = 0; e < n; ++e)
            if (raw(out[std::size_t(r)][e]) != raw(expected[e]) && wrong++ < 5)
              ADD_FAILURE() << float_traits<T>::name << " M=" << M << " " << to_string(method) << " gpus=" << gpus
                            << " rank " << r << " element " << e << ": 0x" << std::hex << raw(out[std::size_t(r)][e])
                            << " expected 0x" << raw(expected[e]);
        EXPECT_EQ(wrong, 0u);
        std::printf("%s M=%d %s on %d GPU(s) (%d rows each): %s\n", float_traits<T>::name, M,
                    std::string(to_string(method)).c_str(), gpus, rows,
                    wrong == 0 ? "the CPU's bits over all M micro-batches" : "DIFFERENT bits");
      }
    }
}

TEST(NcclMicroBatches, TheSameBitsOnEveryGpuCount) {
  DETRED_NEED_GPUS(1);
  const int gpus = std::min(test::gpu_count(), 4);
  micro_batches_on<float>(gpus);
  micro_batches_on<bfloat16>(gpus);
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

// The device argument check (nccl/all_reduce.hpp, "Argument check"): past a context's first call, a mismatch is found
// by the kernels without a host round trip; every rank's output of that call is canonical NaN, nothing hangs, and
// context::synchronize (and every later call) throws invalid_argument naming the difference on every rank. Calls that
// stop on the host (a window growth, check_on_host) throw at the call. Each scenario uses a context of its own.
template <class T>
bool all_canonical_nan(const T* d, std::size_t n) {
  std::vector<T> h(n);
  cuda::check(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return std::all_of(h.begin(), h.end(), [](T x) { return raw(x) == raw(canonical_nan<T>()); });
}

struct device_check_case {
  std::string name;
  // Runs the mismatched call on `rank` (after a matching call made the window); returns the elements its output has.
  std::function<std::size_t(nccl::context&, int rank, float* in, float* out)> call;
  std::string expected;  // in every rank's message
  bool throws_at_call = false;
};

TEST(NcclErrors, DeviceCheckFindsMismatchesWithoutAHang) {
  DETRED_NEED_GPUS(2);
  const std::size_t big = std::size_t{1} << 22;  // 16 MiB of floats: more than the first window holds
  const std::vector<device_check_case> cases = {
      {"sizes",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         nccl::all_reduce(ctx, in, out, rank == 0 ? 1000 : 999);
         return std::size_t(rank == 0 ? 1000 : 999);
       },
       "rank 0 passes 1000 elements, rank 1 passes 999"},
      {"methods",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         nccl::all_reduce(ctx, in, out, 4096, nullptr, {.method = rank == 0 ? sum_method::tree : sum_method::exact});
         return std::size_t{4096};
       },
       "ask for different operations or methods"},
      {"operations",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         if (rank == 0) {
           nccl::all_reduce(ctx, in, out, 2048);
           return std::size_t{2048};
         }
         nccl::reduce_scatter(ctx, in, out, 1024);
         return std::size_t{1024};
       },
       "ask for different operations or methods"},
      {"types",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         if (rank == 0) {
           nccl::all_reduce(ctx, in, out, 2048);
           return std::size_t{2048};
         }
         nccl::all_reduce(ctx, reinterpret_cast<const bfloat16*>(in), reinterpret_cast<bfloat16*>(out), 2048);
         return std::size_t{0};  // bf16 output: not inspected
       },
       "rank 0 passes float data, rank 1 bfloat16"},
      {"options",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         nccl::all_reduce(ctx, in, out, 100000, nullptr, {.blocks = rank == 0 ? 0u : 3u});
         return std::size_t{100000};
       },
       "pass different options"},
      {"an argument error on one rank",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         try {
           nccl::all_reduce(ctx, in, out, 1000, nullptr, {.method = rank == 1 ? sum_method::kahan : sum_method::tree});
         } catch (const invalid_argument& e) {
           EXPECT_EQ(rank, 1);
           EXPECT_NE(std::string(e.what()).find("rank 1: options.method is sum_method::kahan"), std::string::npos)
               << e.what();
           return std::size_t{0};
         }
         return std::size_t{1000};
       },
       "rank 1 withdrew from the call"},
      {"a withdrawal that runs ahead",
       // Rank 1 withdraws and makes two more calls (each withdraws: its context has failed) before rank 0's kernel
       // starts: its descriptor slots then hold later calls' numbers, and rank 0 must still see a mismatch.
       [](nccl::context& ctx, int rank, float* in, float* out) {
         if (rank == 0) {
           std::this_thread::sleep_for(std::chrono::milliseconds(300));
           nccl::all_reduce(ctx, in, out, 1000);
           return std::size_t{1000};
         }
         EXPECT_THROW(nccl::all_reduce(ctx, in, out, 1000, nullptr, {.method = sum_method::kahan}), invalid_argument);
         EXPECT_THROW(nccl::all_reduce(ctx, in, out, 1000), invalid_argument);
         EXPECT_THROW(nccl::all_reduce(ctx, in, out, 1000), invalid_argument);
         cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
         return std::size_t{0};
       },
       "rank 1 withdrew from the call"},
      {"a growth on one rank",
       [big](nccl::context& ctx, int rank, float* in, float* out) {
         nccl::all_reduce(ctx, in, out, rank == 0 ? 1000 : big, nullptr, {.algorithm = nccl::peer_algorithm::one_shot});
         return std::size_t(rank == 0 ? 1000 : 0);
       },
       "rank 0 passes 1000 elements, rank 1 passes"},
      {"check_on_host",
       [](nccl::context& ctx, int rank, float* in, float* out) {
         nccl::all_reduce(ctx, in, out, rank == 0 ? 1000 : 999, nullptr, {.check_on_host = true});
         return std::size_t{0};
       },
       "rank 0 passes 1000 elements, rank 1 passes 999", true},
  };
  for (const device_check_case& c : cases) {
    // The case's name goes out before it runs, and a watchdog ends the program (exit status 3, naming the case) where
    // a case has not finished in 60 s: a hang is a failure that says where, not a step that runs out of time.
    std::printf("device check, %s: running\n", c.name.c_str());
    std::fflush(stdout);
    std::mutex watch;
    std::condition_variable finished;
    bool done = false;
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> lock(watch);
      if (!finished.wait_for(lock, std::chrono::seconds(60), [&] { return done; })) {
        std::printf("device check, %s: HUNG (no result in 60 s): the device check let a rank wait\n", c.name.c_str());
        std::fflush(stdout);
        std::_Exit(3);
      }
    });
    std::vector<std::string> messages(2);
    test::run_on_gpus(2, [&](nccl::context& unused, int rank) {
      (void)unused;
      nccl::context ctx(unused.comm());
      device_array<float> in(big), out(big);
      cuda::check(cudaMemset(in.ptr, 0, big * sizeof(float)), "cudaMemset");
      nccl::all_reduce(ctx, in.ptr, out.ptr, 64);  // the first call: checked on the host, makes the window
      std::size_t outputs = 0;
      try {
        outputs = c.call(ctx, rank, in.ptr, out.ptr);
        ctx.synchronize();
        ADD_FAILURE() << c.name << ": rank " << rank << ": no error";
      } catch (const invalid_argument& e) {
        messages[std::size_t(rank)] = e.what();
      }
      if (outputs > 0) {
        EXPECT_TRUE(all_canonical_nan(out.ptr, outputs)) << c.name << ": rank " << rank;
      }
      if (c.throws_at_call) {
        // Every rank stopped at the call: the context is still usable.
        nccl::all_reduce(ctx, in.ptr, out.ptr, 1000);
        ctx.synchronize();
        std::vector<float> h(1000, 1.0f);
        cuda::check(cudaMemcpy(h.data(), out.ptr, 4000, cudaMemcpyDeviceToHost), "cudaMemcpy");
        EXPECT_TRUE(std::all_of(h.begin(), h.end(), [](float x) { return x == 0.0f; })) << c.name;
      } else {
        // A failed context: every later call throws (without waiting for a peer).
        EXPECT_THROW(nccl::all_reduce(ctx, in.ptr, out.ptr, 1000), invalid_argument) << c.name;
        EXPECT_THROW((void)nccl::sum(ctx, in.ptr, 1000), invalid_argument) << c.name;
      }
    });
    for (int r = 0; r < 2; ++r) {
      const std::string& m = messages[std::size_t(r)];
      if ((c.name == "an argument error on one rank" || c.name == "a withdrawal that runs ahead") && r == 1)
        continue;  // the withdrawing rank's message is checked in the call
      EXPECT_NE(m.find(c.expected), std::string::npos) << c.name << ", rank " << r << ": " << m;
    }
    {
      std::lock_guard<std::mutex> lock(watch);
      done = true;
    }
    finished.notify_one();
    watchdog.join();
    std::printf("device check, %s: rank 0: %s\n", c.name.c_str(), messages[0].c_str());
    std::fflush(stdout);
  }
}

// The device check costs no host round trip: 200 back-to-back checked calls of 64 KiB return to the host before the
// device has run them all, and give the unchecked calls' bits.
TEST(NcclErrors, DeviceCheckedCallsDoNotWaitForTheDevice) {
  DETRED_NEED_GPUS(2);
  test::run_on_gpus(2, [&](nccl::context& ctx, int rank) {
    const std::size_t n = 16384;
    std::vector<float> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = float(i % 97) * (rank ? 0.25f : 1.5f) + 1e-3f * float(rank);
    float* in = upload(h.data(), n);
    device_array<float> checked(n), unchecked(n);
    nccl::all_reduce(ctx, in, checked.ptr, n);
    cudaStream_t s = nullptr;
    cuda::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaEvent_t done = nullptr;
    cuda::check(cudaEventCreate(&done), "cudaEventCreate");
    for (int i = 0; i < 200; ++i) nccl::all_reduce(ctx, in, checked.ptr, n, s);
    cuda::check(cudaEventRecord(done, s), "cudaEventRecord");
    const bool pending = cudaEventQuery(done) == cudaErrorNotReady;
    ctx.synchronize(s);
    nccl::all_reduce(ctx, in, unchecked.ptr, n, s, {.check_arguments = false});
    cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    std::vector<float> a(n), b(n);
    cuda::check(cudaMemcpy(a.data(), checked.ptr, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cuda::check(cudaMemcpy(b.data(), unchecked.ptr, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    EXPECT_EQ(std::memcmp(a.data(), b.data(), n * 4), 0);
    if (rank == 0) std::printf("200 checked all-reduces queued; device still busy when the loop ended: %d\n", pending);
    cudaEventDestroy(done);
    cudaStreamDestroy(s);
    cudaFree(in);
  });
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
