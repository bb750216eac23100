// The audit tool's algorithm registry: one table of every way detred-audit can sum a data set, each entry with its
// stable name, device, guarantee, configurations, run function and a-priori error bound.
//
// Stable names (docs/AUDIT.md), "<device>/<method>[@<accumulation>]":
//   cpu/<method> for every detred::sum_method (to_string names), accumulated in the input's default type (float for
//   f16/bf16, else the input type); cpu/tree@f64 and cpu/tree_neumaier@f64 for f16, bf16 and f32 inputs, accumulated
//   in double; gpu/tree, gpu/tree_neumaier (and @f64) where the CUDA backend is built (gpu_algorithms.hpp).
// A new method is one new entry: a sum_method added to detred::all_sum_methods (with its guarantee() and its
// verify::error_bound) appears here with no other change; a new GPU variant (atomic baselines, the kernel ladder) is
// one push_back in gpu_algorithms.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "dataset.hpp"
#include "detred/determinism.hpp"
#include "detred/sum_method.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::audit {

// A computed sum in its accumulation type.
using sum_value = std::variant<float, double>;

// The bit pattern of a sum (a float's 32 bits, zero-extended): what "distinct results" counts.
std::uint64_t bits_of(const sum_value& value);

struct timed_sum {
  sum_value value;
  double seconds = 0;  // the sum alone: no data transfer, no allocation
};

template <floating_input T>
struct algorithm {
  std::string name;                  // stable, e.g. "cpu/tree@f64"
  std::string device;                // "cpu" or "gpu"
  std::string method;                // to_string(sum_method), or the variant's name for GPU-only variants
  element_type accumulation;         // f32 or f64
  determinism guarantee;             // what detred promises about its bits (determinism.hpp)
  std::string twin;                  // the algorithm whose bits this one must equal (cpu_gpu: gpu/x -> cpu/x), or ""
  std::vector<std::string> configs;  // the configurations it can run in, as labels; configs[0] is the default
  // Makes `data` (a new input, or a new order of it) current; `version` changes whenever the data does. Empty for
  // algorithms that read host memory directly.
  std::function<void(std::span<const T> data, std::uint64_t version)> load;
  // Sums the current data once in configuration configs[config].
  std::function<timed_sum(std::span<const T> data, std::size_t config)> run;
  // The a-priori bound on |computed - s| (verify::error_bound); +Inf where detred states none.
  std::function<double(const verify::exact_sum& s, const verify::exact_sum& magnitudes)> bound;
};

// Every CPU algorithm for inputs of type T. `thread_counts` are the configurations of the multi-threaded (canonical
// order) methods, after the default (DETRED_NUM_THREADS or every hardware thread); single-threaded methods have one.
template <floating_input T>
std::vector<algorithm<T>> cpu_algorithms(const std::vector<unsigned>& thread_counts);

// True when `name` (an --algorithms entry) selects `algorithm_name`: equal, or equal to its part after "<device>/";
// `name` may be a shell-style pattern ('*' any characters, '?' one): 'plugin/*', 'gpu/*', 'tree*', 'cpu/tree*@f64'.
bool selects(std::string_view name, std::string_view algorithm_name);

}  // namespace detred::audit
