// GPU scans: detred::cuda's canonical scans against the toolkit's CUB (cub::DeviceScan, WarpScan, BlockScan) and the
// copy bandwidth, all in this one program (docs/PERFORMANCE.md, "GPU scans"). Medians of CUDA-event timings
// (bench/support/bench_support.hpp).
//   bench_scan [reps]           (default 30)
//   bench_scan 1 profile        one fp32 1 GiB call of detred's scan and one of CUB's (for ncu -k ... -c 1)
//   bench_scan R tune           the scan tuning's candidates (include/detred/cuda/detail/tuning.hpp): the affine-map
//                               scan and the fp32 / fp64 sums at 1 GiB over tile shapes (256 x 32 for 8-byte values
//                               through dynamic shared memory) and L2 prefetch distances, against copy and CUB; fp32
//                               at 2^20 and 2^16 per call (100 back-to-back calls) over shapes. Candidates, copy and
//                               CUB take turns in each of R rounds (medians); every candidate's output is compared on
//                               the GPU, word for word, with the default's (exit 1 if any differ).
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

#include "bench/support/bench_support.hpp"
#include "bench/support/interleaved_timing.hpp"
#include "detred/cuda/block/block_scan.cuh"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.cuh"
#include "detred/cuda/scan.hpp"
#include "detred/cuda/warp/warp_scan.cuh"

