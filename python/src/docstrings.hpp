// The docstrings of the module's functions: each states its contract as the C++ header does (order, error bound,
// special values, reproducibility). u is the unit roundoff of the accumulation type (2^-24 float32, 2^-53 float64),
// gamma_k = k u / (1 - k u), s the exact sum, S = sum |x_i|.
#pragma once

namespace detred::python::doc {

#define DETRED_PY_ARRAYS                                                                                            \
  "\n\nArrays: any array that speaks DLPack (numpy, PyTorch, JAX, CuPy); float16, bfloat16 (ml_dtypes or torch), "  \
  "float32, float64. CPU arrays run on the CPU backend (a non-contiguous one is copied first: same values, same "   \
  "bits); CUDA arrays on their GPU with the same bits, asynchronously on PyTorch's or CuPy's current stream (JAX: " \
  "synchronous), read in place (contiguous only: ValueError otherwise), also inside CUDA-graph capture; the "       \
  "sequential methods and float64 row statistics have no GPU form (docs/PYTHON.md). The result is of the input's "  \
  "framework and device: a numpy scalar or array for numpy input, a tensor for a torch tensor.\n"                   \
  "axis: None (every element, C order), -1 (the last axis: the batch-invariant row reduction, leading dimensions "  \
  "are the batch) or 0 (the column reduction). Every output is the reduction of its own slice alone: "              \
  "f(x, axis=-1)[r] == f(x[r]) and f(x, axis=0)[j] == f(x[:, j]) bit for bit, whatever the other rows.\n"           \
  "dtype: the accumulation and result type, float32 or float64 (default: float32 for 16- and 32-bit inputs, "       \
  "float64 for float64). Narrowing (float64 input, float32 dtype) raises TypeError."

inline constexpr const char* sum =
    "sum(x, axis=None, *, method='tree', dtype=None)\n\n"
    "Sum of x by `method` (detred::sum; the stable names of detred::sum_method):\n"
    "  'tree' (default)  the canonical order (docs/ORDER.md), plain additions: the same bits for every thread count, "
    "and as detred's CUDA backend on every GPU (cpu_gpu). |error| <= gamma_h(n) S, h(n) <= 2 log2 n.\n"
    "  'tree_neumaier'   the canonical order with Neumaier merges: cpu_gpu. |error| <= u|s| + gamma_(h(n)+1)^2 S.\n"
    "  'exact'           the exact sum rounded once (round to nearest, ties to even): correctly rounded, so "
    "independent of order, split, thread count and device. |error| <= u|s|, half a subnormal.\n"
    "  'sequential'      left to right, one thread: |error| <= gamma_(n-1) S.\n"
    "  'pairwise'        recursive halving at floor(n/2), one thread: |error| <= gamma_ceil(log2 n) S.\n"
    "  'kahan'           Kahan's compensated sum, one thread: |error| <= (2u + O(n u^2)) S.\n"
    "  'neumaier'        Neumaier's compensated sum, one thread: |error| <= u|s| + gamma_(n-1)^2 S.\n"
    "Every method is run_to_run reproducible. Empty input: -0.0 (the IEEE identity of addition). NaN propagates and "
    "is returned as the canonical NaN; Inf and overflow follow IEEE arithmetic in the stated order (exact: +-Inf "
    "exactly when |s| >= MAX + ulp(MAX)/2). axis=-1 and axis=0 accept every method; rows with 'tree' or "
    "'tree_neumaier' in float32 are computed as detred::row_sum computes them (the twin of the CUDA "
    "kernel)." DETRED_PY_ARRAYS;

inline constexpr const char* prod =
    "prod(x, axis=None, *, dtype=None)\n\n"
    "Product of x in the canonical order (detred::product): the same bits for every thread count. Without overflow "
    "or underflow |error| <= gamma_(n-1) |product| (every rounding scales the whole product, whatever the order). "
    "Empty: 1. NaN: canonical NaN." DETRED_PY_ARRAYS;

inline constexpr const char* norm =
    "norm(x, axis=None, *, dtype=None)\n\n"
    "Euclidean norm sqrt(sum x_i^2) (detred::nrm2) as a scaled sum of squares in the canonical order: no square "
    "overflows or underflows before the result itself must. The same bits for every thread count. NaN if any input "
    "is NaN, else +Inf if any is infinite. Empty: +0.0." DETRED_PY_ARRAYS;

#define DETRED_PY_EXTREMA                                                                                    \
  " IEEE 754-2019 semantics: exact, so order-independent (the same bits on every thread count and device). " \
  "Inputs also int32 and int64. axis as for sum; there is no dtype: the result has the input's type."

inline constexpr const char* min =
    "min(x, axis=None)\n\nMinimum (detred::min). NaN if any input is NaN (canonical NaN); -0.0 is less than +0.0. "
    "Empty: +Inf (the identity; for integers the type's largest value)." DETRED_PY_EXTREMA;
inline constexpr const char* max =
    "max(x, axis=None)\n\nMaximum (detred::max). NaN if any input is NaN (canonical NaN); +0.0 is greater than -0.0. "
    "Empty: -Inf (the identity; for integers the type's smallest value)." DETRED_PY_EXTREMA;
inline constexpr const char* argmin =
    "argmin(x, axis=None)\n\nThe lowest index at which x holds min(x) (detred::argmin): ties go to the lowest index, "
    "a NaN anywhere gives the first NaN's index, -0.0 beats +0.0. int64 result (C-order index for axis=None). An "
    "empty slice raises ValueError." DETRED_PY_EXTREMA;
inline constexpr const char* argmax =
    "argmax(x, axis=None)\n\nThe lowest index at which x holds max(x) (detred::argmax): ties go to the lowest index, "
    "a NaN anywhere gives the first NaN's index, +0.0 beats -0.0. int64 result (C-order index for axis=None). An "
    "empty slice raises ValueError." DETRED_PY_EXTREMA;

inline constexpr const char* dot =
    "dot(x, y, *, dtype=None)\n\n"
    "sum x_i y_i of two 1-d arrays of one dtype and length (detred::dot): each product rounded once in the "
    "accumulation type (no fused multiply-add), summed in the canonical order; the same bits for every thread count. "
    "|error| <= gamma_(h(n)+1) sum |x_i y_i|. Empty: -0.0. NaN: canonical NaN." DETRED_PY_ARRAYS;

inline constexpr const char* logsumexp =
    "logsumexp(x, axis=None, *, dtype=None)\n\n"
    "log(sum exp(x_i)) = m + log(sum exp(x_i - m)), m the maximum: two passes, the sum in the canonical order "
    "(detred::canonical_row_logsumexp, as detred::row_logsumexp; exp and log from detred::specified, the same bits on "
    "every machine and on the GPU): batch-invariant for axis=-1. -Inf for an empty slice or only -Inf inputs, +Inf if "
    "any input is +Inf, canonical NaN if any is NaN. Error: within 4 u (log2 n + 2) (|result| + 2), u the "
    "accumulation type's unit roundoff." DETRED_PY_ARRAYS;

inline constexpr const char* mean =
    "mean(x, axis=None, *, dtype=None)\n\n"
    "Mean by Chan's merges of Welford states in the canonical order (detred::welford_accumulator, as "
    "detred::row_mean_variance): the same bits for every thread count, batch-invariant for axis=-1. NaN (canonical) "
    "for an empty slice or when any input is NaN or Inf. In float32 a slice may have at most 2^24 elements "
    "(the count is a float32); pass dtype=float64 beyond (ValueError otherwise)." DETRED_PY_ARRAYS;

inline constexpr const char* var =
    "var(x, axis=None, *, dtype=None, ddof=0)\n\n"
    "Variance m2 / (n - ddof), m2 the Welford sum of squared deviations merged as for mean (ddof=0: the population "
    "variance of detred::row_mean_variance, bit for bit). NaN (canonical) for an empty slice, n <= ddof, or any NaN "
    "or Inf input. Same reproducibility and count limit as mean." DETRED_PY_ARRAYS;

inline constexpr const char* cumsum =
    "cumsum(x, *, exclusive=False, dtype=None)\n\n"
    "Prefix sums of x (flattened, C order) in the canonical association (detred::inclusive_sum_scan / "
    "exclusive_sum_scan): out[i] is bit for bit sum(x[:i+1], method='tree') (inclusive) or sum(x[:i], "
    "method='tree') (exclusive; out[0] = -0.0), so a prefix's outputs do not depend on what follows it; the same "
    "bits for every thread count. Per output |error| <= gamma_h(i+1) sum |x_0..x_i|. NaN outputs are canonical. "
    "A 1-d array of the accumulation dtype." DETRED_PY_ARRAYS;

}  // namespace detred::python::doc
