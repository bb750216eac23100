// detred::nccl::all_reduce (include/detred/nccl/all_reduce.hpp; design and figures in docs/DISTRIBUTED.md).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/distributed/all_reduce_plan.hpp"
#include "detred/errors.hpp"
#include "detred/nccl/all_reduce.hpp"
#include "src/nccl/combine.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl {
namespace {

template <class T>
constexpr ncclDataType_t nccl_type() {
  return std::is_same_v<T, float> ? ncclFloat32 : ncclBfloat16;
}

// Chunk step 1: rank j receives every other rank's part of slice j (slices of s elements from in + c0) into
// staged[r * s ...], the shape of a reduce-scatter. P == 2 may do it as one all-gather of each rank's part of the other
// rank's slice: slot r of the result is rank r's contribution, where the combine reads it.
template <class T>
void exchange(context::state& st, const T* in, T* staged, std::size_t s, bool by_all_gather, cudaStream_t stream) {
  if (by_all_gather) {
    check(ncclAllGather(in + std::size_t(1 - st.rank) * s, staged, s, nccl_type<T>(), st.comm, stream),
          "ncclAllGather (exchange)", st.comm);
    return;
  }
  check(ncclGroupStart(), "ncclGroupStart", st.comm);
  for (int r = 0; r < st.size; ++r) {
    if (r == st.rank) continue;
    check(ncclSend(in + std::size_t(r) * s, s, nccl_type<T>(), r, st.comm, stream), "ncclSend (exchange)", st.comm);
    check(ncclRecv(staged + std::size_t(r) * s, s, nccl_type<T>(), r, st.comm, stream), "ncclRecv (exchange)", st.comm);
  }
  check(ncclGroupEnd(), "ncclGroupEnd (exchange)", st.comm);
}

// Chunk step 3: every rank's combined slice to everyone (in place: this rank's slice is already at out + rank * s).
template <class T>
void gather(context::state& st, T* out, std::size_t s, cudaStream_t stream) {
  check(ncclAllGather(out + std::size_t(st.rank) * s, out, s, nccl_type<T>(), st.comm, stream),
        "ncclAllGather (combined slices)", st.comm);
}

template <class T>
void scatter_combine_gather(context::state& st, const T* in, T* out, std::size_t n, cudaStream_t stream,
                            all_reduce_mode mode, const all_reduce_options& options) {
  const std::size_t P = std::size_t(st.size);
  const bool by_all_gather = options.exchange == all_reduce_exchange::all_gather;
  if (by_all_gather && P != 2)
    detred::detail::throw_invalid("nccl::all_reduce", "all_reduce_exchange::all_gather needs exactly 2 ranks");
  const distributed::all_reduce_plan plan = distributed::plan_all_reduce(n, P, options.chunk_bytes, sizeof(T));
  // Two staging areas (chunk k uses k % 2), each of P slots of plan.stride elements.
  T* staged[2];
  staged[0] = reinterpret_cast<T*>(st.staging.reserve(2 * P * plan.stride * sizeof(T)));
  staged[1] = staged[0] + P * plan.stride;

  // Chunk k's combine runs on the side stream between its exchange and its gather, so that it overlaps chunk k + 1's
  // exchange.
  const std::size_t chunks = plan.chunks.size();
  for (std::size_t k = 0; k < chunks; ++k) {
    const auto [c0, s] = plan.chunks[k];
    const int b = int(k % 2);
    exchange(st, in + c0, staged[b], s, by_all_gather, stream);
    cuda::check(cudaEventRecord(st.exchanged[b], stream), "detred::nccl: cudaEventRecord");
    cuda::check(cudaStreamWaitEvent(st.side, st.exchanged[b], 0), "detred::nccl: cudaStreamWaitEvent");
    const std::size_t mine = c0 + std::size_t(st.rank) * s;
    detail::launch_combine(in + mine, staged[b], s, st.size, st.rank, out + mine, s, mode, st.side);
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
  const std::size_t c0 = plan.tail_begin, t = n - c0;
  if (t > 0) {
    T* gathered = staged[chunks % 2];
    check(ncclAllGather(in + c0, gathered, t, nccl_type<T>(), st.comm, stream), "ncclAllGather (tail)", st.comm);
    detail::launch_combine(gathered + std::size_t(st.rank) * t, static_cast<const T*>(gathered), t, st.size, st.rank,
                           out + c0, t, mode, stream);
  }
}

// The naive approach, for comparison: every rank gathers every whole buffer, then combines all n elements.
template <class T>
void naive_all_gather(context::state& st, const T* in, T* out, std::size_t n, cudaStream_t stream,
                      all_reduce_mode mode) {
  T* gathered = reinterpret_cast<T*>(st.staging.reserve(std::size_t(st.size) * n * sizeof(T)));
  check(ncclAllGather(in, gathered, n, nccl_type<T>(), st.comm, stream), "ncclAllGather (naive)", st.comm);
  detail::launch_combine(gathered + std::size_t(st.rank) * n, static_cast<const T*>(gathered), n, st.size, st.rank, out,
                         n, mode, stream);
}

template <class T>
void all_reduce_any(context& ctx, const T* in, T* out, std::size_t n, cudaStream_t stream, all_reduce_mode mode,
                    const all_reduce_options& options) {
  context::state& st = ctx.internals();
  st.require_device("nccl::all_reduce");
  if (n > 0 && (in == nullptr || out == nullptr))
    detred::detail::throw_invalid("nccl::all_reduce", "in or out is null but n > 0");
  if (options.check_arguments) {
    // Everything that shapes the messages must match: mode and algorithm (the operation), exchange and chunk size.
    const distributed::call_signature mine{n,
                                           distributed::type_code<T>(),
                                           distributed::type_code<T>(),
                                           200 + std::uint32_t(mode) * 4 + std::uint32_t(options.algorithm),
                                           0,
                                           std::uint64_t(options.chunk_bytes) * 4 + std::uint64_t(options.exchange)};
    st.exchange_records("nccl::all_reduce", mine, stream, true);
  }
  if (n == 0) return;
  if (options.algorithm == all_reduce_algorithm::naive_all_gather)
    naive_all_gather(st, in, out, n, stream, mode);
  else
    scatter_combine_gather(st, in, out, n, stream, mode, options);
}

}  // namespace

void all_reduce(context& ctx, const float* d_in, float* d_out, std::size_t n, cudaStream_t stream, all_reduce_mode mode,
                const all_reduce_options& options) {
  all_reduce_any(ctx, d_in, d_out, n, stream, mode, options);
}
void all_reduce(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::size_t n, cudaStream_t stream,
                all_reduce_mode mode, const all_reduce_options& options) {
  all_reduce_any(ctx, d_in, d_out, n, stream, mode, options);
}

}  // namespace detred::nccl
