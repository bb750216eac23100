// detred._nccl: detred's reproducible NCCL collectives (include/detred/nccl/*.hpp) for Python, in a module of its own
// so that `import detred` never needs libnccl: detred.torch.distributed imports it after PyTorch, which has loaded
// the NCCL library of its own wheel (nvidia-nccl), and that is the one this module binds to (by soname).
//
// A Communicator is an NCCL communicator made from a unique id (the caller passes it through its own process
// group: detred.torch.distributed does it with torch.distributed) plus detred's context for it. Every collective
// runs on the input framework's current stream of the communicator's device, without a host synchronisation (the
// argument check runs on the device past the first call: a mismatch gives NaN and is raised as ValueError by the
// next call or by synchronize(); include/detred/nccl/all_reduce.hpp, "Argument check"), with the element-wise contract
// of the C++ headers: out[e] the sum of the P ranks' values in rank order (method="tree": the canonical order over
// ranks; "exact": correctly rounded).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nccl.h>

#include <cstring>
#include <memory>
#include <string>

#include "common.hpp"
#include "cuda_backend.hpp"
#include "detred/nccl.hpp"
#include "detred/nccl/all_gather.hpp"
#include "detred/nccl/micro_batches.hpp"
#include "detred/nccl/reduce_scatter.hpp"

namespace nb = nanobind;

namespace detred::python {
namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string("detred: ") + what + " failed: " + ncclGetErrorString(r));
}

class communicator {
 public:
  communicator(nb::bytes unique_id, int size, int rank, int device) : device_(device) {
    if (unique_id.size() != sizeof(ncclUniqueId))
      throw_value_error("unique_id", "expected the " + std::to_string(sizeof(ncclUniqueId)) +
                                         " bytes of detred._nccl.unique_id(), got " + std::to_string(unique_id.size()));
    if (size < 1) throw_value_error("size", "must be >= 1, got " + std::to_string(size));
    if (rank < 0 || rank >= size)
      throw_value_error("rank", std::to_string(rank) + " is out of range for size " + std::to_string(size));
    ncclUniqueId id;
    std::memcpy(&id, unique_id.data(), sizeof id);
    int previous = 0;
    cuda_backend::check(cudaGetDevice(&previous), "cudaGetDevice");
    cuda_backend::check(cudaSetDevice(device), "cudaSetDevice");
    {
      nb::gil_scoped_release release;  // a collective: every rank must reach it
      check_nccl(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    }
    context_ = std::make_unique<nccl::context>(comm_);
    (void)cudaSetDevice(previous);
  }
  ~communicator() { close(); }

  void close() {
    context_.reset();
    if (comm_ != nullptr) {
      (void)ncclCommDestroy(comm_);
      comm_ = nullptr;
    }
  }

  // Waits for this communicator's calls and raises what the device argument check found.
  void synchronize() {
    nccl::context& ctx = live();
    int previous = 0;
    cuda_backend::check(cudaGetDevice(&previous), "cudaGetDevice");
    cuda_backend::check(cudaSetDevice(device_), "cudaSetDevice");
    try {
      nb::gil_scoped_release release;
      ctx.synchronize(nullptr);
    } catch (...) {
      (void)cudaSetDevice(previous);
      throw;
    }
    (void)cudaSetDevice(previous);
  }

  int rank() const { return live().rank(); }
  int size() const { return live().size(); }
  int device() const { return device_; }

  void all_reduce(nb::handle x, nb::handle out, nb::handle method, bool check_arguments) {
    run_elementwise("all_reduce", x, out, method, check_arguments, 1, 1);
  }
  void reduce_scatter(nb::handle x, nb::handle out, nb::handle method, bool check_arguments) {
    run_elementwise("reduce_scatter", x, out, method, check_arguments, std::uint64_t(size()), 1);
  }
  void all_gather(nb::handle x, nb::handle out, bool check_arguments) {
    run_elementwise("all_gather", x, out, nb::str("tree"), check_arguments, 1, std::uint64_t(size()));
  }
  // rows micro-batch gradients of n elements each (x: [rows, n], contiguous) reduced to out: [n] in global order.
  void all_reduce_micro_batches(nb::handle x, nb::handle out, nb::handle method, bool check_arguments) {
    array_view in, result;
    import_array(x, "x", in);
    import_array(out, "out", result);
    check_pair("all_reduce_micro_batches", in, result);
    if (in.ndim != 2) throw_value_error("x", "expected a [rows, n] array of micro-batch gradients");
    const std::uint64_t rows = std::uint64_t(in.shape[0]), n = std::uint64_t(in.shape[1]);
    if (result.size() != n) throw_value_error("out", "expected " + std::to_string(n) + " elements");
    const nccl::all_reduce_options options = options_for(method, check_arguments);
    cuda_backend::call_site site(in);
    nccl::context& ctx = live();
    dispatch(in, [&](auto* p) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(p)>>;
      nb::gil_scoped_release release;
      nccl::all_reduce_micro_batches(ctx, p, n, int(rows), static_cast<T*>(const_cast<void*>(result.data)), n,
                                     site.stream(), options);
    });
  }

 private:
  nccl::context& live() const {
    if (!context_) throw_value_error("self", "the communicator is closed");
    return *context_;
  }

