// Argument parsing and type dispatch shared by the module's functions.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "arrays.hpp"
#include "detred/execution.hpp"
#include "detred/sum_method.hpp"

namespace detred::python {

[[noreturn]] void throw_type_error(const char* name, const std::string& what);
[[noreturn]] void throw_value_error(const char* name, const std::string& what);

// The CPU backend's thread count for every call (detred.set_num_threads): a speed knob, never a bit.
cpu_options& module_cpu_options();

// method="tree" etc.: the stable names of detred::to_string(sum_method).
sum_method parse_method(nb::handle method);

// dtype=None | float32 | float64 (names, numpy types and dtypes, torch dtypes): the accumulation type. None: float32
// for 16- and 32-bit inputs, float64 for float64 ones. Narrowing (float64 in, float32 accumulation) is a TypeError.
dtype_id parse_accumulation(nb::handle dtype, dtype_id input, const char* function);

// A floating type for ExactAccumulator(dtype) and value(dtype): float16, bfloat16, float32, float64.
dtype_id parse_float_dtype(nb::handle dtype, const char* name);

template <class T>
using tag = std::type_identity<T>;

// Calls f(tag<T>{}) for the input's floating type; TypeError naming the argument `name` for integer inputs.
template <class F>
decltype(auto) visit_float(const array_view& v, const char* function, F&& f, const char* name = "x") {
  switch (v.type) {
    case dtype_id::f16:
      return f(tag<half>{});
    case dtype_id::bf16:
      return f(tag<bfloat16>{});
    case dtype_id::f32:
      return f(tag<float>{});
    case dtype_id::f64:
      return f(tag<double>{});
    default:
      throw_type_error(name, std::string(function) + " takes float16, bfloat16, float32 or float64 arrays, got " +
                                 dtype_name(v.type));
  }
}

// Calls f(tag<A>{}) for the accumulation type.
template <class F>
decltype(auto) visit_accumulation(dtype_id acc, F&& f) {
  if (acc == dtype_id::f64) return f(tag<double>{});
  return f(tag<float>{});
}

template <class T>
constexpr dtype_id dtype_of() {
  if constexpr (std::is_same_v<T, half>)
    return dtype_id::f16;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return dtype_id::bf16;
  else if constexpr (std::is_same_v<T, float>)
    return dtype_id::f32;
  else if constexpr (std::is_same_v<T, double>)
    return dtype_id::f64;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return dtype_id::i32;
  else
    return dtype_id::i64;
}

// Releases the GIL around work on large inputs only: for small ones the release costs more than it frees.
template <class F>
void run_maybe_released(std::uint64_t n, F&& f) {
  if (n >= (std::uint64_t{1} << 15)) {
    nb::gil_scoped_release release;
    f();
  } else {
    f();
  }
}

// A result of ndim 0 as a scalar of the input's framework, otherwise an array.
nb::object finish(result_buffer&& r, const array_view& like);

void bind_reductions(nb::module_& m);
void bind_exact_accumulator(nb::module_& m);
void bind_audit(nb::module_& m);
void bind_benchmark_hooks(nb::module_& m);
void bind_row_ops(nb::module_& m);
#ifdef DETRED_PY_HAS_CUDA
void bind_row_pointer_calls(nb::module_& rows);  // into bind_row_ops's _rows submodule
#endif
void bind_scatter(nb::module_& m);

}  // namespace detred::python
