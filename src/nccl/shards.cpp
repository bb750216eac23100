// detred::nccl::reduce_scatter and all_gather (include/detred/nccl/reduce_scatter.hpp, all_gather.hpp; design in
// docs/DISTRIBUTED.md): the peer-memory kernels where the ranks reach each other, else NCCL calls.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/nccl/all_gather.hpp"
#include "detred/nccl/reduce_scatter.hpp"
#include "src/nccl/collective.hpp"
#include "src/nccl/combine.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl {
namespace {

// NCCL calls: per chunk of every shard, rank j receives every other rank's part of shard j (ncclSend/ncclRecv in a
// group), then combines each element's P values in rank order.
template <class T>
void reduce_scatter_calls(context::state& st, const T* in, T* out, std::uint64_t n, cudaStream_t stream,
                          const all_reduce_options& options) {
  const std::uint64_t P = std::uint64_t(st.size);
  const std::uint64_t step = std::max<std::uint64_t>(16 / sizeof(T), options.chunk_bytes / sizeof(T) / P / 4 * 4);
  T* staged = reinterpret_cast<T*>(st.staging.reserve(P * std::min(step, n) * sizeof(T)));
  for (std::uint64_t c0 = 0; c0 < n; c0 += step) {
    const std::uint64_t len = std::min(step, n - c0);
    check(ncclGroupStart(), "ncclGroupStart", st.comm);
    for (int r = 0; r < st.size; ++r) {
      if (r == st.rank) continue;
      check(ncclSend(in + std::uint64_t(r) * n + c0, len, detail::nccl_type<T>(), r, st.comm, stream),
            "ncclSend (reduce-scatter)", st.comm);
      check(ncclRecv(staged + std::uint64_t(r) * len, len, detail::nccl_type<T>(), r, st.comm, stream),
            "ncclRecv (reduce-scatter)", st.comm);
    }
    check(ncclGroupEnd(), "ncclGroupEnd (reduce-scatter)", st.comm);
    detail::launch_combine(in + std::uint64_t(st.rank) * n + c0, static_cast<const T*>(staged), len, st.size, st.rank,
                           out + c0, len, options.method == sum_method::exact, stream);
  }
}

template <class T>
void reduce_scatter_any(context& ctx, const T* in, T* out, std::uint64_t n, cudaStream_t stream,
                        const all_reduce_options& options) {
  context::state& st = ctx.internals();
  st.require_device("nccl::reduce_scatter");
  const detail::call_check check =
      detail::check_collective<T>(st, "nccl::reduce_scatter", 300, in, out, n, stream, options, true);
  if (n == 0) {
    detail::check_without_kernel(st, "nccl::reduce_scatter", check, false, stream);
    return;
  }
  if (detail::use_peer_memory(st, "nccl::reduce_scatter", options, stream)) {
    detail::peer_call call;
    call.op = detail::peer_op::reduce_scatter;
    detail::fill_call<T>(call, in, out, n, options, check, "nccl::reduce_scatter");
    st.peer.run(st.comm, call, stream);
    return;
  }
  detail::check_without_kernel(st, "nccl::reduce_scatter", check, true, stream);
  reduce_scatter_calls(st, in, out, n, stream, options);
}

template <class T>
void all_gather_any(context& ctx, const T* in, T* out, std::uint64_t n, cudaStream_t stream,
                    const all_reduce_options& options) {
  context::state& st = ctx.internals();
  st.require_device("nccl::all_gather");
  const detail::call_check verdict =
      detail::check_collective<T>(st, "nccl::all_gather", 400, in, out, n, stream, options, false);
  if (n == 0) {
    detail::check_without_kernel(st, "nccl::all_gather", verdict, false, stream);
    return;
  }
  if (detail::use_peer_memory(st, "nccl::all_gather", options, stream)) {
    detail::peer_call call;
    call.op = detail::peer_op::all_gather;
    detail::fill_call<T>(call, in, out, n, options, verdict, "nccl::all_gather");
    call.exact = false;
    st.peer.run(st.comm, call, stream);
    return;
  }
  detail::check_without_kernel(st, "nccl::all_gather", verdict, true, stream);
  check(ncclAllGather(in, out, n, detail::nccl_type<T>(), st.comm, stream), "ncclAllGather", st.comm);
}

}  // namespace

void reduce_scatter(context& ctx, const float* d_in, float* d_out, std::uint64_t n_shard, cudaStream_t stream,
                    const all_reduce_options& options) {
  reduce_scatter_any(ctx, d_in, d_out, n_shard, stream, options);
}
void reduce_scatter(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n_shard, cudaStream_t stream,
                    const all_reduce_options& options) {
  reduce_scatter_any(ctx, d_in, d_out, n_shard, stream, options);
}
void reduce_scatter(context& ctx, const half* d_in, half* d_out, std::uint64_t n_shard, cudaStream_t stream,
                    const all_reduce_options& options) {
  reduce_scatter_any(ctx, d_in, d_out, n_shard, stream, options);
}
void all_gather(context& ctx, const float* d_in, float* d_out, std::uint64_t n_shard, cudaStream_t stream,
                const all_reduce_options& options) {
  all_gather_any(ctx, d_in, d_out, n_shard, stream, options);
}
void all_gather(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n_shard, cudaStream_t stream,
                const all_reduce_options& options) {
  all_gather_any(ctx, d_in, d_out, n_shard, stream, options);
}
void all_gather(context& ctx, const half* d_in, half* d_out, std::uint64_t n_shard, cudaStream_t stream,
                const all_reduce_options& options) {
  all_gather_any(ctx, d_in, d_out, n_shard, stream, options);
}

}  // namespace detred::nccl
