// Arrays in and out of the module: any object that speaks DLPack (or numpy's buffer protocol) comes in as an
// array_view (element type, device, shape, contiguous host data); results go out as the input's framework (numpy in,
// numpy scalar or array out; torch in, torch tensor out), on the input's device.
//
// Dispatch is on the array's DLPack device: kDLCPU runs the CPU backend; any other device is refused with a
// ValueError naming the argument until a backend for it is compiled in (DETRED_PY_HAS_CUDA, python/CMakeLists.txt).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::python {

namespace nb = nanobind;

// The element types the module reads. Integers only for min, max, argmin, argmax (as the C++ API).
enum class dtype_id : std::uint8_t { f16, bf16, f32, f64, i32, i64 };
const char* dtype_name(dtype_id t);  // numpy's names: "float16", "bfloat16", "float32", ...
std::size_t dtype_size(dtype_id t);
inline bool is_floating(dtype_id t) { return t != dtype_id::i32 && t != dtype_id::i64; }

// Where results go: the input's framework.
enum class framework : std::uint8_t { numpy, torch, jax, cupy, tensorflow };

// DLPack device types (dlpack.h).
inline constexpr int device_cpu = 1;
inline constexpr int device_cuda = 2;

inline constexpr int max_ndim = 64;

// A read-only view of an input array, its data C-contiguous on the host (a non-contiguous CPU input is copied into
// `copy` first: a documented copy, same values, same bits).
class array_view {
 public:
  dtype_id type = dtype_id::f64;
  framework fw = framework::numpy;
  int device_type = device_cpu;
  int device_id = 0;
  int ndim = 0;
  std::array<std::int64_t, max_ndim> shape{};
  const void* data = nullptr;

  std::uint64_t size() const;
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data);
  }

  array_view() = default;
  array_view(const array_view&) = delete;
  array_view& operator=(const array_view&) = delete;
  ~array_view();

  // Internal state, set by import_array.
  nb::object owner;            // keeps the producer's memory alive (a bfloat16 array's uint16 view)
  nb::ndarray<nb::ro> dlpack;  // the DLPack path (every framework but numpy)
  Py_buffer buffer{};          // the buffer-protocol path (numpy)
  bool has_buffer = false;
  std::vector<std::byte> copy;  // the contiguous copy of a strided input
};

// Imports `x` (the argument named `name` in error messages). TypeError for a non-array or an unsupported element
// type, ValueError for a device this build has no backend for.
void import_array(nb::handle x, const char* name, array_view& out);

// A result: shape (ndim 0: a scalar), element type, host bytes. Exported as `like`'s framework.
struct result_buffer {
  dtype_id type = dtype_id::f64;
  int ndim = 0;
  std::array<std::int64_t, max_ndim> shape{};
  std::unique_ptr<std::byte[]> bytes;
  std::size_t count = 1;

  result_buffer(dtype_id t, int dims, const std::int64_t* dims_shape);
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(bytes.get());
  }
};
nb::object export_result(result_buffer&& r, const array_view& like);

// A scalar of the input's framework (numpy scalar for numpy inputs; a 0-d tensor/array otherwise).
nb::object export_scalar(double value, dtype_id type, const array_view& like);
nb::object export_scalar_int(std::int64_t value, dtype_id type, const array_view& like);   // i32 / i64
nb::object export_scalar_bits(std::uint16_t bits, dtype_id type, const array_view& like);  // f16 / bf16

// The bfloat16 numpy type of ml_dtypes, or an invalid handle when ml_dtypes is not installed.
nb::handle bfloat16_numpy_type();

}  // namespace detred::python
