// detred::mpi::sum (include/detred/mpi/sum.hpp; design in docs/DISTRIBUTED.md).
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/accumulators/exact.hpp"
#include "detred/mpi/exact.hpp"
#include "detred/mpi/sum.hpp"
#include "src/distributed/aligned_blocks.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/distributed/partial_sums.hpp"
#include "src/mpi/errors_return.hpp"

namespace detred::mpi::detail {
namespace {

using distributed::aligned_block;
using distributed::aligned_blocks;
using distributed::call_signature;

// The canonical root of the concatenated array, the same on every rank: each rank's aligned blocks' roots (CPU
// backend), all-gathered, pushed into one binary counter in rank and index order.
template <class Acc, class T>
Acc canonical_root(const T* data, MPI_Comm comm, int rank, const std::vector<call_signature>& all,
                   const cpu_options& options) {
  const std::size_t ranks = all.size();
  std::vector<std::vector<aligned_block>> blocks(ranks);
  std::uint64_t begin = 0, my_begin = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (int(r) == rank) my_begin = begin;
    blocks[r] = aligned_blocks(begin, begin + all[r].count);
    begin += all[r].count;
  }
  std::vector<Acc> mine;
  for (const aligned_block& b : blocks[std::size_t(rank)])
    mine.push_back(
        detred::detail::canonical_root_n<Acc>(data + (b.begin - my_begin), std::size_t{1} << b.level, options));
  std::vector<int> counts(ranks), displacements(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    counts[r] = int(blocks[r].size() * sizeof(Acc));
    displacements[r] = r ? displacements[r - 1] + counts[r - 1] : 0;
  }
  std::vector<Acc> roots(std::size_t(displacements.back() + counts.back()) / sizeof(Acc));
  check(MPI_Allgatherv(mine.data(), counts[std::size_t(rank)], MPI_BYTE, roots.data(), counts.data(),
                       displacements.data(), MPI_BYTE, comm),
        "MPI_Allgatherv (subtree roots)");
  pairwise_accumulator<Acc> total;
  std::size_t next = 0;
  for (std::size_t r = 0; r < ranks; ++r)
    for (const aligned_block& b : blocks[r]) total.add_subtree(roots[next++], b.level);
  return total.root();
}

template <class A, class T>
A exact_sum(const T* data, std::uint64_t n, MPI_Comm comm, const cpu_options& options) {
  using state = exact_accumulator_for<T>;
  using R = typename state::range_type;
  std::uint8_t mine[state::serialized_bytes], total[state::serialized_bytes];
  detred::detail::exact_state_n(data, n, options).serialize(mine);
  check(MPI_Allreduce(mine, total, 1, exact_state_type<R>(), exact_state_op<R>(), comm),
        "MPI_Allreduce (exact states)");
  state merged;
  if (!merged.deserialize(total))
    throw mpi_error(MPI_ERR_OTHER, "detred::mpi::sum: the all-reduced exact state is not valid (corrupted in transit)");
  return merged.template rounded<A>();
}

}  // namespace

template <class A, class T>
A sum_n(const T* data, std::uint64_t n_local, MPI_Comm comm, sum_method method, const cpu_options& options) {
  errors_return guard(comm);
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  call_signature mine;
  mine.count = n_local;
  mine.input = distributed::type_code<T>();
  mine.accumulation = distributed::type_code<A>();
  mine.operation = data == nullptr && n_local > 0 ? distributed::null_data_operation : std::uint32_t(method) + 1;
  const std::vector<call_signature> all = exchange_signatures("mpi::sum", comm, mine, false);
  // Every rank has the same method now, so every rank takes the same branch (or throws the same error).
  switch (method) {
    case sum_method::tree: {
      const A result = canonical_root<plain_accumulator<A>>(data, comm, rank, all, options).result();
      return canonicalize_nan(result);
    }
    case sum_method::tree_neumaier: {
      const A result = canonical_root<neumaier_accumulator<A>>(data, comm, rank, all, options).result();
      return canonicalize_nan(result);
    }
    case sum_method::exact:
      return exact_sum<A>(data, n_local, comm, options);
    default:
      detred::detail::throw_invalid("mpi::sum", std::string("sum_method::") + std::string(to_string(method)) +
                                                    " is sequential by definition; use tree, tree_neumaier or exact");
  }
}

#define DETRED_INSTANTIATE_MPI_SUM(A, T) \
  template A sum_n<A, T>(const T*, std::uint64_t, MPI_Comm, sum_method, const cpu_options&);
DETRED_INSTANTIATE_MPI_SUM(float, half)
DETRED_INSTANTIATE_MPI_SUM(double, half)
DETRED_INSTANTIATE_MPI_SUM(float, bfloat16)
DETRED_INSTANTIATE_MPI_SUM(double, bfloat16)
DETRED_INSTANTIATE_MPI_SUM(float, float)
DETRED_INSTANTIATE_MPI_SUM(double, float)
DETRED_INSTANTIATE_MPI_SUM(double, double)
#undef DETRED_INSTANTIATE_MPI_SUM

}  // namespace detred::mpi::detail
