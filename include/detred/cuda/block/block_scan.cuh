// Thread- and block-level canonical scans, usable inside users' kernels (docs/ORDER.md section 3). op(left, right):
// any associative operator, commutativity not needed (the left operand always covers lower indices). T: trivially
// copyable, sizeof a multiple of 4.
//
// Association: the canonical prefixes P(m) = reduce(x[0..m)) of the CPU scan, continued from a carry-in. Every
// thread holds Items consecutive leaves (a power of two), the block Threads * Items consecutive leaves (an aligned
// block of the input when used by the device scan). The up-sweep builds the complete subtrees (in registers, then
// warp_fenwick_scan over lanes, then over warps); the carry-in P(block start) is then pushed down by the Fenwick
// recurrence P(m) = P(m - lowbit(m)) (+) T(m - lowbit(m), lowbit(m)): the right child of a node gets
// carry (+) left child's root, exactly Blelloch's down-sweep with the carry at the top. Hence each output is the
// CPU's bits when the carry is P(block start). Reproducible across runs, GPUs and the CPU.
#pragma once

#include <type_traits>

#include "detred/cuda/warp/warp_scan.cuh"

namespace detred::cuda {

// In registers, Blelloch's up-sweep in place: a[i] becomes T(i + 1 - lowbit(i + 1), lowbit(i + 1)), so a[N - 1] is
// the root of the N leaves. N - 1 combines.
template <int N, class T, class Op>
__device__ __forceinline__ void thread_fenwick_up(T (&a)[N], Op op) {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "a power of two of items per thread");
#pragma unroll
  for (int d = 1; d < N; d *= 2) {
#pragma unroll
    for (int i = 2 * d - 1; i < N; i += 2 * d) a[i] = op(a[i - d], a[i]);
  }
}

// After thread_fenwick_up: a[m - 1] becomes P(m) = carry (+) (canonical reduce of leaves 0..m-1, left-folded from
// the carry) for m = 1 .. N - 1, one combine each; a[N - 1] keeps the root (P(N) may need subtrees larger than the
// thread, so it is the next thread's carry, not carry (+) root). has_carry false: nothing precedes leaf 0.
template <int N, class T, class Op>
__device__ __forceinline__ void thread_fenwick_down(T (&a)[N], const T& carry, bool has_carry, Op op) {
#pragma unroll
  for (int m = 1; m < N; ++m) {
    const int low = m & -m;
    if (low == m)
      a[m - 1] = has_carry ? op(carry, a[m - 1]) : a[m - 1];
    else
      a[m - 1] = op(a[m - low - 1], a[m - 1]);
  }
}

// A block of Threads threads (a power of two, 32..1024), Items leaves each (leaves thread * Items + i).
template <int Threads, int Items, class T>
struct block_fenwick_scan {
  static constexpr int warps = Threads / 32;
  static constexpr int warp_levels = warps == 1    ? 0
                                     : warps == 2  ? 1
                                     : warps == 4  ? 2
                                     : warps == 8  ? 3
                                     : warps == 16 ? 4
                                                   : 5;
  static_assert(Threads >= 32 && Threads <= 1024 && (Threads & (Threads - 1)) == 0);
  struct storage {
    T warp_value[warps];  // warp roots, then each warp's carry-in
    T tile_end;           // what carry_in() returned as P(block end), when it did
    bool block_has;       // whether the block has a carry-in
  };

  // a: the thread's leaves. carry_in(root, carry, has_carry, end) is called by every lane of warp 0 with the block's
  // root, and must set (the same in every lane) carry = P(block start) and has_carry, and may set end = P(block
  // end) (stored in s.tile_end). On return: thread_carry/thread_has = P(thread start), a[m - 1] = P(thread start +
  // m) for m < Items, a[Items - 1] = the thread's root. Contains two __syncthreads().
  template <class Op, class CarryIn>
  __device__ __forceinline__ void scan(T (&a)[Items], Op op, CarryIn carry_in, storage& s, T& thread_carry,
                                       bool& thread_has) {
    thread_fenwick_up(a, op);
    scan_from_swept(a, op, carry_in, s, thread_carry, thread_has, no_reload{});
  }

  // The same for a caller that has already run thread_fenwick_up(a, op) on the leaves and kept the result where
  // reload_swept(a) fetches it again after the carry-in, so that a holds no registers during carry_in() (a
  // look-back's wait) and the thread's Items - 1 up-sweep combines are not redone. Same combines, same bits as scan().
  template <class Op, class CarryIn, class ReloadSwept>
  __device__ __forceinline__ void scan_swept_reloading(T (&a)[Items], Op op, CarryIn carry_in, storage& s,
                                                       T& thread_carry, bool& thread_has, ReloadSwept reload_swept) {
    scan_from_swept(a, op, carry_in, s, thread_carry, thread_has, reload_swept);
  }

 private:
  struct no_reload {
    __device__ __forceinline__ void operator()(T (&)[Items]) const {}
  };
  // From the thread's up-swept leaves on; reload(a), unless no_reload, refills the up-swept values after the carry-in.
  template <class Op, class CarryIn, class Reload>
  __device__ __forceinline__ void scan_from_swept(T (&a)[Items], Op op, CarryIn carry_in, storage& s, T& thread_carry,
                                                  bool& thread_has, Reload reload) {
    constexpr bool reloads = !std::is_same_v<Reload, no_reload>;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    warp_fenwick_scan<T> lanes;
    const T warp_root = lanes.up(a[Items - 1], op);
    if (lane == 0) s.warp_value[warp] = warp_root;
    __syncthreads();
    if (warp == 0) {
      warp_fenwick_scan<T> warps_scan;
      const T root = warps_scan.up(s.warp_value[lane < warps ? lane : 0], op, warp_levels);
      T carry = root, end = root;
      bool has = false;
      carry_in(root, carry, has, end);
      if (lane == 0) s.tile_end = end, s.block_has = has;
      warps_scan.down(carry, has, op, warp_levels);
      __syncwarp();
      if (lane < warps) s.warp_value[lane] = carry;
    }
    __syncthreads();
    T carry = s.warp_value[warp];
    bool has = warp != 0 || s.block_has;  // absent only before the first warp of a block without a carry-in
    lanes.down(carry, has, op);
    if constexpr (reloads) reload(a);
    thread_fenwick_down(a, carry, has, op);
    thread_carry = carry;
    thread_has = has;
  }
};

}  // namespace detred::cuda
