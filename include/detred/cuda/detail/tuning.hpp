// Every per-device default of detred's device calls, in one place. Each value changes speed only, never bits: a sum's
// order is a function of n and the types, and every scan output is the canonical reduce of its prefix
// (docs/ORDER.md), whatever the block size, chunk size, passes in flight or prefetch distance; the GPU tests prove it
// over many configurations (tests/cuda/test_canonical_sum.cpp, EveryTuningKeepsTheCpuBits; the scan's tests).
//
// Device classes. The H100 (about 3.0 TB/s read) and the H200 (about 4.3 TB/s) have the same 132 SMs and 50 MB of
// L2, so a shape that keeps enough bytes in flight on the first can starve the second. A device is classed by its
// peak DRAM bandwidth per SM, from two device attributes (memory clock and bus width): `standard` below 32 GB/s per
// SM (H100 SXM: 3,352 GB/s / 132 = 25.4; also unknown attributes), `high` at or above (H200: 4,916 / 132 = 37.2).
// `standard` holds the values measured on the H100, `high` those measured on the H200 (docs/PERFORMANCE.md).
//
// Overrides: DETRED_CUDA_TUNING, a comma-separated list of key=value pairs (keys below, at parse_tuning_overrides),
// read once per process at the first device call; a list that does not parse is ignored as a whole.
//
// Everything above current_tuning() is pure (no CUDA calls): the choice is tested on the host
// (tests/cuda/test_device_tuning.cpp). The state behind current_tuning() is src/cuda/common/tuning.cpp.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace detred::cuda::detail {

// What the tuning knows about a device (queried once per device).
struct device_profile {
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  int memory_clock_khz = 0;  // cudaDevAttrMemoryClockRate (0: unknown)
  int memory_bus_bits = 0;   // cudaDevAttrGlobalMemoryBusWidth (0: unknown)
};

// Peak DRAM bandwidth in GB/s (double data rate: 2 transfers per clock), 0 when an attribute is unknown.
inline double peak_dram_gb_per_s(const device_profile& p) {
  return 2.0 * double(p.memory_clock_khz) * 1e3 * double(p.memory_bus_bits) / 8.0 / 1e9;
}

enum class bandwidth_class {
  standard,  // < 32 GB/s of peak DRAM bandwidth per SM (H100 SXM, H100 PCIe), or unknown
  high,      // >= 32 GB/s per SM (H200)
};
inline constexpr double high_bandwidth_per_sm_gb_per_s = 32.0;

// The class of a device (unknown attributes or SM count: standard).
inline bandwidth_class classify(const device_profile& p) {
  const double total = peak_dram_gb_per_s(p);
  if (total <= 0 || p.multiprocessors <= 0) return bandwidth_class::standard;
  return total / p.multiprocessors >= high_bandwidth_per_sm_gb_per_s ? bandwidth_class::high
                                                                     : bandwidth_class::standard;
}

inline const char* to_string(bandwidth_class c) { return c == bandwidth_class::high ? "high" : "standard"; }

// The canonical sum (src/cuda/sum/): what sum_options leaves 0 is chosen from these.
struct sum_tuning {
  // Threads per block of the large-input chunk kernel: a multiple of 32 in [32, 256]. At 256 a large sum is one
  // launch (the last block to finish folds the roots); at any other size it is two (the chunk kernel, then a
  // one-block finishing kernel). Small inputs run on one-warp blocks whatever this says.
  int block_threads = 256;
  // Passes of loads a warp keeps in flight while reading its chunk: 1, or 2 (only where two passes fit the registers:
  // plain fp64 and Neumaier fp32 sums of aligned inputs, canonical_sum_kernels.cuh; elsewhere 1 is used).
  int pass_depth = 1;
};

// The scans (include/detred/cuda/detail/scan_kernel.cuh): what scan_options leaves 0 is chosen from these.
struct scan_tuning {
  int block_threads_4 = 256, items_per_thread_4 = 32;  // values of 4 bytes
  int block_threads_8 = 128, items_per_thread_8 = 32;  // values of 8 bytes (fp64, affine maps of two floats)
  int prefetch_tiles = 0;  // each block L2-prefetches the input of the tile this many tiles ahead (0: none)
};

