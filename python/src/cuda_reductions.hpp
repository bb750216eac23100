// The numpy-like reductions on CUDA arrays (reductions.cpp dispatches here when the input is on a GPU): the same
// bits as the CPU backend for the same arguments, computed by detred::cuda on the array's device and the framework's
// current stream (cuda_backend.hpp).
//
// Fast paths (one or two kernels): every function with axis=None; sum with axis=-1 (float32 accumulation, tree or
// tree_neumaier: detred::cuda::row_sum) and axis=0 (float32, tree: cuda::column_sum); logsumexp, mean and var on rows
// (the GPU row family). Other combinations run one device call per output (sums, prod, norm, min, max, argmin, argmax
// along an axis: a documented slow path, the same bits). logsumexp, mean and var take float16, bfloat16 and float32
// inputs with float32 accumulation on the GPU, and var only ddof=0 (TypeError / ValueError naming the argument).
#pragma once

#ifdef DETRED_PY_HAS_CUDA

#include "common.hpp"
#include "reduction_layout.hpp"

namespace detred::python::cuda_reductions {

nb::object sum(const array_view& v, const layout& l, sum_method method, dtype_id accumulation);
nb::object prod_or_norm(const array_view& v, const layout& l, dtype_id accumulation, bool norm);
nb::object extremum_of(const array_view& v, const layout& l, extremum which);
nb::object dot(const array_view& x, const array_view& y, dtype_id accumulation);
nb::object statistic(const array_view& v, const layout& l, dtype_id accumulation, row_statistic which,
                     std::int64_t ddof);
nb::object cumsum(const array_view& v, bool exclusive, dtype_id accumulation);

}  // namespace detred::python::cuda_reductions

#endif  // DETRED_PY_HAS_CUDA
