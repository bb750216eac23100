// The canonical sum's bars harness: detred::cuda::sum beside CUB and the baselines (baselines/: the classic ladder,
// the atomics) in one program: docs/PERFORMANCE.md's baseline table, the sum's bars and its tuning candidates.
//
// Table: every ladder variant, every atomic baseline, detred::cuda::sum (tree) and cub::DeviceReduce::Sum (two-phase,
// workspace preallocated), fp32 and fp64, at n = 1,000, 10^6 and 1 GiB of input; inputs U[-1, 1) x 2^[-20, 20]. Each
// row: median of 30 single calls, each timed alone between two CUDA events after 2 untimed warm-up calls; GB/s of
// input bytes; the ratio to CUB's time; the distinct bit patterns of the 30 results.
// Bars: canonical sum and CUB at n = 2^16 and 2^20, fp32 and fp64, both ways: "single" (one call between two events,
// median of 30) and "back-to-back" (100 calls between two events, per call, median of 15); and 1 GiB (median of 30);
// each with the device's default tuning and with each device class's sum tuning forced (the bits must not differ).
// The read ceiling (a vectorised read of the same 1 GiB) is measured in the same run.
// Tune: the canonical sum's launch candidates (block threads, tiles per chunk, passes in flight;
// include/detred/cuda/detail/tuning.hpp) beside the default and CUB, fp32 and fp64, at 2^16 and 2^20 (100 back-to-back
// calls per timing) and 1 GiB (one call per timing); the candidates and CUB take turns in every round (drift hits them
// alike), medians over the rounds; every candidate's result bits compared with the default's (exit 1 if any differ).
//   usage: bench_sum_bars [table|bars|tune|profile|all] [rounds]   (default all: bars and table; tune: 25 rounds;
//   profile [k]: a few synchronised calls at 2^k elements, f64 and f32 (default k = 20, at most 27) for ncu)
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

#include "bench/support/bench_support.hpp"
#include "bench/support/interleaved_timing.hpp"
#include "detred/baselines/gpu.hpp"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "src/cuda/common/launch_policy.hpp"

