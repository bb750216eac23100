// The per-device launch defaults and their overrides (src/cuda/common/device_tuning.hpp), and the launch policies
// that apply them (src/cuda/common/launch_policy.hpp, choose_scan_config in include/detred/cuda/scan.hpp). Host
// only: no GPU needed. Every value these choose is speed only; the GPU tests prove the bits never depend on it
// (tests/cuda/test_canonical_sum.cpp, EveryTuningKeepsTheCpuBits).
#include <gtest/gtest.h>

#include <cstdint>

#include "detred/cuda/scan.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/device_tuning.hpp"
#include "src/cuda/common/launch_policy.hpp"

namespace {
using namespace detred::cuda;
using namespace detred::cuda::detail;

// Attribute values as the two GPUs of docs/PERFORMANCE.md report them (cudaDevAttrMemoryClockRate in kHz,
// cudaDevAttrGlobalMemoryBusWidth in bits), and an H100 PCIe.
device_profile h100_sxm() { return {9, 0, 132, 50u << 20, 2619000, 5120}; }
device_profile h200() { return {9, 0, 132, 50u << 20, 3201000, 6144}; }
device_profile h100_pcie() { return {9, 0, 114, 50u << 20, 1593000, 5120}; }

bool same(const launch_tuning& a, const launch_tuning& b) {
  return a.sum.block_threads == b.sum.block_threads && a.sum.max_tiles_per_chunk == b.sum.max_tiles_per_chunk &&
         a.sum.grid_blocks_per_sm == b.sum.grid_blocks_per_sm && a.sum.spread == b.sum.spread &&
         a.sum.rows_per_pass == b.sum.rows_per_pass && a.sum.pass_depth == b.sum.pass_depth &&
         a.sum.early == b.sum.early && a.sum.prefetch_passes == b.sum.prefetch_passes &&
         a.sum.two_pass == b.sum.two_pass && a.scan.block_threads_4 == b.scan.block_threads_4 &&
         a.scan.items_per_thread_4 == b.scan.items_per_thread_4 && a.scan.block_threads_8 == b.scan.block_threads_8 &&
         a.scan.items_per_thread_8 == b.scan.items_per_thread_8 && a.scan.flag_init == b.scan.flag_init &&
         a.scan.prefetch_tiles == b.scan.prefetch_tiles && a.scan.keep_swept == b.scan.keep_swept;
}

// device_tuning.hpp: "the key is the device's peak DRAM bandwidth per SM ... standard below 32 GB/s per SM, high at
// or above".
TEST(DeviceTuning, ClassifiesByPeakBandwidthPerSm) {
  EXPECT_NEAR(peak_dram_gb_per_s(h100_sxm()), 3352.3, 0.1);
  EXPECT_NEAR(peak_dram_gb_per_s(h200()), 4916.7, 0.1);
  EXPECT_EQ(classify(h100_sxm()), bandwidth_class::standard);
  EXPECT_EQ(classify(h100_pcie()), bandwidth_class::standard);
  EXPECT_EQ(classify(h200()), bandwidth_class::high);
  device_profile unknown = h200();
  unknown.memory_clock_khz = 0;  // an attribute the driver does not report
  EXPECT_EQ(classify(unknown), bandwidth_class::standard);
  unknown = h200();
  unknown.multiprocessors = 0;
  EXPECT_EQ(classify(unknown), bandwidth_class::standard);
  device_profile edge = h200();  // exactly 32 GB/s per SM: high
  edge.memory_bus_bits = 64;
  edge.memory_clock_khz = 264000000;  // 2 x 264 GHz x 8 bytes = 4,224 GB/s = 32 x 132, exactly
  EXPECT_EQ(peak_dram_gb_per_s(edge) / 132, 32.0);
  EXPECT_EQ(classify(edge), bandwidth_class::high);
  edge.memory_clock_khz -= 1000;  // just below
  EXPECT_EQ(classify(edge), bandwidth_class::standard);
}

// "standard holds the values measured on the H100; high those of the H200": since session 7 the H100's tuning run chose
// the H200's scan settings too (L2 prefetch one SM-count of tiles ahead, flag clearing overlapped), so the two classes
// hold the same values but two: since session 9 the H200 reads two 16-row passes ahead (sum.depth=2), the H100 one,
// and since session 10 the H200's large sums run on 128-thread blocks; every other value is the struct's default.
TEST(DeviceTuning, ClassDefaultsAreTheMeasuredOnes) {
  const launch_tuning standard = defaults_for(bandwidth_class::standard);
  const launch_tuning high = defaults_for(bandwidth_class::high);
  EXPECT_EQ(high.scan.prefetch_tiles, 132);
  EXPECT_EQ(high.scan.flag_init, scan_flag_init::kernel_early);
  EXPECT_EQ(high.sum.pass_depth, 2);
  EXPECT_EQ(standard.sum.pass_depth, 1);
  EXPECT_EQ(high.sum.block_threads, 128);  // session 10: large inputs in two kernels of 128-thread blocks
  launch_tuning high_but_sum = high;
  high_but_sum.sum.pass_depth = 1;
  high_but_sum.sum.block_threads = default_block_threads;
  EXPECT_TRUE(same(standard, high_but_sum));
  launch_tuning plain = standard;
  plain.scan.prefetch_tiles = launch_tuning{}.scan.prefetch_tiles;
  plain.scan.flag_init = launch_tuning{}.scan.flag_init;
  EXPECT_TRUE(same(plain, launch_tuning{}));
  EXPECT_EQ(standard.sum.block_threads, default_block_threads);
  EXPECT_EQ(standard.sum.max_tiles_per_chunk, max_tiles_per_chunk);
  EXPECT_EQ(standard.sum.grid_blocks_per_sm, 0);
  EXPECT_TRUE(standard.sum.spread);
  EXPECT_EQ(standard.sum.rows_per_pass, 0);
  EXPECT_EQ(standard.sum.prefetch_passes, 0);
  EXPECT_FALSE(standard.sum.two_pass);
  EXPECT_TRUE(standard.sum.early);
  EXPECT_EQ(standard.scan.block_threads_4, 256);
  EXPECT_EQ(standard.scan.items_per_thread_4, 32);
  EXPECT_EQ(standard.scan.block_threads_8, 128);
  EXPECT_EQ(standard.scan.items_per_thread_8, 32);
  EXPECT_TRUE(standard.scan.keep_swept);
}

// parse_tuning_overrides: "a value outside its key's range, an unknown key or a malformed token leaves `base` as it
// was and reports the token".
TEST(DeviceTuning, OverridesParseOrLeaveTheBaseAlone) {
  const launch_tuning base{};
  const tuning_parse_result r =
      parse_tuning_overrides(base,
                             "sum.block_threads=128,,sum.max_tiles=8,sum.grid_per_sm=2,sum.spread=0,sum.rows=32,"
                             "sum.prefetch=3,sum.two_pass=1,scan.threads4=128,scan.items4=16,scan.threads8=256,scan."
                             "items8=32,scan.init=kernel_early,"
                             "scan.prefetch=264,scan.swept=0");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.tuning.sum.block_threads, 128);
  EXPECT_EQ(r.tuning.sum.max_tiles_per_chunk, 8);
  EXPECT_EQ(r.tuning.sum.grid_blocks_per_sm, 2);
  EXPECT_FALSE(r.tuning.sum.spread);
  EXPECT_EQ(r.tuning.sum.rows_per_pass, 32);
  EXPECT_EQ(r.tuning.sum.prefetch_passes, 3);
  EXPECT_TRUE(r.tuning.sum.two_pass);
  EXPECT_EQ(r.tuning.scan.block_threads_4, 128);
  EXPECT_EQ(r.tuning.scan.items_per_thread_4, 16);
  EXPECT_EQ(r.tuning.scan.block_threads_8, 256);
  EXPECT_EQ(r.tuning.scan.items_per_thread_8, 32);
  EXPECT_EQ(r.tuning.scan.flag_init, scan_flag_init::kernel_early);
  EXPECT_EQ(r.tuning.scan.prefetch_tiles, 264);
  EXPECT_FALSE(r.tuning.scan.keep_swept);
  EXPECT_TRUE(base.scan.keep_swept);  // the default on every class
  EXPECT_TRUE(parse_tuning_overrides(base, "").ok);
  EXPECT_TRUE(same(parse_tuning_overrides(base, "").tuning, base));
  EXPECT_EQ(parse_tuning_overrides(base, "sum.rows=8,sum.depth=2").tuning.sum.rows_per_pass, 8);
  EXPECT_EQ(parse_tuning_overrides(base, "sum.rows=8,sum.depth=2").tuning.sum.pass_depth, 2);
  EXPECT_FALSE(parse_tuning_overrides(base, "sum.early=0").tuning.sum.early);
  EXPECT_EQ(parse_tuning_overrides(base, "scan.init=memset").tuning.scan.flag_init, scan_flag_init::memset);
  EXPECT_EQ(parse_tuning_overrides(base, "scan.init=kernel").tuning.scan.flag_init, scan_flag_init::kernel);
  for (const char* bad :
       {"sum.max_tiles=3", "sum.block_threads=48", "sum.block_threads=512", "sum.rows=24", "sum.spread=2",
        "sum.depth=4", "sum.early=2", "scan.items4=64", "scan.threads8=512", "scan.init=fast", "scan.swept=2",
        "sum.tiles=8", "sum.prefetch", "sum.prefetch=-1", "sum.prefetch=2x", "=1", "sum.max_tiles=8,bogus=1"}) {
    const tuning_parse_result b = parse_tuning_overrides(base, bad);
    EXPECT_FALSE(b.ok) << bad;
    EXPECT_TRUE(same(b.tuning, base)) << bad;  // the good token before a bad one is not applied either
    EXPECT_NE(b.error.find("bad token"), std::string::npos) << bad;
  }
}

