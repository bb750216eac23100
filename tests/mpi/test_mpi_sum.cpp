// detred::mpi (docs/DISTRIBUTED.md), run by ctest under mpirun with 1, 2, 3 and 4 ranks. Every rank generates the
// whole array with verify's generators, sums it alone with detred::sum (the single-process CPU result), then keeps
// only its part under several partitions and asserts that detred::mpi::sum gives the same bits on every rank.
// On the same ill-conditioned inputs a plain MPI_Allreduce of per-rank sums gives different results for different
// rank counts (sub-communicators of 1 .. K ranks): the test prints and asserts that difference, so it shows what the
// canonical and exact sums fix.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "detred/mpi.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/generators.hpp"

namespace {
using namespace detred;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

// Partitions of n over `ranks` contiguous parts, in rank order: {begin of each part, n}.
std::vector<std::vector<std::size_t>> partitions(std::size_t n, int ranks, std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> all;
  std::vector<std::size_t> even, first_empty, all_last, random;
  for (int r = 0; r <= ranks; ++r) even.push_back(n * std::size_t(r) / std::size_t(ranks));
  all.push_back(even);
  for (int r = 0; r < ranks; ++r) all_last.push_back(0);
  all_last.push_back(n);
  all.push_back(all_last);
  // Odd cuts: rank r's part starts at an unaligned index, and rank 0 holds a single element when it can.
  first_empty.push_back(0);
  for (int r = 1; r < ranks; ++r)
    first_empty.push_back(std::min(n, std::size_t(1 + 3 * (r - 1)) + (n / 3) * std::size_t(r - 1)));
  first_empty.push_back(n);
  all.push_back(first_empty);
  std::uint64_t s = seed;
  random.push_back(0);
  for (int r = 1; r < ranks; ++r) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    random.push_back(std::max(random.back(), std::size_t((s >> 33) % (n + 1))));
  }
  random.push_back(n);
  all.push_back(random);
  return all;
}

template <class A, class T>
void expect_same_bits_every_partition(const std::vector<T>& x, const std::string& what) {
  const int rank = world_rank(), ranks = world_size();
  for (sum_method method : {sum_method::tree, sum_method::tree_neumaier, sum_method::exact}) {
    const A expected = sum<A>(x.data(), x.size(), method);
    for (const auto& cut : partitions(x.size(), ranks, x.size() + 11)) {
      const std::size_t begin = cut[std::size_t(rank)], end = cut[std::size_t(rank) + 1];
      const A got = mpi::sum<A>(x.data() + begin, end - begin, MPI_COMM_WORLD, method);
      ASSERT_EQ(raw(got), raw(expected)) << what << " " << to_string(method) << " " << float_traits<A>::name << "<-"
                                         << float_traits<T>::name << " n=" << x.size() << " ranks=" << ranks << " rank "
                                         << rank << " part [" << begin << ", " << end << ")";
    }
  }
}

template <class T>
std::vector<T> make(verify::distribution kind, std::size_t n, double condition = 1e16) {
  return verify::generate<T>({kind, n, 20261123 + n, condition});
}

TEST(MpiSum, CanonicalAndExactEqualOneProcessOnIllConditionedData) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{37}, std::size_t{1000},
                        std::size_t{(1 << 16) + 3}, std::size_t{(1 << 20) + 12345}}) {
    expect_same_bits_every_partition<double, double>(make<double>(verify::distribution::ill, n), "ill");
    expect_same_bits_every_partition<float, float>(make<float>(verify::distribution::ill, n, 1e7), "ill");
    expect_same_bits_every_partition<double, float>(make<float>(verify::distribution::cancel, n), "cancel");
  }
}

TEST(MpiSum, EveryDistributionAndTypePair) {
  using verify::distribution;
  for (distribution d :
       {distribution::uniform, distribution::lognormal, distribution::cancel, distribution::specials}) {
    const std::size_t n = 300001;
    expect_same_bits_every_partition<double, double>(make<double>(d, n), std::string(verify::to_string(d)));
    expect_same_bits_every_partition<float, float>(make<float>(d, n), std::string(verify::to_string(d)));
    expect_same_bits_every_partition<float, bfloat16>(make<bfloat16>(d, n), std::string(verify::to_string(d)));
    expect_same_bits_every_partition<double, half>(make<half>(d, n), std::string(verify::to_string(d)));
  }
}

