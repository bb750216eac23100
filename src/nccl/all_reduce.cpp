// detred::nccl::all_reduce (include/detred/nccl/all_reduce.hpp; design and figures in docs/DISTRIBUTED.md): the
// peer-memory kernels where the ranks reach each other (src/nccl/peer.hpp), else NCCL calls and a combine kernel.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "detred/nccl/all_reduce.hpp"
#include "src/distributed/all_reduce_plan.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/nccl/collective.hpp"
#include "src/nccl/combine.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl {
namespace {

// Chunk step 1: rank j receives every other rank's part of slice j (slices of s elements from in + c0) into
// staged[r * s ...], the shape of a reduce-scatter.
template <class T>
void exchange(context::state& st, const T* in, T* staged, std::uint64_t s, cudaStream_t stream) {
  check(ncclGroupStart(), "ncclGroupStart", st.comm);
  for (int r = 0; r < st.size; ++r) {
    if (r == st.rank) continue;
    check(ncclSend(in + std::uint64_t(r) * s, s, detail::nccl_type<T>(), r, st.comm, stream), "ncclSend (exchange)",
          st.comm);
    check(ncclRecv(staged + std::uint64_t(r) * s, s, detail::nccl_type<T>(), r, st.comm, stream), "ncclRecv (exchange)",
          st.comm);
  }
  check(ncclGroupEnd(), "ncclGroupEnd (exchange)", st.comm);
}

// Chunk step 3: every rank's combined slice to everyone (in place: this rank's slice is already at out + rank * s).
template <class T>
void gather(context::state& st, T* out, std::uint64_t s, cudaStream_t stream) {
  check(ncclAllGather(out + std::uint64_t(st.rank) * s, out, s, detail::nccl_type<T>(), st.comm, stream),
        "ncclAllGather (combined slices)", st.comm);
}

template <class T>
void scatter_combine_gather(context::state& st, const T* in, T* out, std::uint64_t n, cudaStream_t stream,
                            const all_reduce_options& options) {
  const std::uint64_t P = std::uint64_t(st.size);
  const distributed::all_reduce_plan plan = distributed::plan_all_reduce(n, P, options.chunk_bytes, sizeof(T));
  // Two staging areas (chunk k uses k % 2), each of P slots of plan.stride elements.
  T* staged[2];
  staged[0] = reinterpret_cast<T*>(st.staging.reserve(2 * P * plan.stride * sizeof(T)));
  staged[1] = staged[0] + P * plan.stride;
  const bool exact = options.method == sum_method::exact;

  // Chunk k's combine runs on the side stream between its exchange and its gather, so that it overlaps chunk k + 1's
  // exchange.
  const std::size_t chunks = plan.chunks.size();
  for (std::size_t k = 0; k < chunks; ++k) {
    const auto [c0, s] = plan.chunks[k];
    const int b = int(k % 2);
    exchange(st, in + c0, staged[b], s, stream);
    cuda::check(cudaEventRecord(st.exchanged[b], stream), "detred::nccl: cudaEventRecord");
    cuda::check(cudaStreamWaitEvent(st.side, st.exchanged[b], 0), "detred::nccl: cudaStreamWaitEvent");
    const std::uint64_t mine = c0 + std::uint64_t(st.rank) * s;
    detail::launch_combine(in + mine, staged[b], s, st.size, st.rank, out + mine, s, exact, st.side);
    cuda::check(cudaEventRecord(st.combined[b], st.side), "detred::nccl: cudaEventRecord");
    if (k > 0) {
      cuda::check(cudaStreamWaitEvent(stream, st.combined[1 - b], 0), "detred::nccl: cudaStreamWaitEvent");
      gather(st, out + plan.chunks[k - 1].begin, plan.chunks[k - 1].slice, stream);
    }
  }
  if (chunks > 0) {
    cuda::check(cudaStreamWaitEvent(stream, st.combined[(chunks - 1) % 2], 0), "detred::nccl: cudaStreamWaitEvent");
    gather(st, out + plan.chunks.back().begin, plan.chunks.back().slice, stream);
  }
  // The tail, fewer than P elements: every rank gathers every rank's tail and combines all of it (P * t < P * P
  // elements: they fit a staging area).
  const std::uint64_t c0 = plan.tail_begin, t = n - c0;
  if (t > 0) {
    T* gathered = staged[chunks % 2];
    check(ncclAllGather(in + c0, gathered, t, detail::nccl_type<T>(), st.comm, stream), "ncclAllGather (tail)",
          st.comm);
    detail::launch_combine(gathered + std::uint64_t(st.rank) * t, static_cast<const T*>(gathered), t, st.size, st.rank,
                           out + c0, t, exact, stream);
  }
}

template <class T>
void all_reduce_checked(context::state& st, const char* function, const T* in, T* out, std::uint64_t n,
                        cudaStream_t stream, const all_reduce_options& options, const detail::call_check& check) {
  if (n == 0) {
    detail::check_without_kernel(st, function, check, false, stream);
    return;
  }
  if (detail::use_peer_memory(st, function, options, stream)) {
    detail::peer_call call;
    const std::uint64_t bytes = n * sizeof(T);
    // One-shot moves (P - 1) * n elements out of each rank with one barrier a round, two-shot 2 (P - 1) / P * n with
    // two: one-shot where the bytes are few (or P = 2, where both move the same bytes) up to 16 MiB; two-shot, with
    // more blocks in flight, beyond (docs/PERFORMANCE.md, "Distributed": 1.09x against 0.98x ncclAllReduce at 256 MiB
    // on 2 H100s).
    const bool small = bytes <= (std::uint64_t{512} << 10) || (st.size <= 2 && bytes <= (std::uint64_t{16} << 20));
    const bool one_shot =
        options.algorithm == peer_algorithm::one_shot || (options.algorithm == peer_algorithm::automatic && small);
    call.op = one_shot ? detail::peer_op::one_shot : detail::peer_op::two_shot;
    detail::fill_call<T>(call, in, out, n, options, check, function);
    st.peer.run(st.comm, call, stream);
    return;
  }
  detail::check_without_kernel(st, function, check, true, stream);
  scatter_combine_gather(st, in, out, n, stream, options);
}

template <class T>
void all_reduce_any(context& ctx, const T* in, T* out, std::uint64_t n, cudaStream_t stream,
                    const all_reduce_options& options) {
  context::state& st = ctx.internals();
  st.require_device("nccl::all_reduce");
  const detail::call_check check =
      detail::check_collective<T>(st, "nccl::all_reduce", 200, in, out, n, stream, options, true);
  all_reduce_checked(st, "nccl::all_reduce", in, out, n, stream, options, check);
}

}  // namespace

namespace detail {
void all_reduce_float_checked(context::state& st, const char* function, const float* in, float* out, std::uint64_t n,
                              cudaStream_t stream, const all_reduce_options& options, const call_check& check) {
  all_reduce_checked(st, function, in, out, n, stream, options, check);
}
}  // namespace detail

void all_reduce(context& ctx, const float* d_in, float* d_out, std::uint64_t n, cudaStream_t stream,
                const all_reduce_options& options) {
  all_reduce_any(ctx, d_in, d_out, n, stream, options);
}
void all_reduce(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n, cudaStream_t stream,
                const all_reduce_options& options) {
  all_reduce_any(ctx, d_in, d_out, n, stream, options);
}
void all_reduce(context& ctx, const half* d_in, half* d_out, std::uint64_t n, cudaStream_t stream,
                const all_reduce_options& options) {
  all_reduce_any(ctx, d_in, d_out, n, stream, options);
}

}  // namespace detred::nccl