TEST(DeviceTuning, TuningForAppliesOverridesOnTopOfTheClassDefaults) {
  std::string error;
  const launch_tuning t = tuning_for(h200(), "sum.max_tiles=4,scan.init=kernel", &error);
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(t.sum.max_tiles_per_chunk, 4);
  EXPECT_EQ(t.scan.flag_init, scan_flag_init::kernel);
  EXPECT_EQ(t.scan.block_threads_8, defaults_for(bandwidth_class::high).scan.block_threads_8);
  const launch_tuning kept = tuning_for(h100_sxm(), "sum.max_tiles=5", &error);
  EXPECT_EQ(error, "bad token: sum.max_tiles=5");
  EXPECT_TRUE(same(kept, defaults_for(bandwidth_class::standard)));
}

// launch_policy.hpp: the sum's defaults come from sum_tuning; the caller's launch_config fields win.
TEST(DeviceTuning, SumPolicyTakesTheTuningAndTheCallerWins) {
  // One block of 256 threads per SM (the fp32 and fp64 chunk kernels use 154-160 registers): 1056 resident warps.
  const device_facts h100{132, 1};
  const std::uint64_t tile = 4096, gib = std::uint64_t{1} << 28;  // fp32: 2^12 elements a tile; 1 GiB
  launch_config c = choose_launch_config({}, gib, tile, h100);
  EXPECT_EQ(c.block_threads, 256);
  EXPECT_EQ(c.tiles_per_chunk, 16);  // 4096 chunks >= 2 x 1056
  // With two resident blocks per SM (2112 warps) 4096 chunks of 16 tiles would be too few: 8 tiles.
  EXPECT_EQ(choose_launch_config({}, gib, tile, device_facts{132, 2}).tiles_per_chunk, 8);
  EXPECT_EQ(c.grid_blocks, one_chunk_per_warp);
  sum_tuning t;
  t.max_tiles_per_chunk = 8;
  t.grid_blocks_per_sm = 3;
  t.block_threads = 128;
  c = choose_launch_config({}, gib, tile, h100, t);
  EXPECT_EQ(c.block_threads, 128);
  EXPECT_EQ(c.tiles_per_chunk, 8);
  EXPECT_EQ(c.grid_blocks, 3 * 132);
  c = choose_launch_config({64, 7, 2}, gib, tile, h100, t);  // every field set by the caller
  EXPECT_EQ(c.block_threads, 64);
  EXPECT_EQ(c.tiles_per_chunk, 2);
  EXPECT_EQ(c.grid_blocks, 7);
  // Small inputs: the cap still halves until each resident warp gets two chunks.
  EXPECT_EQ(choose_launch_config({}, std::uint64_t{1} << 20, tile, h100, t).tiles_per_chunk, 1);
  // Spread: on by default for a small input, off when the tuning says so or the caller picks a block size.
  const std::uint64_t n = std::uint64_t{1} << 20;  // 256 tiles: 32 blocks of 8 warps < 132 SMs
  const launch_config small = choose_launch_config({}, n, tile, h100);
  EXPECT_TRUE(spread_small_input({}, small, n, tile, h100));
  sum_tuning no_spread;
  no_spread.spread = false;
  EXPECT_FALSE(spread_small_input({}, small, n, tile, h100, no_spread));
  EXPECT_FALSE(spread_small_input({256, 0, 0}, small, n, tile, h100));
  EXPECT_FALSE(spread_small_input({}, choose_launch_config({}, gib, tile, h100), gib, tile, h100));
}