namespace {
using detred::cuda::check;
constexpr std::size_t kBytes = std::size_t{1} << 30;

// Median seconds of `reps` timings of `calls` back-to-back calls each, per call (bench_support.hpp).
struct timer {
  double median(const std::function<void()>& f, int reps, int calls, const std::function<void()>& after = {}) {
    return calls == 1 ? detred::bench::single_call_seconds(f, reps, after)
                      : detred::bench::back_to_back_seconds(f, reps, calls, after);
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
    detred::bench::fill_scaled(in, n);
    std::size_t sum_bytes = 0;
    detred::cuda::sum(nullptr, sum_bytes, static_cast<const T*>(in), out, n);
    ws_bytes = std::max(detred::baselines::ladder_workspace_bytes(n), sum_bytes);
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
  std::function<void()> canonical(std::uint64_t n, detred::cuda::sum_options options = {}) {
    return [this, n, options] {
      std::size_t bytes = ws_bytes;
      detred::cuda::sum(ws, bytes, static_cast<const T*>(in), out, n, nullptr, options);
    };
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

// The canonical sum with the device's default tuning and with each device class's sum tuning forced: standard (the
// H100's: 256 threads, one launch for large inputs) and high (the H200's: 128 threads, two kernels, two passes in
// flight for fp64).
constexpr const char* standard_sum_tuning = "sum.block_threads=256,sum.depth=1";
constexpr const char* high_sum_tuning = "sum.block_threads=128,sum.depth=2";

template <class T>
void bars(timer& tm, double ceiling) {
  setup<T> s;
  const std::uint64_t big = kBytes / sizeof(T);
  for (std::uint64_t n : {std::uint64_t{1} << 16, std::uint64_t{1} << 20, big}) {
    const bool large = n == big;
    const int reps = large ? 30 : 15, calls = large ? 1 : 100;
    const auto bits_under = [&](const char* spec) {
      detred::bench::use_tuning_overrides(spec);
      s.canonical(n)();
      check(cudaDeviceSynchronize(), "sync");
      return s.result_bits();
    };
    const auto time_under = [&](const char* spec) {
      detred::bench::use_tuning_overrides(spec);
      return tm.median(s.canonical(n), reps, calls);
    };
    const double u100 = tm.median(s.cub_sum(n), reps, calls);
    const double c100 = time_under("");
    const double std100 = time_under(standard_sum_tuning), high100 = time_under(high_sum_tuning);
    const bool same =
        bits_under("") == bits_under(standard_sum_tuning) && bits_under("") == bits_under(high_sum_tuning);
    detred::bench::use_tuning_overrides("");
    if (large) {
      std::printf(
          "bar %s 1 GiB (single call, median of 30): CUB %.0f GB/s; detred default %.0f GB/s (%.4fx CUB, %.3f of the "
          "read ceiling); standard-class tuning %.0f GB/s (%.4fx); high-class tuning %.0f GB/s (%.4fx); same bits: "
          "%s\n",
          type_name(sizeof(T)), kBytes / u100 / 1e9, kBytes / c100 / 1e9, u100 / c100, kBytes / c100 / 1e9 / ceiling,
          kBytes / std100 / 1e9, u100 / std100, kBytes / high100 / 1e9, u100 / high100, same ? "yes" : "NO");
    } else {
      const double u1 = tm.median(s.cub_sum(n), 30, 1), c1 = tm.median(s.canonical(n), 30, 1);
      std::printf(
          "bar %s n=2^%d back-to-back (100 calls between 2 events, per call, median of 15): CUB %.2f us, "
          "detred default %.2f us (%.3fx CUB's time), standard-class %.2f us, high-class %.2f us | single call "
          "(median of 30): CUB %.2f us, detred %.2f us | same bits: %s\n",
          type_name(sizeof(T)), n == (1u << 16) ? 16 : 20, u100 * 1e6, c100 * 1e6, c100 / u100, std100 * 1e6,
          high100 * 1e6, u1 * 1e6, c1 * 1e6, same ? "yes" : "NO");
    }
    std::fflush(stdout);
  }
}

// One launch candidate of the tune mode: tuning overrides (DETRED_CUDA_TUNING syntax) and a launch shape.
struct candidate {
  std::string name, overrides;
  detred::cuda::sum_options config;
};

// The policy's shape for a candidate (block threads x blocks, tiles per chunk, chunks + tail tiles), assuming one
// resident block per SM (the fp32 / fp64 chunk kernels use 154-160 registers at 256 threads; an estimate for the
// label only, the library asks the occupancy API).
template <class T>
std::string shape_label(std::uint64_t n, const candidate& c, int sms) {
  namespace d = detred::cuda::detail;
  constexpr std::uint64_t tile = 16 / sizeof(T) * 1024;
  const d::sum_tuning tuning = d::parse_tuning_overrides(d::current_tuning(), c.overrides).value.sum;
  const d::device_facts facts{sms, 1};
  detred::cuda::sum_options l = d::choose_launch_shape(c.config, n, tile, facts, tuning);
  if (d::spread_small_input(c.config, l, n, tile, facts))
    l = d::choose_launch_shape(d::with_block_threads(c.config, 32), n, tile, facts, tuning);
  const std::uint64_t chunk = tile * std::uint64_t(l.tiles_per_chunk), items = n / chunk + (n % chunk) / tile;
  const std::uint64_t wpb = std::uint64_t(l.block_threads / 32), useful = (items + wpb - 1) / wpb;
  const std::uint64_t grid = useful < std::uint64_t(l.grid_blocks) ? useful : std::uint64_t(l.grid_blocks);
  return std::to_string(l.block_threads) + "x" + std::to_string(grid) + " t" + std::to_string(l.tiles_per_chunk) +
         " i" + std::to_string(items);
}

// The tune mode for one type: small-n candidates back to back, then 1 GiB candidates. Returns whether every
// candidate gave the default's bits.
template <class T>
bool tune(timer& tm, double ceiling, int sms, int rounds) {
  setup<T> s;
  const auto shape = [](int block, int tiles) {
    return detred::cuda::sum_options{.block_threads = block, .tiles_per_chunk = tiles};
  };
  const std::vector<candidate> small = {
      {"default", "", {}},
      {"block 32 (forced)", "", shape(32, 0)},
      {"block 64 (two kernels)", "", shape(64, 0)},
      {"block 128 (two kernels)", "", shape(128, 0)},
      {"tiles 2", "", shape(0, 2)},
      {"tiles 4", "", shape(0, 4)},
      {"standard class", standard_sum_tuning, {}},
      {"high class", high_sum_tuning, {}},
  };
  const std::vector<candidate> large = {
      {"default", "", {}},
      {"tiles 8", "", shape(0, 8)},
      {"tiles 4", "", shape(0, 4)},
      {"tiles 2", "", shape(0, 2)},
      {"block 128 (two kernels)", "", shape(128, 0)},
      {"block 128, tiles 8 (two kernels)", "", shape(128, 8)},
      {"standard class (256 threads, depth 1)", standard_sum_tuning, {}},
      {"high class (128 threads, depth 2)", high_sum_tuning, {}},
      {"threads 256, depth 2", "sum.block_threads=256,sum.depth=2", {}},
      {"threads 128, depth 1", "sum.block_threads=128,sum.depth=1", {}},
      {"threads 64, depth 2 (two kernels)", "sum.block_threads=64,sum.depth=2", {}},
  };
  bool all_same = true;
  const auto run = [&](std::uint64_t n, const std::vector<candidate>& cs, int calls, const char* label) {
    std::vector<std::function<void()>> fs{s.cub_sum(n)};
    for (const candidate& c : cs) fs.push_back(s.canonical(n, c.config));
    const auto before = [&](std::size_t i) {
      detred::bench::use_tuning_overrides(i == 0 ? std::string() : cs[i - 1].overrides);
    };
    const std::vector<double> t = detred::bench::interleaved_seconds(fs, rounds, calls, before);
    std::uint64_t reference = 0;
    const double bytes = double(n) * sizeof(T);
    std::printf("| %s | %s | cub::DeviceReduce::Sum | - | %.2f | %.0f | 1.000 | %.3f | - |\n", type_name(sizeof(T)),
                label, t[0] * 1e6, bytes / t[0] / 1e9, bytes / t[0] / 1e9 / ceiling);
    for (std::size_t i = 0; i < cs.size(); ++i) {
      detred::bench::use_tuning_overrides(cs[i].overrides);
      check(cudaMemset(s.out, 0xff, sizeof(T)), "memset");
      s.canonical(n, cs[i].config)();
      check(cudaDeviceSynchronize(), "sync");
      const std::uint64_t bits = s.result_bits();
      if (i == 0) reference = bits;
      all_same = all_same && bits == reference;
      std::printf("| %s | %s | %s | %s | %.2f | %.0f | %.4f | %.3f | %s |\n", type_name(sizeof(T)), label,
                  cs[i].name.c_str(), shape_label<T>(n, cs[i], sms).c_str(), t[i + 1] * 1e6, bytes / t[i + 1] / 1e9,
                  t[0] / t[i + 1], bytes / t[i + 1] / 1e9 / ceiling, bits == reference ? "same" : "DIFFERENT");
    }
    detred::bench::use_tuning_overrides("");
    std::fflush(stdout);
  };
  run(std::uint64_t{1} << 16, small, 100, "2^16 b2b");
  run(std::uint64_t{1} << 20, small, 100, "2^20 b2b");
  run(kBytes / sizeof(T), large, 1, "1 GiB");
  return all_same;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "properties");
  timer tm;
  float* buf = nullptr;
  check(cudaMalloc(&buf, kBytes + 4), "cudaMalloc");
  detred::bench::fill_scaled(buf, kBytes / 4);
  const double tr = tm.median([&] { detred::bench::read_bytes(buf, kBytes, buf + kBytes / 4); }, 30, 1);
  cudaFree(buf);
  const double ceiling = kBytes / tr / 1e9;
  std::printf("device: %s (%d SMs); read ceiling %.0f GB/s\n", p.name, p.multiProcessorCount, ceiling);
  if (mode == "profile") {
    // A target for ncu: f64 then f32 at n = 2^20 (or 2^k: `profile k`, k <= 27), three
    // synchronised calls each of the canonical sum (default launch) and of CUB's Sum, after one warm-up call of each.
    const int log2n = argc > 2 ? std::atoi(argv[2]) : 20;
    const auto calls = [](auto& s, std::uint64_t n) {
      const auto ours = s.canonical(n, {});
      const auto cub = s.cub_sum(n);
      for (int r = 0; r < 4; ++r) {
        ours();
        check(cudaDeviceSynchronize(), "canonical");
        cub();
        check(cudaDeviceSynchronize(), "cub");
      }
    };
    setup<double> sd;
    calls(sd, std::uint64_t{1} << log2n);
    setup<float> sf;
    calls(sf, std::uint64_t{1} << log2n);
    std::printf("profile mode: f64 and f32 at 2^%d, 4 calls each of detred and CUB\n", log2n);
    return 0;
  }
  if (mode == "bars" || mode == "all") {
    bars<float>(tm, ceiling);
    bars<double>(tm, ceiling);
  }
  if (mode == "tune") {
    namespace d = detred::cuda::detail;
    const d::device_profile prof = d::current_device_profile();
    const double peak = d::peak_dram_gb_per_s(prof);
    std::printf(
        "profile: %d SMs, L2 %zu MB, memory clock %d kHz x %d bit = peak %.0f GB/s (%.1f GB/s per SM): class %s\n",
        prof.multiprocessors, prof.l2_bytes >> 20, prof.memory_clock_khz, prof.memory_bus_bits, peak,
        prof.multiprocessors ? peak / prof.multiprocessors : 0.0, d::to_string(d::classify(prof)));
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 25;
    std::printf(
        "tune: medians of %d interleaved rounds; b2b rows: 100 back-to-back calls per timing, us per call; 1 GiB rows: "
        "one call per timing. Columns: us, GB/s, CUB time / time (> 1: faster than CUB), of the read ceiling, bits "
        "against the default's. shape: block threads x blocks, tiles per chunk, items (policy estimate at 1 "
        "block/SM).\n",
        rounds);
    std::printf("| type | case | candidate | shape | us | GB/s | CUB time / time | of ceiling | bits |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    bool same = tune<float>(tm, ceiling, p.multiProcessorCount, rounds);
    same = tune<double>(tm, ceiling, p.multiProcessorCount, rounds) && same;
    std::printf("bits identical to the default's for every candidate: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
  }
  if (mode == "table" || mode == "all") {
    std::printf("| type | n | algorithm | guarantee | median us (single call) | GB/s | CUB time / time | distinct |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    table<float>(tm);
    table<double>(tm);
  }
  return 0;
}
