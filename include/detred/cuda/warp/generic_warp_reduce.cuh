// Warp- and thread-level canonical subtrees for ANY associative operator (commutative or not) and any trivially
// copyable value type, usable inside users' kernels. Unlike warp_reduce.cuh (detred's accumulators), nothing here
// needs an identity: partial groups are predicated (the operator is simply not called for lanes that hold no value),
// never padded.
//
// Notation of docs/ORDER.md: T(a, 2^k) is the complete pairwise tree over the 2^k consecutive items starting at the
// aligned index a; op(left, right) always gets the lower-index subtree on the left.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace detred::cuda {
namespace detail {

// __shfl_xor_sync of any trivially copyable value, one 32-bit word at a time (the value is copied into whole words,
// so sizes that are not a multiple of 4 work too). All 32 lanes must take part.
template <class T>
__device__ __forceinline__ T shuffle_xor_value(const T& v, int mask) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr int words = int((sizeof(T) + 3) / 4);
  unsigned w[words] = {};
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}

}  // namespace detail

// One thread, N (a power of two, compile time) items get(0), ..., get(N - 1): T(0, N), evaluated depth first
// (left subtree, right subtree, then op), so that at most log2(N) + 1 partial roots are live in registers.
template <int N, class Get, class Op>
__device__ __forceinline__ auto thread_subtree(const Get& get, const Op& op, int first = 0) {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "thread_subtree: N must be a power of two");
  if constexpr (N == 1) {
    return get(first);
  } else {
    auto left = thread_subtree<N / 2>(get, op, first);
    const auto right = thread_subtree<N / 2>(get, op, first + N / 2);
    return op(left, right);
  }
}

// Butterfly over the lanes: lane l's value is leaf l; afterwards every lane of each aligned group of 2^levels lanes
// (0 <= levels <= 5) holds that group's root T(g, 2^levels): level s joins the groups of 2^s lanes pairwise, the
// lower lanes' subtree on the left. Predicated: op is only called in groups that lie entirely below `valid_lanes`
// (lanes at or above it may hold anything, and their results are unspecified). All 32 lanes must call it.
template <class T, class Op>
__device__ __forceinline__ T warp_subtree_reduce(T value, const Op& op, int levels = 5, int valid_lanes = 32) {
  const int lane = threadIdx.x & 31;
  const bool active = ((lane >> levels) + 1) << levels <= valid_lanes;  // this lane's whole group holds values
#pragma unroll
  for (int level = 0; level < 5; ++level) {
    if (level >= levels) break;
    const int mask = 1 << level;
    const T other = detail::shuffle_xor_value(value, mask);
    if (active) value = (lane & mask) ? op(other, value) : op(value, other);
  }
  return value;
}

// Left-to-right joining of up to 2^Levels equal-size complete subtrees that arrive in index order, in registers
// (compile-time indices only): push(root, t) for t = 0, 1, ... carries like a binary increment (equal-size neighbours
// merge, the earlier one on the left) and returns the root of the block that t completes. After pushing
// t = 2^k - 1 it returns T over all 2^k subtrees.
template <class T, class Op, int Levels>
struct register_counter {
  T pending[Levels];  // pending[k]: the root of the block of 2^k subtrees that bit k of the count stands for
  Op op;

  __device__ __forceinline__ explicit register_counter(const Op& o) : op(o) {}

  __device__ __forceinline__ T push(T root, int t) {
    int carried = 0;
#pragma unroll
    for (int k = 0; k < Levels; ++k) {
      if (carried == k && ((t >> k) & 1)) {
        root = op(pending[k], root);
        carried = k + 1;
      }
    }
#pragma unroll
    for (int k = 0; k < Levels; ++k)
      if (carried == k) pending[k] = root;
    return root;
  }
};

// register_counter with the pending roots in shared memory (`pending`: Levels slots, private to the warp), for large
// values whose pending roots would take many registers. The whole warp pushes the same root (as
// warp_subtree_reduce leaves it); lane 0 stores, every lane reads. All 32 lanes must call push.
template <class T, class Op, int Levels>
struct shared_counter {
  T* pending;
  Op op;

  __device__ __forceinline__ shared_counter(T* slots, const Op& o) : pending(slots), op(o) {}

  __device__ __forceinline__ T push(T root, int t) {
    int carried = 0;
#pragma unroll
    for (int k = 0; k < Levels; ++k) {
      if (carried == k && ((t >> k) & 1)) {
        root = op(pending[k], root);
        carried = k + 1;
      }
    }
    __syncwarp();  // every lane has read the slots it needed
    if ((threadIdx.x & 31) == 0 && carried < Levels) pending[carried] = root;
    __syncwarp();
    return root;
  }
};

}  // namespace detred::cuda
