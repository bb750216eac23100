// detred::mpi (target detred::mpi, find_package(detred COMPONENTS mpi)): reproducible sums over MPI ranks.
// docs/DISTRIBUTED.md.
#pragma once

#include "detred/mpi/error.hpp"
#include "detred/mpi/exact.hpp"
#include "detred/mpi/sum.hpp"
