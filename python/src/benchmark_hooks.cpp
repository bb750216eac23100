// Private hooks for python/benchmarks/ (not API): the C++ call a Python call is measured against, run from the same
// process on the same buffers, so that the ratio counts the Python layer's cost alone.
#include <cstdint>

#include "common.hpp"
#include "cuda_backend.hpp"

#ifdef DETRED_PY_HAS_CUDA
#include "detred/cuda/sum.hpp"
#endif

namespace detred::python {

void bind_benchmark_hooks(nb::module_& m) {
#ifdef DETRED_PY_HAS_CUDA
  using namespace nb::literals;
  // Bytes of workspace cuda::sum<float>(float) needs for n elements and the method.
  m.def(
      "_cpp_sum_workspace_bytes",
      [](std::uint64_t n, nb::handle method) {
        std::size_t bytes = 0;
        cuda::sum_options options{parse_method(method)};
        cuda::sum<float>(nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), n, nullptr,
                         options);
        return bytes;
      },
      "n"_a, "method"_a);
  // `iterations` back-to-back calls of detred::cuda::sum<float>(float) on `stream`, device pointers as integers.
  m.def(
      "_cpp_sum_loop",
      [](std::uintptr_t x, std::uint64_t n, std::uintptr_t out, std::uintptr_t ws, std::size_t ws_bytes,
         nb::handle method, int iterations, std::uintptr_t stream) {
        cuda::sum_options options{parse_method(method)};
        for (int i = 0; i < iterations; ++i)
          cuda::sum<float>(reinterpret_cast<void*>(ws), ws_bytes, reinterpret_cast<const float*>(x),
                           reinterpret_cast<float*>(out), n, reinterpret_cast<cudaStream_t>(stream), options);
      },
      "x"_a, "n"_a, "out"_a, "workspace"_a, "workspace_bytes"_a, "method"_a, "iterations"_a, "stream"_a);
#else
  (void)m;
#endif
}

}  // namespace detred::python
