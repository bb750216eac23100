// detred._detred._rows' pointer calls: the CUDA row kernels behind detred.torch's fused norms and softmax, taking
// device addresses, sizes and the stream as integers. detred.torch calls them on CUDA tensors it has just made
// contiguous or allocated itself, so that a forward + backward pays no per-tensor import (reading a tensor's dtype,
// shape, layout and device from Python costs microseconds each, and a norm's backward passes eight): the
// host-side cost decides a call's time wherever it exceeds the kernels' (small batches, and any shape under
// single-call timing).
//
// The contract is the caller's, unchecked here but for the dtype code and the sizes' range: every address is a
// contiguous array on `device` of the element type and count the call names (x-like arrays rows x cols elements of
// `dtype`, weight and bias cols elements of `dtype`, per-row statistics rows float32, dweight and dbias cols
// float32); `stream` is a stream of that device (PyTorch's current one). The kernels and their bits are those of the
// array calls in row_ops.cpp.
#ifdef DETRED_PY_HAS_CUDA

#include <array>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common.hpp"
#include "cuda_backend.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/rows.hpp"

namespace detred::python {

namespace {

using cuda_backend::with_workspace;
using address = std::uintptr_t;

// The element type codes of the pointer calls (detred.torch._kernels keeps the same table).
enum class element_code : int { float32 = 0, bfloat16 = 1, float16 = 2 };

template <class T>
T* at(address a) {
  return reinterpret_cast<T*>(a);
}

// Runs f(tag<T>{}, site) for the element type of `code`, on `device` and `stream`.
template <class F>
void on_device(int code, int device, address stream, F&& f) {
  cuda_backend::call_site site(device, reinterpret_cast<cudaStream_t>(stream));
  switch (element_code(code)) {
    case element_code::float32:
      f(tag<float>{}, site);
      return;
    case element_code::bfloat16:
      f(tag<bfloat16>{}, site);
      return;
    case element_code::float16:
      f(tag<half>{}, site);
      return;
  }
  throw_value_error("dtype", "unknown element code " + std::to_string(code));
}

template <class T>
using type_of = typename std::remove_cvref_t<T>::type;

// The forward calls (rms_norm, layer_norm, softmax, log_softmax) and softmax's backward use no workspace: their size
// query answers cuda::min_workspace_bytes (test_norms_cuda asserts it). They run on a 16-byte buffer of the device,
// allocated once and kept, instead of a pool allocation and release per call.
void* unused_workspace(int device) {
  static std::mutex mutex;
  static std::array<void*, 64> buffers{};
  if (device < 0 || device >= int(buffers.size())) throw_value_error("device", "out of range");
  const std::lock_guard<std::mutex> lock(mutex);
  if (buffers[std::size_t(device)] == nullptr)
    cuda_backend::check(cudaMalloc(&buffers[std::size_t(device)], cuda::min_workspace_bytes), "cudaMalloc");
  return buffers[std::size_t(device)];
}

// Runs one of those calls with its workspace: the size query, then the call on the kept buffer.
template <class Call>
void without_workspace(const cuda_backend::call_site& site, Call&& call) {
  std::size_t bytes = 0;
  call(nullptr, bytes);
  if (bytes > cuda::min_workspace_bytes)
    throw std::logic_error("a row call documented without a workspace asked for one");
  call(unused_workspace(site.device()), bytes);
}

// Runs a call that needs a workspace: on `given` (a device allocation of `given_bytes` the caller made, e.g. from
// PyTorch's caching allocator on the call's stream) when there is one, else on a pool allocation (with_workspace).
// The call itself refuses a given workspace smaller than its size query.
template <class Call>
void with_given_workspace(const cuda_backend::call_site& site, address given, std::size_t given_bytes, Call&& call) {
  if (given == 0) {
    with_workspace(site, call);
    return;
  }
  std::size_t bytes = given_bytes;
  call(reinterpret_cast<void*>(given), bytes);
}

// The workspace size of a backward norm's call on rows x cols of `code`'s type (no device work).
template <class Query>
std::size_t workspace_size(int code, Query&& query) {
  std::size_t bytes = 0;
  switch (element_code(code)) {
    case element_code::float32:
      query(tag<float>{}, bytes);
      return bytes;
    case element_code::bfloat16:
      query(tag<bfloat16>{}, bytes);
      return bytes;
    case element_code::float16:
      query(tag<half>{}, bytes);
      return bytes;
  }
  throw_value_error("dtype", "unknown element code " + std::to_string(code));
}

}  // namespace

void bind_row_pointer_calls(nb::module_& r) {
  r.def(
      "cuda_rms_norm_forward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address x, address weight, address out, address rstd,
         float eps, int device, address stream) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          without_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::rmsnorm_forward(ws, bytes, at<const T>(x), at<const T>(weight), at<T>(out), at<float>(rstd),
                                  dense_rows(rows, cols), eps, site.stream());
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("x"), nb::arg("weight"), nb::arg("out"),
      nb::arg("rstd"), nb::arg("eps"), nb::arg("device"), nb::arg("stream"),
      "rms_norm_forward on device addresses (see the module's pointer-call contract).");
  r.def(
      "cuda_rms_norm_backward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address dy, address x, address weight, address rstd,
         address dx, address dweight, int device, address stream, address workspace, std::size_t workspace_bytes) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          with_given_workspace(site, workspace, workspace_bytes, [&](void* ws, std::size_t& bytes) {
            cuda::rmsnorm_backward(ws, bytes, at<const T>(dy), at<const T>(x), at<const T>(weight),
                                   at<const float>(rstd), at<T>(dx), at<float>(dweight), dense_rows(rows, cols),
                                   site.stream());
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("dy"), nb::arg("x"), nb::arg("weight"),
      nb::arg("rstd"), nb::arg("dx"), nb::arg("dweight"), nb::arg("device"), nb::arg("stream"),
      nb::arg("workspace") = address{0}, nb::arg("workspace_bytes") = std::size_t{0},
      "rms_norm_backward on device addresses; workspace: a device allocation of workspace_bytes (at least "
      "cuda_rms_norm_backward_workspace's answer), or 0 for detred's pool.");
  r.def(
      "cuda_rms_norm_backward_workspace",
      [](int code, std::uint64_t rows, std::uint64_t cols) {
        return workspace_size(code, [&](auto t, std::size_t& bytes) {
          using T = type_of<decltype(t)>;
          cuda::rmsnorm_backward<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    dense_rows(rows, cols), nullptr);
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), "The workspace bytes of cuda_rms_norm_backward.");
  r.def(
      "cuda_layer_norm_forward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address x, address weight, address bias, address out,
         address mean, address rstd, float eps, int device, address stream) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          without_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::layernorm_forward(ws, bytes, at<const T>(x), at<const T>(weight), at<const T>(bias), at<T>(out),
                                    at<float>(mean), at<float>(rstd), dense_rows(rows, cols), eps, site.stream());
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("x"), nb::arg("weight"), nb::arg("bias"),
      nb::arg("out"), nb::arg("mean"), nb::arg("rstd"), nb::arg("eps"), nb::arg("device"), nb::arg("stream"),
      "layer_norm_forward on device addresses.");
  r.def(
      "cuda_layer_norm_backward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address dy, address x, address weight, address mean,
         address rstd, address dx, address dweight, address dbias, int device, address stream, address workspace,
         std::size_t workspace_bytes) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          with_given_workspace(site, workspace, workspace_bytes, [&](void* ws, std::size_t& bytes) {
            cuda::layernorm_backward(ws, bytes, at<const T>(dy), at<const T>(x), at<const T>(weight),
                                     at<const float>(mean), at<const float>(rstd), at<T>(dx), at<float>(dweight),
                                     at<float>(dbias), dense_rows(rows, cols), site.stream());
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("dy"), nb::arg("x"), nb::arg("weight"),
      nb::arg("mean"), nb::arg("rstd"), nb::arg("dx"), nb::arg("dweight"), nb::arg("dbias"), nb::arg("device"),
      nb::arg("stream"), nb::arg("workspace") = address{0}, nb::arg("workspace_bytes") = std::size_t{0},
      "layer_norm_backward on device addresses; workspace as cuda_rms_norm_backward's.");
  r.def(
      "cuda_layer_norm_backward_workspace",
      [](int code, std::uint64_t rows, std::uint64_t cols) {
        return workspace_size(code, [&](auto t, std::size_t& bytes) {
          using T = type_of<decltype(t)>;
          cuda::layernorm_backward<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr, dense_rows(rows, cols), nullptr);
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), "The workspace bytes of cuda_layer_norm_backward.");
  r.def(
      "cuda_softmax_forward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address x, address out, bool causal, bool log, int device,
         address stream) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          row_shape s = dense_rows(rows, cols);
          if (causal) s.causal_period = cols;  // rows of [..., T, T]: row r holds (r % T) + 1 elements
          cuda::row_options options;
          options.fill_past_length = causal;  // the masked entries written too (0 or -inf)
          without_workspace(site, [&](void* ws, std::size_t& bytes) {
            if (log)
              cuda::log_softmax_forward(ws, bytes, at<const T>(x), at<T>(out), s, site.stream(), options);
            else
              cuda::softmax_forward(ws, bytes, at<const T>(x), at<T>(out), s, site.stream(), options);
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("x"), nb::arg("out"), nb::arg("causal"),
      nb::arg("log"), nb::arg("device"), nb::arg("stream"),
      "softmax_forward (log: log_softmax_forward) on device addresses; causal: rows of [..., cols, cols].");
  r.def(
      "cuda_softmax_backward",
      [](int code, std::uint64_t rows, std::uint64_t cols, address y, address dy, address dx, bool causal, bool log,
         int device, address stream) {
        on_device(code, device, stream, [&](auto t, const auto& site) {
          using T = type_of<decltype(t)>;
          row_shape s = dense_rows(rows, cols);
          if (causal) s.causal_period = cols;
          without_workspace(site, [&](void* ws, std::size_t& bytes) {
            if (log)
              cuda::log_softmax_backward(ws, bytes, at<const T>(y), at<const T>(dy), at<T>(dx), s, site.stream());
            else
              cuda::softmax_backward(ws, bytes, at<const T>(y), at<const T>(dy), at<T>(dx), s, site.stream());
          });
        });
      },
      nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("y"), nb::arg("dy"), nb::arg("dx"), nb::arg("causal"),
      nb::arg("log"), nb::arg("device"), nb::arg("stream"),
      "softmax_backward (log: log_softmax_backward) on device addresses.");
}

}  // namespace detred::python

#endif  // DETRED_PY_HAS_CUDA
