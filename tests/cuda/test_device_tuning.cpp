// The per-device defaults and their overrides (include/detred/cuda/detail/tuning.hpp), and the launch policies that
// apply them (src/cuda/common/launch_policy.hpp for the sum, include/detred/cuda/detail/scan_config.hpp for the
// scans). Host only: no GPU needed. Every value these choose is speed only; the GPU tests prove the bits never depend
// on it (tests/cuda/test_canonical_sum.cpp, EveryTuningKeepsTheCpuBits).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "detred/cuda/detail/scan_config.hpp"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/launch_policy.hpp"

namespace {
using namespace detred::cuda;
using namespace detred::cuda::detail;

// Attribute values as the two GPUs of docs/PERFORMANCE.md report them (cudaDevAttrMemoryClockRate in kHz,
// cudaDevAttrGlobalMemoryBusWidth in bits), and an H100 PCIe.
device_profile h100_sxm() { return {132, 50u << 20, 2619000, 5120}; }
device_profile h200() { return {132, 50u << 20, 3201000, 6144}; }
device_profile h100_pcie() { return {114, 50u << 20, 1593000, 5120}; }

bool same(const tuning& a, const tuning& b) {
  return a.sum.block_threads == b.sum.block_threads && a.sum.pass_depth == b.sum.pass_depth &&
         a.scan.block_threads_4 == b.scan.block_threads_4 && a.scan.items_per_thread_4 == b.scan.items_per_thread_4 &&
         a.scan.block_threads_8 == b.scan.block_threads_8 && a.scan.items_per_thread_8 == b.scan.items_per_thread_8 &&
         a.scan.prefetch_tiles == b.scan.prefetch_tiles && a.exact.waves == b.exact.waves &&
         a.exact.interleave == b.exact.interleave && a.exact.load32 == b.exact.load32 &&
         a.exact.load64 == b.exact.load64 && a.exact.digits64 == b.exact.digits64 &&
         a.rows.block_row_threads == b.rows.block_row_threads;
}

// tuning.hpp: "A device is classed by its peak DRAM bandwidth per SM ... standard below 32 GB/s per SM (...; also
// unknown attributes), high at or above".
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

// defaults_for: both classes prefetch the scans' tiles 132 ahead; the high class (H200) keeps two passes in flight,
// runs large sums on 128-thread blocks and reads the exact sum's large binary32 inputs with plain loads; every
// other value is the struct's default.
TEST(DeviceTuning, ClassDefaultsAreTheMeasuredOnes) {
  const tuning standard = defaults_for(bandwidth_class::standard);
  const tuning high = defaults_for(bandwidth_class::high);
  EXPECT_EQ(standard.scan.prefetch_tiles, 132);
  EXPECT_EQ(high.scan.prefetch_tiles, 132);
  EXPECT_EQ(high.sum.pass_depth, 2);
  EXPECT_EQ(standard.sum.pass_depth, 1);
  EXPECT_EQ(high.sum.block_threads, 128);
  EXPECT_EQ(standard.sum.block_threads, 256);
  EXPECT_EQ(high.exact.load32, 0);
  EXPECT_EQ(high.exact.load64, 0);
  EXPECT_EQ(standard.exact.load32, 2);
  EXPECT_EQ(standard.exact.load64, 2);
  EXPECT_EQ(high.exact.digits64, 1);
  EXPECT_EQ(standard.exact.digits64, 0);
  tuning high_but_sum = high;
  high_but_sum.sum = standard.sum;
  high_but_sum.exact = standard.exact;
  EXPECT_TRUE(same(standard, high_but_sum));
  tuning plain = standard;
  plain.scan.prefetch_tiles = tuning{}.scan.prefetch_tiles;
  EXPECT_TRUE(same(plain, tuning{}));
  EXPECT_EQ(standard.scan.block_threads_4, 256);
  EXPECT_EQ(standard.scan.items_per_thread_4, 32);
  EXPECT_EQ(standard.scan.block_threads_8, 128);
  EXPECT_EQ(standard.scan.items_per_thread_8, 32);
}

// parse_tuning_overrides: "A value outside its key's range, an unknown key or a malformed token leaves `base` as it
// was and reports the token".
TEST(DeviceTuning, OverridesParseOrLeaveTheBaseAlone) {
  const tuning base{};
  const tuning_parse_result r = parse_tuning_overrides(
      base,
      "sum.block_threads=128,,sum.depth=2,scan.threads4=128,scan.items4=16,scan.threads8=256,scan.items8=32,"
      "scan.prefetch=264,exact.waves=4,exact.interleave=1,exact.load32=0,exact.load64=0,exact.digits64=1,"
      "rows.block_threads=512");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.value.sum.block_threads, 128);
  EXPECT_EQ(r.value.sum.pass_depth, 2);
  EXPECT_EQ(r.value.scan.block_threads_4, 128);
  EXPECT_EQ(r.value.scan.items_per_thread_4, 16);
  EXPECT_EQ(r.value.scan.block_threads_8, 256);
  EXPECT_EQ(r.value.scan.items_per_thread_8, 32);
  EXPECT_EQ(r.value.scan.prefetch_tiles, 264);
  EXPECT_EQ(r.value.exact.waves, 4);
  EXPECT_EQ(r.value.exact.interleave, 1);
  EXPECT_EQ(r.value.exact.load32, 0);
  EXPECT_EQ(r.value.exact.load64, 0);
  EXPECT_EQ(r.value.exact.digits64, 1);
  EXPECT_EQ(r.value.rows.block_row_threads, 512);
  EXPECT_TRUE(parse_tuning_overrides(base, "").ok);
  EXPECT_TRUE(same(parse_tuning_overrides(base, "").value, base));
  // The keys of knobs no device class uses are unknown keys.
  for (const char* bad : {"sum.block_threads=48",
                          "sum.block_threads=512",
                          "sum.depth=3",
                          "sum.depth=0",
                          "sum.rows=8",
                          "sum.max_tiles=8",
                          "sum.grid_per_sm=2",
                          "sum.spread=0",
                          "sum.prefetch=3",
                          "sum.early=0",
                          "sum.two_pass=1",
                          "scan.items4=64",
                          "scan.threads8=512",
                          "scan.init=memset",
                          "scan.swept=0",
                          "scan.prefetch=4097",
                          "scan.prefetch",
                          "scan.prefetch=-1",
                          "scan.prefetch=2x",
                          "=1",
                          "sum.depth=2,bogus=1",
                          "exact.waves=0",
                          "exact.waves=33",
                          "exact.interleave=2",
                          "exact.load32=1",
                          "exact.load64=4",
                          "exact.digits64=2",
                          "rows.block_threads=32",
                          "rows.block_threads=1056",
                          "rows.block_threads=100"}) {
    const tuning_parse_result b = parse_tuning_overrides(base, bad);
    EXPECT_FALSE(b.ok) << bad;
    EXPECT_TRUE(same(b.value, base)) << bad;  // the good token before a bad one is not applied either
    EXPECT_NE(b.error.find("bad token"), std::string::npos) << bad;
  }
}

