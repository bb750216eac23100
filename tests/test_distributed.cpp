// src/distributed/: the pieces of detred::mpi and detred::nccl that need no MPI, NCCL or GPU, tested on the CPU
// (docs/DISTRIBUTED.md):
// - rank_order.hpp: the all-reduce's compile-time canonical order over P ranks equals detred::sum<float> of the P
//   values in rank order, bit for bit, for P = 1 .. 15, on inputs where the association shows, and as documented;
// - aligned_blocks.hpp: every range cuts into aligned complete subtrees whose roots, pushed rank by rank, give the
//   single-process canonical sum;
// - all_reduce_plan.hpp: the chunks tile the vector, the tail is shorter than P, the staging holds every slice;
// - the local step of nccl::all_reduce_micro_batches: with a power-of-two row count a rank, each rank's canonical sum
//   of its rows followed by the canonical order over the P roots is the canonical sum over all M rows; with other row
//   counts it is not (so those go the all-rows way);
// - call_signature.hpp: mismatches are named; an argument error one rank flags in its record throws on every rank
//   that reads the records, with that rank's message, before any mismatch.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "detred/accumulators/pairwise.hpp"
#include "detred/reduce.hpp"
#include "src/distributed/aligned_blocks.hpp"
#include "src/distributed/all_reduce_plan.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/distributed/rank_order.hpp"

namespace {
using namespace detred;

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

template <int P>
void check_rank_count(std::uint64_t& state) {
  for (int trial = 0; trial < 20000; ++trial) {
    float x[P];
    for (float& v : x) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int exponent = int(state >> 59) - 16;  // 32 binades: the association changes the rounding
      const float scale = exponent >= 0 ? float(1 << exponent) : 1.0f / float(1 << -exponent);
      v = float(std::int32_t(state >> 32)) * 0x1p-31f * scale;
    }
    const auto load = [&](int r) { return x[r]; };
    const float got = distributed::rank_order_sum<P>(load);
    const float expected = sum<float>(x, P, sum_method::tree);
    ASSERT_EQ(bits(got), bits(expected)) << "P=" << P << " trial " << trial;
  }
  if constexpr (P < 15) check_rank_count<P + 1>(state);
}

TEST(RankOrder, EqualsTheCanonicalSumForEveryRankCountUpTo15) {
  std::uint64_t state = 20261123;
  check_rank_count<1>(state);
}

TEST(RankOrder, AssociationAsDocumented) {
  // Values that make each association distinguishable: 2^24 absorbs 1 unless the 1s meet first.
  const auto at = [](std::vector<float> v) { return [v](int r) { return v[std::size_t(r)]; }; };
  // P = 3: (x0 + x1) + x2.   x0 = 2^24, x1 = 1, x2 = 1: (2^24 + 1) + 1 = 2^24 (ties to even twice); x0 + (x1 + x2) =
  // 2^24 + 2.
  EXPECT_EQ(distributed::rank_order_sum<3>(at({0x1p24f, 1.0f, 1.0f})), 0x1p24f);
  // P = 4: (x0 + x1) + (x2 + x3): the two 1s at the end meet first.
  EXPECT_EQ(distributed::rank_order_sum<4>(at({0x1p24f, 0.0f, 1.0f, 1.0f})), 0x1p24f + 2.0f);
  // P = 6: ((x0 + x1) + (x2 + x3)) + (x4 + x5).
  EXPECT_EQ(distributed::rank_order_sum<6>(at({0x1p24f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f})), 0x1p24f + 2.0f);
  // P = 5: ((x0 + x1) + (x2 + x3)) + x4: the 1s meet only inside the first tree.
  EXPECT_EQ(distributed::rank_order_sum<5>(at({0x1p24f, 0.0f, 1.0f, 1.0f, 0.0f})), 0x1p24f + 2.0f);
  EXPECT_EQ(distributed::rank_order_sum<5>(at({0x1p24f, 0.0f, 0.0f, 1.0f, 1.0f})), 0x1p24f);
}

