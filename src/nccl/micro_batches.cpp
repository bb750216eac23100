// detred::nccl::all_reduce_micro_batches (include/detred/nccl/micro_batches.hpp; docs/DISTRIBUTED.md).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "detred/errors.hpp"
#include "detred/nccl/micro_batches.hpp"
#include "src/nccl/collective.hpp"
#include "src/nccl/combine.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl {
namespace {

template <class T>
void micro_batches_any(context& ctx, const T* in, std::uint64_t row_stride, int rows, T* out, std::uint64_t n,
                       cudaStream_t stream, const all_reduce_options& options) {
  context::state& st = ctx.internals();
  st.require_device("nccl::all_reduce_micro_batches");
  if (rows < 1) detred::detail::throw_invalid("nccl::all_reduce_micro_batches", "rows < 1");
  if (rows > 1 && row_stride < n) detred::detail::throw_invalid("nccl::all_reduce_micro_batches", "row_stride < n");
  // The row count joins the operation code, so that ranks with different rows fail the check together.
  const char* function = "nccl::all_reduce_micro_batches";
  const detail::call_check check =
      detail::check_collective<T>(st, function, 500 + 16 * std::uint32_t(rows), in, out, n, stream, options, true);
  if (n == 0) {
    detail::check_without_kernel(st, function, check, false, stream);
    return;
  }
  const bool power_of_two = (rows & (rows - 1)) == 0;
  if constexpr (std::is_same_v<T, float>) {
    if (options.method == sum_method::tree && power_of_two) {
      // Rank r's rows are the aligned complete subtree T(r * rows, rows) of the canonical tree over M = P * rows: its
      // root, reduced here, then the canonical order over the P roots is the canonical order over the M values.
      detail::launch_reduce_rows(in, row_stride, rows, out, n, stream);
      detail::all_reduce_float_checked(st, function, out, out, n, stream, options, check);
      return;
    }
  }
  if (!detail::use_peer_memory(st, function, options, stream))
    detred::detail::throw_invalid(function,
                                  "this method, type and row count need the peer-memory transport, which these ranks "
                                  "do not have (or options.transport is nccl_calls)");
  detail::peer_call call;
  call.op = detail::peer_op::one_shot;
  detail::fill_call<T>(call, in, out, n, options, check, function);
  call.rows = rows;
  call.row_stride = row_stride;
  st.peer.run(st.comm, call, stream);
}

}  // namespace

void all_reduce_micro_batches(context& ctx, const float* d_grads, std::uint64_t row_stride, int rows, float* d_out,
                              std::uint64_t n, cudaStream_t stream, const all_reduce_options& options) {
  micro_batches_any(ctx, d_grads, row_stride, rows, d_out, n, stream, options);
}
void all_reduce_micro_batches(context& ctx, const bfloat16* d_grads, std::uint64_t row_stride, int rows,
                              bfloat16* d_out, std::uint64_t n, cudaStream_t stream,
                              const all_reduce_options& options) {
  micro_batches_any(ctx, d_grads, row_stride, rows, d_out, n, stream, options);
}
void all_reduce_micro_batches(context& ctx, const half* d_grads, std::uint64_t row_stride, int rows, half* d_out,
                              std::uint64_t n, cudaStream_t stream, const all_reduce_options& options) {
  micro_batches_any(ctx, d_grads, row_stride, rows, d_out, n, stream, options);
}

}  // namespace detred::nccl