TEST(DeviceTuning, TuningForAppliesOverridesOnTopOfTheClassDefaults) {
  std::string error;
  const tuning t = tuning_for(h200(), "sum.depth=1,scan.items8=16", &error);
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(t.sum.pass_depth, 1);
  EXPECT_EQ(t.sum.block_threads, 128);  // the class's, not overridden
  EXPECT_EQ(t.scan.items_per_thread_8, 16);
  EXPECT_EQ(t.scan.block_threads_8, defaults_for(bandwidth_class::high).scan.block_threads_8);
  const tuning kept = tuning_for(h100_sxm(), "sum.depth=5", &error);
  EXPECT_EQ(error, "bad token: sum.depth=5");
  EXPECT_TRUE(same(kept, defaults_for(bandwidth_class::standard)));
}

// launch_policy.hpp: the sum's block size comes from sum_tuning; the caller's sum_options fields win.
TEST(DeviceTuning, SumPolicyTakesTheTuningAndTheCallerWins) {
  // One block of 256 threads per SM (the fp32 and fp64 chunk kernels use 154-160 registers): 1056 resident warps.
  const device_facts h100{132, 1};
  const std::uint64_t tile = 4096, gib = std::uint64_t{1} << 28;  // fp32: 2^12 elements a tile; 1 GiB
  sum_options c = choose_launch_shape({}, gib, tile, h100);
  EXPECT_EQ(c.block_threads, 256);
  EXPECT_EQ(c.tiles_per_chunk, 16);  // 4096 chunks >= 2 x 1056
  // With two resident blocks per SM (2112 warps) 4096 chunks of 16 tiles would be too few: 8 tiles.
  EXPECT_EQ(choose_launch_shape({}, gib, tile, device_facts{132, 2}).tiles_per_chunk, 8);
  EXPECT_EQ(c.grid_blocks, one_chunk_per_warp);
  sum_tuning t;
  t.block_threads = 128;
  c = choose_launch_shape({}, gib, tile, h100, t);
  EXPECT_EQ(c.block_threads, 128);
  EXPECT_EQ(c.tiles_per_chunk, 16);  // 4096 chunks >= 2 x 528
  c = choose_launch_shape({.block_threads = 64, .grid_blocks = 7, .tiles_per_chunk = 2}, gib, tile, h100, t);
  EXPECT_EQ(c.block_threads, 64);  // every field set by the caller
  EXPECT_EQ(c.tiles_per_chunk, 2);
  EXPECT_EQ(c.grid_blocks, 7);
  // Small inputs: the chunk halves until each resident warp gets two chunks.
  EXPECT_EQ(choose_launch_shape({}, std::uint64_t{1} << 20, tile, h100, t).tiles_per_chunk, 1);
  // Spread: for a small input when the caller leaves block size and grid to the library.
  const std::uint64_t n = std::uint64_t{1} << 20;  // 256 tiles: 32 blocks of 8 warps < 132 SMs
  const sum_options small = choose_launch_shape({}, n, tile, h100);
  EXPECT_TRUE(spread_small_input({}, small, n, tile, h100));
  EXPECT_FALSE(spread_small_input({.block_threads = 256}, small, n, tile, h100));
  EXPECT_FALSE(spread_small_input({.grid_blocks = 3}, small, n, tile, h100));
  EXPECT_FALSE(spread_small_input({}, choose_launch_shape({}, gib, tile, h100), gib, tile, h100));
}

// sum_options out of range: invalid_argument naming the field (validate, called by the size query and the call).
TEST(DeviceTuning, SumOptionsOutOfRangeAreRefused) {
  EXPECT_NO_THROW(validate(sum_options{}));
  EXPECT_NO_THROW(validate(sum_options{.block_threads = 32, .grid_blocks = 1, .tiles_per_chunk = 16}));
  for (const sum_options& bad :
       {sum_options{.block_threads = 48}, sum_options{.block_threads = 288}, sum_options{.grid_blocks = -1},
        sum_options{.tiles_per_chunk = 3}, sum_options{.tiles_per_chunk = 32}}) {
    try {
      validate(bad);
      ADD_FAILURE() << "accepted";
    } catch (const detred::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sum_options."), std::string::npos) << e.what();
    }
  }
}

// scan_config.hpp, choose_scan_config: defaults from scan_tuning by value size; the caller's fields win; 32 x 32
// refused.
TEST(DeviceTuning, ScanPolicyTakesTheTuningAndTheCallerWins) {
  scan_options c = choose_scan_config({}, 4);
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
