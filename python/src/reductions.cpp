// The numpy-like reductions: sum, prod, min, max, argmin, argmax, dot, norm, logsumexp, mean, var, cumsum, each a
// thin layer over the C++ CPU API (detred/reduce.hpp, blas.hpp, scan.hpp, rows.hpp). The contracts are the C++
// headers'; the docstrings (docstrings.hpp) repeat them.
#include <limits>
#include <vector>

#include "common.hpp"
#include "cuda_reductions.hpp"
#include "detred/blas.hpp"
#include "detred/reduce.hpp"
#include "detred/rows.hpp"
#include "detred/scan.hpp"
#include "docstrings.hpp"
#include "reduction_layout.hpp"

namespace detred::python {

layout parse_axis(nb::handle axis, const array_view& v) {
  layout l;
  if (axis.is_none() || v.ndim <= 1) {
    if (!axis.is_none()) {
      if (!PyLong_Check(axis.ptr()) || PyBool_Check(axis.ptr()))
        throw_type_error("axis", "expected None or an int, got " + nb::cast<std::string>(nb::type_name(axis.type())));
      const long a = PyLong_AsLong(axis.ptr());
      if (v.ndim == 0 || a < -1 || a > 0)
        throw_value_error("axis", std::to_string(a) + " is out of range for a " + std::to_string(v.ndim) + "-d array");
    }
    l.cols = v.size();
    return l;
  }
  if (!PyLong_Check(axis.ptr()) || PyBool_Check(axis.ptr()))
    throw_type_error("axis", "expected None or an int, got " + nb::cast<std::string>(nb::type_name(axis.type())));
  long a = PyLong_AsLong(axis.ptr());
  if (a == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw_value_error("axis", "out of range");
  }
  const long given = a;
  if (a < 0) a += v.ndim;
  if (a < 0 || a >= v.ndim)
    throw_value_error("axis", std::to_string(given) + " is out of range for a " + std::to_string(v.ndim) + "-d array");
  if (a == v.ndim - 1) {
    l.kind = layout::last;
    l.cols = std::uint64_t(v.shape[v.ndim - 1]);
    l.rows = 1;
    for (int d = 0; d + 1 < v.ndim; ++d) l.rows *= std::uint64_t(v.shape[d]);
    l.out_ndim = v.ndim - 1;
    for (int d = 0; d + 1 < v.ndim; ++d) l.out_shape[d] = v.shape[d];
  } else if (a == 0) {
    l.kind = layout::first;
    l.rows = std::uint64_t(v.shape[0]);
    l.cols = 1;
    for (int d = 1; d < v.ndim; ++d) l.cols *= std::uint64_t(v.shape[d]);
    l.out_ndim = v.ndim - 1;
    for (int d = 1; d < v.ndim; ++d) l.out_shape[d - 1] = v.shape[d];
  } else {
    throw_value_error("axis", "only None, 0 and -1 (the last axis) are supported, got " + std::to_string(given) +
                                  " for a " + std::to_string(v.ndim) + "-d array");
  }
  return l;
}

namespace {

// The slices one output reduces, each as a contiguous run of `len` elements handed to f(data, len) -> R.
// Columns are gathered, 16 at a time, into contiguous buffers: f sees the same values in the same order as for the
// column alone, so every output is f of its own slice (batch invariance by construction).
template <class R, class T, class F>
void reduce_layout(const T* x, const layout& l, R* out, const F& f) {
  switch (l.kind) {
    case layout::all:
      out[0] = f(x, l.cols);
      return;
    case layout::last:
      for (std::uint64_t r = 0; r < l.rows; ++r) out[r] = f(x + r * l.cols, l.cols);
      return;
    case layout::first: {
      constexpr std::uint64_t block = 16;
      std::vector<T> buffer(l.rows * block);
      for (std::uint64_t j0 = 0; j0 < l.cols; j0 += block) {
        const std::uint64_t width = l.cols - j0 < block ? l.cols - j0 : block;
        for (std::uint64_t i = 0; i < l.rows; ++i)
          for (std::uint64_t j = 0; j < width; ++j) buffer[j * l.rows + i] = x[i * l.cols + j0 + j];
        for (std::uint64_t j = 0; j < width; ++j) out[j0 + j] = f(buffer.data() + j * l.rows, l.rows);
      }
      return;
    }
  }
}

// ---- sum ------------------------------------------------------------------------------------------------------------
nb::object sum_fn(nb::handle x, nb::handle axis, nb::handle method, nb::handle dtype) {
  array_view v;
  import_array(x, "x", v);
  const sum_method m = parse_method(method);
  const layout l = parse_axis(axis, v);
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) {
    const dtype_id acc = visit_float(v, "sum", [&](auto) { return parse_accumulation(dtype, v.type, "sum"); });
    return cuda_reductions::sum(v, l, m, acc);
  }
#endif
  return visit_float(v, "sum", [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    const dtype_id acc = parse_accumulation(dtype, v.type, "sum");
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = typename std::remove_cvref_t<decltype(a)>::type;
      if constexpr (!accumulable<T, A>) {
        throw_type_error("dtype", "narrowing accumulation");
      } else {
        result_buffer r(acc, l.out_ndim, l.out_shape);
        A* out = r.as<A>();
        const T* p = v.as<T>();
        const cpu_options options = module_cpu_options();
        run_maybe_released(v.size(), [&] {
          // Rows in float with tree / tree_neumaier: the computation of detred::row_sum (rows.hpp), the twin of
          // detred::cuda's row_sum: each row's canonical root from its own elements. Every other case is detred::sum
          // of the slice; the two agree bit for bit (python/tests/test_sum.py).
          if constexpr (std::is_same_v<A, float>) {
            if (l.kind == layout::last && m == sum_method::tree) {
              using Acc = plain_accumulator<float>;
              for (std::uint64_t r = 0; r < l.rows; ++r)
                out[r] =
                    canonicalize_nan(canonical_row_root<Acc>(p + r * l.cols, l.cols, widened_leaf<Acc>{}).result());
              return;
            }
            if (l.kind == layout::last && m == sum_method::tree_neumaier) {
              using Acc = neumaier_accumulator<float>;
              for (std::uint64_t r = 0; r < l.rows; ++r)
                out[r] =
                    canonicalize_nan(canonical_row_root<Acc>(p + r * l.cols, l.cols, widened_leaf<Acc>{}).result());
              return;
            }
            // Columns in float with tree: detred::column_sum, the twin of cuda::column_sum.
            if constexpr (!std::is_same_v<T, double>) {
              if (l.kind == layout::first && m == sum_method::tree) {
                detred::column_sum(p, out, dense_rows(l.rows, l.cols));
                return;
              }
            }
          }
          reduce_layout(p, l, out, [&](const T* s, std::uint64_t n) { return detred::sum<A>(s, n, m, options); });
        });
        return finish(std::move(r), v);
      }
    });
  });
}

