// GPU scans: detred::cuda's canonical scans against the toolkit's CUB (cub::DeviceScan, WarpScan, BlockScan) and the
// copy bandwidth, all in this one program (docs/PERFORMANCE.md, "GPU scans"). Medians of CUDA-event timings.
//   bench_cuda_scan [reps]      (default 30)
//   bench_cuda_scan 1 profile   one fp32 1 GiB call of detred's scan and one of CUB's (for ncu -k ... -c 1)
//   bench_cuda_scan R tune      issue 16's candidates (src/cuda/common/device_tuning.hpp): the affine-map scan and the
//                               fp32 / fp64 sums at 1 GiB over tile shapes (256 x 32 for 8-byte values through dynamic
//                               shared memory) and L2 prefetch distances, against copy and CUB; fp32 at 2^20 and 2^16
//                               per call (100 back-to-back calls) over shapes and look-back flag clearing. Candidates,
//                               copy and CUB take turns in each of R rounds (medians); every candidate's output is
//                               compared on the GPU, word for word, with the default's (exit 1 if any differ).
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/interleaved_timing.hpp"
#include "detred/cuda/block/block_scan.cuh"
#include "detred/cuda/warp/warp_scan.cuh"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.cuh"
#include "detred/cuda/scan.hpp"
#include "src/cuda/common/device_tuning.hpp"

namespace {
using detred::cuda::check;
int reps = 30;

struct affine {
  float a, b;
};
struct compose_affine {
  __device__ affine operator()(const affine& first, const affine& then) const {
    return {__fmul_rn(then.a, first.a), __fadd_rn(__fmul_rn(then.a, first.b), then.b)};
  }
};
struct add_f {
  __device__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
};

// Median ms of `reps` timings of `calls` back-to-back calls of f between two events, divided by calls.
double median_ms(const std::function<void()>& f, int calls = 1, int r = -1) {
  if (r < 0) r = reps;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> t;
  for (int i = 0; i < r; ++i) {
    cudaEventRecord(a);
    for (int c = 0; c < calls; ++c) f();
    cudaEventRecord(b);
    check(cudaEventSynchronize(b), "timing");
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms / calls);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

__global__ void fill(float* x, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    std::uint64_t s = (i + seed) * 0x9E3779B97F4A7C15ull;
    s ^= s >> 29;
    s *= 0xBF58476D1CE4E5B9ull;
    s ^= s >> 32;
    x[i] = float(std::int64_t(s >> 40) - (1 << 23)) * 0x1p-23f;
  }
}
__global__ void to_double(const float* x, double* y, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    y[i] = x[i];
}
__global__ void to_affine(const float* x, affine* y, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    y[i] = {0.75f + 0.25f * x[2 * i], x[2 * i + 1]};
}
std::uint64_t hash_bytes(const void* d, std::size_t bytes) {
  std::vector<std::uint64_t> h(bytes / 8);
  cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost);
  std::uint64_t s = 1469598103934665603ull;
  for (auto v : h) s = (s ^ v) * 1099511628211ull;
  return s;
}

// Counts the 32-bit words where a and b differ (bitwise comparison of two outputs on the GPU).
__global__ void count_differences(const unsigned* a, const unsigned* b, std::uint64_t words,
                                  unsigned long long* differences) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < words;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(differences, local);
}

// One candidate of the tune mode: a launch shape (0 x 0: the default) and tuning overrides (device_tuning.hpp).
struct scan_candidate {
  std::string name, overrides;
  detred::cuda::scan_launch_config config;
};

// Microbenchmarks of the building blocks: `rounds` dependent scans per thread.
constexpr int rounds = 64;
template <int Variant>
__global__ void warp_bench(const float* x, float* y) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  using warp_scan = cub::WarpScan<float>;
  __shared__ typename warp_scan::TempStorage storage[8];
  for (int r = 0; r < rounds; ++r) {
    float s;
    if constexpr (Variant == 0)
      s = detred::cuda::warp_canonical_inclusive_scan(v, add_f{});
    else if constexpr (Variant == 1)
      s = detred::cuda::warp_log_step_inclusive_scan(v, add_f{});
    else
      warp_scan(storage[threadIdx.x / 32]).InclusiveSum(v, s);
    v = s * 0x1p-5f;
  }
  y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
