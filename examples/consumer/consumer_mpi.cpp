// The mpi component from an installed detred (built by tests/package_consumer.cmake where detred was built with MPI;
// run it with mpirun -n K): every rank prints the same bits for any K.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "detred/mpi.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::vector<double> mine(1000, 0.1 * (rank + 1));
  const double total = detred::mpi::sum(mine.data(), mine.size(), MPI_COMM_WORLD);  // canonical tree
  const double exact = detred::mpi::sum(mine.data(), mine.size(), MPI_COMM_WORLD, detred::sum_method::exact);
  std::printf("rank %d: %.17g (exact %.17g)\n", rank, total, exact);
  MPI_Finalize();
  return 0;
}
