// detred::mpi on the CPU machine (docs/PERFORMANCE.md, "Distributed"), for reference: run under
// mpirun -n K build/bench/bench_mpi [log2 n]. The array (2^24 doubles by default, element i a hash of i alone over 32
// binades, the same array for every rank count) is split evenly over the ranks.
// Peers in the same program: a plain MPI_Allreduce of per-rank sequential sums (not reproducible across rank counts),
// and MPI_Allreduce of per-rank detred::sum results (neither). Medians of 20 calls, each rank's wall clock, rank 0's.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "detred/mpi.hpp"
#include "detred/reduce.hpp"

namespace {
double median_ms(const std::function<void()>& op) {
  std::vector<double> t;
  for (int i = 0; i < 23; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto a = std::chrono::steady_clock::now();
    op();
    const auto b = std::chrono::steady_clock::now();
    if (i >= 3) t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::size_t n = std::size_t{1} << (argc > 1 ? std::atoi(argv[1]) : 24);
  const std::size_t begin = n * std::size_t(rank) / std::size_t(ranks),
                    end = n * std::size_t(rank + 1) / std::size_t(ranks);
  std::vector<double> x(end - begin);
  for (std::size_t i = begin; i < end; ++i) {  // element i is a hash of i alone: the same array for every rank count
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x[i - begin] = double(std::int64_t(z ^ (z >> 31))) * 0x1p-63 * double(1u << (z & 31));  // 32 binades
  }
  double result = 0;
  auto report = [&](const char* name, double ms) {
    if (rank == 0)
      std::printf("mpi %d ranks, 2^%d doubles: %-48s %8.3f ms  %6.2f GB/s  0x%016llx\n", ranks, int(__builtin_ctzll(n)),
                  name, ms, double(n * 8) / ms / 1e6, (unsigned long long)detred::bits_of(result));
  };
  report("plain: sequential loop + MPI_Allreduce", median_ms([&] {
           double local = 0;
           for (double v : x) local += v;
           MPI_Allreduce(&local, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         }));
  report("detred::sum per rank + MPI_Allreduce", median_ms([&] {
           const double local = detred::sum(x.data(), x.size());
           MPI_Allreduce(&local, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         }));
  report("detred::mpi::sum tree", median_ms([&] { result = detred::mpi::sum(x.data(), x.size(), MPI_COMM_WORLD); }));
  report("detred::mpi::sum tree_neumaier", median_ms([&] {
           result = detred::mpi::sum(x.data(), x.size(), MPI_COMM_WORLD, detred::sum_method::tree_neumaier);
         }));
  report("detred::mpi::sum exact",
         median_ms([&] { result = detred::mpi::sum(x.data(), x.size(), MPI_COMM_WORLD, detred::sum_method::exact); }));
  MPI_Finalize();
  return 0;
}
