#include "cuda_backend.hpp"

#include <nanobind/stl/string.h>

#include <array>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>

namespace detred::python::cuda_backend {

namespace {

constexpr int max_devices = 64;

[[noreturn]] void type_error(const char* name, const std::string& what) {
  throw nb::type_error((std::string(name) + ": " + what).c_str());
}
[[noreturn]] void value_error(const char* name, const std::string& what) {
  throw nb::value_error((std::string(name) + ": " + what).c_str());
}

std::string module_of(nb::handle x) {
  nb::object m = nb::getattr(x.type(), "__module__", nb::none());
  return nb::isinstance<nb::str>(m) ? std::string(nb::borrow<nb::str>(m).c_str()) : std::string();
}
bool starts_with(const std::string& s, std::string_view p) { return std::string_view(s).substr(0, p.size()) == p; }

// PyTorch's objects, looked up once (torch is imported by then: a tensor exists) and kept for the process's life.
struct torch_cache {
  PyObject* dtypes[6] = {};  // indexed by dtype_id
  PyObject* current_raw_stream = nullptr;
};
torch_cache& torch_objects() {
  static torch_cache cache = [] {
    torch_cache c;
    nb::module_ torch = nb::module_::import_("torch");
    const char* names[6] = {"float16", "bfloat16", "float32", "float64", "int32", "int64"};
    for (int i = 0; i < 6; ++i) c.dtypes[i] = nb::object(torch.attr(names[i])).release().ptr();
    c.current_raw_stream = nb::object(torch.attr("_C").attr("_cuda_getCurrentRawStream")).release().ptr();
    return c;
  }();
  return cache;
}

struct cupy_cache {
  PyObject* empty = nullptr;
  PyObject* get_current_stream = nullptr;
};
cupy_cache& cupy_objects() {
  static cupy_cache cache = [] {
    cupy_cache c;
    nb::module_ cupy = nb::module_::import_("cupy");
    c.empty = nb::object(cupy.attr("empty")).release().ptr();
    c.get_current_stream = nb::object(cupy.attr("cuda").attr("get_current_stream")).release().ptr();
    return c;
  }();
  return cache;
}

std::int64_t to_int(nb::handle o) {
  const long long v = PyLong_AsLongLong(o.ptr());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

void read_shape(nb::handle shape, const char* name, array_view& v) {
  nb::tuple t = nb::tuple(shape);
  if (t.size() > std::size_t(max_ndim)) value_error(name, "more than 64 dimensions");
  v.ndim = int(t.size());
  for (int d = 0; d < v.ndim; ++d) v.shape[d] = to_int(t[d]);
}

const char* supported = "float16, bfloat16, float32 or float64 (int32/int64 for min, max, argmin, argmax)";

bool import_torch(nb::handle x, const char* name, array_view& v) {
  if (!nb::cast<bool>(x.attr("is_cuda"))) return false;
  torch_cache& t = torch_objects();
  nb::object dtype = x.attr("dtype");
  int found = -1;
  for (int i = 0; i < 6; ++i)
    if (dtype.ptr() == t.dtypes[i]) found = i;
  if (found < 0)
    type_error(name, "expected " + std::string(supported) + " elements, got " + nb::cast<std::string>(nb::str(dtype)));
  v.type = dtype_id(found);
  if (!nb::cast<bool>(x.attr("is_contiguous")()))
    value_error(name, "a non-contiguous CUDA tensor: detred reads CUDA arrays in place; pass x.contiguous()");
  read_shape(x.attr("shape"), name, v);
  v.data = reinterpret_cast<const void*>(std::uintptr_t(to_int(x.attr("data_ptr")())));
  v.device_id = int(to_int(x.attr("get_device")()));
  v.device_type = device_cuda;
  v.fw = framework::torch;
  v.owner = nb::borrow(x);
  return true;
}

bool import_cupy(nb::handle x, const char* name, array_view& v) {
  nb::object dtype = x.attr("dtype");
  const std::string code = nb::cast<std::string>(dtype.attr("char"));
  const std::size_t item = nb::cast<std::size_t>(dtype.attr("itemsize"));
  if (code == "e")
    v.type = dtype_id::f16;
  else if (code == "f")
    v.type = dtype_id::f32;
  else if (code == "d")
    v.type = dtype_id::f64;
  else if ((code == "i" || code == "l" || code == "q") && item == 4)
    v.type = dtype_id::i32;
  else if ((code == "i" || code == "l" || code == "q") && item == 8)
    v.type = dtype_id::i64;
  else
    type_error(name, "expected " + std::string(supported) + " elements, got a CuPy array of dtype " +
                         nb::cast<std::string>(nb::str(dtype)));
  if (!nb::cast<bool>(x.attr("flags").attr("c_contiguous")))
    value_error(name, "a non-contiguous CuPy array: detred reads CUDA arrays in place; pass cupy.ascontiguousarray(x)");
  read_shape(x.attr("shape"), name, v);
  v.data = reinterpret_cast<const void*>(std::uintptr_t(to_int(x.attr("data").attr("ptr"))));
  v.device_id = int(to_int(x.attr("device").attr("id")));
  v.device_type = device_cuda;
  v.fw = framework::cupy;
  v.owner = nb::borrow(x);
  return true;
}

// detred's own stream per device, for frameworks without a readable current stream.
cudaStream_t own_stream(int device) {
  static std::array<cudaStream_t, max_devices> streams{};
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (streams[std::size_t(device)] == nullptr)
    check(cudaStreamCreateWithFlags(&streams[std::size_t(device)], cudaStreamNonBlocking), "cudaStreamCreate");
  return streams[std::size_t(device)];
}

// The per-device pool of the workspaces: never trimmed (release threshold: all), so that it stops calling the driver
// once it holds the largest workspace in use.
cudaMemPool_t pool(int device) {
  static std::array<cudaMemPool_t, max_devices> pools{};
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  cudaMemPool_t& p = pools[std::size_t(device)];
  if (p == nullptr) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    check(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate");
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    check(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep_all), "cudaMemPoolSetAttribute");
  }
  return p;
}

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clears a non-sticky error
  throw std::runtime_error(std::string("detred: ") + what + " failed: " + cudaGetErrorString(status));
}

bool available() {
  static const bool has_device = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return count > 0;
  }();
  return has_device;
}

