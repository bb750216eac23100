// What detred::nccl's element-wise collectives (all_reduce, reduce_scatter, all_gather, all_reduce_rows) share: the
// argument check, the transport choice and the peer call. Internal (not installed).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "detred/errors.hpp"
#include "detred/nccl/all_reduce.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/nccl/peer.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl::detail {

template <class T>
constexpr ncclDataType_t nccl_type() {
  if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  if constexpr (std::is_same_v<T, bfloat16>) return ncclBfloat16;
  return ncclFloat16;
}

template <class T>
constexpr peer_type peer_type_of() {
  if constexpr (std::is_same_v<T, float>) return peer_type::f32;
  if constexpr (std::is_same_v<T, bfloat16>) return peer_type::bf16;
  return peer_type::f16;
}

// The options that shape the messages, packed into the argument record's 64-bit field.
inline std::uint64_t packed_options(const all_reduce_options& o) {
  return (o.chunk_bytes & ((std::uint64_t{1} << 48) - 1)) | (std::uint64_t(o.blocks & 0xFFu) << 48) |
         (std::uint64_t(o.transport) << 56) | (std::uint64_t(o.check_on_host) << 58) |
         (std::uint64_t(o.algorithm) << 60);
}

// The arguments one rank can check alone; empty when they are valid.
inline std::string local_error(const void* in, const void* out, std::uint64_t n, const all_reduce_options& o,
                               bool has_method) {
  if (n > 0 && (in == nullptr || out == nullptr)) return "d_in or d_out is null but n > 0";
  if (has_method && o.method != sum_method::tree && o.method != sum_method::exact)
    return "options.method is sum_method::" + std::string(to_string(o.method)) +
           "; the collectives have tree and exact";
  if (o.chunk_bytes == 0 || o.chunk_bytes >= (std::size_t{1} << 48)) return "options.chunk_bytes is not in [1, 2^48)";
  if (o.blocks > 128) return "options.blocks is " + std::to_string(o.blocks) + ", more than 128";
  return {};
}

// How the rest of a call is checked: on the device (the descriptor goes to the peer kernel, or to a handshake where
// no data kernel runs), or not at all (checked on the host already, or check_arguments off).
struct call_check {
  bool on_device = false;
  call_descriptor descriptor;
};

// The argument check of a collective (operation: a code per call; docs/DISTRIBUTED.md, "Errors"), when
// check_arguments is on:
// - a context that has failed withdraws and throws;
// - without the peer-memory window (the first call, or ranks that are not load/store reachable), or with
//   check_on_host: every rank's record is all-gathered and compared on the host, and any mismatch or any rank's own
//   argument error throws invalid_argument on every rank at this call (where the window exists, a stopping handshake
//   comes first, so that a rank that checks on the device meets a descriptor rather than waiting);
// - otherwise the check happens on the device: a rank's own argument error withdraws it (its peers' kernels see the
//   withdrawal) and throws there; the returned descriptor goes to the kernel.
template <class T>
call_check check_collective(context::state& st, const char* function, std::uint32_t operation, const void* in,
                            const void* out, std::uint64_t n, cudaStream_t stream, const all_reduce_options& options,
                            bool has_method) {
  const std::string error = local_error(in, out, n, options, has_method);
  if (!options.check_arguments) {
    if (!error.empty()) detred::detail::throw_invalid(function, error);
    return {};
  }
  call_check c;
  c.descriptor.n = n;
  c.descriptor.operation = operation + (has_method ? std::uint32_t(options.method) : 0);
  c.descriptor.types = distributed::type_code<T>();
  c.descriptor.options = packed_options(options);
  st.peer.throw_if_failed(function, stream);
  const bool window = st.peer.has_window();
  if (!window || options.check_on_host) {
    if (window) st.peer.handshake(function, c.descriptor, true, true, stream);
    distributed::call_signature mine;
    mine.count = n;
    mine.input = mine.accumulation = distributed::type_code<T>();
    mine.operation = c.descriptor.operation;
    mine.options = c.descriptor.options;
    st.exchange_records(function, mine, error, stream, true);
    return {};
  }
  if (!error.empty()) {
    call_descriptor withdrawn;
    withdrawn.operation = withdrawn_operation;
    st.peer.handshake(function, withdrawn, false, false, stream);
    const std::string why = "rank " + std::to_string(st.rank) + ": " + error;
    st.peer.fail("an earlier call was withdrawn on this rank (" + why + "); this context has failed");
    detred::detail::throw_invalid(function, why +
                                                " (found on this rank alone: the other ranks' outputs of this call are "
                                                "NaN, their contexts report it at a later call, and this context has "
                                                "failed)");
  }
  c.on_device = true;
  return c;
}

// The device check of a call that runs no peer kernel (n = 0, or the NCCL-calls transport): a handshake that waits
// for the peers; `stop` where host-side NCCL calls follow, which must not start unless the ranks agree.
inline void check_without_kernel(context::state& st, const char* function, const call_check& c, bool stop,
                                 cudaStream_t stream) {
  if (c.on_device) st.peer.handshake(function, c.descriptor, true, stop, stream);
}

// Whether this call runs on the peer-memory transport; the answer is the same on every rank. The first call that may
// use it decides (collective).
inline bool use_peer_memory(context::state& st, const char* function, const all_reduce_options& options,
                            cudaStream_t stream) {
  if (options.transport == transport::nccl_calls) return false;
  const bool available = st.peer.available(st.comm, st.size, st.rank, stream);
  if (!available && options.transport == transport::peer_memory)
    detred::detail::throw_invalid(function,
                                  "options.transport is peer_memory but the ranks are not all load/store reachable "
                                  "(one NVLink domain, at most 8 ranks) or NCCL has no device communicator here");
  return available;
}

template <class T>
void fill_call(peer_call& call, const T* in, T* out, std::uint64_t n, const all_reduce_options& options,
               const call_check& check, const char* function) {
  call.check = check.on_device;
  call.descriptor = check.descriptor;
  call.function = function;
  call.type = peer_type_of<T>();
  call.exact = options.method == sum_method::exact;
  call.in = in;
  call.out = out;
  call.n = n;
  call.chunk_bytes = options.chunk_bytes;
  call.blocks = options.blocks;
}

// nccl::all_reduce of float past its argument check (the micro-batch reduce's second step).
void all_reduce_float_checked(context::state& st, const char* function, const float* in, float* out, std::uint64_t n,
                              cudaStream_t stream, const all_reduce_options& options, const call_check& check);

}  // namespace detred::nccl::detail
