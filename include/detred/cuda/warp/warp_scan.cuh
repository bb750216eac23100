// Warp-level scans, usable inside users' kernels. Lane l holds leaf l; op(left, right) is any associative operator
// (commutativity not needed: the left operand always covers lower lanes). T: trivially copyable, sizeof a multiple
// of 4 (shuffled one 32-bit word at a time).
//
// warp_fenwick_scan (canonical): computes the prefixes of docs/ORDER.md section 3. up() is the binary-counter
// up-sweep with xor shuffles (level k joins the aligned groups of 2^k lanes, lower group on the left) and keeps, in
// each lane, the root of its sibling group at every level. down() then continues the Fenwick recurrence
// P(m) = P(m - lowbit(m)) (+) T(m - lowbit(m), lowbit(m)) from a carry-in P(group start): lane l gets
//   P(l) = (((carry (+) T_1) (+) T_2) ...)   T_1, T_2, ...: the aligned blocks of l's binary digits, largest first,
// i.e. the canonical reduce of everything before lane l, left-folded from the carry. When the group is an aligned
// block of the whole input and the carry is P(group start), these are bit for bit the CPU scan's outputs. No
// shuffle in down(): at most `levels` combines per lane. Reproducible across runs, GPUs and the CPU.
#pragma once

#include <cstring>
#include <type_traits>

namespace detred::cuda {
namespace detail {
// __shfl_sync of every 32-bit word of v from lane `source` (all 32 lanes take part).
template <class T>
__device__ __forceinline__ T shuffle_from(const T& v, int source) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  unsigned w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_sync(0xffffffffu, w[i], source);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}
template <class T>
__device__ __forceinline__ T shuffle_xor_any(const T& v, int mask) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  unsigned w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}
}  // namespace detail

// The canonical warp scan in two halves (see the file comment). All 32 lanes call up() and down() with the same
// `levels` (0..5): groups of 2^levels lanes are scanned independently.
template <class T>
struct warp_fenwick_scan {
  T sibling[5];  // sibling[k]: root of the other aligned group of 2^k lanes inside this lane's group of 2^(k+1)

  // Returns the root T(group start, 2^levels) of this lane's group, the same bits in every lane of the group.
  template <class Op>
  __device__ __forceinline__ T up(T value, Op op, int levels = 5) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      if (k >= levels) break;
      const T other = detail::shuffle_xor_any(value, 1 << k);
      sibling[k] = other;
      value = (lane >> k & 1) ? op(other, value) : op(value, other);
    }
    return value;
  }

  // In: carry = P(group start), has_carry false when nothing precedes the group. Out: carry = P(lane's start), the
  // reduce of everything before this lane (has_carry false only in the group's first lane when it was false).
  template <class Op>
  __device__ __forceinline__ void down(T& carry, bool& has_carry, Op op, int levels = 5) const {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 4; k >= 0; --k) {
      if (k >= levels || !(lane >> k & 1)) continue;
      carry = has_carry ? op(carry, sibling[k]) : sibling[k];
      has_carry = true;
    }
  }
};

// Canonical inclusive scan of one warp: lane l returns reduce(x[0..l]) in the canonical order (the CPU's
// inclusive_scan bits for a 32-element input): P(l + 1), which is lane l + 1's exclusive prefix (P(l) (+) x_l only
// when l is even), and the warp root in lane 31. 5 + 5 shuffles, at most 10 combines per lane.
template <class T, class Op>
__device__ __forceinline__ T warp_canonical_inclusive_scan(T value, Op op) {
  const int lane = threadIdx.x & 31;
  warp_fenwick_scan<T> scan;
  const T root = scan.up(value, op);
  T carry = value;
  bool has = false;
  scan.down(carry, has, op);
  const T next = detail::shuffle_from(carry, (lane + 1) & 31);
  return lane == 31 ? root : next;
}

}  // namespace detred::cuda
