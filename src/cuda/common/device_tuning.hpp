// Per-device launch defaults of the canonical sum and the scans, apart from the algorithms. Every value here changes
// speed only, never bits: the sum's order is a function of n and the types, and every scan output is the canonical
// reduce of its prefix (docs/ORDER.md), whatever the block size, chunk size, rows per pass, prefetch or flag clearing;
// the GPU tests prove it over many configurations (tests/cuda/test_canonical_sum.cpp, EveryTuningKeepsTheCpuBits).
//
// Why per device: the H100 (about 3.0 TB/s read) and the H200 (about 4.3 TB/s) have the same 132 SMs and 50 MB of
// L2, so a shape that keeps enough bytes in flight on the first can starve the second (docs/PERFORMANCE.md, issues 15
// and 16). The key is the device's peak DRAM bandwidth per SM, from two device attributes (memory clock and bus
// width): `standard` below 32 GB/s per SM (H100 SXM: 3,352 GB/s / 132 = 25.4), `high` at or above (H200: 4,916 / 132
// = 37.2). `standard` holds the values measured on the H100; `high` the scan changes the H200 run chose
// (bench/h200_tune_run.sh, defaults_for); a process can override any value with DETRED_CUDA_TUNING
// (parse_tuning_overrides).
//
// This header is pure (no CUDA calls): the choice logic is tested on the host (tests/cuda/test_device_tuning.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "detred/cuda/scan.hpp"  // scan_tuning, scan_flag_init

