// detred::nccl on the GPU machine (docs/PERFORMANCE.md, "Distributed"): one process, a thread per GPU
// (tests/nccl/gpu_ranks.hpp). Peers in the same program, NVLink multicast off (NCCL_NVLS_ENABLE=0). Sections:
//   bars   element-wise all-reduce of 256 MiB per GPU, fp32 and bf16: ncclAllReduce (NCCL's default choice) against
//          detred::nccl::all_reduce (the default, whose argument check runs on the device; without the check; with
//          the host check; one-shot and two-shot; thread blocks and chunk sizes; NCCL calls; exact).
//   sizes  all-reduce of fp32 at 64 KiB, 1 MiB, 16 MiB, 256 MiB, 1 GiB per GPU: ncclAllReduce and detred with default
//          options (device check), without the check and with the host check.
//   nccl-sizes  ncclAllReduce alone at those sizes: run it in a second process with NCCL pinned
//          (NCCL_ALGO=allreduce:tree NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1, read when the
//          communicators are made) for the deterministic configuration inference stacks use.
//   shards reduce-scatter of 256 MiB per GPU (fp32, bf16) against ncclReduceScatter; all-gather of the 256 MiB result
//          against ncclAllGather.
//   sweep  the peer kernels' chunk sizes and block counts around the automatic choice (all-reduce at 64 KiB to 256 MiB,
//          reduce-scatter at 256 MiB), each against NCCL in the same process.
//   sums   scalar sums of 1 GiB of fp32 per GPU: cuda::sum on one GPU against nccl::sum on 1, 2, 3 and 4 GPUs (as
//          many as are visible): the scaling of throughput, and the bits, which must not change with the GPU count.
// Each iteration: the ranks meet at a barrier, then time their call with CUDA events; an iteration's time is the
// slowest rank's; figures are medians. Usage: bench_nccl [iterations] [section...] (default: bars sizes shards sums)
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/support/bench_support.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/nccl.hpp"
#include "detred/reduce.hpp"
#include "tests/nccl/gpu_ranks.hpp"

namespace {
using namespace detred;

int iterations = 30;

using bench::median;

template <class T>
std::vector<T> host_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float f = float(std::int32_t(s >> 32)) * 0x1p-31f;  // (-1, 1)
    if constexpr (std::is_same_v<T, float>)
      v[i] = f;
    else
      v[i] = T::from_float(f);
  }
  return v;
}

// Times op on every rank (events on `stream`), an iteration's time being the slower rank's.
struct timer {
  int ranks;
  std::barrier<> meet;
  std::vector<std::vector<double>> ms;
  explicit timer(int r) : ranks(r), meet(r), ms(std::size_t(r)) {}
  double run(int rank, cudaStream_t stream, const std::function<void()>& op) {
    bench::event_pair events;
    ms[std::size_t(rank)].clear();
    for (int i = 0; i < 3 + iterations; ++i) {
      meet.arrive_and_wait();
      const double t = events.seconds_per_call(op, 1, stream) * 1e3;
      if (i >= 3) ms[std::size_t(rank)].push_back(t);
    }
    meet.arrive_and_wait();
    std::vector<double> slower(ms[0].size());
    for (std::size_t i = 0; i < slower.size(); ++i)
      for (int r = 0; r < ranks; ++r) slower[i] = std::max(slower[i], ms[std::size_t(r)][i]);
    meet.arrive_and_wait();  // everyone has read ms before the next run clears it
    return median(slower);
  }
};

template <class T>
constexpr ncclDataType_t nccl_type_of() {
  return std::is_same_v<T, float> ? ncclFloat32 : ncclBfloat16;
}
template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "fp32" : "bf16";
}

std::string size_name(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 30)   ? std::to_string(bytes >> 30) + " GiB"
         : bytes >= (std::size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB"
                                           : std::to_string(bytes >> 10) + " KiB";
}