// docs/DISTRIBUTED.md, "all_reduce_micro_batches": rank r's rows are the aligned complete subtree T(r * rows, rows)
// when rows is a power of two, so reducing them locally and then the P roots in the canonical order over ranks gives
// detred::sum<float> of the M values, for every such split. A row count that is not a power of two breaks it (the
// reason the call sends every row then).
TEST(MicroBatches, PowerOfTwoRowsARankGiveTheCanonicalSumOverAllM) {
  std::uint64_t state = 20261126;
  int differed = 0;
  for (int trial = 0; trial < 4000; ++trial)
    for (int M : {8, 16, 32, 12, 24, 6}) {
      std::vector<float> x(static_cast<std::size_t>(M));
      for (float& v : x) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const int exponent = int(state >> 59) - 16;
        const float scale = exponent >= 0 ? float(1 << exponent) : 1.0f / float(1 << -exponent);
        v = float(std::int32_t(state >> 32)) * 0x1p-31f * scale;
      }
      const std::uint32_t whole = bits(sum<float>(x.data(), x.size()));
      for (int P = 1; P <= M; ++P) {
        if (M % P != 0) continue;
        const int rows = M / P;
        std::vector<float> roots;
        for (int r = 0; r < P; ++r) roots.push_back(sum<float>(x.data() + r * rows, std::size_t(rows)));
        const std::uint32_t split = bits(sum<float>(roots.data(), roots.size()));
        if ((rows & (rows - 1)) == 0)
          ASSERT_EQ(split, whole) << "M=" << M << " P=" << P << " trial " << trial;
        else
          differed += split != whole;
      }
    }
  EXPECT_GT(differed, 0) << "non-power-of-two row counts never changed the bits: the test data are too tame";
}

// Every cut of [0, n) into contiguous ranges, each range into aligned blocks, the roots pushed in order: the
// single-process sum (n up to 300, every cut into 1, 2 and 3 ranges).
TEST(AlignedBlocks, EveryPartitionJoinsToTheSingleProcessSum) {
  std::vector<float> x(300);
  std::uint64_t state = 7;
  for (float& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = float(std::int32_t(state >> 32)) * 0x1p-31f * float(1 << (state >> 60));
  }
  const auto joined = [&](const std::vector<std::size_t>& cut) {
    pairwise_accumulator<plain_accumulator<float>> total;
    for (std::size_t r = 0; r + 1 < cut.size(); ++r)
      for (const distributed::aligned_block& b : distributed::aligned_blocks(cut[r], cut[r + 1])) {
        EXPECT_EQ(b.begin % (std::uint64_t{1} << b.level), 0u);
        total.add_subtree(plain_accumulator<float>{sum<float>(x.data() + b.begin, std::size_t{1} << b.level)}, b.level);
      }
    return total.result();
  };
  for (std::size_t n = 0; n <= x.size(); n += (n < 40 ? 1 : 37)) {
    const std::uint32_t expected = bits(sum<float>(x.data(), n));
    float got = 0;
    auto check = [&](const std::vector<std::size_t>& cut) {
      got = joined(cut);
      ASSERT_EQ(bits(got), expected) << "n=" << n << " cut at " << cut[1];
    };
    check({0, n});
    for (std::size_t a = 0; a <= n; ++a) {
      check({0, a, n});
      for (std::size_t b = a; b <= n; b += 5) check({0, a, b, n});
    }
  }
  EXPECT_EQ(distributed::aligned_blocks(3, 13).size(), 4u);  // x3, T(4,4), T(8,4), x12
  EXPECT_LE(distributed::aligned_blocks(1, (std::uint64_t{1} << 63) - 1).size(), 128u);
}

TEST(AllReducePlan, ChunksTileTheVectorAndFitTheStaging) {
  for (std::uint64_t element_bytes : {std::uint64_t{2}, std::uint64_t{4}})
    for (std::uint64_t ranks = 1; ranks <= 9; ++ranks)
      for (std::uint64_t chunk_bytes : {std::uint64_t{1}, std::uint64_t{40000}, std::uint64_t{32} << 20})
        for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, ranks - 1, ranks, ranks + 1, std::uint64_t{1001},
                                std::uint64_t{(1 << 20) + 3}, std::uint64_t{64} << 20}) {
          const auto plan = distributed::plan_all_reduce(n, ranks, chunk_bytes, element_bytes);
          const std::uint64_t V = 16 / element_bytes;
          std::uint64_t next = 0;
          for (std::uint64_t k = 0; k < plan.chunks.size(); ++k) {
            const auto& c = plan.chunks[k];
            ASSERT_EQ(c.begin, next);
            ASSERT_GE(c.slice, 1u);
            ASSERT_LE(c.slice, plan.stride);
            if (k + 1 < plan.chunks.size()) {
              ASSERT_EQ(c.slice % V, 0u) << "a slice before the last breaks alignment";
            }
            next += ranks * c.slice;
          }
          ASSERT_EQ(plan.tail_begin, next);
          ASSERT_LE(plan.tail_begin, n);
          ASSERT_LT(n - plan.tail_begin, ranks);
          ASSERT_GE(plan.stride, ranks);  // the tail's ranks * t elements fit one staging area
          ASSERT_EQ(plan.stride % V, 0u);
        }
  // 256 MiB of fp32 on 2 ranks in 32 MiB steps: 8 chunks of 4 Mi elements per rank, no tail.
  const auto plan = distributed::plan_all_reduce(std::uint64_t{64} << 20, 2, std::uint64_t{32} << 20, 4);
  EXPECT_EQ(plan.chunks.size(), 8u);
  EXPECT_EQ(plan.chunks[0].slice, std::uint64_t{4} << 20);
  EXPECT_EQ(plan.tail_begin, std::uint64_t{64} << 20);
}

