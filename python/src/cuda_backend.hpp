// The CUDA side of the module: where a call on a CUDA array runs, its workspace, and its outputs.
//
// Stream. A call runs on the input framework's current stream of the array's device, without a host
// synchronisation: PyTorch's torch.cuda.current_stream(device) (read with torch._C._cuda_getCurrentRawStream), CuPy's
// current stream. Arrays of other frameworks (JAX, or any DLPack producer) have no current stream detred can read:
// their calls run on a stream of detred's own, wait for it and return (synchronous; docs/PYTHON.md).
// Workspace. From a per-device stream-ordered memory pool of detred's (cudaMemPoolCreate, never trimmed): taken and
// given back on the call's stream (cudaMallocFromPoolAsync / cudaFreeAsync), so calls on several streams never share
// bytes in flight, and no call runs cudaMalloc once the pool has grown to the largest workspace. Inside a CUDA-graph
// capture the workspace is a graph allocation (cudaMallocAsync / cudaFreeAsync on the capturing stream), so each
// replay has its own.
// Outputs. Allocated by the input's framework on its device and stream (PyTorch: Tensor.new_empty; CuPy:
// cupy.empty), so they live and die under its allocator and graph pools. JAX results are computed into the pool, then
// placed with jax.device_put after the wait.
#pragma once

#ifdef DETRED_PY_HAS_CUDA

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "arrays.hpp"

namespace detred::python::cuda_backend {

// True when a CUDA device is visible (cudaGetDeviceCount > 0).
bool available();

// Fills `v` from a CUDA tensor/array of PyTorch or CuPy without DLPack (no stream handshake, no copy). Returns false
// for anything else. TypeError for an unsupported dtype, ValueError for a non-contiguous array (naming `name`).
bool import_native(nb::handle x, const char* name, array_view& v);

// The device and stream a call on `v` runs on; makes that device current for the life of the object (restoring the
// previous one after).
class call_site {
 public:
  explicit call_site(const array_view& v);
  // A call on `device` and a stream of it that the caller names (PyTorch's current stream, read by the caller).
  call_site(int device, cudaStream_t stream);
  ~call_site();
  call_site(const call_site&) = delete;
  call_site& operator=(const call_site&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Frameworks without a readable current stream: the call waits for its stream before returning.
  bool synchronous() const { return synchronous_; }
  // Whether the stream is capturing a CUDA graph (asked once, when a workspace needs to know).
  bool capturing() const;
  // Waits for the stream when the call is synchronous (before its results are read or exported).
  void finish() const;

 private:
  int device_ = 0;
  int previous_device_ = 0;
  cudaStream_t stream_ = nullptr;
  bool synchronous_ = false;
  mutable int capturing_ = -1;  // -1: not asked yet
};

// Device bytes for one call, given back on the call's stream when the object dies (stream-ordered: the kernels
// enqueued before that still see them).
class workspace {
 public:
  workspace(const call_site& site, std::size_t bytes);
  ~workspace();
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Runs a device call in detred's two-phase shape (docs/API.md): call(nullptr, bytes) asks its workspace size, then
// call(workspace, bytes) runs with that many bytes from the pool, given back on the call's stream.
template <class Call>
void with_workspace(const call_site& site, Call&& call) {
  std::size_t bytes = 0;
  call(nullptr, bytes);
  workspace ws(site, bytes);
  call(ws.data(), bytes);
}

// An output array on the input's device, of the input's framework (see the file comment); `data` its device memory.
class device_output {
 public:
  device_output(const call_site& site, const array_view& like, dtype_id type, int ndim, const std::int64_t* shape);
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // The result, after site.finish(): the framework's array (a 0-d array for a scalar result, as torch.sum gives).
  nb::object release(const call_site& site);

 private:
  nb::object array_;                // PyTorch / CuPy: the framework's array
  std::unique_ptr<workspace> own_;  // JAX and others: pool memory copied out by release()
  void* data_ = nullptr;
  dtype_id type_ = dtype_id::f32;
  int ndim_ = 0;
  std::int64_t shape_[max_ndim] = {};
  const array_view* like_ = nullptr;
};

// Raises the CUDA error of `status`, if any, as a RuntimeError naming `what`.
void check(cudaError_t status, const char* what);

}  // namespace detred::python::cuda_backend

#endif  // DETRED_PY_HAS_CUDA