// Per rank: an input and an output buffer of `bytes`, and a stream.
template <class T>
struct rank_buffers {
  T *in = nullptr, *out = nullptr;
  cudaStream_t s = nullptr;
  rank_buffers(std::size_t bytes, int rank, std::size_t out_bytes) {
    const std::vector<T> h = host_values<T>(bytes / sizeof(T), std::uint64_t(rank + 1));
    cuda::check(cudaMalloc(&in, bytes), "cudaMalloc");
    cuda::check(cudaMalloc(&out, out_bytes), "cudaMalloc");
    cuda::check(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~rank_buffers() {
    cudaFree(in);
    cudaFree(out);
    cudaStreamDestroy(s);
  }
};

template <class T>
void all_reduce_bars(int gpus, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(T);
  const char* type = type_name<T>();
  timer clock(gpus);
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    rank_buffers<T> b(bytes, rank, bytes);
    const double base = clock.run(rank, b.s, [&] {
      nccl::check(ncclAllReduce(b.in, b.out, n, nccl_type_of<T>(), ncclSum, ctx.comm(), b.s), "ncclAllReduce");
    });
    auto report = [&](const std::string& name, double t) {
      if (rank == 0)
        std::printf("all_reduce %s %d GPUs %s/GPU  %-52s %8.3f ms  %7.1f GB/s  %.3fx ncclAllReduce\n", type, gpus,
                    size_name(bytes).c_str(), name.c_str(), t, double(bytes) / t / 1e6, base / t);
    };
    report("ncclAllReduce (sum, NCCL's default choice)", base);
    auto variant = [&](const std::string& name, const nccl::all_reduce_options& o) {
      report(name, clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s, o); }));
    };
    variant("detred tree (default options)", {});
    variant("detred tree, no arg check", {.check_arguments = false});
    variant("detred tree, host arg check", {.check_on_host = true});
    for (auto [alg, label] : {std::pair{nccl::peer_algorithm::one_shot, "one-shot"},
                              std::pair{nccl::peer_algorithm::two_shot, "two-shot"}}) {
      for (unsigned blocks : {32u, 64u, 128u})
        variant(
            "detred tree " + std::string(label) + ", " + std::to_string(blocks) + " blocks, default chunk, no check",
            {.algorithm = alg, .blocks = blocks, .check_arguments = false});
      for (std::size_t chunk_mib : {2, 4})
        variant(
            "detred tree " + std::string(label) + ", 64 blocks, chunk " + std::to_string(chunk_mib) + " MiB, no check",
            {.chunk_bytes = chunk_mib << 20, .algorithm = alg, .blocks = 64, .check_arguments = false});
    }
    variant("detred tree, NCCL calls transport, chunk 32 MiB",
            {.transport = nccl::transport::nccl_calls, .check_arguments = false});
    variant("detred exact (default options)", {.method = sum_method::exact});
  });
}

void all_reduce_sizes(int gpus, bool detred_too) {
  timer clock(gpus);
  const std::size_t largest = std::size_t{1} << 30;
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    rank_buffers<float> b(largest, rank, largest);
    for (std::size_t bytes :
         {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20, largest}) {
      const std::size_t n = bytes / sizeof(float);
      const double base = clock.run(rank, b.s, [&] {
        nccl::check(ncclAllReduce(b.in, b.out, n, ncclFloat32, ncclSum, ctx.comm(), b.s), "ncclAllReduce");
      });
      if (!detred_too) {
        if (rank == 0)
          std::printf("sizes fp32 %d GPUs %-7s ncclAllReduce (this process's NCCL settings) %9.3f ms %7.1f GB/s\n",
                      gpus, size_name(bytes).c_str(), base, double(bytes) / base / 1e6);
        continue;
      }
      const double ours = clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s); });
      const double lean =
          clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s, {.check_arguments = false}); });
      const double host =
          clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s, {.check_on_host = true}); });
      // The automatic one-shot/two-shot choice against both, up to 16 MiB (where it switches).
      if (bytes <= (std::size_t{16} << 20)) {
        const double one = clock.run(rank, b.s, [&] {
          nccl::all_reduce(ctx, b.in, b.out, n, b.s, {.algorithm = nccl::peer_algorithm::one_shot});
        });
        const double two = clock.run(rank, b.s, [&] {
          nccl::all_reduce(ctx, b.in, b.out, n, b.s, {.algorithm = nccl::peer_algorithm::two_shot});
        });
        if (rank == 0)
          std::printf("sizes fp32 %d GPUs %-7s detred one-shot %9.3f ms (%.3fx)  two-shot %9.3f ms (%.3fx)\n", gpus,
                      size_name(bytes).c_str(), one, base / one, two, base / two);
      }
      if (rank == 0)
        std::printf(
            "sizes fp32 %d GPUs %-7s ncclAllReduce %9.3f ms  detred (default: device check) %9.3f ms (%.3fx)  "
            "no check %9.3f ms (%.3fx)  host check %9.3f ms (%.3fx)\n",
            gpus, size_name(bytes).c_str(), base, ours, base / ours, lean, base / lean, host, base / host);
    }
  });
}