namespace {
using detred::cuda::check;
using detred::cuda::scan_options;
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

// Median ms per call: of `r` timings (default reps) of one call (calls == 1) or of `calls` back-to-back calls.
double median_ms(const std::function<void()>& f, int calls = 1, int r = -1) {
  if (r < 0) r = reps;
  const double s =
      calls == 1 ? detred::bench::single_call_seconds(f, r) : detred::bench::back_to_back_seconds(f, r, calls);
  return s * 1e3;
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
  check(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
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

// One candidate of the tune mode: a launch shape (0 x 0: the tuning's) and tuning overrides (tuning.hpp's syntax).
struct scan_candidate {
  std::string name, overrides;
  scan_options options;
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
  const std::uint64_t bytes = detred::bench::one_gib;
  const std::uint64_t nf = bytes / 4, nd = bytes / 8;
  detred::bench::device_buffer<float> xf_buffer(nf), yf_buffer(nf);
  detred::bench::device_buffer<double> xd_buffer(nd), yd_buffer(nd);
  float *xf = xf_buffer.get(), *yf = yf_buffer.get();
  double *xd = xd_buffer.get(), *yd = yd_buffer.get();
  affine* xa = reinterpret_cast<affine*>(xd);
  affine* ya = reinterpret_cast<affine*>(yd);
  detred::bench::fill_uniform(xf, nf);
  // One workspace for every call below: the largest the size queries ask for.
  std::size_t ws_bytes = 0;
  for (std::size_t b : {std::size_t{0}, std::size_t{1}, std::size_t{2}}) {
    std::size_t q = 0;
    if (b == 0) detred::cuda::inclusive_sum_scan(nullptr, q, xf, yf, nf);
    if (b == 1) detred::cuda::inclusive_sum_scan(nullptr, q, xd, yd, nd);
    if (b == 2) detred::cuda::inclusive_scan(nullptr, q, xa, ya, nd, compose_affine{});
    ws_bytes = std::max(ws_bytes, q);
  }
  detred::bench::device_buffer<unsigned char> ws_buffer(ws_bytes);
  void* ws = ws_buffer.get();
  std::size_t cub_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, xf, yf, nf);
  std::size_t b2 = 0;
  cub::DeviceScan::InclusiveSum(nullptr, b2, xd, yd, nd);
  cub_bytes = std::max(cub_bytes, b2);
  cub::DeviceScan::InclusiveScan(nullptr, b2, xa, ya, compose_affine{}, nd);
  cub_bytes = std::max(cub_bytes, b2);
  detred::bench::device_buffer<unsigned char> cub_buffer(cub_bytes);
  void* cub_ws = cub_buffer.get();
  const auto gbs = [](double moved, double ms) { return moved / ms / 1e6; };
  // detred's calls with the preallocated workspace.
  const auto sum_scan = [&](const auto* in, auto* out, std::uint64_t n, const scan_options& o = {}) {
    std::size_t b = ws_bytes;
    detred::cuda::inclusive_sum_scan(ws, b, in, out, n, nullptr, o);
  };
  const auto affine_scan = [&](std::uint64_t n, const scan_options& o = {}) {
    std::size_t b = ws_bytes;
    detred::cuda::inclusive_scan(ws, b, xa, ya, n, compose_affine{}, nullptr, o);
  };

  if (argc > 2 && std::string(argv[2]) == "tune") {
    namespace d = detred::cuda::detail;
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
    detred::bench::device_buffer<unsigned char> ref_buffer(bytes);  // the default's output
    detred::bench::device_buffer<unsigned long long> diff_buffer(1);
    void* ref = ref_buffer.get();
    unsigned long long* diff = diff_buffer.get();
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
    // Prefetch distances in tiles: none, and about 1, 2, 4 and 8 tiles per SM ahead (scaled to the device).
    const int sms = prof.multiprocessors > 0 ? prof.multiprocessors : 132;
    const std::vector<int> distances{0, sms, 2 * sms, 4 * sms, 8 * sms};
    const auto big_candidates = [&](const std::vector<std::pair<int, int>>& shapes) {
      std::vector<scan_candidate> cs{{"default", "", {}}};
      for (auto [t, i] : shapes)
        for (int dist : distances)
          cs.push_back({shape(t, i) + " prefetch " + std::to_string(dist) + " tiles",
                        "scan.prefetch=" + std::to_string(dist), scan_options{t, i}});
      return cs;
    };
    // (a) the affine-map scan, 1 GiB (2^27 maps of two fp32), at finer prefetch distances around one tile per SM.
    to_affine<<<4096, 256>>>(xf, xa, nd);
    std::vector<scan_candidate> affine_candidates{{"default", "", {}}};
    for (int dist : {0, sms / 2, 3 * sms / 4, sms, 5 * sms / 4, 3 * sms / 2, 2 * sms})
      affine_candidates.push_back({"128x32 prefetch " + std::to_string(dist) + " tiles",
                                   "scan.prefetch=" + std::to_string(dist), scan_options{128, 32}});
    for (auto [t, i] : std::vector<std::pair<int, int>>{{256, 32}, {64, 32}})
      affine_candidates.push_back({shape(t, i) + " prefetch " + std::to_string(sms) + " tiles",
                                   "scan.prefetch=" + std::to_string(sms), scan_options{t, i}});
    run(
        "affine-map scan 1 GiB", 2 * bytes, 1, affine_candidates,
        [&](const scan_candidate& c) { affine_scan(nd, c.options); }, ya, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveScan(cub_ws, b, xa, ya, compose_affine{}, nd);
        });
    // fp64 and fp32 sums at 1 GiB.
    to_double<<<4096, 256>>>(xf, xd, nd);
    run(
        "fp64 inclusive sum 1 GiB", 2 * bytes, 1, big_candidates({{128, 32}, {256, 32}}),
        [&](const scan_candidate& c) { sum_scan(xd, yd, nd, c.options); }, yd, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveSum(cub_ws, b, xd, yd, nd);
        });
    run(
        "fp32 inclusive sum 1 GiB", 2 * bytes, 1, big_candidates({{256, 32}, {128, 32}}),
        [&](const scan_candidate& c) { sum_scan(xf, yf, nf, c.options); }, yf, bytes,
        [&] {
          std::size_t b = cub_bytes;
          cub::DeviceScan::InclusiveSum(cub_ws, b, xf, yf, nf);
        });
    // (b) fp32 per call at 2^20 and 2^16: shapes, with and without the L2 prefetch.
    for (int lg : {20, 16}) {
      const std::uint64_t n = std::uint64_t{1} << lg;
      std::vector<scan_candidate> cs{{"default", "", {}}, {"default, prefetch 0", "scan.prefetch=0", {}}};
      const std::vector<std::pair<int, int>> shapes =
          lg == 20 ? std::vector<std::pair<int, int>>{{256, 32}, {128, 32}, {256, 16}, {64, 32}, {128, 16}, {256, 8}}
                   : std::vector<std::pair<int, int>>{{256, 32}, {128, 32}, {256, 16}};
      for (auto [t, i] : shapes) cs.push_back({shape(t, i), "", scan_options{t, i}});
      const std::string label = "fp32 n = 2^" + std::to_string(lg) + " per call (100 back-to-back)";
      run(
          label.c_str(), 2 * n * 4, 100, cs, [&](const scan_candidate& c) { sum_scan(xf, yf, n, c.options); }, yf,
          n * 4,
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
    sum_scan(xf, yf, nf);
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
    const auto detred_call = [&](scan_options c) {
      return [&, c] {
        if (type == 0)
          sum_scan(xf, yf, n, c);
        else
          sum_scan(xd, yd, n, c);
      };
    };
    const double tc = median_ms(cub_call);
    const double td = median_ms(detred_call({}));
    std::printf("%s inclusive sum 1 GiB: CUB InclusiveSum %7.0f GB/s | detred %7.0f GB/s = %.3fx CUB, %.3fx copy\n",
                name, gbs(2.0 * bytes, tc), gbs(2.0 * bytes, td), tc / td, copy / td);
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
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
    const auto detred_call = [&] { sum_scan(xf, yf, n); };
    const double c100 = median_ms(cub_call, 100), d100 = median_ms(detred_call, 100);
    const double c1 = median_ms(cub_call), d1 = median_ms(detred_call);
    std::printf(
        "fp32 n = 2^%d: per call (100 back-to-back) CUB %.2f us, detred %.2f us = %.3fx CUB | one call CUB "
        "%.2f us, detred %.2f us\n",
        n == (1u << 16) ? 16 : 20, c100 * 1e3, d100 * 1e3, d100 / c100, c1 * 1e3, d1 * 1e3);
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
        const scan_options c{t, i};
        const double ts = median_ms([&] { sum_scan(xf, yf, n, c); }, 100);
        std::printf("   shape %3dx%-2d per call %.2f us (%.3fx CUB)\n", t, i, ts * 1e3, ts / c100);
      }
  }

  // The affine-map scan: 2^27 maps of two fp32 (1 GiB), against copy; CUB's InclusiveScan with the same op as a peer.
  to_affine<<<4096, 256>>>(xf, xa, nd);
  {
    const double td = median_ms([&] { affine_scan(nd); });
    const double tc = median_ms([&] {
      std::size_t b = cub_bytes;
      cub::DeviceScan::InclusiveScan(cub_ws, b, xa, ya, compose_affine{}, nd);
    });
    std::printf("affine-map scan 1 GiB: detred %7.0f GB/s = %.3fx copy | CUB InclusiveScan %7.0f GB/s\n",
                gbs(2.0 * bytes, td), copy / td, gbs(2.0 * bytes, tc));
    for (int t : {64, 128, 256})
      for (int i : {4, 8, 16, 32}) {
        const scan_options c{t, i};
        const double ts = median_ms([&] { affine_scan(nd, c); }, 1, 10);
        std::printf("   shape %3dx%-2d %7.0f GB/s (%.3fx copy)\n", t, i, gbs(2.0 * bytes, ts), copy / ts);
      }
  }

  // Building blocks: 64 dependent scans per thread, 132 * 64 blocks of 256 threads.
  {
    const int blocks = 132 * 64;
    const double w0 = median_ms([&] { warp_bench<0><<<blocks, 256>>>(xf, yf); });
    const double w1 = median_ms([&] { warp_bench<1><<<blocks, 256>>>(xf, yf); });
    std::printf("warp scan x%d: canonical %.3f ms (%.3fx CUB WarpScan), CUB WarpScan %.3f ms\n", rounds, w0, w1 / w0,
                w1);
    const double b0 = median_ms([&] { block_bench<0><<<blocks, 256>>>(xf, yf); });
    const double b1 = median_ms([&] { block_bench<1><<<blocks, 256>>>(xf, yf); });
    std::printf("block scan 256x4 x%d: canonical %.3f ms (%.3fx CUB BlockScan), CUB BlockScan %.3f ms\n", rounds, b0,
                b1 / b0, b1);
  }
  check(cudaDeviceSynchronize(), "end");
  return 0;
}
