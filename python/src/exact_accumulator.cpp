// detred.ExactAccumulator: detred::exact_accumulator (detred/accumulators/exact.hpp) as a Python object. Its byte
// form is the C++ serialize() form (docs/EXACT.md, "Byte form"), so states move between processes, machines and the
// C++ API unchanged.
#include <nanobind/stl/string.h>

#include <new>

#include "common.hpp"
#include "detred/accumulators/exact.hpp"

#ifdef DETRED_PY_HAS_CUDA
#include <vector>

#include "cuda_backend.hpp"
#include "detred/cuda/sum.hpp"
#include "src/cuda/exact/exact_sum.hpp"
#endif

namespace detred::python {
namespace {

class exact_state {
 public:
  explicit exact_state(bool is_double) : is_double_(is_double) {}

  bool is_double() const { return is_double_; }
  const char* dtype() const { return is_double_ ? "float64" : "float32"; }
  std::uint64_t count() const { return is_double_ ? d_.count() : f_.count(); }

  void add(nb::handle x) {
    array_view v;
    import_array(x, "x", v);
#ifdef DETRED_PY_HAS_CUDA
    if (v.device_type == device_cuda) {
      add_on_device(v);
      return;
    }
#endif
    // exact_accumulator::add, one thread: the parallel kernel's state (detail::exact_state_n) is not public API.
    visit_float(v, "ExactAccumulator.add", [&](auto t) {
      using T = typename std::remove_cvref_t<decltype(t)>::type;
      if constexpr (std::is_same_v<T, double>) {
        if (!is_double_)
          throw_type_error("x",
                           "a float32 ExactAccumulator takes float16, bfloat16 and float32 arrays; use "
                           "ExactAccumulator('float64') for float64 data");
        run_maybe_released(v.size(), [&] { d_.add(v.as<T>(), v.size()); });
      } else if (is_double_) {
        run_maybe_released(v.size(), [&] { d_.add(v.as<T>(), v.size()); });
      } else {
        run_maybe_released(v.size(), [&] { f_.add(v.as<T>(), v.size()); });
      }
    });
  }

#ifdef DETRED_PY_HAS_CUDA
  // A CUDA array: the GPU's exact state of its elements (the kernel of cuda::sum's exact method, not rounded),
  // brought to the host and merged: the same state as adding the elements here. The call waits for the array's
  // stream. A float64 accumulator given float16/bfloat16/float32 data (another layout) copies the data to the host.
  void add_on_device(const array_view& v) {
    visit_float(v, "ExactAccumulator.add", [&](auto t) {
      using T = typename std::remove_cvref_t<decltype(t)>::type;
      using state = exact_accumulator_for<T>;
      if constexpr (std::is_same_v<T, double>) {
        if (!is_double_)
          throw_type_error("x",
                           "a float32 ExactAccumulator takes float16, bfloat16 and float32 arrays; use "
                           "ExactAccumulator('float64') for float64 data");
      }
      const std::uint64_t n = v.size();
      cuda_backend::call_site site(v);
      if (std::is_same_v<T, double> == is_double_) {
        constexpr int L = state::limb_count;
        cuda::sum_options options;
        options.method = sum_method::exact;
        cuda_backend::workspace ws(site, cuda::detail::sum_workspace_size(n, options));
        cuda_backend::workspace d_state(site, (L + 2) * sizeof(long long));
        cuda::detail::launch_exact_state(v.as<T>(), n, static_cast<long long*>(d_state.data()), ws.data(),
                                         site.stream());
        long long host[L + 2];
        {
          nb::gil_scoped_release release;
          cuda_backend::check(cudaMemcpyAsync(host, d_state.data(), sizeof host, cudaMemcpyDeviceToHost, site.stream()),
                              "cudaMemcpyAsync");
          cuda_backend::check(cudaStreamSynchronize(site.stream()), "cudaStreamSynchronize");
        }
        state one;
        for (int k = 0; k < L; ++k) one.set_raw(k, host[k]);
        one.set_count(std::uint64_t(host[L]), std::uint32_t(host[L + 1]), 1);
        if constexpr (std::is_same_v<T, double>)
          d_.merge(one);
        else
          f_.merge(one);
      } else {
        std::vector<T> host(n);
        {
          nb::gil_scoped_release release;
          if (n > 0)
            cuda_backend::check(
                cudaMemcpyAsync(host.data(), v.data, n * sizeof(T), cudaMemcpyDeviceToHost, site.stream()),
                "cudaMemcpyAsync");
          cuda_backend::check(cudaStreamSynchronize(site.stream()), "cudaStreamSynchronize");
        }
        run_maybe_released(n, [&] { d_.add(host.data(), n); });
      }
    });
  }
#endif

  void merge(const exact_state& other) {
    if (other.is_double_ != is_double_)
      throw_type_error("other", std::string("a ") + other.dtype() + " ExactAccumulator cannot merge into a " + dtype() +
                                    " one (different layouts)");
    if (is_double_)
      d_.merge(other.d_);
    else
      f_.merge(other.f_);
  }

  template <class Out>
  Out rounded() const {
    return is_double_ ? d_.template rounded<Out>() : f_.template rounded<Out>();
  }

  nb::bytes to_bytes() const {
    std::uint8_t out[exact_accumulator<double>::serialized_bytes];
    std::size_t size;
    if (is_double_) {
      d_.serialize(out);
      size = exact_accumulator<double>::serialized_bytes;
    } else {
      f_.serialize(out);
      size = exact_accumulator<float>::serialized_bytes;
    }
    return nb::bytes(reinterpret_cast<const char*>(out), size);
  }