template <class T>
void shard_bars(int gpus, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(T), shard = n / std::size_t(gpus);
  timer clock(gpus);
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    rank_buffers<T> b(bytes, rank, bytes);
    const double base = clock.run(rank, b.s, [&] {
      nccl::check(ncclReduceScatter(b.in, b.out, shard, nccl_type_of<T>(), ncclSum, ctx.comm(), b.s),
                  "ncclReduceScatter");
    });
    auto report = [&](const char* what, const std::string& name, double t, double peer) {
      if (rank == 0)
        std::printf("%s %s %d GPUs %s/GPU  %-44s %8.3f ms  %.3fx %s\n", what, type_name<T>(), gpus,
                    size_name(bytes).c_str(), name.c_str(), t, peer / t,
                    what[0] == 'r' ? "ncclReduceScatter" : "ncclAllGather");
    };
    report("reduce_scatter", "ncclReduceScatter (sum)", base, base);
    report("reduce_scatter", "detred tree (default options)",
           clock.run(rank, b.s, [&] { nccl::reduce_scatter(ctx, b.in, b.out, shard, b.s); }), base);
    for (unsigned blocks : {32u, 64u, 128u})
      report("reduce_scatter", "detred tree, " + std::to_string(blocks) + " blocks, no check",
             clock.run(rank, b.s,
                       [&] {
                         nccl::reduce_scatter(ctx, b.in, b.out, shard, b.s,
                                              {.blocks = blocks, .check_arguments = false});
                       }),
             base);
    const double gather = clock.run(rank, b.s, [&] {
      nccl::check(ncclAllGather(b.in, b.out, shard, nccl_type_of<T>(), ctx.comm(), b.s), "ncclAllGather");
    });
    report("all_gather", "ncclAllGather", gather, gather);
    report("all_gather", "detred (default options)",
           clock.run(rank, b.s, [&] { nccl::all_gather(ctx, b.in, b.out, shard, b.s); }), gather);
  });
}

