// mpi_error and the signature exchange shared by every detred::mpi call.
#include <mpi.h>

#include <string>
#include <vector>

#include "detred/mpi/error.hpp"
#include "src/mpi/errors_return.hpp"

namespace detred::mpi {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, message, &length) != MPI_SUCCESS) length = 0;
  throw mpi_error(code, std::string("detred::mpi: ") + what + ": " + std::string(message, std::size_t(length)) +
                            " (error " + std::to_string(code) + ")");
}

namespace detail {

std::vector<distributed::call_signature> exchange_signatures(const char* function, MPI_Comm comm,
                                                             distributed::call_signature mine, bool same_count) {
  int size = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  mine.ranks = std::uint32_t(size);
  std::vector<distributed::call_signature> all(static_cast<std::size_t>(size));
  check(MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE, comm),
        "MPI_Allgather (argument check)");
  distributed::check_signatures(function, all, same_count);
  return all;
}

}  // namespace detail
}  // namespace detred::mpi