// What detred fixes: MPI_Allreduce(MPI_SUM) of per-rank sums depends on the rank count. Sub-communicators of the first
// k ranks (k = 1 .. K), each summing the same array split evenly over its k ranks.
TEST(MpiSum, PlainAllreduceDependsOnRankCountDetredDoesNot) {
  const int rank = world_rank(), ranks = world_size();
  const std::vector<double> x = make<double>(verify::distribution::ill, 1000003);
  const double single = sum(x.data(), x.size());
  std::set<std::uint64_t> plain_results, detred_results;
  for (int k = 1; k <= ranks; ++k) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &sub);
    double plain = 0, canonical = 0, exact = 0;
    if (sub != MPI_COMM_NULL) {
      const std::size_t begin = x.size() * std::size_t(rank) / std::size_t(k);
      const std::size_t end = x.size() * std::size_t(rank + 1) / std::size_t(k);
      double local = 0;
      for (std::size_t i = begin; i < end; ++i) local += x[i];
      MPI_Allreduce(&local, &plain, 1, MPI_DOUBLE, MPI_SUM, sub);
      canonical = mpi::sum(x.data() + begin, end - begin, sub);
      exact = mpi::sum(x.data() + begin, end - begin, sub, sum_method::exact);
      MPI_Comm_free(&sub);
    }
    // Rank 0 is in every sub-communicator: it collects and reports.
    if (rank == 0) {
      std::printf("ranks %d: plain MPI_Allreduce %.17g (0x%016llx)   detred tree %.17g (0x%016llx)   exact %.17g\n", k,
                  plain, (unsigned long long)raw(plain), canonical, (unsigned long long)raw(canonical), exact);
      plain_results.insert(raw(plain));
      detred_results.insert(raw(canonical));
      EXPECT_EQ(raw(canonical), raw(single));
      EXPECT_EQ(raw(exact), raw(sum(x.data(), x.size(), sum_method::exact)));
    }
  }
  if (rank == 0) {
    EXPECT_EQ(detred_results.size(), 1u);
    if (ranks >= 2) {
      EXPECT_GT(plain_results.size(), 1u) << "a plain MPI_Allreduce gave the same bits for every rank count";
    }
  }
}

// The public MPI_Op and datatype in the user's own collectives.
TEST(MpiSum, ExactStateOpInUsersOwnCollectives) {
  const int rank = world_rank(), ranks = world_size();
  const std::vector<double> x = make<double>(verify::distribution::lognormal, 100000);
  const std::size_t begin = x.size() * std::size_t(rank) / std::size_t(ranks);
  const std::size_t end = x.size() * std::size_t(rank + 1) / std::size_t(ranks);
  exact_accumulator<double> s;
  s.add(x.data() + begin, end - begin);
  std::uint8_t mine[exact_accumulator<double>::serialized_bytes], total[sizeof mine];
  s.serialize(mine);
  ASSERT_EQ(
      MPI_Allreduce(mine, total, 1, mpi::exact_state_type<double>(), mpi::exact_state_op<double>(), MPI_COMM_WORLD),
      MPI_SUCCESS);
  exact_accumulator<double> merged;
  ASSERT_TRUE(merged.deserialize(total));
  EXPECT_EQ(raw(merged.rounded<double>()), raw(sum(x.data(), x.size(), sum_method::exact)));
  EXPECT_EQ(merged.count(), x.size());
  ASSERT_EQ(MPI_Reduce(mine, total, 1, mpi::exact_state_type<double>(), mpi::exact_state_op<double>(), ranks - 1,
                       MPI_COMM_WORLD),
            MPI_SUCCESS);
  if (rank == ranks - 1) {
    ASSERT_TRUE(merged.deserialize(total));
    EXPECT_EQ(raw(merged.rounded<double>()), raw(sum(x.data(), x.size(), sum_method::exact)));
  }
}