// ---- prod, norm -----------------------------------------------------------------------------------------------------
template <bool Norm>
nb::object prod_or_norm_fn(nb::handle x, nb::handle axis, nb::handle dtype) {
  const char* name = Norm ? "norm" : "prod";
  array_view v;
  import_array(x, "x", v);
  const layout l = parse_axis(axis, v);
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) {
    const dtype_id acc = visit_float(v, name, [&](auto) { return parse_accumulation(dtype, v.type, name); });
    return cuda_reductions::prod_or_norm(v, l, acc, Norm);
  }
#endif
  return visit_float(v, name, [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    const dtype_id acc = parse_accumulation(dtype, v.type, name);
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = typename std::remove_cvref_t<decltype(a)>::type;
      if constexpr (!accumulable<T, A>) {
        throw_type_error("dtype", "narrowing accumulation");
      } else {
        result_buffer r(acc, l.out_ndim, l.out_shape);
        const cpu_options options = module_cpu_options();
        run_maybe_released(v.size(), [&] {
          reduce_layout(v.as<T>(), l, r.as<A>(), [&](const T* s, std::uint64_t n) {
            if constexpr (Norm)
              return detred::nrm2<A>(s, n, options);
            else
              return detred::product<A>(s, n, options);
          });
        });
        return finish(std::move(r), v);
      }
    });
  });
}

// ---- min, max, argmin, argmax
// -----------------------------------------------------------------------------------------
template <class F>
decltype(auto) visit_extremum(const array_view& v, F&& f) {
  switch (v.type) {
    case dtype_id::i32:
      return f(tag<std::int32_t>{});
    case dtype_id::i64:
      return f(tag<std::int64_t>{});
    default:
      return visit_float(v, "min", f);
  }
}