// The exact sum (src/cuda/exact/): kernel 1's block count, in waves of the blocks the device keeps resident (capped
// by the workspace's bound, exact_block_bound(n)). Speed only: the exact sum's bits never depend on the grid.
// interleave = 1 (the default): kernel 1 runs its streamed form (exact_streamed_tuning: block b takes the chunks b,
// b + G, ... of a step's vectors, read with 256-byte L2 fetches) for n <= 2^40; 0: each block takes a contiguous
// range (H100, bench_exact 15: f32 0.93x CUB with 0, 0.95-0.96x with 1; f64 full range 0.88x -> 0.93x).
// load32, load64: the streamed form's loads above the small sums (16 MiB) for binary32 and for binary64 inputs: 2 (the
// default) non-coherent 16-byte loads without L1 allocation, L2 fetching 256-byte blocks; 0 plain 16-byte loads.
// binary16 and bfloat16 inputs always take 2.
// digits64 = 1: binary64 sums above the small sums (with interleave = 1) take the digit-column kernel 1
// (exact_digit_columns_tuning: every term by five shared-memory atomics into digit rows six threads share, 12 warps
// an SM, plain loads; load64 then unused); 0 (the default): extracted levels.
struct exact_tuning {
  int waves = 1;
  int interleave = 1;
  int load32 = 2;
  int load64 = 2;
  int digits64 = 0;
};

// The row family (src/cuda/rows/): threads a block of the shared-memory log-sum-exp kernel (softmax, log_softmax and
// logsumexp of long rows, block_row_logsumexp.cuh); 0: chosen from the row's size (block_rows_threads).
struct rows_tuning {
  int block_row_threads = 0;
};

struct tuning {
  sum_tuning sum;
  scan_tuning scan;
  exact_tuning exact;
  rows_tuning rows;
};

// The built-in defaults of a device class, each measured on that class's GPU (docs/PERFORMANCE.md):
// - both: the scans L2-prefetch the tile one SM count (132) ahead;
// - high (H200): the canonical sum keeps two passes of loads in flight a warp (fp64 1 GiB about 0.94 -> 0.965x
//   CUB's bandwidth, tree_neumaier fp32 about 1% faster; on the H100 it cost the plain sum 0.4-0.7%) and runs large
//   sums on 128-thread blocks, as two kernels (fp64 1 GiB 0.980 -> 0.984-0.988x CUB, fp32 0.986 -> 0.993x; a tie on the
//   H100, which keeps the single pass at 256), and the exact sum's streamed kernel 1 reads binary32 inputs with plain
//   16-byte loads above 16 MiB (bench_exact sweep, 1 GiB: fp32 0.93 -> 0.99x CUB; the 256-byte L2 fetches, 1-2% faster
//   on the H100, cost the H200 that much), and binary64 inputs likewise (bench_exact 15, same program, 1 GiB: uniform
//   0.95-0.96 -> 0.97-0.98x CUB, normal, ill-conditioned and full range 2-3% faster), and binary64 sums above 16 MiB
//   by digit columns (exact.digits64=1; bench_exact sweep, 1 GiB: full range 0.855 -> 0.953-0.961x CUB, uniform,
//   normal and ill-conditioned 0.956-0.973 -> 0.953-0.963x; not measured on the H100, which keeps the extracted
//   levels).
inline tuning defaults_for(bandwidth_class c) {
  tuning t;
  t.scan.prefetch_tiles = 132;
  if (c == bandwidth_class::high) {
    t.sum.pass_depth = 2;
    t.sum.block_threads = 128;
    t.exact.load32 = 0;
    t.exact.load64 = 0;
    t.exact.digits64 = 1;
  }
  return t;
}

// The result of parsing an override list: the tuning, or the first token that failed.
struct tuning_parse_result {
  tuning value;
  bool ok = true;
  std::string error;  // "bad token: <token>" when !ok
};