// include/detred/mpi/exact.hpp: "An operand that is not a valid state of the layout makes the result invalid too
// (deserialize then returns false), so corruption is never rounded silently." Each rank in turn corrupts its state
// (its magic bytes, its layout byte, or a limb that is not a normalised digit), then the user's own MPI_Allreduce and
// MPI_Reduce with the public op: every rank (the root) must get an invalid state, never a valid sum with the corrupted
// rank's terms dropped. With 3 and 4 ranks the corrupted operand meets valid ones on both sides of the op.
TEST(MpiSum, CorruptedExactStateMakesEveryRankInvalid) {
  const int rank = world_rank(), ranks = world_size();
  const std::vector<double> x = make<double>(verify::distribution::lognormal, 1000);
  const std::size_t begin = x.size() * std::size_t(rank) / std::size_t(ranks);
  const std::size_t end = x.size() * std::size_t(rank + 1) / std::size_t(ranks);
  exact_accumulator<double> s;
  s.add(x.data() + begin, end - begin);
  constexpr std::size_t bytes = exact_accumulator<double>::serialized_bytes;
  for (int corrupted = 0; corrupted < ranks; ++corrupted)
    for (int kind = 0; kind < 3; ++kind) {
      std::uint8_t mine[bytes], total[bytes];
      s.serialize(mine);
      if (rank == corrupted) {
        if (kind == 0)
          mine[0] ^= 0x5a;  // the magic "DXA1"
        else if (kind == 1)
          mine[4] ^= 3;  // the layout byte
        else
          mine[16 + 4] |= 1;  // limb 0 above 2^32: not a normalised digit
        exact_accumulator<double> check;
        ASSERT_FALSE(check.deserialize(mine)) << "the corruption must make an invalid state";
      }
      ASSERT_EQ(
          MPI_Allreduce(mine, total, 1, mpi::exact_state_type<double>(), mpi::exact_state_op<double>(), MPI_COMM_WORLD),
          MPI_SUCCESS);
      exact_accumulator<double> merged;
      EXPECT_FALSE(merged.deserialize(total))
          << "rank " << rank << " of " << ranks << " got a valid state from MPI_Allreduce although rank " << corrupted
          << " was corrupted (kind " << kind << "): " << merged.rounded<double>();
      for (int root : {0, ranks - 1}) {
        ASSERT_EQ(MPI_Reduce(mine, total, 1, mpi::exact_state_type<double>(), mpi::exact_state_op<double>(), root,
                             MPI_COMM_WORLD),
                  MPI_SUCCESS);
        if (rank == root)
          EXPECT_FALSE(merged.deserialize(total))
              << "MPI_Reduce to root " << root << " of " << ranks << " ranks, rank " << corrupted << " corrupted";
      }
    }
}

// Mismatched arguments give every rank the same clear error, never a hang.
TEST(MpiSum, MismatchedTypesOrMethodsThrowOnEveryRank) {
  const int rank = world_rank();
  const std::vector<double> xd(100, 1.0);
  const std::vector<float> xf(100, 1.0f);
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  try {
    if (rank == 0)
      (void)mpi::sum(xf.data(), xf.size(), MPI_COMM_WORLD);
    else
      (void)mpi::sum(xd.data(), xd.size(), MPI_COMM_WORLD);
    FAIL() << "no error";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 passes float data"), std::string::npos) << e.what();
  }
  try {
    (void)mpi::sum(xd.data(), xd.size(), MPI_COMM_WORLD, rank == 0 ? sum_method::tree : sum_method::exact);
    FAIL() << "no error";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("different operations or methods"), std::string::npos) << e.what();
  }
  // Still in step: a correct call afterwards works.
  EXPECT_EQ(mpi::sum(xd.data(), xd.size(), MPI_COMM_WORLD), 100.0 * world_size());
}

TEST(MpiSum, SequentialMethodsAreRefusedOnEveryRank) {
  const std::vector<double> x(10, 1.0);
  EXPECT_THROW((void)mpi::sum(x.data(), x.size(), MPI_COMM_WORLD, sum_method::kahan), invalid_argument);
}

TEST(MpiSum, MpiErrorsCarryMpisMessage) {
  const std::vector<double> x(10, 1.0);
  try {
    (void)mpi::sum(x.data(), x.size(), MPI_COMM_NULL);
    FAIL() << "no error";
  } catch (const mpi::mpi_error& e) {
    EXPECT_NE(std::string(e.what()).find("detred::mpi: MPI_Comm_get_errhandler: "), std::string::npos) << e.what();
    if (world_rank() == 0) std::printf("MPI_COMM_NULL gives: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // Errors on a null communicator are reported on MPI_COMM_WORLD's handler: make it return them (MpiErrorsCarry...).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ::testing::InitGoogleTest(&argc, argv);
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
