// The work-efficient up-sweep / down-sweep (Blelloch) scan of a power-of-two array in shared memory, usable inside
// users' kernels. op(left, right): associative, commutativity not needed. T: any copyable type.
//
// Association: the canonical one of docs/ORDER.md section 3. The up-sweep builds, in place, the complete subtrees
// T(i + 1 - lowbit(i + 1), lowbit(i + 1)) (left operand the lower half, as in T); the down-sweep puts the carry-in
// at the root and gives each right child "parent's carry (+) left sibling's root", which is the Fenwick recurrence
// P(m) = P(m - lowbit(m)) (+) T(m - lowbit(m), lowbit(m)). So element m ends as P(m), the exclusive prefix, bit
// for bit the CPU's exclusive_scan of those N elements continued from the carry. 2(N - 1) combines, 2 log2 N
// barriers. Reproducible across runs, GPUs and the CPU.
//
// Bank conflicts: element i lives at blelloch_slot(i) = i + i / 32 + i / 1024 (GPU Gems 3, ch. 39.2.3): the stride-2d
// accesses of one step then fall in distinct 4-byte banks for 4-byte T. The caller sizes the array as
// blelloch_slots(N).
#pragma once

namespace detred::cuda {

__host__ __device__ constexpr int blelloch_slot(int i) { return i + (i >> 5) + (i >> 10); }
__host__ __device__ constexpr int blelloch_slots(int n) { return blelloch_slot(n - 1) + 1; }

// All threads of the block call it; N a power of two (any blockDim.x: the loops over a level are strided).
// In: s[blelloch_slot(i)] = x_i. Out: s[blelloch_slot(i)] = P(i) for i >= 1 and, for i == 0, the carry (unchanged
// garbage when has_carry is false: nothing precedes element 0). Returns, in every thread, the root of the N
// elements (read before the down-sweep). Starts and ends with __syncthreads().
template <int N, class T, class Op>
__device__ T blelloch_exclusive_scan(T* s, Op op, const T& carry, bool has_carry) {
  static_assert(N >= 2 && (N & (N - 1)) == 0);
  __syncthreads();
  for (int d = 1; d < N; d *= 2) {
    for (int k = threadIdx.x; k < N / (2 * d); k += blockDim.x) {
      const int right = (2 * k + 2) * d - 1, left = right - d;
      s[blelloch_slot(right)] = op(s[blelloch_slot(left)], s[blelloch_slot(right)]);
    }
    __syncthreads();
  }
  const T root = s[blelloch_slot(N - 1)];
  __syncthreads();
  if (threadIdx.x == 0) s[blelloch_slot(N - 1)] = carry;
  __syncthreads();
  for (int d = N / 2; d >= 1; d /= 2) {
    for (int k = threadIdx.x; k < N / (2 * d); k += blockDim.x) {
      const int right = (2 * k + 2) * d - 1, left = right - d;
      const T left_root = s[blelloch_slot(left)];
      const T parent = s[blelloch_slot(right)];
      s[blelloch_slot(left)] = parent;  // the left child starts where its parent starts
      // Only the leftmost path (k == 0) can lack a carry.
      s[blelloch_slot(right)] = (has_carry || k != 0) ? op(parent, left_root) : left_root;
    }
    __syncthreads();
  }
  return root;
}

}  // namespace detred::cuda
