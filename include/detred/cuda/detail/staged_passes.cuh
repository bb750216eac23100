// A warp's chunk root with its passes staged in shared memory by bulk copies (sm_90 `cp.async.bulk` and mbarriers)
// instead of registers: the canonical sum's `sum.depth=3` knob, an experiment kept for measurement (session 9: the
// same bits as warp_chunk_root, slower at fp64 1 GiB on the H200; docs/PERFORMANCE.md, issue 15).
#pragma once

#include <cstdint>

#include "detred/cuda/warp/warp_tile.cuh"

namespace detred::cuda {

namespace detail {
// The shared-memory address of p (a pointer into shared memory), as PTX's .shared instructions take it.
__device__ __forceinline__ unsigned shared_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
// An mbarrier in shared memory (sm_90 PTX): initialised for one arriving thread; the arrival that also expects `bytes`
// of asynchronous copies; the wait for phase `parity` to complete; invalidation before the memory is reused.
__device__ __forceinline__ void mbarrier_init_one(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}
__device__ __forceinline__ void mbarrier_expect_bytes(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_wait_parity(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbarrier_invalidate(unsigned long long* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Orders this thread's earlier shared-memory accesses (generic proxy) before its later asynchronous (bulk) copies.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// One bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to shared memory, completing
// on `bar` (sm_90: cp.async.bulk, the copy engine of the SM; no registers hold the bytes in flight).
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes,
                                                    unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(dst)),
               "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}
}  // namespace detail

// warp_chunk_root with the passes staged in shared memory instead of registers (aligned input, sm_90): lane 0 keeps
// Stages passes of bulk copies in flight (cp.async.bulk, completing on one mbarrier a stage), every lane reads its row
// vectors of a pass from `stage_bytes` (Stages x Rows x 512 bytes of this warp's shared memory, 16-byte aligned) once
// its copy has landed, and the stage is refilled with the pass Stages later. The same row vectors as the register
// path, so the same root, bit for bit. `bars`: Stages mbarriers in shared memory, this warp's own.
template <class Acc, class T, int Rows, int Stages>
__device__ __forceinline__ Acc warp_chunk_root_staged(const T* __restrict__ chunk, int tiles,
                                                      unsigned char* stage_bytes, unsigned long long* bars) {
  static_assert(Rows == 8 || Rows == 16 || Rows == 32);
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr std::uint64_t pass_elements = std::uint64_t(Rows) * 32 * V;
  constexpr unsigned pass_bytes = unsigned(pass_elements * sizeof(T));
  const int lane = threadIdx.x & 31;
  const int passes = tiles * (32 / Rows);
  register_tree<Acc, Rows == 8 ? 6 : 5> joined;
  Acc root{};
  if (lane == 0) {
#pragma unroll
    for (int s = 0; s < Stages; ++s) detail::mbarrier_init_one(bars + s);
    detail::fence_proxy_async_shared();
  }
  __syncwarp();
  const auto issue = [&](int p) {  // lane 0: pass p into stage p mod Stages
    unsigned long long* bar = bars + p % Stages;
    detail::mbarrier_expect_bytes(bar, pass_bytes);
    detail::bulk_copy_to_shared(stage_bytes + (p % Stages) * pass_bytes, chunk + std::uint64_t(p) * pass_elements,
                                pass_bytes, bar);
  };
  if (lane == 0)
    for (int p = 0; p < Stages && p < passes; ++p) issue(p);
#pragma unroll 1
  for (int p = 0; p < passes; ++p) {
    detail::mbarrier_wait_parity(bars + p % Stages, unsigned(p / Stages) & 1u);
    const uint4* stage = reinterpret_cast<const uint4*>(stage_bytes + (p % Stages) * pass_bytes);
    Acc v[Rows];
#pragma unroll
    for (int row = 0; row < Rows; ++row) v[row] = lane_vector_root<Acc, T>(stage[row * 32 + lane]);
    __syncwarp();  // every lane has read the stage
    if (lane == 0 && p + Stages < passes) {
      detail::fence_proxy_async_shared();
      issue(p + Stages);
    }
    root = joined.push(warp_rows_root<Rows>(v), p);
  }
  __syncwarp();
  if (lane == 0)
#pragma unroll
    for (int s = 0; s < Stages; ++s) detail::mbarrier_invalidate(bars + s);
  __syncwarp();
  return root;
}

}  // namespace detred::cuda
