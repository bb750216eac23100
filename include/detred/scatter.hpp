// Scattered and segmented sums on the CPU: the twins of the device calls of detred/cuda/scatter.hpp, with the same
// arguments less the workspace and the stream (and a trailing cpu_options), and the same bits.
//
// Types. Values half, bfloat16 or float accumulate into float outputs; double into double (scatter_output_t).
// Indices and keys are std::int32_t or std::int64_t.
//
// scatter_add and index_add are exact: each output is the correctly rounded (round to nearest, ties to even) sum of
// its contributions, the output's prior value included, rounded once. So the result does not depend on the order of
// the contributions, their multiplicity, the thread count or the device: the same bits on every CPU and GPU
// (determinism::exact). IEEE: NaN (detred's canonical NaN) if any contribution is NaN or +Inf and -Inf meet, else
// the infinity present; a finite exact sum is +-Inf exactly when its magnitude is at least MAX + ulp(MAX)/2 (so
// partial sums may overflow without harm); an exact zero is -0.0 when every contribution is -0.0 (prior value
// included), else +0.0. An index outside [0, m) throws detred::invalid_argument naming its position, before any
// output is written. At most 2^36 - 1 contributions a call (n). docs/SCATTER.md has the representation and proof.
//
// segment_sum and reduce_by_key take sorted segments and write (not accumulate) one sum each, by
// sum_method::tree (canonical: segment s is reduced in the canonical order of its own length, docs/ORDER.md, exactly as
// detred::row_sum reduces a row, so it is batch-invariant: a segment's bits do not depend on the other segments, its
// position or the thread count; error as detred::sum) or sum_method::exact (correctly rounded, as above). An empty
// segment is -0.0.
#pragma once

#include <cstdint>

#include "detred/execution.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

// The output type of a scattered sum of T: float for half, bfloat16 and float; double for double.
template <floating_input T>
using scatter_output_t = default_accumulation_t<T>;

template <class I>
concept scatter_index = std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>;

// out[index[i]] += values[i] for i < n, exactly (see above); out has m elements.
template <floating_input T, scatter_index I>
void scatter_add(const T* values, const I* index, scatter_output_t<T>* out, std::uint64_t n, std::uint64_t m,
                 const cpu_options& options = {});

// PyTorch's index_add_ row form: out[index[i] * d + c] += source[i * d + c] for i < n, c < d, exactly; source is
// [n x d], out is [m x d], both row-major and dense.
template <floating_input T, scatter_index I>
void index_add(const T* source, const I* index, scatter_output_t<T>* out, std::uint64_t n, std::uint64_t m,
               std::uint64_t d, const cpu_options& options = {});

// out[s] = sum of values[offsets[s] .. offsets[s + 1]) for s < segments (CSR offsets, segments + 1 of them,
// non-decreasing, offsets[0] >= 0). method: tree (canonical) or exact. Throws invalid_argument for decreasing or
// negative offsets or another method.
template <floating_input T, scatter_index I>
void segment_sum(const T* values, const I* offsets, scatter_output_t<T>* out, std::uint64_t segments,
                 sum_method method = sum_method::tree, const cpu_options& options = {});

// The runs of equal consecutive keys of keys[0 .. n): unique_keys[r] is run r's key, sums[r] the sum of its values
// (method tree: canonical in the run's length; exact: correctly rounded), *run_count the number of runs. unique_keys
// and sums must hold n elements.
template <floating_input T, scatter_index I>
void reduce_by_key(const I* keys, const T* values, I* unique_keys, scatter_output_t<T>* sums, std::uint64_t* run_count,
                   std::uint64_t n, sum_method method = sum_method::tree, const cpu_options& options = {});

}  // namespace detred