namespace detred::cuda::detail {

// What the launch policies know about a device (queried once per device: device_tuning.cpp).
struct device_profile {
  int compute_major = 0;
  int compute_minor = 0;
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

// The canonical sum's defaults (src/cuda/common/launch_policy.hpp applies them; launch_config fields set by the
// caller win over every one of them).
struct sum_tuning {
  int block_threads = 256;       // 32..256, multiple of 32; single pass only at 256 (and 32: spread)
  int max_tiles_per_chunk = 16;  // 1, 2, 4, 8, 16: the largest chunk the policy picks for large inputs
  int grid_blocks_per_sm = 0;    // 0: one chunk per warp (no grid-stride loop); k > 0: k blocks per SM
  bool spread = true;            // small inputs on one-warp blocks (launch_policy.hpp, spread_small_input)
  int rows_per_pass = 0;         // warp_chunk_root's pass: 0 = the type's default (32 rows for 4-byte
                                 // accumulators, 16 for 8-byte ones), 8 (two blocks an SM), 16 or 32 (plain
                                 // fp32/fp64, aligned input)
  int pass_depth = 1;            // passes of loads in flight a warp: 1 or 2 in registers, 3 staged in shared memory
                                 // by bulk copies (experiment; plain fp32/fp64, aligned input;
                                 // passes of at most 16 rows: two 32-row passes do not fit the registers)
  int prefetch_passes = 0;       // L2 bulk prefetch this many passes ahead of the loads (0: none; >= passes of a
                                 // chunk: the whole chunk up front); plain fp32/fp64, aligned input
  bool early = true;             // small inputs' chunk kernel (one-warp blocks) launched by programmatic dependent
                                 // launch: scheduled while the stream's previous kernel runs, it waits for it before
                                 // touching memory (session 9, both classes: about 0.9 us less a call back to back;
                                 // docs/PERFORMANCE.md, issue 15)
  bool two_pass = false;         // the chunk kernel, then a one-block finishing kernel, instead of the single pass
                                 // (side-by-side measurements; also set by DETRED_CUDA_SUM_TWO_PASS=1)
};

struct launch_tuning {
  sum_tuning sum;
  scan_tuning scan;
};

// The built-in defaults for a class of device (docs/PERFORMANCE.md): the H100's values for `standard`, the H200's for
// `high`, each chosen by a tuning run on that GPU (bench/h200_tune_run.sh measures the alternatives on either).
inline launch_tuning defaults_for(bandwidth_class c) {
  launch_tuning t;
  switch (c) {
    case bandwidth_class::standard:
      // H100, measured 2026-11-24 (session 7, the same tuning run on the H100; docs/PERFORMANCE.md, scans): the H200's
      // scan settings below help here too: affine-map scan 0.878 -> 0.935x copy, fp64 sum scan 0.991 -> 0.930x CUB's
      // time, fp32 (256 x 32) 1.068 -> 0.970x, fp32 2^20 per call 1.10 -> 0.97x CUB's time. The classes part on
      // two values: since session 9 the H200's two passes in flight (sum.depth=2) cost the H100 0.4-0.7% at fp64 1 GiB
      // (0.9735 / 0.9729 against 0.9774 / 0.9795x CUB in two tunes), so the H100 keeps one; since session 10 the H200
      // runs large sums on 128-thread blocks, a tie on the H100 (0.9888 against 0.9898x CUB at fp64 1 GiB).
      t.scan.prefetch_tiles = 132;
      t.scan.flag_init = scan_flag_init::kernel_early;
      break;
    case bandwidth_class::high:
      // H200, measured 2026-11-23 (session 6, bench/h200_tune_run.sh; docs/PERFORMANCE.md, scans): every scan
      // L2-prefetches the tile one SM-count (132) ahead (affine-map scan 0.761 -> 0.798x copy, fp64 sum scan 0.995 ->
      // 0.942x CUB's time, fp32 1.051 -> 0.982x), and the flag clearing overlaps the scan's launch (fp32 2^20 per call
      // 1.20-1.28 -> 1.08-1.15x CUB's time). No sum candidate beat the defaults at 1 GiB or 2^20 until session 9: two
      // 16-row passes in flight a warp (sum.depth=2; fp64's passes, not fp32's 32-row ones) took fp64 1 GiB from
      // 0.939-0.940 to 0.964-0.965x CUB in two interleaved tunes of 31 rounds (docs/PERFORMANCE.md, issue 15).
      // Session 10, once the finishing block no longer kept a 64-node binary counter in local memory: 128-thread
      // blocks for large inputs (two kernels: the single pass needs 256; small inputs still spread on one-warp
      // blocks), fp64 1 GiB 0.980 -> 0.984-0.988x CUB and fp32 0.986 -> 0.993x in the interleaved tune (the H100:
      // a tie, 0.989 either way, so it keeps 256).
      t.sum.pass_depth = 2;
      t.sum.block_threads = 128;
      t.scan.prefetch_tiles = 132;
      t.scan.flag_init = scan_flag_init::kernel_early;
      break;
  }
  return t;
}

// The result of parsing an override list: the tuning, or the first token that failed.
struct tuning_parse_result {
  launch_tuning tuning;
  bool ok = true;
  std::string error;  // "bad token: <token>" when !ok
};

// Applies a comma-separated list of key=value overrides to `base` (empty or null: base unchanged). Keys:
//   sum.block_threads, sum.max_tiles, sum.grid_per_sm, sum.spread (0/1), sum.rows (0/8/16/32), sum.depth (1/2),
//   sum.prefetch, sum.early (0/1), sum.two_pass (0/1),
//   scan.threads4, scan.items4, scan.threads8, scan.items8, scan.init (memset/kernel/kernel_early),
//   scan.prefetch, scan.swept (0/1).
// A value outside its key's range, an unknown key or a malformed token leaves `base` as it was and reports the token.
inline tuning_parse_result parse_tuning_overrides(const launch_tuning& base, std::string_view spec) {
  tuning_parse_result r{base, true, {}};
  launch_tuning t = base;
  const auto fail = [&](std::string_view token) {
    r.tuning = base;
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
    if (key == "scan.init") {
      if (value == "memset")
        t.scan.flag_init = scan_flag_init::memset;
      else if (value == "kernel")
        t.scan.flag_init = scan_flag_init::kernel;
      else if (value == "kernel_early")
        t.scan.flag_init = scan_flag_init::kernel_early;
      else
        return fail(token);
      continue;
    }
    int v = 0;
    if (!number(value, v)) return fail(token);
    if (key == "sum.block_threads" && v >= 32 && v <= 256 && v % 32 == 0)
      t.sum.block_threads = v;
    else if (key == "sum.max_tiles" && one_of(v, {1, 2, 4, 8, 16}))
      t.sum.max_tiles_per_chunk = v;
    else if (key == "sum.grid_per_sm" && v <= 64)
      t.sum.grid_blocks_per_sm = v;
    else if (key == "sum.spread" && v <= 1)
      t.sum.spread = v == 1;
    else if (key == "sum.rows" && one_of(v, {0, 8, 16, 32}))
      t.sum.rows_per_pass = v;
    else if (key == "sum.depth" && one_of(v, {1, 2, 3}))
      t.sum.pass_depth = v;
    else if (key == "sum.prefetch" && v <= 64)
      t.sum.prefetch_passes = v;
    else if (key == "sum.early" && v <= 1)
      t.sum.early = v == 1;
    else if (key == "sum.two_pass" && v <= 1)
      t.sum.two_pass = v == 1;
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
    else if (key == "scan.swept" && v <= 1)
      t.scan.keep_swept = v == 1;
    else
      return fail(token);
  }
  r.tuning = t;
  return r;
}

// The tuning in force for a device: its class's defaults, then the overrides (a bad override list is ignored as a
// whole: the defaults stay, and tuning_for reports why through `error` when asked).
inline launch_tuning tuning_for(const device_profile& p, std::string_view overrides, std::string* error = nullptr) {
  const tuning_parse_result r = parse_tuning_overrides(defaults_for(classify(p)), overrides);
  if (!r.ok && error) *error = r.error;
  return r.tuning;
}

// The tuning in force for the current device (device_tuning.cpp): cached per device and override generation, so a
// call costs a cudaGetDevice and a thread-local lookup (no getenv, no mutex). Overrides: DETRED_CUDA_TUNING (and
// DETRED_CUDA_SUM_TWO_PASS=1, meaning sum.two_pass=1), read once per process, or set_tuning_overrides (benchmarks,
// tests).
launch_tuning current_tuning();
// The current device's profile (cached).
device_profile current_device_profile();
// Replaces the process's overrides (the same syntax as DETRED_CUDA_TUNING; null or "": none) for every later call on
// every thread. Returns false, changing nothing, when the list does not parse. Not for use while another thread
// launches (a launch then sees either the old or the new tuning, whole).
bool set_tuning_overrides(const char* spec);
// Reads DETRED_CUDA_TUNING and DETRED_CUDA_SUM_TWO_PASS again (after setenv) and installs them as
// set_tuning_overrides would.
bool reload_tuning_overrides();

}  // namespace detred::cuda::detail
