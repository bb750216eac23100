// The GPU entries of the algorithm registry, compiled into the GPU rows module (gpu_rows_module.hpp): detred::cuda's
// canonical and exact sums, timed with CUDA events on buffers allocated once, over several launch configurations.
//
// Stable names: gpu/tree, gpu/tree_neumaier (the input's default accumulation) and, for f16, bf16 and f32 inputs,
// gpu/tree@f64 and gpu/tree_neumaier@f64. Each has the guarantee cpu_gpu and its CPU twin (gpu/x must give the bits
// of cpu/x). gpu/exact (guarantee exact, twin cpu/exact): the correctly rounded sum (docs/EXACT.md). The atomic
// baselines and the kernel ladder variants are the module's other rows (gpu_baseline_algorithms.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms.hpp"

namespace detred::audit {

// Number of usable CUDA devices (0 without a device or a driver).
int cuda_device_count();
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", or "" without a device.
std::string cuda_device_description();

// The device buffers every GPU entry shares: the input (uploaded once per data version, untimed), the result and
// the workspace; freed when the last entry is destroyed.
class gpu_session;

template <floating_input T>
std::vector<algorithm<T>> gpu_algorithms(const std::shared_ptr<gpu_session>& session);

std::shared_ptr<gpu_session> make_gpu_session();

}  // namespace detred::audit
