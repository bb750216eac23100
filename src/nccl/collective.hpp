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
         (std::uint64_t(o.transport) << 56) | (std::uint64_t(o.algorithm) << 60);
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

// The argument check of a collective (operation: a code per call), on every rank alike when check_arguments is on.
template <class T>
void check_collective(context::state& st, const char* function, std::uint32_t operation, const void* in,
                      const void* out, std::uint64_t n, cudaStream_t stream, const all_reduce_options& options,
                      bool has_method) {
  const std::string error = local_error(in, out, n, options, has_method);
  if (options.check_arguments) {
    distributed::call_signature mine;
    mine.count = n;
    mine.input = mine.accumulation = distributed::type_code<T>();
    mine.operation = operation + (has_method ? std::uint32_t(options.method) : 0);
    mine.options = packed_options(options);
    st.exchange_records(function, mine, error, stream, true);
  } else if (!error.empty()) {
    detred::detail::throw_invalid(function, error);
  }
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
void fill_call(peer_call& call, const T* in, T* out, std::uint64_t n, const all_reduce_options& options) {
  call.type = peer_type_of<T>();
  call.exact = options.method == sum_method::exact;
  call.in = in;
  call.out = out;
  call.n = n;
  call.chunk_bytes = options.chunk_bytes;
  call.blocks = options.blocks;
}

}  // namespace detred::nccl::detail
