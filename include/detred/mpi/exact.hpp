// The exact accumulator state (docs/EXACT.md) as an MPI datatype with its merge as an MPI_Op, for users' own
// MPI_Allreduce / MPI_Reduce / MPI_Scan calls:
//
//   using state = detred::exact_accumulator<double>;
//   std::uint8_t mine[state::serialized_bytes], total[state::serialized_bytes];
//   state s;
//   s.add(x, n);
//   s.serialize(mine);
//   MPI_Allreduce(mine, total, 1, detred::mpi::exact_state_type<double>(), detred::mpi::exact_state_op<double>(),
//                 comm);
//   s.deserialize(total);                  // false: a corrupted state
//   double sum = s.rounded<double>();      // correctly rounded, for any rank count and order
//
// The datatype is the state's fixed-size, endian-independent byte form (serialized_bytes contiguous bytes, committed);
// the operation deserializes both operands, merges (integer additions: associative and commutative, so MPI may apply it
// in any order and grouping) and serializes the result. An operand that is not a valid state of the layout makes the
// result invalid too (deserialize then returns false), so corruption is never rounded silently. Arrays of states
// (count > 1) reduce element by element.
//
// Both handles are created on first use (after MPI_Init; thread-safe) and freed when MPI_Finalize runs. Layouts:
// R = double (every input type) or float (32- and 16-bit inputs).
#pragma once

#include <mpi.h>

#include "detred/accumulators/exact.hpp"

namespace detred::mpi {

template <class R>
MPI_Datatype exact_state_type();
template <class R>
MPI_Op exact_state_op();

}  // namespace detred::mpi
