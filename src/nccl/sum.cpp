// detred::nccl::sum (include/detred/nccl/sum.hpp; design in docs/DISTRIBUTED.md).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/accumulators/pairwise.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"
#include "detred/nccl/sum.hpp"
#include "src/cuda/exact/exact_sum.hpp"
#include "src/distributed/aligned_blocks.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl::detail {
namespace {

using distributed::aligned_block;
using distributed::call_signature;

template <class A, class T>
A canonical_sum(context::state& s, const T* d_in, const unsigned char* records, cudaStream_t stream,
                const cuda::sum_options& options) {
  const std::size_t ranks = std::size_t(s.size);
  std::vector<std::vector<aligned_block>> blocks(ranks);
  std::uint64_t begin = 0, my_begin = 0;
  std::size_t most = 1;
  for (std::size_t r = 0; r < ranks; ++r) {
    call_signature sig;
    std::memcpy(&sig, records + r * record_bytes, sizeof sig);
    if (int(r) == s.rank) my_begin = begin;
    blocks[r] = distributed::aligned_blocks(begin, begin + sig.count);
    most = std::max(most, blocks[r].size());
    begin += sig.count;
  }
  // This rank's roots: a complete subtree is its own canonical sum, so detred::cuda::sum of each block gives T(a, 2^k).
  A* roots = reinterpret_cast<A*>(s.roots.reserve(ranks * most * sizeof(A)));
  A* mine = roots + std::size_t(s.rank) * most;
  std::size_t workspace_bytes = 0;
  for (const aligned_block& b : blocks[std::size_t(s.rank)])
    workspace_bytes = std::max(workspace_bytes, cuda::detail::sum_workspace_size(std::uint64_t{1} << b.level, options));
  // Never null (a null workspace would make cuda::sum a size query).
  void* workspace = s.workspace.reserve(std::max<std::size_t>(workspace_bytes, 256));
  std::size_t j = 0;
  for (const aligned_block& b : blocks[std::size_t(s.rank)])
    cuda::sum<A>(workspace, workspace_bytes, d_in + (b.begin - my_begin), mine + j++, std::uint64_t{1} << b.level,
                 stream, options);
  check(ncclAllGather(mine, roots, most * sizeof(A), ncclUint8, s.comm, stream), "ncclAllGather (subtree roots)",
        s.comm);
  const std::vector<A> host = cuda::to_host(static_cast<const A*>(roots), ranks * most, stream);
  pairwise_accumulator<plain_accumulator<A>> total;
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t k = 0; k < blocks[r].size(); ++k)
      total.add_subtree(plain_accumulator<A>{host[r * most + k]}, blocks[r][k].level);
  return canonicalize_nan(total.result());
}

// Every rank's exact state (limbs, count, flags: launch_exact_state's layout) from the records, merged, rounded.
template <class A, class T>
A merge_exact_states(const context::state& s, const unsigned char* records) {
  using state = exact_accumulator_for<T>;
  constexpr int L = state::limb_count;
  state total;
  for (int r = 0; r < s.size; ++r) {
    long long v[L + 2];
    std::memcpy(v, records + std::size_t(r) * record_bytes + record_payload_offset, sizeof v);
    state one;
    for (int k = 0; k < L; ++k) one.set_raw(k, v[k]);
    one.set_count(std::uint64_t(v[L]), std::uint32_t(v[L + 1]), 1);
    total.merge(one);
  }
  return total.template rounded<A>();
}

// The arguments one rank can check alone; empty when they are valid.
template <class T>
std::string local_error(const T* d_in, std::uint64_t n_local, const cuda::sum_options& options) {
  if (d_in == nullptr && n_local > 0) return "d_in is null but n_local > 0";
  if (options.method != sum_method::tree && options.method != sum_method::exact)
    return "options.method is sum_method::" + std::string(to_string(options.method)) +
           ", which has no distributed GPU form; use tree or exact";
  if (options.method == sum_method::exact && n_local > cuda::detail::exact_max_n)
    return "n_local is " + std::to_string(n_local) + ", more than the exact sum's 2^42 a GPU";
  try {
    (void)cuda::detail::sum_workspace_size(n_local, options);  // validates the launch fields
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

template <class A, class T>
A sum_n(context& ctx, const T* d_in, std::uint64_t n_local, cudaStream_t stream, const cuda::sum_options& options) {
  context::state& s = ctx.internals();
  s.require_device("nccl::sum");
  // Where the peer-memory window exists, the other collectives check on the device: a stopping handshake first, so
  // that a rank in another call meets this call's descriptor rather than waiting in the all-gather below.
  s.peer.throw_if_failed("nccl::sum", stream);
  if (s.peer.has_window()) {
    call_descriptor d;
    d.operation = 100 + std::uint32_t(options.method);
    d.types = distributed::type_code<T>() | (distributed::type_code<A>() << 4);
    s.peer.handshake("nccl::sum", d, true, true, stream);
  }
  static_assert((exact_accumulator<double>::limb_count + 2) * 8 + record_payload_offset <= record_bytes);
  const bool exact = options.method == sum_method::exact;
  const std::string error = local_error(d_in, n_local, options);
  if (error.empty() && exact) {
    // The state goes out in the argument record itself: one collective in all. Its workspace is cuda::sum's.
    const std::size_t bytes = cuda::detail::sum_workspace_size(n_local, {.method = sum_method::exact});
    cuda::detail::launch_exact_state(d_in, n_local, reinterpret_cast<long long*>(s.my_record() + record_payload_offset),
                                     s.workspace.reserve(bytes), stream);
  }
  call_signature mine;
  mine.count = n_local;
  mine.input = distributed::type_code<T>();
  mine.accumulation = distributed::type_code<A>();
  mine.operation = 100 + std::uint32_t(options.method);
  // Any rank's local error or a mismatch throws on every rank here; past it, every rank has the same valid method.
  const unsigned char* records = s.exchange_records("nccl::sum", mine, error, stream, false);
  if (exact) return merge_exact_states<A, T>(s, records);
  return canonical_sum<A>(s, d_in, records, stream, options);
}

#define DETRED_INSTANTIATE_NCCL_SUM(A, T) \
  template A sum_n<A, T>(context&, const T*, std::uint64_t, cudaStream_t, const cuda::sum_options&);
DETRED_INSTANTIATE_NCCL_SUM(float, half)
DETRED_INSTANTIATE_NCCL_SUM(double, half)
DETRED_INSTANTIATE_NCCL_SUM(float, bfloat16)
DETRED_INSTANTIATE_NCCL_SUM(double, bfloat16)
DETRED_INSTANTIATE_NCCL_SUM(float, float)
DETRED_INSTANTIATE_NCCL_SUM(double, float)
DETRED_INSTANTIATE_NCCL_SUM(double, double)
#undef DETRED_INSTANTIATE_NCCL_SUM

}  // namespace detred::nccl::detail