// The peer kernels' shape around the automatic choice: all-reduce fp32 at 64 KiB, 1, 16 and 256 MiB and bf16 at 256
// MiB, and the reduce-scatter of 256 MiB fp32, with every chunk size and block count of a small grid (default device
// check), each against NCCL's call of the same size in the same process.
void shape_sweep(int gpus) {
  timer clock(gpus);
  const std::size_t largest = std::size_t{256} << 20;
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    rank_buffers<float> b(largest, rank, largest);
    auto line = [&](const char* what, std::size_t bytes, const std::string& name, double t, double base) {
      if (rank == 0)
        std::printf("sweep %s %d GPUs %-7s %-44s %8.3f ms  %.3fx\n", what, gpus, size_name(bytes).c_str(), name.c_str(),
                    t, base / t);
    };
    for (std::size_t bytes : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20, largest}) {
      const std::size_t n = bytes / sizeof(float);
      const double base = clock.run(rank, b.s, [&] {
        nccl::check(ncclAllReduce(b.in, b.out, n, ncclFloat32, ncclSum, ctx.comm(), b.s), "ncclAllReduce");
      });
      line("all_reduce fp32", bytes, "ncclAllReduce", base, base);
      line("all_reduce fp32", bytes, "detred default",
           clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s); }), base);
      line("all_reduce fp32", bytes, "detred no check",
           clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s, {.check_arguments = false}); }), base);
      for (auto alg : {nccl::peer_algorithm::one_shot, nccl::peer_algorithm::two_shot}) {
        if (alg == nccl::peer_algorithm::one_shot && bytes > (std::size_t{16} << 20)) continue;
        for (std::size_t chunk_mib : {1, 2, 4, 8, 16, 32}) {
          if ((chunk_mib << 20) > 2 * bytes && chunk_mib != 32) continue;
          for (unsigned blocks : {16u, 32u, 64u, 128u}) {
            const nccl::all_reduce_options o{.chunk_bytes = chunk_mib << 20, .algorithm = alg, .blocks = blocks};
            line("all_reduce fp32", bytes,
                 std::string(alg == nccl::peer_algorithm::one_shot ? "one-shot" : "two-shot") + " chunk " +
                     std::to_string(chunk_mib) + " MiB, " + std::to_string(blocks) + " blocks",
                 clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, b.in, b.out, n, b.s, o); }), base);
          }
        }
      }
    }
    {
      const std::size_t n = largest / sizeof(bfloat16);
      auto* in = reinterpret_cast<bfloat16*>(b.in);
      auto* out = reinterpret_cast<bfloat16*>(b.out);
      const double base = clock.run(rank, b.s, [&] {
        nccl::check(ncclAllReduce(in, out, n, ncclBfloat16, ncclSum, ctx.comm(), b.s), "ncclAllReduce");
      });
      line("all_reduce bf16", largest, "ncclAllReduce", base, base);
      line("all_reduce bf16", largest, "detred default",
           clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, in, out, n, b.s); }), base);
      for (std::size_t chunk_mib : {8, 16, 32})
        for (unsigned blocks : {64u, 128u}) {
          const nccl::all_reduce_options o{.chunk_bytes = chunk_mib << 20, .blocks = blocks};
          line("all_reduce bf16", largest,
               "chunk " + std::to_string(chunk_mib) + " MiB, " + std::to_string(blocks) + " blocks",
               clock.run(rank, b.s, [&] { nccl::all_reduce(ctx, in, out, n, b.s, o); }), base);
        }
    }
    for (int type = 0; type < 2; ++type) {
      const std::size_t elem = type == 0 ? 4 : 2, shard = largest / elem / std::size_t(gpus);
      const char* what = type == 0 ? "reduce_scatter fp32" : "reduce_scatter bf16";
      const auto call = [&](const nccl::all_reduce_options& o) {
        if (type == 0)
          nccl::reduce_scatter(ctx, b.in, b.out, shard, b.s, o);
        else
          nccl::reduce_scatter(ctx, reinterpret_cast<bfloat16*>(b.in), reinterpret_cast<bfloat16*>(b.out), shard, b.s,
                               o);
      };
      const double base = clock.run(rank, b.s, [&] {
        nccl::check(
            ncclReduceScatter(b.in, b.out, shard, type == 0 ? ncclFloat32 : ncclBfloat16, ncclSum, ctx.comm(), b.s),
            "ncclReduceScatter");
      });
      line(what, largest, "ncclReduceScatter", base, base);
      line(what, largest, "detred default", clock.run(rank, b.s, [&] { call({}); }), base);
      for (std::size_t chunk_mib : {8, 16, 32, 64})
        for (unsigned blocks : {64u, 128u}) {
          const nccl::all_reduce_options o{.chunk_bytes = chunk_mib << 20, .blocks = blocks};
          line(what, largest, "chunk " + std::to_string(chunk_mib) + " MiB, " + std::to_string(blocks) + " blocks",
               clock.run(rank, b.s, [&] { call(o); }), base);
        }
    }
  });
}

