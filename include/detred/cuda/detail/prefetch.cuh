// An L2 prefetch hint for kernels that want more bytes in flight than their registers or shared memory hold.
#pragma once

namespace detred::cuda {

// Asks the memory system to bring `bytes` (a multiple of 16) at `p` (16-byte aligned, global memory) into L2,
// without waiting and without registers (cp.async.bulk.prefetch.L2, sm_90; nothing before sm_90). A hint: no value
// read or written anywhere depends on it. One thread issues it.
__device__ __forceinline__ void prefetch_l2_bulk(const void* p, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace detred::cuda