template <extremum E>
nb::object extremum_fn(nb::handle x, nb::handle axis) {
  constexpr const char* name = E == extremum::min      ? "min"
                               : E == extremum::max    ? "max"
                               : E == extremum::argmin ? "argmin"
                                                       : "argmax";
  array_view v;
  import_array(x, "x", v);
  const layout l = parse_axis(axis, v);
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) return cuda_reductions::extremum_of(v, l, E);
#endif
  return visit_extremum(v, [&](auto t) -> nb::object {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    if constexpr (E == extremum::argmin || E == extremum::argmax) {
      const std::uint64_t outputs = l.kind == layout::all ? 1 : l.kind == layout::last ? l.rows : l.cols;
      if (reduced_length(l) == 0 && outputs > 0)
        throw_value_error("x", std::string(name) + " of an empty array (or of empty slices): no index to return");
      result_buffer r(dtype_id::i64, l.out_ndim, l.out_shape);
      run_maybe_released(v.size(), [&] {
        reduce_layout(v.as<T>(), l, r.as<std::int64_t>(), [](const T* s, std::uint64_t n) {
          return std::int64_t(E == extremum::argmin ? detred::argmin(s, n) : detred::argmax(s, n));
        });
      });
      return finish(std::move(r), v);
    } else {
      result_buffer r(v.type, l.out_ndim, l.out_shape);
      run_maybe_released(v.size(), [&] {
        reduce_layout(v.as<T>(), l, r.as<T>(), [](const T* s, std::uint64_t n) {
          return E == extremum::min ? detred::min(s, n) : detred::max(s, n);
        });
      });
      return finish(std::move(r), v);
    }
  });
}

// ---- dot ------------------------------------------------------------------------------------------------------------
nb::object dot_fn(nb::handle x, nb::handle y, nb::handle dtype) {
  array_view v, w;
  import_array(x, "x", v);
  import_array(y, "y", w);
  if (v.ndim != 1) throw_value_error("x", "dot takes 1-d arrays, got " + std::to_string(v.ndim) + "-d");
  if (w.ndim != 1) throw_value_error("y", "dot takes 1-d arrays, got " + std::to_string(w.ndim) + "-d");
  if (v.type != w.type)
    throw_type_error("y", std::string("dtype ") + dtype_name(w.type) + " differs from x's " + dtype_name(v.type));
  if (v.shape[0] != w.shape[0])
    throw_value_error("y", "length " + std::to_string(w.shape[0]) + " differs from x's " + std::to_string(v.shape[0]));
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda || w.device_type == device_cuda) {
    if (v.device_type != device_cuda)
      throw_value_error("x", "is on the CPU and y on a CUDA device: pass both on one device");
    const dtype_id acc = visit_float(v, "dot", [&](auto) { return parse_accumulation(dtype, v.type, "dot"); });
    return cuda_reductions::dot(v, w, acc);
  }
#endif
  return visit_float(v, "dot", [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    const dtype_id acc = parse_accumulation(dtype, v.type, "dot");
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = typename std::remove_cvref_t<decltype(a)>::type;
      if constexpr (!accumulable<T, A>) {
        throw_type_error("dtype", "narrowing accumulation");
      } else {
        result_buffer r(acc, 0, nullptr);
        const cpu_options options = module_cpu_options();
        run_maybe_released(v.size(), [&] { *r.as<A>() = detred::dot<A>(v.as<T>(), w.as<T>(), v.size(), options); });
        return finish(std::move(r), v);
      }
    });
  });
}

// ---- logsumexp, mean, var: canonical roots of rows.hpp's accumulators -----------------------------------------------
template <row_statistic S>
nb::object statistic_fn(nb::handle x, nb::handle axis, nb::handle dtype, std::int64_t ddof) {
  constexpr const char* name = S == row_statistic::logsumexp ? "logsumexp" : S == row_statistic::mean ? "mean" : "var";
  array_view v;
  import_array(x, "x", v);
  const layout l = parse_axis(axis, v);
  if (ddof < 0) throw_value_error("ddof", "must be >= 0, got " + std::to_string(ddof));
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) {
    const dtype_id acc = visit_float(v, name, [&](auto) { return parse_accumulation(dtype, v.type, name); });
    if (S != row_statistic::logsumexp && reduced_length(l) > (std::uint64_t{1} << 24))
      throw_value_error("x", std::string(name) +
                                 " in float32 counts exactly to 2^24 elements a slice; pass "
                                 "dtype=float64 for longer ones");
    return cuda_reductions::statistic(v, l, acc, S, ddof);
  }
