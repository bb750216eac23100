// The generic device reduce and map-reduce, for any trivially copyable element and node types and any associative
// device operator, commutative or not (the reduce family: options in reduce.hpp; the call shape of docs/API.md). The
// operators are the caller's device functors, so the kernels are instantiated in the caller's translation unit:
// compile it with nvcc.
//
// Order: op(left, right) associated in the canonical order of n (docs/ORDER.md), operands never swapped (the left one
// always covers lower indices): bit for bit what the CPU's canonical engine gives for the same operators
// (detred::reduce, detred::transform_reduce), for every n (64-bit), launch shape, pointer alignment and GPU
// (cpu_gpu). Error, NaN and overflow behaviour are the operator's, applied in that order. Empty input: `identity`,
// which is never combined with an input. Workspace: the bytes a size query gives (a function of n and the types);
// no allocation. d_in needs only its element type's alignment (16-byte aligned inputs take one vector load per 16
// bytes). Throws invalid_argument for a null d_in with n > 0, a null d_out, a misaligned pointer, too small a
// workspace or an option out of range; cuda_error on a CUDA failure. Asynchronous on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "detred/cuda/detail/generic_reduce_engine.cuh"
#include "detred/cuda/reduce.hpp"

namespace detred::cuda {

// d_in[0] (+) d_in[1] (+) ... (+) d_in[n-1], (+) = reduce_op(left, right), written to *d_out: the CPU's
// detred::reduce(x, n, identity, reduce_op) bit for bit.
template <class T, class ReduceOp>
void reduce(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_out, std::uint64_t n,
            std::type_identity_t<T> identity, ReduceOp reduce_op, cudaStream_t stream = nullptr,
            const reduce_options& options = {}) {
  detail::generic_reduce<T, T, detail::no_input>(
      d_workspace, workspace_bytes, d_in, static_cast<const detail::no_input*>(nullptr), d_out, n,
      detail::identity_map{}, reduce_op, detail::identity_if_empty<T>{identity}, stream, options, "cuda::reduce");
}

// transform_op(d_in[0]) (+) ... (+) transform_op(d_in[n-1]), (+) = reduce_op(left, right), written to *d_out: the
// CPU's detred::transform_reduce with the same operators, bit for bit. The argument order is std::transform_reduce's
// (init, reduce, transform). transform_op: Node(const X&), or Node(const X&, std::uint64_t i) with the element's
// index i. A unary transform_op may also give the root of a run of N consecutive elements at once: a member
// `template <int N> Node run_root(const X (&run)[N]) const` returning what the canonical tree over
// transform_op(run[0..N)) with reduce_op gives (its author vouches for the same bits: exact integer arithmetic, say).
// The engine then calls it in place of those N leaves and N - 1 operator calls, with N the power of two of elements
// a thread loads in one pass (the least one whose run is at least 64 bytes and a multiple of 16 bytes: 16 for int32;
// examples/worked/operators.hpp, mssp_leaf).
template <class X, class Node, class ReduceOp, class TransformOp>
void transform_reduce(void* d_workspace, std::size_t& workspace_bytes, const X* d_in, Node* d_out, std::uint64_t n,
                      std::type_identity_t<Node> identity, ReduceOp reduce_op, TransformOp transform_op,
                      cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::generic_reduce<Node, X, detail::no_input>(
      d_workspace, workspace_bytes, d_in, static_cast<const detail::no_input*>(nullptr), d_out, n, transform_op,
      reduce_op, detail::identity_if_empty<Node>{identity}, stream, options, "cuda::transform_reduce");
}

}  // namespace detred::cuda