template <int Variant>
__global__ void block_bench(const float* x, float* y) {
  float a[4];
  for (int i = 0; i < 4; ++i) a[i] = x[(blockIdx.x * 256 + threadIdx.x) * 4 + i];
  using block = detred::cuda::block_fenwick_scan<256, 4, float>;
  using cub_block = cub::BlockScan<float, 256>;
  __shared__ typename block::storage storage;
  __shared__ typename cub_block::TempStorage cub_storage;
  for (int r = 0; r < rounds; ++r) {
    if constexpr (Variant == 0) {
      float carry;
      bool has;
      block{}.scan(
          a, add_f{}, [](float, float&, bool& h, float&) { h = false; }, storage, carry, has);
    } else {
      cub_block(cub_storage).InclusiveSum(a, a);
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) a[i] *= 0x1p-10f;
  }
  for (int i = 0; i < 4; ++i) y[(blockIdx.x * 256 + threadIdx.x) * 4 + i] = a[i];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) reps = std::atoi(argv[1]);
  const bool profile = argc > 2 && std::string(argv[2]) == "profile";
  const auto dev = detred::cuda::describe_device(0);
  std::printf("device: %s, %d SMs; medians of %d CUDA-event timings\n", dev.name.c_str(), dev.multiprocessors, reps);
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  const std::uint64_t nf = bytes / 4, nd = bytes / 8;
  float *xf, *yf;
  double *xd, *yd;
  affine *xa, *ya;
  check(cudaMalloc(&xf, bytes), "malloc");
  check(cudaMalloc(&yf, bytes), "malloc");
  check(cudaMalloc(&xd, bytes), "malloc");
  check(cudaMalloc(&yd, bytes), "malloc");
  xa = reinterpret_cast<affine*>(xd);
  ya = reinterpret_cast<affine*>(yd);
  fill<<<4096, 256>>>(xf, nf, 1);
  const std::size_t ws_bytes = detred::cuda::scan_workspace_bytes(nf, 8);
  void* ws;
  check(cudaMalloc(&ws, ws_bytes), "malloc");
  std::size_t cub_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, xf, yf, nf);
  std::size_t b2 = 0;
  cub::DeviceScan::InclusiveSum(nullptr, b2, xd, yd, nd);
  cub_bytes = std::max(cub_bytes, b2);
  cub::DeviceScan::InclusiveScan(nullptr, b2, xa, ya, compose_affine{}, nd);
  cub_bytes = std::max(cub_bytes, b2);
  void* cub_ws;
  check(cudaMalloc(&cub_ws, cub_bytes), "malloc");
  const auto gbs = [](double moved, double ms) { return moved / ms / 1e6; };

  if (argc > 2 && std::string(argv[2]) == "tune") {
    namespace d = detred::cuda::detail;
    using detred::cuda::scan_launch_config;
    const d::device_profile prof = d::current_device_profile();
    const double peak = d::peak_dram_gb_per_s(prof);
    std::printf("profile: %d SMs, L2 %zu MB, memory %d kHz x %d bit = peak %.0f GB/s (%.1f per SM): class %s\n",
                prof.multiprocessors, prof.l2_bytes >> 20, prof.memory_clock_khz, prof.memory_bus_bits, peak,
                prof.multiprocessors ? peak / prof.multiprocessors : 0.0, d::to_string(d::classify(prof)));
    std::printf(
        "tune: medians of %d interleaved rounds (1 GiB: one call per timing; 2^20 and 2^16: 100 back-to-back calls "
        "per timing, us per call); bits: the candidate's whole output against the default's, on the GPU\n",
        reps);
    to_double<<<4096, 256>>>(xf, xd, nd);
    void* ref = nullptr;  // the default's output
    unsigned long long* diff = nullptr;
    check(cudaMalloc(&ref, bytes), "malloc");
    check(cudaMalloc(&diff, sizeof(unsigned long long)), "malloc");
    bool all_same = true;
    // Words of out differing from ref's (out_bytes a multiple of 4).
    const auto differences = [&](const void* out, std::uint64_t out_bytes) {
      check(cudaMemset(diff, 0, sizeof(unsigned long long)), "memset");
      count_differences<<<1024, 256>>>(static_cast<const unsigned*>(out), static_cast<const unsigned*>(ref),
                                       out_bytes / 4, diff);
      unsigned long long h = 0;
      check(cudaMemcpy(&h, diff, sizeof h, cudaMemcpyDeviceToHost), "diff");
      return h;
    };
    // Runs one case: peers (copy, CUB) and candidates in turns, then each candidate's bits against candidate 0's.
    const auto run = [&](const char* label, std::uint64_t moved, int calls, const std::vector<scan_candidate>& cs,
                         const std::function<void(const scan_candidate&)>& call, void* out, std::uint64_t out_bytes,
                         const std::function<void()>& cub_call) {
      const auto copy_call = [&] { cudaMemcpyAsync(yf, xf, moved / 2, cudaMemcpyDeviceToDevice); };
      std::vector<std::function<void()>> fs{copy_call, cub_call};
      for (const auto& c : cs) fs.push_back([&, c] { call(c); });
      const auto before = [&](std::size_t i) {
        detred::bench::use_tuning_overrides(i < 2 ? std::string() : cs[i - 2].overrides);
      };
      std::vector<double> t = detred::bench::interleaved_seconds(fs, reps, calls, before);
      for (double& v : t) v *= 1e3;               // ms per call
      const double unit = calls > 1 ? 1e3 : 1.0;  // us per call for back-to-back cases, ms for 1 GiB
      std::printf("%s: copy %.3f %s (%.0f GB/s) | CUB %.3f %s (%.0f GB/s)\n", label, t[0] * unit,
                  calls > 1 ? "us" : "ms", gbs(double(moved), t[0]), t[1] * unit, calls > 1 ? "us" : "ms",
                  gbs(double(moved), t[1]));
      for (std::size_t i = 0; i < cs.size(); ++i) {
        detred::bench::use_tuning_overrides(cs[i].overrides);
        check(cudaMemset(out, 0xff, out_bytes), "memset");
        call(cs[i]);
        check(cudaDeviceSynchronize(), "candidate");
        if (i == 0) check(cudaMemcpy(ref, out, out_bytes, cudaMemcpyDeviceToDevice), "reference");
        const unsigned long long words = differences(out, out_bytes);
        all_same = all_same && words == 0;
        std::printf("   %-34s %9.3f %s %7.0f GB/s  %.3fx copy  %.3fx CUB time  %s\n", cs[i].name.c_str(),
                    t[i + 2] * unit, calls > 1 ? "us" : "ms", gbs(double(moved), t[i + 2]), t[0] / t[i + 2],
                    t[i + 2] / t[1],
                    words == 0 ? "same bits" : ("DIFFERENT: " + std::to_string(words) + " words").c_str());
      }
      detred::bench::use_tuning_overrides("");
      std::fflush(stdout);
    };
    const auto shape = [](int t, int i) { return std::to_string(t) + "x" + std::to_string(i); };
    // Prefetch distances in tiles: about 1, 2 and 4 tiles per SM ahead, and 8 (132 SMs; scaled to the device).
    const int sms = prof.multiprocessors > 0 ? prof.multiprocessors : 132;
    const std::vector<int> distances{sms, 2 * sms, 4 * sms, 8 * sms};
    const auto big_candidates = [&](const std::vector<std::pair<int, int>>& shapes) {
      std::vector<scan_candidate> cs{{"default", "", {}},
                                     {"default, init kernel_early", "scan.init=kernel_early", {}},
                                     {"default, swept off", "scan.swept=0", {}}};
      for (auto [t, i] : shapes) {
        cs.push_back({shape(t, i), "", scan_launch_config{t, i}});
        for (int dist : distances)
          cs.push_back({shape(t, i) + " prefetch " + std::to_string(dist) + " tiles",
                        "scan.prefetch=" + std::to_string(dist), scan_launch_config{t, i}});
      }
      return cs;
    };
    // (a) the affine-map scan, 1 GiB (2^27 maps of two fp32).
    to_affine<<<4096, 256>>>(xf, xa, nd);
    run(
        "affine-map scan 1 GiB", 2 * bytes, 1,
        [&] {
          // The shapes that measured best (session 6, H200), at finer prefetch distances around one tile per SM.
          std::vector<scan_candidate> cs{{"default", "", {}},
                                         {"default, swept off", "scan.swept=0", {}},
                                         {"128x32 no prefetch", "scan.prefetch=0", {128, 32}},
                                         {"128x32 no prefetch, swept off", "scan.prefetch=0,scan.swept=0", {128, 32}}};
          for (int dist : {sms, 2 * sms})
            cs.push_back({"128x32 prefetch " + std::to_string(dist) + " tiles, swept off",
                          "scan.swept=0,scan.prefetch=" + std::to_string(dist), scan_launch_config{128, 32}});
          for (auto [t, i] : std::vector<std::pair<int, int>>{{256, 32}, {64, 32}})
            cs.push_back({shape(t, i) + " prefetch " + std::to_string(sms) + " tiles, swept off",
                          "scan.swept=0,scan.prefetch=" + std::to_string(sms), scan_launch_config{t, i}});
          for (int dist : {sms / 2, 3 * sms / 4, sms, 5 * sms / 4, 3 * sms / 2, 2 * sms})
            cs.push_back({"128x32 prefetch " + std::to_string(dist) + " tiles", "scan.prefetch=" + std::to_string(dist),
                          scan_launch_config{128, 32}});
          for (auto [t, i] : std::vector<std::pair<int, int>>{{256, 32}, {64, 32}})
            cs.push_back({shape(t, i) + " prefetch " + std::to_string(sms) + " tiles",
                          "scan.prefetch=" + std::to_string(sms), scan_launch_config{t, i}});
          return cs;
        }(),
        [&](const scan_candidate& c) {
          detred::cuda::inclusive_scan(xa, ya, nd, compose_affine{}, ws, ws_bytes, nullptr, c.config);
        },
        ya, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveScan(cub_ws, b, xa, ya, compose_affine{}, nd);
        });
    // fp64 and fp32 sums at 1 GiB (their bars are met; the same knobs must not cost them).
    to_double<<<4096, 256>>>(xf, xd, nd);
    run(
        "fp64 inclusive sum 1 GiB", 2 * bytes, 1, big_candidates({{128, 32}, {256, 32}}),
        [&](const scan_candidate& c) { detred::cuda::inclusive_sum_scan(xd, yd, nd, ws, ws_bytes, nullptr, c.config); },
        yd, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveSum(cub_ws, b, xd, yd, nd);
        });
    run(
        "fp32 inclusive sum 1 GiB", 2 * bytes, 1, big_candidates({{256, 32}, {128, 32}}),
        [&](const scan_candidate& c) { detred::cuda::inclusive_sum_scan(xf, yf, nf, ws, ws_bytes, nullptr, c.config); },
        yf, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, nf);
        });
    // (b) fp32 per call at 2^20 (and 2^16, whose bar is met): shapes x flag clearing.
    for (int lg : {20, 16}) {
      const std::uint64_t n = std::uint64_t{1} << lg;
      std::vector<scan_candidate> cs{{"default", "", {}}, {"default, swept off", "scan.swept=0", {}}};
      for (const char* init : {"kernel", "kernel_early"})
        cs.push_back({std::string("default, init ") + init, std::string("scan.init=") + init, {}});
      const std::vector<std::pair<int, int>> shapes =
          lg == 20 ? std::vector<std::pair<int, int>>{{256, 32}, {128, 32}, {256, 16}, {64, 32}, {128, 16}, {256, 8}}
                   : std::vector<std::pair<int, int>>{{256, 32}, {128, 32}, {256, 16}};
      for (auto [t, i] : shapes)
        for (const char* init : {"memset", "kernel", "kernel_early"})
          cs.push_back({shape(t, i) + " init " + init, std::string("scan.init=") + init, scan_launch_config{t, i}});
      cs.push_back({"128x32 kernel_early prefetch 132", "scan.init=kernel_early,scan.prefetch=132",
                    scan_launch_config{128, 32}});
      const std::string label = "fp32 n = 2^" + std::to_string(lg) + " per call (100 back-to-back)";
      run(
          label.c_str(), 2 * n * 4, 100, cs,
          [&](const scan_candidate& c) {
            detred::cuda::inclusive_sum_scan(xf, yf, n, ws, ws_bytes, nullptr, c.config);
          },
          yf, n * 4,
          [&] {
            std::size_t b = cub_bytes;
            cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, n);
          });
    }
    std::printf("bits identical to the default's for every candidate: %s\n", all_same ? "yes" : "NO");
    return all_same ? 0 : 1;
  }

  if (profile) {
    std::size_t b = cub_bytes;
    detred::cuda::inclusive_sum_scan(xf, yf, nf, ws, ws_bytes);
    cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, nf);
    check(cudaDeviceSynchronize(), "profile");
    std::printf("profile: one detred and one CUB fp32 inclusive sum of 1 GiB\n");
    return 0;
  }
  const double copy = median_ms([&] { cudaMemcpyAsync(yf, xf, bytes, cudaMemcpyDeviceToDevice); });
  std::printf("copy 1 GiB (read + write)            %8.3f ms  %7.0f GB/s\n", copy, gbs(2.0 * bytes, copy));

  // fp32 and fp64 inclusive sums, 1 GiB, detred default and every shape, against CUB.
  to_double<<<4096, 256>>>(xf, xd, nd);
  for (int type = 0; type < 2; ++type) {
    const char* name = type == 0 ? "fp32" : "fp64";
    const std::uint64_t n = type == 0 ? nf : nd;
    const auto cub_call = [&] {
      std::size_t b = cub_bytes;
      if (type == 0)
        cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, n);
      else
        cub::DeviceScan::InclusiveSum(cub_ws, b, xd, yd, n);
    };
    const auto detred_call = [&](detred::cuda::scan_launch_config c) {
      return [&, c] {
        if (type == 0)
          detred::cuda::inclusive_sum_scan(xf, yf, n, ws, ws_bytes, nullptr, c);
        else
          detred::cuda::inclusive_sum_scan(xd, yd, n, ws, ws_bytes, nullptr, c);
      };
    };
    const double tc = median_ms(cub_call);
    const double td = median_ms(detred_call({}));
    std::printf("%s inclusive sum 1 GiB: CUB InclusiveSum %7.0f GB/s | detred %7.0f GB/s = %.3fx CUB, %.3fx copy\n",
                name, gbs(2.0 * bytes, tc), gbs(2.0 * bytes, td), tc / td, copy / td);
    for (int backoff : {32, 100, 300}) {
      detred::cuda::detail::lookback_backoff_ns = backoff;
      const double tb = median_ms(detred_call({}), 1, 10);
      std::printf("   look-back pause %3d ns: %7.0f GB/s (%.3fx CUB)\n", backoff, gbs(2.0 * bytes, tb), tc / tb);
    }
    detred::cuda::detail::lookback_backoff_ns = 0;
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
        if (type == 1 && t == 256 && i == 32) continue;  // does not fit shared memory for 8-byte values
        const double ts = median_ms(detred_call({t, i}), 1, 10);
        std::printf("   shape %3dx%-2d %7.0f GB/s (%.3fx CUB)\n", t, i, gbs(2.0 * bytes, ts), tc / ts);
      }
    // Reproducibility on this GPU: 5 runs of each, distinct outputs.
    std::vector<std::uint64_t> hd, hc;
    for (int r = 0; r < 5; ++r) {
      detred_call({})();
      hd.push_back(hash_bytes(type == 0 ? (void*)yf : (void*)yd, bytes));
      cub_call();
      hc.push_back(hash_bytes(type == 0 ? (void*)yf : (void*)yd, bytes));
    }
    std::sort(hd.begin(), hd.end());
    std::sort(hc.begin(), hc.end());
    std::printf("   distinct outputs in 5 runs: detred %d, CUB %d\n",
                int(std::unique(hd.begin(), hd.end()) - hd.begin()),
                int(std::unique(hc.begin(), hc.end()) - hc.begin()));
  }

  // Small inputs, fp32: per call, 100 back-to-back calls between two events, and one call between two events.
  for (std::uint64_t n : {std::uint64_t{1} << 16, std::uint64_t{1} << 20}) {
    const auto cub_call = [&] {
      std::size_t b = cub_bytes;
      cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, n);
    };
    const auto detred_call = [&] { detred::cuda::inclusive_sum_scan(xf, yf, n, ws, ws_bytes); };
    const double c100 = median_ms(cub_call, 100), d100 = median_ms(detred_call, 100);
    const double c1 = median_ms(cub_call), d1 = median_ms(detred_call);
    std::printf(
        "fp32 n = 2^%d: per call (100 back-to-back) CUB %.2f us, detred %.2f us = %.3fx CUB | one call CUB "
        "%.2f us, detred %.2f us\n",
        n == (1u << 16) ? 16 : 20, c100 * 1e3, d100 * 1e3, d100 / c100, c1 * 1e3, d1 * 1e3);
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
        const detred::cuda::scan_launch_config c{t, i};
        const double ts =
            median_ms([&] { detred::cuda::inclusive_sum_scan(xf, yf, n, ws, ws_bytes, nullptr, c); }, 100);
        std::printf("   shape %3dx%-2d per call %.2f us (%.3fx CUB)\n", t, i, ts * 1e3, ts / c100);
      }
  }

  // The affine-map scan: 2^27 maps of two fp32 (1 GiB), against copy; CUB's InclusiveScan with the same op as a peer.
  to_affine<<<4096, 256>>>(xf, xa, nd);
  {
    const double td = median_ms([&] { detred::cuda::inclusive_scan(xa, ya, nd, compose_affine{}, ws, ws_bytes); });
    const double tc = median_ms([&] {
      std::size_t b = cub_bytes;
      cub::DeviceScan::InclusiveScan(cub_ws, b, xa, ya, compose_affine{}, nd);
    });
    std::printf("affine-map scan 1 GiB: detred %7.0f GB/s = %.3fx copy | CUB InclusiveScan %7.0f GB/s\n",
                gbs(2.0 * bytes, td), copy / td, gbs(2.0 * bytes, tc));
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
        if (t == 256 && i == 32) continue;
        const detred::cuda::scan_launch_config c{t, i};
        const double ts = median_ms(
            [&] { detred::cuda::inclusive_scan(xa, ya, nd, compose_affine{}, ws, ws_bytes, nullptr, c); }, 1, 10);
        std::printf("   shape %3dx%-2d %7.0f GB/s (%.3fx copy)\n", t, i, gbs(2.0 * bytes, ts), copy / ts);
      }
  }

  // Building blocks: 64 dependent scans per thread, 132 * 64 blocks of 256 threads.
  {
    const int blocks = 132 * 64;
    const double w0 = median_ms([&] { warp_bench<0><<<blocks, 256>>>(xf, yf); });
    const double w1 = median_ms([&] { warp_bench<1><<<blocks, 256>>>(xf, yf); });
    const double w2 = median_ms([&] { warp_bench<2><<<blocks, 256>>>(xf, yf); });
    std::printf("warp scan x%d: canonical %.3f ms (%.3fx CUB WarpScan), log-step %.3f ms, CUB WarpScan %.3f ms\n",
                rounds, w0, w2 / w0, w1, w2);
    const double b0 = median_ms([&] { block_bench<0><<<blocks, 256>>>(xf, yf); });
    const double b1 = median_ms([&] { block_bench<1><<<blocks, 256>>>(xf, yf); });
    std::printf("block scan 256x4 x%d: canonical %.3f ms (%.3fx CUB BlockScan), CUB BlockScan %.3f ms\n", rounds, b0,
                b1 / b0, b1);
  }
  check(cudaDeviceSynchronize(), "end");
  return 0;
}