  static nccl::all_reduce_options options_for(nb::handle method, bool check_arguments) {
    nccl::all_reduce_options options;
    options.method = parse_method(method);
    if (options.method != sum_method::tree && options.method != sum_method::exact)
      throw_value_error("method", "the collectives take 'tree' or 'exact'");
    options.check_arguments = check_arguments;
    return options;
  }

  void check_pair(const char* what, const array_view& in, const array_view& out) const {
    if (in.device_type != device_cuda || in.device_id != device_)
      throw_value_error(
          "x", std::string(what) + " takes arrays on the communicator's CUDA device " + std::to_string(device_));
    if (out.device_type != device_cuda || out.device_id != device_)
      throw_value_error(
          "out", std::string(what) + " takes arrays on the communicator's CUDA device " + std::to_string(device_));
    if (in.type != out.type)
      throw_type_error("out",
                       std::string("dtype ") + dtype_name(out.type) + " differs from x's " + dtype_name(in.type));
  }

  template <class F>
  static void dispatch(const array_view& v, F&& f) {
    switch (v.type) {
      case dtype_id::f32:
        return f(v.as<float>());
      case dtype_id::bf16:
        return f(v.as<bfloat16>());
      case dtype_id::f16:
        return f(v.as<half>());
      default:
        throw_type_error("x",
                         std::string("the collectives take float32, bfloat16 or float16, got ") + dtype_name(v.type));
    }
  }

  // out has in.size() * out_factor / in_factor elements (all_reduce 1/1, reduce_scatter 1/P, all_gather P/1).
  void run_elementwise(const char* what, nb::handle x, nb::handle out, nb::handle method, bool check_arguments,
                       std::uint64_t in_factor, std::uint64_t out_factor) {
    array_view in, result;
    import_array(x, "x", in);
    import_array(out, "out", result);
    check_pair(what, in, result);
    if (in.size() % in_factor != 0)
      throw_value_error("x", std::string(what) + " needs a multiple of the communicator's size, got " +
                                 std::to_string(in.size()) + " elements");
    const std::uint64_t n = in.size() / in_factor;  // all_reduce: n; reduce_scatter, all_gather: the shard
    if (result.size() != n * out_factor)
      throw_value_error(
          "out", "expected " + std::to_string(n * out_factor) + " elements, got " + std::to_string(result.size()));
    const nccl::all_reduce_options options = options_for(method, check_arguments);
    cuda_backend::call_site site(in);
    nccl::context& ctx = live();
    dispatch(in, [&](auto* p) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(p)>>;
      T* o = static_cast<T*>(const_cast<void*>(result.data));
      nb::gil_scoped_release release;
      if (std::strcmp(what, "all_reduce") == 0)
        nccl::all_reduce(ctx, p, o, n, site.stream(), options);
      else if (std::strcmp(what, "reduce_scatter") == 0)
        nccl::reduce_scatter(ctx, p, o, n, site.stream(), options);
      else
        nccl::all_gather(ctx, p, o, n, site.stream(), options);
    });
  }

  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  std::unique_ptr<nccl::context> context_;
};

}  // namespace
}  // namespace detred::python

NB_MODULE(_nccl, m) {
  namespace py = detred::python;
  using namespace nb::literals;
  m.doc() = "detred's reproducible NCCL collectives (private: use detred.torch.distributed).";
  m.def(
      "unique_id",
      []() {
        ncclUniqueId id;
        py::check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        return nb::bytes(reinterpret_cast<const char*>(&id), sizeof id);
      },
      "A new NCCL unique id (rank 0 makes it; every rank passes it to Communicator).");
  nb::class_<py::communicator>(m, "Communicator")
      .def(nb::init<nb::bytes, int, int, int>(), "unique_id"_a, "size"_a, "rank"_a, "device"_a,
           "Joins the NCCL communicator of `unique_id` as `rank` of `size` on CUDA device `device` (collective).")
      .def_prop_ro("rank", &py::communicator::rank)
      .def_prop_ro("size", &py::communicator::size)
      .def_prop_ro("device", &py::communicator::device)
      .def("all_reduce", &py::communicator::all_reduce, "x"_a, "out"_a, "method"_a = "tree", "check_arguments"_a = true,
           "out[e] = the sum over ranks of x[e], in rank order (tree: canonical; exact: correctly rounded). out may be "
           "x.")
      .def("reduce_scatter", &py::communicator::reduce_scatter, "x"_a, "out"_a, "method"_a = "tree",
           "check_arguments"_a = true,
           "out = shard `rank` of the element-wise rank-order sum of x (x: size * len(out) elements).")
      .def("all_gather", &py::communicator::all_gather, "x"_a, "out"_a, "check_arguments"_a = true,
           "out = every rank's x, in rank order (out: size * len(x) elements).")
      .def("all_reduce_micro_batches", &py::communicator::all_reduce_micro_batches, "x"_a, "out"_a, "method"_a = "tree",
           "check_arguments"_a = true,
           "out = the reduce of every rank's micro-batch rows (x: [rows, n]) in global order: the same bits for "
           "every rank count that splits the micro-batches evenly (tree) or any split (exact).")
      .def("synchronize", &py::communicator::synchronize,
           "Waits for this communicator's calls; raises ValueError when the ranks' calls differed (found on the "
           "device, whose outputs of that call are NaN): the communicator has then failed and must be closed.")
      .def("close", &py::communicator::close, "Destroys the communicator (also when the object dies).");
}