double host_median_ms(const std::function<void()>& op) {
  std::vector<double> t;
  for (int i = 0; i < 3 + iterations; ++i) {
    const auto a = std::chrono::steady_clock::now();
    op();
    const auto b = std::chrono::steady_clock::now();
    if (i >= 3) t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  return median(t);
}

void scalar_sums(int max_gpus) {
  const std::size_t n = std::size_t{1} << 28;  // 1 GiB of fp32 per GPU
  std::vector<float> all = host_values<float>(n * std::size_t(max_gpus), 42);
  for (sum_method method : {sum_method::tree, sum_method::exact}) {
    const char* m = method == sum_method::tree ? "tree " : "exact";
    double single_ms = 0;
    {
      cuda::check(cudaSetDevice(0), "cudaSetDevice");
      float* d = nullptr;
      cuda::check(cudaMalloc(&d, n * sizeof(float)), "cudaMalloc");
      cuda::check(cudaMemcpy(d, all.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
      float* d_out = nullptr;
      cuda::check(cudaMalloc(&d_out, sizeof(float)), "cudaMalloc");
      const cuda::sum_options options{.method = method};
      std::size_t wb = 0;
      cuda::sum(nullptr, wb, d, d_out, n, nullptr, options);
      void* w = nullptr;
      cuda::check(cudaMalloc(&w, wb), "cudaMalloc");
      float r = 0;
      single_ms = host_median_ms([&] {
        cuda::sum(w, wb, d, d_out, n, nullptr, options);
        r = cuda::to_host(d_out);
      });
      std::printf(
          "sum %s 1 GiB fp32, 1 GPU, cuda::sum + to_host         %8.3f ms  %7.1f GB/s  bits 0x%08x (CPU 0x%08x)\n", m,
          single_ms, double(n * 4) / single_ms / 1e6, unsigned(bits_of(r)),
          unsigned(bits_of(sum(all.data(), n, method))));
      cudaFree(d_out);
      cudaFree(d);
      cudaFree(w);
    }
    for (int gpus = 1; gpus <= max_gpus; ++gpus) {
      if (gpus == 3 && max_gpus > 3) continue;  // 1, 2, 4: the scaling; 3 where exactly 3 are visible
      const float cpu = sum(all.data(), n * std::size_t(gpus), method);
      std::vector<double> ms(static_cast<std::size_t>(gpus));
      std::vector<float> got(static_cast<std::size_t>(gpus));
      std::barrier meet(gpus);
      test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
        float* d = nullptr;
        cuda::check(cudaMalloc(&d, n * sizeof(float)), "cudaMalloc");
        cuda::check(cudaMemcpy(d, all.data() + std::size_t(rank) * n, n * sizeof(float), cudaMemcpyHostToDevice),
                    "cudaMemcpy");
        float r = 0;
        ms[std::size_t(rank)] = host_median_ms([&] {
          meet.arrive_and_wait();
          r = nccl::sum(ctx, d, n, nullptr, {.method = method});
        });
        got[std::size_t(rank)] = r;
        cudaFree(d);
      });
      const double t = *std::max_element(ms.begin(), ms.end());
      std::printf(
          "sum %s %d GiB fp32, %d GPU(s), nccl::sum (1 GiB/GPU)    %8.3f ms  %7.1f GB/s  %.2fx single-GPU "
          "throughput  bits 0x%08x 0x%08x (CPU 0x%08x)\n",
          m, gpus, gpus, t, double(n * 4 * std::size_t(gpus)) / t / 1e6, (double(gpus) / t) / (1.0 / single_ms),
          unsigned(bits_of(got[0])), unsigned(bits_of(got[std::size_t(gpus - 1)])), unsigned(bits_of(cpu)));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sections;
  for (int i = 1; i < argc; ++i) {
    if (i == 1 && std::atoi(argv[i]) > 0)
      iterations = std::atoi(argv[i]);
    else
      sections.push_back(argv[i]);
  }
  if (sections.empty()) sections = {"bars", "sizes", "shards", "sums"};
  const int gpus = test::gpu_count();
  if (gpus < 1) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  int version = 0;
  ncclGetVersion(&version);
  const auto env = [](const char* name) { return std::getenv(name) ? std::getenv(name) : "(unset)"; };
  std::printf(
      "NCCL %d, %d GPU(s), NCCL_NVLS_ENABLE=%s NCCL_ALGO=%s NCCL_PROTO=%s NCCL_MIN_NCHANNELS=%s "
      "NCCL_MAX_NCHANNELS=%s, %d iterations\n",
      version, gpus, env("NCCL_NVLS_ENABLE"), env("NCCL_ALGO"), env("NCCL_PROTO"), env("NCCL_MIN_NCHANNELS"),
      env("NCCL_MAX_NCHANNELS"), iterations);
  const int ranks = std::min(gpus, 4);
  for (const std::string& section : sections) {
    if (section == "sums") {
      scalar_sums(std::min(gpus, 4));
    } else if (gpus < 2) {
      std::printf("%s: needs 2 GPUs\n", section.c_str());
    } else if (section == "bars") {
      all_reduce_bars<float>(ranks, std::size_t{256} << 20);
      all_reduce_bars<bfloat16>(ranks, std::size_t{256} << 20);
    } else if (section == "sizes" || section == "nccl-sizes") {
      all_reduce_sizes(ranks, section == "sizes");
    } else if (section == "sweep") {
      shape_sweep(ranks);
    } else if (section == "shards") {
      shard_bars<float>(ranks, std::size_t{256} << 20);
      shard_bars<bfloat16>(ranks, std::size_t{256} << 20);
    } else {
      std::printf("unknown section %s\n", section.c_str());
      return 2;
    }
  }
  return 0;
}
