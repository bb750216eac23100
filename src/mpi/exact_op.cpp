// exact_state_type / exact_state_op (include/detred/mpi/exact.hpp): the serialized exact accumulator state as a
// committed MPI datatype and its merge as a commutative MPI_Op, created once and freed at MPI_Finalize.
#include <mpi.h>

#include <cstdint>
#include <cstring>

#include "detred/accumulators/exact.hpp"
#include "detred/mpi/error.hpp"
#include "detred/mpi/exact.hpp"

namespace detred::mpi {
namespace {

template <class R>
void merge_states(void* in, void* inout, int* len, MPI_Datatype*) {
  using state = exact_accumulator<R>;
  constexpr std::size_t bytes = state::serialized_bytes;
  const auto* a = static_cast<const std::uint8_t*>(in);
  auto* b = static_cast<std::uint8_t*>(inout);
  for (int i = 0; i < *len; ++i, a += bytes, b += bytes) {
    state x, y;
    if (!x.deserialize(a) || !y.deserialize(b)) {
      std::memset(b, 0, 4);  // no magic: the result stays invalid, and the caller's deserialize says so
      continue;
    }
    y.merge(x);
    y.serialize(b);
  }
}

struct handles {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

// Runs inside MPI_Finalize (attribute deletion on MPI_COMM_SELF comes first there), while MPI is still usable.
int free_handles(MPI_Comm, int, void* attribute, void*) {
  auto* h = static_cast<handles*>(attribute);
  MPI_Type_free(&h->type);
  MPI_Op_free(&h->op);
  return MPI_SUCCESS;
}

template <class R>
handles& get() {
  static handles h = [] {
    handles made;
    check(MPI_Type_contiguous(int(exact_accumulator<R>::serialized_bytes), MPI_BYTE, &made.type),
          "MPI_Type_contiguous (exact state)");
    check(MPI_Type_commit(&made.type), "MPI_Type_commit (exact state)");
    check(MPI_Op_create(&merge_states<R>, 1, &made.op), "MPI_Op_create (exact state merge)");
    return made;
  }();
  static const bool registered = [] {
    int key = MPI_KEYVAL_INVALID;
    check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &free_handles, &key, nullptr), "MPI_Comm_create_keyval");
    check(MPI_Comm_set_attr(MPI_COMM_SELF, key, &h), "MPI_Comm_set_attr");
    return true;
  }();
  (void)registered;
  return h;
}

}  // namespace

template <class R>
MPI_Datatype exact_state_type() {
  return get<R>().type;
}
template <class R>
MPI_Op exact_state_op() {
  return get<R>().op;
}

template MPI_Datatype exact_state_type<float>();
template MPI_Datatype exact_state_type<double>();
template MPI_Op exact_state_op<float>();
template MPI_Op exact_state_op<double>();

}  // namespace detred::mpi