bool import_native(nb::handle x, const char* name, array_view& v) {
  const std::string m = module_of(x);
  if (starts_with(m, "torch")) {
    if (!nb::hasattr(x, "is_cuda")) return false;
    return import_torch(x, name, v);
  }
  if (starts_with(m, "cupy") && nb::hasattr(x, "data") && nb::hasattr(x, "flags")) return import_cupy(x, name, v);
  return false;
}

call_site::call_site(const array_view& v) : device_(v.device_id) {
  if (!available()) value_error("x", "a CUDA array, but no CUDA device is visible to detred");
  if (device_ < 0 || device_ >= max_devices)
    value_error("x", "CUDA device " + std::to_string(device_) + " is out of range");
  check(cudaGetDevice(&previous_device_), "cudaGetDevice");
  if (previous_device_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
  switch (v.fw) {
    case framework::torch:
      stream_ = reinterpret_cast<cudaStream_t>(std::uintptr_t(
          to_int(nb::steal(PyObject_CallOneArg(torch_objects().current_raw_stream, nb::int_(device_).ptr())))));
      break;
    case framework::cupy: {
      nb::object s = nb::steal(PyObject_CallNoArgs(cupy_objects().get_current_stream));
      if (!s.is_valid()) throw nb::python_error();
      stream_ = reinterpret_cast<cudaStream_t>(std::uintptr_t(to_int(s.attr("ptr"))));
      break;
    }
    default:
      stream_ = own_stream(device_);
      synchronous_ = true;
  }
}

call_site::call_site(int device, cudaStream_t stream) : device_(device), stream_(stream) {
  if (device_ < 0 || device_ >= max_devices)
    value_error("device", "CUDA device " + std::to_string(device_) + " is out of range");
  check(cudaGetDevice(&previous_device_), "cudaGetDevice");
  if (previous_device_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
}

bool call_site::capturing() const {
  if (capturing_ < 0) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
    capturing_ = status == cudaStreamCaptureStatusActive ? 1 : 0;
  }
  return capturing_ == 1;
}

call_site::~call_site() {
  if (previous_device_ != device_) (void)cudaSetDevice(previous_device_);
}

void call_site::finish() const {
  if (synchronous_) {
    nb::gil_scoped_release release;
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
}

workspace::workspace(const call_site& site, std::size_t bytes)
    : bytes_(bytes < 16 ? 16 : bytes), stream_(site.stream()) {
  if (site.capturing())
    check(cudaMallocAsync(&data_, bytes_, stream_), "cudaMallocAsync (workspace, graph capture)");
  else
    check(cudaMallocFromPoolAsync(&data_, bytes_, pool(site.device()), stream_), "cudaMallocFromPoolAsync (workspace)");
}

workspace::~workspace() {
  if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
}

namespace {

const char* numpy_name(dtype_id t) { return dtype_name(t); }

nb::tuple shape_tuple(int ndim, const std::int64_t* shape) {
  PyObject* t = PyTuple_New(ndim);
  for (int d = 0; d < ndim; ++d) PyTuple_SET_ITEM(t, d, PyLong_FromLongLong(shape[d]));
  return nb::steal<nb::tuple>(t);
}

}  // namespace

device_output::device_output(const call_site& site, const array_view& like, dtype_id type, int ndim,
                             const std::int64_t* shape)
    : type_(type), ndim_(ndim), like_(&like) {
  std::size_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    shape_[d] = shape[d];
    count *= std::size_t(shape[d]);
  }
  switch (like.fw) {
    case framework::torch: {
      nb::object dtype = nb::borrow(torch_objects().dtypes[int(type)]);
      array_ = like.owner.attr("new_empty")(shape_tuple(ndim, shape), nb::arg("dtype") = dtype);
      data_ = reinterpret_cast<void*>(std::uintptr_t(to_int(array_.attr("data_ptr")())));
      break;
    }
    case framework::cupy: {
      array_ = nb::borrow(cupy_objects().empty)(shape_tuple(ndim, shape), nb::arg("dtype") = numpy_name(type));
      data_ = reinterpret_cast<void*>(std::uintptr_t(to_int(array_.attr("data").attr("ptr"))));
      break;
    }
    default:
      own_ = std::make_unique<workspace>(site, count * dtype_size(type));
      data_ = own_->data();
  }
}

nb::object device_output::release(const call_site& site) {
  if (array_.is_valid()) return std::move(array_);
  // Synchronous frameworks: the result through the host, placed on the input's device by JAX (other producers get
  // numpy results, as on the CPU).
  result_buffer r(type_, ndim_, shape_);
  if (r.count > 0) {
    nb::gil_scoped_release release;
    check(cudaMemcpyAsync(r.bytes.get(), data_, r.count * dtype_size(type_), cudaMemcpyDeviceToHost, site.stream()),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(site.stream()), "cudaStreamSynchronize");
  }
  own_.reset();
  array_view host_like;
  host_like.fw = framework::numpy;
  nb::object host = export_result(std::move(r), host_like);
  if (like_->fw == framework::jax) {
    nb::module_ jax = nb::module_::import_("jax");
    nb::list devices(like_->owner.attr("devices")());
    nb::object device = devices.size() > 0 ? nb::object(devices[0]) : nb::none();
    return jax.attr("device_put")(host, device);
  }
  return host;
}

}  // namespace detred::python::cuda_backend