// Applies a comma-separated list of key=value overrides to `base` (empty: base unchanged). Keys and their ranges:
//   sum.block_threads (32..256, a multiple of 32), sum.depth (1, 2),
//   scan.threads4, scan.threads8 (32, 64, 128, 256), scan.items4, scan.items8 (4, 8, 16, 32), scan.prefetch (0..4096),
//   exact.waves (1..32), exact.interleave (0, 1), exact.load32, exact.load64 (0, 2), exact.digits64 (0, 1),
//   rows.block_threads (0: the default, or 64..1024, a multiple of 32).
// A value outside its key's range, an unknown key or a malformed token leaves `base` as it was and reports the token.
inline tuning_parse_result parse_tuning_overrides(const tuning& base, std::string_view spec) {
  tuning_parse_result r{base, true, {}};
  tuning t = base;
  const auto fail = [&](std::string_view token) {
    r.value = base;
    r.ok = false;
    r.error = "bad token: " + std::string(token);
    return r;
  };
  const auto number = [](std::string_view v, int& out) {
    if (v.empty() || v.size() > 9) return false;
    int x = 0;
    for (char ch : v) {
      if (ch < '0' || ch > '9') return false;
      x = x * 10 + (ch - '0');
    }
    out = x;
    return true;
  };
  const auto one_of = [](int v, std::initializer_list<int> allowed) {
    for (int a : allowed)
      if (v == a) return true;
    return false;
  };
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view token = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (token.empty()) continue;
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) return fail(token);
    const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
    int v = 0;
    if (!number(value, v)) return fail(token);
    if (key == "sum.block_threads" && v >= 32 && v <= 256 && v % 32 == 0)
      t.sum.block_threads = v;
    else if (key == "sum.depth" && one_of(v, {1, 2}))
      t.sum.pass_depth = v;
    else if (key == "scan.threads4" && one_of(v, {32, 64, 128, 256}))
      t.scan.block_threads_4 = v;
    else if (key == "scan.items4" && one_of(v, {4, 8, 16, 32}))
      t.scan.items_per_thread_4 = v;
    else if (key == "scan.threads8" && one_of(v, {32, 64, 128, 256}))
      t.scan.block_threads_8 = v;
    else if (key == "scan.items8" && one_of(v, {4, 8, 16, 32}))
      t.scan.items_per_thread_8 = v;
    else if (key == "scan.prefetch" && v <= 4096)
      t.scan.prefetch_tiles = v;
    else if (key == "exact.waves" && v >= 1 && v <= 32)
      t.exact.waves = v;
    else if (key == "exact.interleave" && one_of(v, {0, 1}))
      t.exact.interleave = v;
    else if (key == "exact.load32" && one_of(v, {0, 2}))
      t.exact.load32 = v;
    else if (key == "exact.load64" && one_of(v, {0, 2}))
      t.exact.load64 = v;
    else if (key == "exact.digits64" && one_of(v, {0, 1}))
      t.exact.digits64 = v;
    else if (key == "rows.block_threads" && (v == 0 || (v >= 64 && v <= 1024 && v % 32 == 0)))
      t.rows.block_row_threads = v;
    else
      return fail(token);
  }
  r.value = t;
  return r;
}

// The tuning in force for a device: its class's defaults, then the overrides (a list that does not parse is ignored
// as a whole: the defaults stay, and `error`, when given, says why).
inline tuning tuning_for(const device_profile& p, std::string_view overrides, std::string* error = nullptr) {
  const tuning_parse_result r = parse_tuning_overrides(defaults_for(classify(p)), overrides);
  if (!r.ok && error) *error = r.error;
  return r.value;
}

// The tuning in force for the current device: cached per device and override generation, so a call costs a
// cudaGetDevice and a thread-local lookup (no getenv, no mutex). Throws cuda_error on a CUDA failure.
tuning current_tuning();
// The current device's profile (cached).
device_profile current_device_profile();
// Replaces the process's overrides (DETRED_CUDA_TUNING's syntax; null or "": none, the class's defaults) for every
// later call on every thread; for benchmarks and tests. Returns false, changing nothing, when the list does not
// parse. Not for use while another thread launches (a launch then sees either the old or the new tuning, whole).
bool set_tuning_overrides(const char* spec);

}  // namespace detred::cuda::detail