#endif
  return visit_float(v, name, [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    const dtype_id acc = parse_accumulation(dtype, v.type, name);
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = typename std::remove_cvref_t<decltype(a)>::type;
      if constexpr (!accumulable<T, A>) {
        throw_type_error("dtype", "narrowing accumulation");
      } else {
        if (S != row_statistic::logsumexp && std::is_same_v<A, float> && reduced_length(l) > (std::uint64_t{1} << 24))
          throw_value_error("x", std::string(name) +
                                     " in float32 counts exactly to 2^24 elements a slice; pass "
                                     "dtype=float64 for longer ones");
        result_buffer r(acc, l.out_ndim, l.out_shape);
        run_maybe_released(v.size(), [&] {
          reduce_layout(v.as<T>(), l, r.as<A>(), [&](const T* s, std::uint64_t n) -> A {
            if constexpr (S == row_statistic::logsumexp) {
              return canonical_row_logsumexp<A>(s, n).result();
            } else {
              using Acc = welford_accumulator<A>;
              const Acc root = canonical_row_root<Acc>(s, n, widened_leaf<Acc>{});
              if constexpr (S == row_statistic::mean) {
                return root.result_mean();
              } else {
                if (ddof == 0) return root.result_variance();
                if (std::int64_t(n) - ddof <= 0) return canonical_nan<A>();
                return canonicalize_nan(A(root.m2 / A(std::int64_t(n) - ddof)));
              }
            }
          });
        });
        return finish(std::move(r), v);
      }
    });
  });
}

// ---- cumsum ---------------------------------------------------------------------------------------------------------
nb::object cumsum_fn(nb::handle x, bool exclusive, nb::handle dtype) {
  array_view v;
  import_array(x, "x", v);
#ifdef DETRED_PY_HAS_CUDA
  if (v.device_type == device_cuda) {
    const dtype_id acc = visit_float(v, "cumsum", [&](auto) { return parse_accumulation(dtype, v.type, "cumsum"); });
    return cuda_reductions::cumsum(v, exclusive, acc);
  }
#endif
  return visit_float(v, "cumsum", [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    const dtype_id acc = parse_accumulation(dtype, v.type, "cumsum");
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = typename std::remove_cvref_t<decltype(a)>::type;
      if constexpr (!accumulable<T, A>) {
        throw_type_error("dtype", "narrowing accumulation");
      } else {
        const std::int64_t n = std::int64_t(v.size());
        result_buffer r(acc, 1, &n);
        const cpu_options options = module_cpu_options();
        run_maybe_released(v.size(), [&] {
          if (exclusive)
            exclusive_sum_scan<A>(v.as<T>(), r.as<A>(), v.size(), options);
          else
            inclusive_sum_scan<A>(v.as<T>(), r.as<A>(), v.size(), options);
        });
        return finish(std::move(r), v);
      }
    });
  });
}

}  // namespace

void bind_reductions(nb::module_& m) {
  using namespace nb::literals;
  const nb::str tree("tree");
  m.def("sum", &sum_fn, "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(), "method"_a = tree, "dtype"_a = nb::none(),
        doc::sum);
  m.def("prod", &prod_or_norm_fn<false>, "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(),
        doc::prod);
  m.def("norm", &prod_or_norm_fn<true>, "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(),
        doc::norm);
  m.def("min", &extremum_fn<extremum::min>, "x"_a.none(), "axis"_a = nb::none(), doc::min);
  m.def("max", &extremum_fn<extremum::max>, "x"_a.none(), "axis"_a = nb::none(), doc::max);
  m.def("argmin", &extremum_fn<extremum::argmin>, "x"_a.none(), "axis"_a = nb::none(), doc::argmin);
  m.def("argmax", &extremum_fn<extremum::argmax>, "x"_a.none(), "axis"_a = nb::none(), doc::argmax);
  m.def("dot", &dot_fn, "x"_a.none(), "y"_a.none(), nb::kw_only(), "dtype"_a = nb::none(), doc::dot);
  m.def(
      "logsumexp",
      [](nb::handle x, nb::handle axis, nb::handle dtype) {
        return statistic_fn<row_statistic::logsumexp>(x, axis, dtype, 0);
      },
      "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(), doc::logsumexp);
  m.def(
      "mean",
      [](nb::handle x, nb::handle axis, nb::handle dtype) {
        return statistic_fn<row_statistic::mean>(x, axis, dtype, 0);
      },
      "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(), doc::mean);
  m.def("var", &statistic_fn<row_statistic::var>, "x"_a.none(), "axis"_a = nb::none(), nb::kw_only(),
        "dtype"_a = nb::none(), "ddof"_a = 0, doc::var);
  m.def("cumsum", &cumsum_fn, "x"_a.none(), nb::kw_only(), "exclusive"_a = false, "dtype"_a = nb::none(), doc::cumsum);
}

}  // namespace detred::python