  // Replaces the state by the one `data` holds; ValueError (state unchanged) when it is not a valid byte form.
  void load(nb::bytes data) {
    const auto* bytes = static_cast<const std::uint8_t*>(data.data());
    const std::size_t size = data.size();
    bool ok = false;
    if (size == exact_accumulator<double>::serialized_bytes) {
      exact_accumulator<double> s;
      if ((ok = s.deserialize(bytes))) {
        d_ = s;
        is_double_ = true;
      }
    } else if (size == exact_accumulator<float>::serialized_bytes) {
      exact_accumulator<float> s;
      if ((ok = s.deserialize(bytes))) {
        f_ = s;
        is_double_ = false;
      }
    }
    if (!ok)
      throw_value_error("data", "not a detred exact accumulator state (" + std::to_string(size) +
                                    " bytes; expected the 112- or 568-byte form of docs/PYTHON.md)");
  }

 private:
  bool is_double_;
  exact_accumulator<float> f_;
  exact_accumulator<double> d_;
};

bool layout_of(nb::handle dtype) {
  const dtype_id t = parse_float_dtype(dtype, "dtype");
  if (t != dtype_id::f32 && t != dtype_id::f64)
    throw_type_error("dtype", std::string("expected float32 or float64 (the layout), got ") + dtype_name(t));
  return t == dtype_id::f64;
}

nb::object value_of(const exact_state& s, nb::handle dtype) {
  const dtype_id t =
      dtype.is_none() ? (s.is_double() ? dtype_id::f64 : dtype_id::f32) : parse_float_dtype(dtype, "dtype");
  array_view numpy_like;  // results are numpy scalars
  switch (t) {
    case dtype_id::f16:
      return export_scalar_bits(s.rounded<half>().bits, t, numpy_like);
    case dtype_id::bf16:
      return export_scalar_bits(s.rounded<bfloat16>().bits, t, numpy_like);
    case dtype_id::f32:
      return export_scalar(double(s.rounded<float>()), t, numpy_like);
    default:
      return export_scalar(s.rounded<double>(), t, numpy_like);
  }
}

constexpr const char* class_doc =
    "ExactAccumulator(dtype='float64')\n\n"
    "The exact sum of every term added, held as detred::exact_accumulator (an integer superaccumulator, "
    "docs/EXACT.md): add() and merge() in any order and grouping give the same state, so partial sums from "
    "processes, machines or notebooks combine to the same bits. value() rounds once (correctly rounded, round to "
    "nearest, ties to even; +-Inf exactly when |s| >= MAX + ulp(MAX)/2; NaN and Inf inputs as IEEE addition gives "
    "them; an exact zero is -0.0 only when every term was -0.0 or there were none).\n"
    "dtype: the layout, 'float64' (69 limbs; takes every input) or 'float32' (12 limbs; float16, bfloat16 and "
    "float32 inputs only), and value()'s default type. Up to 2^64 terms.\n"
    "to_bytes()/from_bytes(): the C++ serialize() form (112 bytes for float32, 568 for float64; docs/PYTHON.md); "
    "pickling uses it.";

}  // namespace

void bind_exact_accumulator(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<exact_state>(m, "ExactAccumulator", class_doc)
      .def(
          "__init__", [](exact_state* self, nb::handle dtype) { new (self) exact_state(layout_of(dtype)); },
          "dtype"_a = nb::str("float64"))
      .def("add", &exact_state::add, "x"_a.none(),
           "Adds every element of x exactly (any shape; CPU arrays, or CUDA arrays: their exact state is computed on "
           "the "
           "GPU and the call waits for it). float64 data needs the float64 layout (TypeError).")
      .def("merge", &exact_state::merge, "other"_a,
           "Adds every term `other` holds: the state then equals one that accumulated both inputs. Same layout only "
           "(TypeError).")
      .def(
          "value", [](const exact_state& s, nb::handle dtype) { return value_of(s, dtype); }, "dtype"_a = nb::none(),
          "The exact sum rounded once to dtype (float16, bfloat16, float32 or float64; default: the layout's type), "
          "as a numpy scalar.")
      .def("to_bytes", &exact_state::to_bytes, "The state's byte form (docs/PYTHON.md): equal states, equal bytes.")
      .def_static(
          "from_bytes",
          [](nb::bytes data) {
            exact_state s(true);
            s.load(data);
            return s;
          },
          "data"_a, "The state a to_bytes() form holds; ValueError if the bytes are not a valid state.")
      .def_prop_ro("count", &exact_state::count, "The number of terms added (NaN, Inf and zero terms included).")
      .def_prop_ro("dtype", &exact_state::dtype, "The layout: 'float32' or 'float64'.")
      .def("__eq__",
           [](const exact_state& a, nb::handle b) {
             exact_state* other = nullptr;
             if (!nb::try_cast(b, other) || other == nullptr) return false;
             return a.to_bytes().equal(other->to_bytes());
           })
      .def("__getstate__", &exact_state::to_bytes)
      .def("__setstate__",
           [](exact_state& self, nb::bytes data) {
             new (&self) exact_state(true);
             self.load(data);
           })
      .def("__repr__", [](const exact_state& s) {
        return "detred.ExactAccumulator('" + std::string(s.dtype()) + "', count=" + std::to_string(s.count()) + ")";
      });
}

}  // namespace detred::python
