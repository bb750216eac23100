// Run-time CPU feature checks for the SIMD kernels. A kernel choice never changes a result bit.
#include "src/cpu/subtree_root_avx2.hpp"

namespace detred::cpu::avx2 {
#if defined(__x86_64__) && defined(__GNUC__)
bool available() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif
}  // namespace detred::cpu::avx2
