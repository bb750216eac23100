// The audit's baseline rows (detred::baselines, baselines/): what detred is compared against, each with its honest
// guarantee, so that the "distinct results" columns show the contrast.
//
// Stable names:
//   cpu/openmp_reduction              OpenMP reduction(+:), configurations: thread counts        not_guaranteed
//   gpu/ladder/<variant>              the classic reduction ladder (variants.hpp), configurations: block and grid
//                                     sizes; run_to_run (one_kernel_per_level: gpu_to_gpu)
//   gpu/atomic_element, gpu/atomic_warp, gpu/atomic_block                                         not_guaranteed
// All accumulate in the input's default type (float for f16, bf16, f32; double for f64). Bound: gamma_{n-1} S, the
// bound of any order of additions. A row without a promise (not_guaranteed) never changes the exit status.
#pragma once

#include <type_traits>
#include <vector>

#include "algorithms.hpp"
#include "detred/verify/error_bounds.hpp"
#include "registry.hpp"

namespace detred::audit {

namespace baseline_detail {
template <class A>
inline element_type accumulation_of() {
  return std::is_same_v<A, float> ? element_type::f32 : element_type::f64;
}

template <class A>
inline auto any_order_bound() {
  return [](const verify::exact_sum& s, const verify::exact_sum& magnitudes) {
    return verify::error_bound<A>(sum_method::sequential, s, magnitudes);
  };
}

}  // namespace baseline_detail

// Appends the baseline rows to `table`: the CPU one where options.cpu, the GPU ones where options.gpu and the GPU rows
// module is there (gpu_rows_module.hpp).
template <floating_input T>
void append_baseline_algorithms(std::vector<algorithm<T>>& table, const registry_options& options);

// The GPU baseline rows (gpu_baseline_algorithms.cpp, compiled into the GPU rows module).
template <floating_input T>
void append_gpu_baseline_algorithms(std::vector<algorithm<T>>& table);

}  // namespace detred::audit
