#include "arrays.hpp"

#include "cuda_backend.hpp"

#include <cstring>
#include <string_view>

namespace detred::python {

namespace {

// Cached Python objects, looked up once and kept for the life of the process (never released: they may be used
// until interpreter shutdown).
struct numpy_cache {
  PyObject* ndarray = nullptr;
  PyObject* float16 = nullptr;
  PyObject* float32 = nullptr;
  PyObject* float64 = nullptr;
  PyObject* int32 = nullptr;
  PyObject* int64 = nullptr;
  PyObject* uint16 = nullptr;
  PyObject* bfloat16 = nullptr;  // ml_dtypes.bfloat16, or Py_None when ml_dtypes is absent
};

PyObject* keep(nb::object o) { return o.release().ptr(); }

numpy_cache& numpy_objects() {
  static numpy_cache cache = [] {
    numpy_cache c;
    nb::module_ np = nb::module_::import_("numpy");
    c.ndarray = keep(np.attr("ndarray"));
    c.float16 = keep(np.attr("float16"));
    c.float32 = keep(np.attr("float32"));
    c.float64 = keep(np.attr("float64"));
    c.int32 = keep(np.attr("int32"));
    c.int64 = keep(np.attr("int64"));
    c.uint16 = keep(np.attr("uint16"));
    try {
      c.bfloat16 = keep(nb::module_::import_("ml_dtypes").attr("bfloat16"));
    } catch (nb::python_error&) {
      c.bfloat16 = nb::none().release().ptr();
    }
    return c;
  }();
  return cache;
}

[[noreturn]] void type_error(const char* name, const std::string& what) {
  throw nb::type_error((std::string(name) + ": " + what).c_str());
}
[[noreturn]] void value_error(const char* name, const std::string& what) {
  throw nb::value_error((std::string(name) + ": " + what).c_str());
}

std::string text_of(nb::handle o) {
  nb::object s = nb::steal(PyObject_Str(o.ptr()));
  const char* t = s.is_valid() ? PyUnicode_AsUTF8(s.ptr()) : nullptr;
  if (t == nullptr) {
    PyErr_Clear();
    return "?";
  }
  return t;
}

std::string python_type_name(nb::handle x) { return nb::cast<std::string>(nb::type_name(x.type())); }

const char* supported = "float16, bfloat16, float32 or float64 (int32/int64 for min, max, argmin, argmax)";

// The numpy buffer format of one element: "e", "<f", "=d", ... (struct module syntax).
bool parse_format(const char* format, Py_ssize_t itemsize, dtype_id& out, bool& big_endian) {
  big_endian = false;
  if (*format == '<' || *format == '=' || *format == '@') {
    ++format;
  } else if (*format == '>' || *format == '!') {
    big_endian = true;
    ++format;
  }
  if (format[0] == '\0' || format[1] != '\0') return false;
  switch (format[0]) {
    case 'e':
      out = dtype_id::f16;
      return itemsize == 2;
    case 'f':
      out = dtype_id::f32;
      return itemsize == 4;
    case 'd':
      out = dtype_id::f64;
      return itemsize == 8;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4)
        out = dtype_id::i32;
      else if (itemsize == 8)
        out = dtype_id::i64;
      else
        return false;
      return true;
    default:
      return false;
  }
}

bool parse_dlpack(nb::dlpack::dtype dt, dtype_id& out) {
  if (dt.lanes != 1) return false;
  switch (nb::dlpack::dtype_code(dt.code)) {
    case nb::dlpack::dtype_code::Float:
      if (dt.bits == 16)
        out = dtype_id::f16;
      else if (dt.bits == 32)
        out = dtype_id::f32;
      else if (dt.bits == 64)
        out = dtype_id::f64;
      else
        return false;
      return true;
    case nb::dlpack::dtype_code::Bfloat:
      out = dtype_id::bf16;
      return dt.bits == 16;
    case nb::dlpack::dtype_code::Int:
      if (dt.bits == 32)
        out = dtype_id::i32;
      else if (dt.bits == 64)
        out = dtype_id::i64;
      else
        return false;
      return true;
    default:
      return false;
  }
}

framework framework_of(nb::handle x) {
  nb::object module = nb::getattr(x.type(), "__module__", nb::none());
  if (!nb::isinstance<nb::str>(module)) return framework::numpy;
  const std::string_view m = nb::borrow<nb::str>(module).c_str();
  auto starts = [&](std::string_view p) { return m.substr(0, p.size()) == p; };
  if (starts("torch")) return framework::torch;
  if (starts("jax")) return framework::jax;
  if (starts("cupy")) return framework::cupy;
  if (starts("tensorflow")) return framework::tensorflow;
  return framework::numpy;  // numpy and every other DLPack producer: numpy results
}

// Copies a strided array (strides in bytes) into C order.
void gather(const std::byte* src, int ndim, const std::int64_t* shape, const std::int64_t* byte_strides,
            std::size_t item, std::byte* dst) {
  if (ndim == 0) {
    std::memcpy(dst, src, item);
    return;
  }
  std::int64_t index[max_ndim] = {};
  std::uint64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= std::uint64_t(shape[d]);
  const std::byte* p = src;
  for (std::uint64_t k = 0; k < total; ++k) {
    std::memcpy(dst + k * item, p, item);
    for (int d = ndim - 1; d >= 0; --d) {  // odometer in C order
      p += byte_strides[d];
      if (++index[d] < shape[d]) break;
      p -= byte_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

bool c_contiguous(int ndim, const std::int64_t* shape, const std::int64_t* byte_strides, std::size_t item) {
  std::int64_t expected = std::int64_t(item);
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && byte_strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

void finish_strided(array_view& v, const std::byte* base, const std::int64_t* byte_strides) {
  const std::size_t item = dtype_size(v.type);
  if (c_contiguous(v.ndim, v.shape.data(), byte_strides, item)) {
    v.data = base;
    return;
  }
  v.copy.resize(v.size() * item);
  gather(base, v.ndim, v.shape.data(), byte_strides, item, v.copy.data());
  v.data = v.copy.data();
}

bool import_numpy(nb::handle x, const char* name, array_view& v) {
  numpy_cache& np = numpy_objects();
  if (!PyObject_TypeCheck(x.ptr(), reinterpret_cast<PyTypeObject*>(np.ndarray))) return false;
  nb::handle source = x;
  bool bf16 = false;
  if (np.bfloat16 != Py_None) {
    // ml_dtypes' bfloat16 has no buffer format: read it through a uint16 view of the same memory.
    nb::object dtype = x.attr("dtype");
    if (dtype.attr("type").ptr() == np.bfloat16) {
      v.owner = x.attr("view")(nb::handle(np.uint16));
      source = v.owner;
      bf16 = true;
    }
  }
  if (PyObject_GetBuffer(source.ptr(), &v.buffer, PyBUF_RECORDS_RO | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    type_error(name, "expected " + std::string(supported) + " elements, got a numpy array of dtype " +
                         text_of(nb::object(x.attr("dtype"))));
  }
  v.has_buffer = true;
  bool big_endian = false;
  if (bf16) {
    v.type = dtype_id::bf16;
  } else if (!parse_format(v.buffer.format, v.buffer.itemsize, v.type, big_endian)) {
    type_error(name, "expected " + std::string(supported) + " elements, got a numpy array of dtype " +
                         text_of(nb::object(x.attr("dtype"))));
  }
  if (big_endian)
    type_error(name, "big-endian arrays are not supported: convert with x.astype(x.dtype.newbyteorder('='))");
  if (v.buffer.ndim > max_ndim) value_error(name, "more than 64 dimensions");
  v.fw = framework::numpy;
  v.device_type = device_cpu;
  v.ndim = v.buffer.ndim;
  for (int d = 0; d < v.ndim; ++d) v.shape[d] = v.buffer.shape[d];
  std::int64_t strides[max_ndim];
  for (int d = 0; d < v.ndim; ++d) strides[d] = v.buffer.strides[d];
  finish_strided(v, static_cast<const std::byte*>(v.buffer.buf), strides);
  return true;
}

}  // namespace

const char* dtype_name(dtype_id t) {
  switch (t) {
    case dtype_id::f16:
      return "float16";
    case dtype_id::bf16:
      return "bfloat16";
    case dtype_id::f32:
      return "float32";
    case dtype_id::f64:
      return "float64";
    case dtype_id::i32:
      return "int32";
    case dtype_id::i64:
      return "int64";
  }
  return "?";
}

std::size_t dtype_size(dtype_id t) {
  switch (t) {
    case dtype_id::f16:
    case dtype_id::bf16:
      return 2;
    case dtype_id::f32:
    case dtype_id::i32:
      return 4;
    default:
      return 8;
  }
}

std::uint64_t array_view::size() const {
  std::uint64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= std::uint64_t(shape[d]);
  return n;
}

array_view::~array_view() {
  if (has_buffer) PyBuffer_Release(&buffer);
}

nb::handle bfloat16_numpy_type() {
  PyObject* t = numpy_objects().bfloat16;
  return t == Py_None ? nb::handle() : nb::handle(t);
}

void import_array(nb::handle x, const char* name, array_view& v) {
  if (import_numpy(x, name, v)) return;
#ifdef DETRED_PY_HAS_CUDA
  if (cuda_backend::import_native(x, name, v)) return;  // PyTorch and CuPy CUDA arrays, read in place
  if (framework_of(x) == framework::jax && nb::hasattr(x, "block_until_ready")) x.attr("block_until_ready")();
#endif
  if (!nb::try_cast(x, v.dlpack, false)) {
    type_error(name, "expected an array that supports DLPack (numpy, PyTorch, CuPy, JAX), got " + python_type_name(x));
  }
  const nb::ndarray<nb::ro>& a = v.dlpack;
  if (!parse_dlpack(a.dtype(), v.type))
    type_error(name, "expected " + std::string(supported) + " elements, got DLPack dtype code " +
                         std::to_string(a.dtype().code) + " with " + std::to_string(a.dtype().bits) + " bits");
  v.device_type = a.device_type();
  v.device_id = a.device_id();
  if (a.ndim() > std::size_t(max_ndim)) value_error(name, "more than 64 dimensions");
  v.fw = framework_of(x);
  v.ndim = int(a.ndim());
  std::int64_t strides[max_ndim];
  const std::size_t item = dtype_size(v.type);
  for (int d = 0; d < v.ndim; ++d) {
    v.shape[d] = std::int64_t(a.shape(d));
    strides[d] = a.stride(d) * std::int64_t(item);
  }
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) {
    // Another framework's CUDA array (JAX, any DLPack producer): read in place, contiguous only; the call is
    // synchronous (cuda_backend.hpp).
    if (!c_contiguous(v.ndim, v.shape.data(), strides, item))
      value_error(name, "a non-contiguous CUDA array: detred reads CUDA arrays in place; pass a contiguous copy");
    v.data = a.data();
    v.owner = nb::borrow(x);
    return;
  }
#endif
  if (v.device_type != device_cpu && v.device_type != 3 /* kDLCUDAHost: pinned host memory */) {
    if (v.device_type == device_cuda)
      value_error(name,
                  "a CUDA array, but this build of detred has no CUDA backend (it was built without nvcc; "
                  "detred.cuda_available() is False): copy it to the CPU first");
    value_error(name, "an array on DLPack device type " + std::to_string(v.device_type) +
                          ", which detred does not support (CPU only in this build)");
  }
  v.device_type = device_cpu;
  finish_strided(v, static_cast<const std::byte*>(a.data()), strides);
}

result_buffer::result_buffer(dtype_id t, int dims, const std::int64_t* dims_shape) : type(t), ndim(dims) {
  for (int d = 0; d < dims; ++d) {
    shape[d] = dims_shape[d];
    count *= std::size_t(dims_shape[d]);
  }
  bytes.reset(new std::byte[count * dtype_size(t) + 1]);
}

namespace {

nb::dlpack::dtype dlpack_dtype(dtype_id t) {
  switch (t) {
    case dtype_id::f16:
      return {std::uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
    case dtype_id::bf16:
      return {std::uint8_t(nb::dlpack::dtype_code::Bfloat), 16, 1};
    case dtype_id::f32:
      return {std::uint8_t(nb::dlpack::dtype_code::Float), 32, 1};
    case dtype_id::f64:
      return {std::uint8_t(nb::dlpack::dtype_code::Float), 64, 1};
    case dtype_id::i32:
      return {std::uint8_t(nb::dlpack::dtype_code::Int), 32, 1};
    case dtype_id::i64:
      return {std::uint8_t(nb::dlpack::dtype_code::Int), 64, 1};
  }
  return {};
}

template <class Framework>
nb::object export_as(result_buffer& r, nb::dlpack::dtype dt) {
  std::size_t shape[max_ndim];
  for (int d = 0; d < r.ndim; ++d) shape[d] = std::size_t(r.shape[d]);
  std::byte* data = r.bytes.release();
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<std::byte*>(p); });
  nb::ndarray<Framework> a(data, std::size_t(r.ndim), shape, owner, nullptr, dt);
  return nb::cast(a, nb::rv_policy::reference);
}

}  // namespace

nb::object export_result(result_buffer&& r, const array_view& like) {
  switch (like.fw) {
    case framework::numpy:
      if (r.type == dtype_id::bf16) {
        // numpy has no bfloat16 of its own: a uint16 array viewed as ml_dtypes.bfloat16.
        nb::object bits = export_as<nb::numpy>(r, nb::dtype<std::uint16_t>());
        const nb::handle bf16 = bfloat16_numpy_type();
        return bf16.is_valid() ? bits.attr("view")(bf16) : bits;
      }
      return export_as<nb::numpy>(r, dlpack_dtype(r.type));
    case framework::torch:
      return export_as<nb::pytorch>(r, dlpack_dtype(r.type));
    case framework::jax:
      return export_as<nb::jax>(r, dlpack_dtype(r.type));
    case framework::cupy:
      return export_as<nb::cupy>(r, dlpack_dtype(r.type));
    case framework::tensorflow:
      return export_as<nb::tensorflow>(r, dlpack_dtype(r.type));
  }
  return nb::none();
}

nb::object export_scalar(double value, dtype_id type, const array_view& like) {
  if (like.fw == framework::numpy) {
    numpy_cache& np = numpy_objects();
    PyObject* t = type == dtype_id::f32    ? np.float32
                  : type == dtype_id::f16  ? np.float16
                  : type == dtype_id::bf16 ? np.bfloat16
                                           : np.float64;
    if (t == Py_None) t = np.float32;  // bfloat16 without ml_dtypes: cannot happen for numpy inputs
    // Every value passed here is exactly representable in `type`: the conversion is exact.
    return nb::steal(PyObject_CallOneArg(t, nb::float_(value).ptr()));
  }
  result_buffer r(type, 0, nullptr);
  switch (type) {
    case dtype_id::f32:
      *r.as<float>() = float(value);
      break;
    case dtype_id::f16:
      *r.as<std::uint16_t>() = half::from_float(float(value)).bits;
      break;
    case dtype_id::bf16:
      *r.as<std::uint16_t>() = bfloat16::from_float(float(value)).bits;
      break;
    default:
      *r.as<double>() = value;
  }
  return export_result(std::move(r), like);
}

nb::object export_scalar_bits(std::uint16_t bits, dtype_id type, const array_view& like) {
  if (like.fw == framework::numpy) {
    const float f = type == dtype_id::f16 ? half::from_bits(bits).to_float() : bfloat16::from_bits(bits).to_float();
    return export_scalar(double(f), type, like);
  }
  result_buffer r(type, 0, nullptr);
  *r.as<std::uint16_t>() = bits;
  return export_result(std::move(r), like);
}

nb::object export_scalar_int(std::int64_t value, dtype_id type, const array_view& like) {
  if (like.fw == framework::numpy)
    return nb::steal(PyObject_CallOneArg(type == dtype_id::i32 ? numpy_objects().int32 : numpy_objects().int64,
                                         nb::int_(value).ptr()));
  result_buffer r(type, 0, nullptr);
  if (type == dtype_id::i32)
    *r.as<std::int32_t>() = std::int32_t(value);
  else
    *r.as<std::int64_t>() = value;
  return export_result(std::move(r), like);
}

}  // namespace detred::python
