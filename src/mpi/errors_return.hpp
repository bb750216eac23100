// Inside a detred::mpi call the communicator returns error codes (MPI_ERRORS_RETURN) so that they can be thrown as
// mpi_error with MPI's message; the caller's error handler is restored on scope exit, also when something throws.
#pragma once

#include <mpi.h>

#include <vector>

#include "detred/mpi/error.hpp"
#include "src/distributed/call_signature.hpp"

namespace detred::mpi::detail {

class errors_return {
 public:
  explicit errors_return(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_get_errhandler(comm_, &previous_), "MPI_Comm_get_errhandler");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  ~errors_return() {
    MPI_Comm_set_errhandler(comm_, previous_);
    MPI_Errhandler_free(&previous_);
  }
  errors_return(const errors_return&) = delete;
  errors_return& operator=(const errors_return&) = delete;

 private:
  MPI_Comm comm_;
  MPI_Errhandler previous_ = MPI_ERRHANDLER_NULL;
};

// Every rank's signature, in rank order (one MPI_Allgather of 32 bytes a rank), checked: mismatches throw
// invalid_argument on every rank.
std::vector<distributed::call_signature> exchange_signatures(const char* function, MPI_Comm comm,
                                                             distributed::call_signature mine, bool same_count);

}  // namespace detred::mpi::detail