// scan.hpp, choose_scan_config: defaults from scan_tuning by value size; the caller's fields win; 32 x 32 refused.
TEST(DeviceTuning, ScanPolicyTakesTheTuningAndTheCallerWins) {
  scan_launch_config c = choose_scan_config({}, 4);
  EXPECT_EQ(c.block_threads, 256);
  EXPECT_EQ(c.items_per_thread, 32);
  c = choose_scan_config({}, 8);
  EXPECT_EQ(c.block_threads, 128);
  EXPECT_EQ(c.items_per_thread, 32);
  c = choose_scan_config({}, 16);
  EXPECT_EQ(c.block_threads, 256);
  EXPECT_EQ(c.items_per_thread, 8);
  c = choose_scan_config({}, 32);
  EXPECT_EQ(c.items_per_thread, 4);
  scan_tuning t;
  t.block_threads_8 = 256;
  t.items_per_thread_8 = 16;
  t.block_threads_4 = 128;
  c = choose_scan_config({}, 8, t);
  EXPECT_EQ(c.block_threads, 256);
  EXPECT_EQ(c.items_per_thread, 16);
  c = choose_scan_config({}, 4, t);
  EXPECT_EQ(c.block_threads, 128);
  EXPECT_EQ(c.items_per_thread, 32);
  c = choose_scan_config({64, 8}, 8, t);
  EXPECT_EQ(c.block_threads, 64);
  EXPECT_EQ(c.items_per_thread, 8);
  EXPECT_THROW(choose_scan_config({32, 32}, 4), detred::invalid_argument);
  t.block_threads_4 = 32;  // a tuned default that makes 32 x 32 is refused as well
  EXPECT_THROW(choose_scan_config({}, 4, t), detred::invalid_argument);
  EXPECT_THROW(choose_scan_config({48, 0}, 4), detred::invalid_argument);
  EXPECT_THROW(choose_scan_config({0, 64}, 4), detred::invalid_argument);
}

}  // namespace