TEST(CallSignature, MismatchesAreNamed) {
  using distributed::call_signature;
  const call_signature a{1000, 3, 3, 7, 2, 0};
  auto message = [&](call_signature b, bool same_count) {
    const call_signature both[2] = {a, b};
    try {
      distributed::check_signatures("f", both, same_count);
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(a, true), "no error");
  EXPECT_EQ(message({999, 3, 3, 7, 2, 0}, false), "no error");
  EXPECT_NE(message({999, 3, 3, 7, 2, 0}, true).find("rank 0 passes 1000 elements, rank 1 passes 999"),
            std::string::npos);
  EXPECT_NE(message({1000, 4, 4, 7, 2, 0}, true).find("rank 0 passes float data accumulated in float, rank 1 double"),
            std::string::npos);
  EXPECT_NE(message({1000, 3, 3, 8, 2, 0}, true).find("different operations"), std::string::npos);
  EXPECT_NE(message({1000, 3, 3, 7, 2, 5}, true).find("different options"), std::string::npos);
  EXPECT_NE(message({1000, 3, 3, 7, 3, 0}, true).find("communicator sizes"), std::string::npos);
  // A rank's null data is reported on every rank, before any mismatch it makes.
  EXPECT_EQ(message({1000, 3, 3, distributed::null_data_operation, 2, 0}, true),
            "detred::f: rank 1: data is null but n_local > 0");
}

// The records as the NCCL backend all-gathers them: every rank decodes the same bytes, so every rank throws alike.
TEST(CallSignature, ARanksLocalErrorThrowsOnEveryRankWithItsMessage) {
  using distributed::call_signature;
  using distributed::record_bytes;
  const call_signature a{1000, 3, 3, 7, 3, 0};
  const auto records = [&](std::vector<std::string> errors, std::vector<call_signature> sigs) {
    std::vector<unsigned char> all(errors.size() * record_bytes, 0xAB);  // payload bytes left as garbage
    for (std::size_t r = 0; r < errors.size(); ++r) {
      const std::size_t written = distributed::write_record(all.data() + r * record_bytes, sigs[r], errors[r]);
      EXPECT_EQ(written, errors[r].empty() ? distributed::record_payload_offset : record_bytes);
    }
    return all;
  };
  const auto message = [&](const std::vector<unsigned char>& all, bool same_count = true) {
    try {
      distributed::check_records("f", all.data(), all.size() / record_bytes, same_count);
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(records({"", "", ""}, {a, a, a})), "no error");
  EXPECT_EQ(message(records({"", "bad method", ""}, {a, a, a})), "detred::f: rank 1: bad method");
  // The lowest rank's message, and before a mismatch of the signatures.
  EXPECT_EQ(message(records({"", "first", "second"}, {a, {999, 3, 3, 7, 3, 0}, a})), "detred::f: rank 1: first");
  EXPECT_NE(message(records({"", "", ""}, {a, {999, 3, 3, 7, 3, 0}, a})).find("rank 1 passes 999"), std::string::npos);
  // A message longer than the payload is cut, never read past the record.
  const std::string got = message(records({std::string(5000, 'x'), ""}, {a, a}));
  EXPECT_EQ(got, "detred::f: rank 0: " + std::string(record_bytes - distributed::record_payload_offset - 1, 'x'));
}

}  // namespace
