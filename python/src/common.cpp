// What every binding source of the package's extension modules shares (declared in common.hpp): errors that name
// their argument, the parsers of method and dtype arguments, and the CPU options.
#include <string_view>

#include "common.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::python {

void throw_type_error(const char* name, const std::string& what) {
  throw nb::type_error((std::string(name) + ": " + what).c_str());
}
void throw_value_error(const char* name, const std::string& what) {
  throw nb::value_error((std::string(name) + ": " + what).c_str());
}

cpu_options& module_cpu_options() {
  static cpu_options options;
  return options;
}

sum_method parse_method(nb::handle method) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_Check(method.ptr()) ? PyUnicode_AsUTF8AndSize(method.ptr(), &size) : nullptr;
  if (text == nullptr) {
    PyErr_Clear();
    throw_type_error("method", "expected a str, got " + nb::cast<std::string>(nb::type_name(method.type())));
  }
  const std::string_view name(text, std::size_t(size));
  for (sum_method m : all_sum_methods)
    if (to_string(m) == name) return m;
  throw_value_error("method",
                    "unknown method '" + std::string(name) +
                        "'; expected one of sequential, pairwise, kahan, neumaier, tree, tree_neumaier, exact");
}

namespace {

// The name of a dtype-like object: "float32" for "float32", numpy.float32, numpy.dtype("float32"), torch.float32.
std::string dtype_like_name(nb::handle dtype) {
  if (PyUnicode_Check(dtype.ptr())) return nb::cast<std::string>(dtype);
  std::string name;
  if (PyType_Check(dtype.ptr())) {
    name = nb::cast<std::string>(nb::getattr(dtype, "__name__", nb::str("?")));
  } else {
    name = nb::cast<std::string>(nb::str(dtype));
  }
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  return name;
}

bool name_to_dtype(const std::string& name, dtype_id& out) {
  if (name == "float32" || name == "f4" || name == "<f4" || name == "single")
    out = dtype_id::f32;
  else if (name == "float64" || name == "f8" || name == "<f8" || name == "double" || name == "float")
    out = dtype_id::f64;
  else if (name == "float16" || name == "f2" || name == "<f2" || name == "half")
    out = dtype_id::f16;
  else if (name == "bfloat16")
    out = dtype_id::bf16;
  else
    return false;
  return true;
}

}  // namespace

dtype_id parse_accumulation(nb::handle dtype, dtype_id input, const char* function) {
  if (dtype.is_none()) return input == dtype_id::f64 ? dtype_id::f64 : dtype_id::f32;
  dtype_id acc;
  const std::string name = dtype_like_name(dtype);
  if (!name_to_dtype(name, acc) || (acc != dtype_id::f32 && acc != dtype_id::f64))
    throw_type_error("dtype", std::string(function) + " accumulates in float32 or float64, got " + name);
  if (acc == dtype_id::f32 && input == dtype_id::f64)
    throw_type_error("dtype",
                     "float32 cannot hold every float64 input exactly (narrowing would round every term "
                     "and void the error bound); use float64");
  return acc;
}

dtype_id parse_float_dtype(nb::handle dtype, const char* name) {
  dtype_id t;
  const std::string text = dtype_like_name(dtype);
  if (!name_to_dtype(text, t)) throw_type_error(name, "expected float16, bfloat16, float32 or float64, got " + text);
  return t;
}

nb::object finish(result_buffer&& r, const array_view& like) {
  if (r.ndim == 0 && like.fw == framework::numpy) {
    switch (r.type) {
      case dtype_id::f16:
      case dtype_id::bf16:
        return export_scalar_bits(*r.as<std::uint16_t>(), r.type, like);
      case dtype_id::f32:
        return export_scalar(double(*r.as<float>()), r.type, like);
      case dtype_id::f64:
        return export_scalar(*r.as<double>(), r.type, like);
      case dtype_id::i32:
        return export_scalar_int(*r.as<std::int32_t>(), r.type, like);
      case dtype_id::i64:
        return export_scalar_int(*r.as<std::int64_t>(), r.type, like);
    }
  }
  return export_result(std::move(r), like);
}

}  // namespace detred::python
