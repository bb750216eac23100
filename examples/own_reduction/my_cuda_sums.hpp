// The user's own CUDA sums of float (my_cuda_sums.cu), host API: copy x to the device, sum, return the result.
//   atomic_sum       every thread atomicAdds its values into one float: the order is whatever the hardware does
//   fixed_order_sum  mine::fixed_order_sum's order (my_sums.hpp) on the GPU, for any number of blocks
// `blocks` is the launch configuration (1 .. 1024 blocks of 256 threads).
#pragma once

#include <cstddef>

namespace mine::cuda {
bool available();
float atomic_sum(const float* host_x, std::size_t n, unsigned blocks);
float fixed_order_sum(const float* host_x, std::size_t n, unsigned blocks);
}  // namespace mine::cuda
