// detred._detred: the extension module behind the detred package (python/detred/__init__.py re-exports it).
#include "common.hpp"
#include "cuda_backend.hpp"

namespace nb = nanobind;
namespace py = detred::python;

NB_MODULE(_detred, m) {
  m.doc() = "detred's extension module: deterministic, accurate reductions (docs/PYTHON.md).";
  m.attr("__version__") = DETRED_PY_VERSION;
  m.attr("sum_methods") =
      nb::make_tuple("sequential", "pairwise", "kahan", "neumaier", "tree", "tree_neumaier", "exact");

  m.def(
      "cuda_available",
      []() {
#ifdef DETRED_PY_HAS_CUDA
        return py::cuda_backend::available();
#else
        return false;
#endif
      },
      "True when this build has detred's CUDA backend and a CUDA device is visible: CUDA arrays (PyTorch, CuPy, JAX) "
      "then run on their device. False otherwise, and CUDA arrays raise ValueError.");
  m.def(
      "set_num_threads",
      [](unsigned threads) {
        if (threads > 4096) py::throw_value_error("threads", "expected 0 (the default) to 4096");
        py::module_cpu_options().threads = threads;
      },
      nb::arg("threads"),
      "Sets the CPU backend's worker threads for every later call (0: the DETRED_NUM_THREADS environment variable, "
      "else every core). A speed knob only: every result has the same bits for every thread count.");
  m.def(
      "get_num_threads", []() { return py::module_cpu_options().threads; },
      "The thread count set by set_num_threads (0: the default).");

  py::bind_reductions(m);
  py::bind_exact_accumulator(m);
  py::bind_audit(m);
  py::bind_benchmark_hooks(m);
  py::bind_row_ops(m);
  py::bind_scatter(m);
}
