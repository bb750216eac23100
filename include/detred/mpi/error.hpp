// MPI errors at detred::mpi's API boundary: every MPI call's return code is checked and a failure becomes a
// detred::mpi::mpi_error carrying MPI's own message (MPI_Error_string). detred's calls switch the communicator's error
// handler to MPI_ERRORS_RETURN for their duration (and restore the caller's), so an MPI failure inside them is reported
// this way instead of aborting the job. Argument mismatches between ranks are detred::invalid_argument, raised on
// every rank alike (docs/DISTRIBUTED.md).
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace detred::mpi {

class mpi_error : public std::runtime_error {
 public:
  mpi_error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// Throws mpi_error("<what>: <MPI's message> (error <code>)") unless code is MPI_SUCCESS.
void check(int code, const char* what);

}  // namespace detred::mpi
