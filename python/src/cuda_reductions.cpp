#include "cuda_reductions.hpp"

#include <cstring>
#include <string>

#include "cuda_backend.hpp"
#include "detred/cuda/blas.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/scan.hpp"
#include "detred/cuda/sum.hpp"

namespace detred::python::cuda_reductions {

namespace {

using cuda_backend::call_site;
using cuda_backend::check;
using cuda_backend::device_output;
using cuda_backend::workspace;

template <class T>
using type_of = typename std::remove_cvref_t<T>::type;

// The slices of a layout as contiguous device runs, one call of f(slice, length, output index) each, in output order
// on the call's stream. Columns (layout::first) are gathered into `scratch` first (cudaMemcpy2DAsync, rows elements),
// so f sees each column's values in row order, as the CPU backend's per-column call does.
template <class T, class F>
void for_each_slice(const call_site& site, const T* x, const layout& l, F&& f) {
  switch (l.kind) {
    case layout::all:
      f(x, l.cols, std::uint64_t{0});
      return;
    case layout::last:
      for (std::uint64_t r = 0; r < l.rows; ++r) f(x + r * l.cols, l.cols, r);
      return;
    case layout::first: {
      workspace scratch(site, l.rows * sizeof(T));
      T* column = static_cast<T*>(scratch.data());
      for (std::uint64_t j = 0; j < l.cols; ++j) {
        if (l.rows > 0)
          check(cudaMemcpy2DAsync(column, sizeof(T), x + j, l.cols * sizeof(T), sizeof(T), l.rows,
                                  cudaMemcpyDeviceToDevice, site.stream()),
                "cudaMemcpy2DAsync (column gather)");
        f(static_cast<const T*>(column), l.rows, j);
      }
      return;
    }
  }
}

// x seen as [rows x cols] transposed into [cols x rows] (one strided copy per column), for the row kernels on
// columns.
template <class T>
void transpose_into(const call_site& site, const T* x, std::uint64_t rows, std::uint64_t cols, T* out) {
  if (rows == 0) return;
  for (std::uint64_t j = 0; j < cols; ++j)
    check(cudaMemcpy2DAsync(out + j * rows, sizeof(T), x + j, cols * sizeof(T), sizeof(T), rows,
                            cudaMemcpyDeviceToDevice, site.stream()),
          "cudaMemcpy2DAsync (transpose)");
}

// One device call per slice, with one workspace sized by `query(len)` for the common slice length.
template <class T, class Query, class Call>
void per_slice(const call_site& site, const T* x, const layout& l, Query&& query, Call&& call) {
  std::size_t bytes = 0;
  query(reduced_length(l), bytes);
  workspace ws(site, bytes);
  std::size_t have = ws.size();
  for_each_slice(site, x, l, [&](const T* s, std::uint64_t n, std::uint64_t i) { call(ws.data(), have, s, n, i); });
}

template <class F>
decltype(auto) visit_accumulated(const array_view& v, dtype_id acc, const char* function, F&& f) {
  return visit_float(v, function, [&](auto t) -> nb::object {
    using T = type_of<decltype(t)>;
    return visit_accumulation(acc, [&](auto a) -> nb::object {
      using A = type_of<decltype(a)>;
      if constexpr (!accumulable<T, A>)
        throw_type_error("dtype", "narrowing accumulation");
      else
        return f(tag<T>{}, tag<A>{});
    });
  });
}

nb::object finished(device_output& out, const call_site& site) {
  site.finish();
  return out.release(site);
}

}  // namespace

nb::object sum(const array_view& v, const layout& l, sum_method method, dtype_id acc) {
  if (method != sum_method::tree && method != sum_method::tree_neumaier && method != sum_method::exact)
    throw_value_error("method", std::string("'") + std::string(to_string(method)) +
                                    "' is sequential by definition and has no GPU form; on CUDA arrays use tree, "
                                    "tree_neumaier or exact (or move the array to the CPU)");
  return visit_accumulated(v, acc, "sum", [&](auto t, auto a) -> nb::object {
    using T = type_of<decltype(t)>;
    using A = type_of<decltype(a)>;
    call_site site(v);
    device_output out(site, v, acc, l.out_ndim, l.out_shape);
    const T* x = v.as<T>();
    A* y = out.as<A>();
    if constexpr (std::is_same_v<A, float> && !std::is_same_v<T, double>) {
      if (l.kind == layout::last && method != sum_method::exact) {
        const row_shape shape = dense_rows(l.rows, l.cols);
        const cuda::row_options options{method};
        cuda_backend::with_workspace(
            site, [&](void* ws, std::size_t& bytes) { cuda::row_sum(ws, bytes, x, y, shape, site.stream(), options); });
        return finished(out, site);
      }
      if (l.kind == layout::first && method == sum_method::tree) {
        const row_shape shape = dense_rows(l.rows, l.cols);
        cuda_backend::with_workspace(
            site, [&](void* ws, std::size_t& bytes) { cuda::column_sum(ws, bytes, x, y, shape, site.stream()); });
        return finished(out, site);
      }
    }
    const cuda::sum_options options{method};
    per_slice(
        site, x, l,
        [&](std::uint64_t n, std::size_t& bytes) { cuda::sum<A>(nullptr, bytes, x, y, n, site.stream(), options); },
        [&](void* ws, std::size_t& bytes, const T* s, std::uint64_t n, std::uint64_t i) {
          cuda::sum<A>(ws, bytes, s, y + i, n, site.stream(), options);
        });
    return finished(out, site);
  });
}

nb::object prod_or_norm(const array_view& v, const layout& l, dtype_id acc, bool norm) {
  const char* name = norm ? "norm" : "prod";
  return visit_accumulated(v, acc, name, [&](auto t, auto a) -> nb::object {
    using T = type_of<decltype(t)>;
    using A = type_of<decltype(a)>;
    call_site site(v);
    device_output out(site, v, acc, l.out_ndim, l.out_shape);
    const T* x = v.as<T>();
    A* y = out.as<A>();
    auto call = [&](void* ws, std::size_t& bytes, const T* s, std::uint64_t n, A* o) {
      if (norm)
        cuda::nrm2<A>(ws, bytes, s, o, n, site.stream());
      else
        cuda::product<A>(ws, bytes, s, o, n, site.stream());
    };
    per_slice(
        site, x, l, [&](std::uint64_t n, std::size_t& bytes) { call(nullptr, bytes, x, n, y); },
        [&](void* ws, std::size_t& bytes, const T* s, std::uint64_t n, std::uint64_t i) {
          call(ws, bytes, s, n, y + i);
        });
    return finished(out, site);
  });
}

nb::object extremum_of(const array_view& v, const layout& l, extremum which) {
  const bool index = which == extremum::argmin || which == extremum::argmax;
  const char* name = which == extremum::min      ? "min"
                     : which == extremum::max    ? "max"
                     : which == extremum::argmin ? "argmin"
                                                 : "argmax";
  if (index && reduced_length(l) == 0 && output_count(l) > 0)
    throw_value_error("x", std::string(name) + " of an empty array (or of empty slices): no index to return");
  auto run = [&](auto t) -> nb::object {
    using T = type_of<decltype(t)>;
    call_site site(v);
    device_output out(site, v, index ? dtype_id::i64 : v.type, l.out_ndim, l.out_shape);
    const T* x = v.as<T>();
    auto call = [&](void* ws, std::size_t& bytes, const T* s, std::uint64_t n, std::uint64_t i) {
      switch (which) {
        case extremum::min:
          cuda::min(ws, bytes, s, out.as<T>() + i, n, site.stream());
          break;
        case extremum::max:
          cuda::max(ws, bytes, s, out.as<T>() + i, n, site.stream());
          break;
        case extremum::argmin:  // uint64 indices into the int64 output: the same bits below 2^63
          cuda::argmin(ws, bytes, s, out.as<std::uint64_t>() + i, n, site.stream());
          break;
        case extremum::argmax:
          cuda::argmax(ws, bytes, s, out.as<std::uint64_t>() + i, n, site.stream());
          break;
      }
    };
    per_slice(
        site, x, l, [&](std::uint64_t n, std::size_t& bytes) { call(nullptr, bytes, x, n, 0); }, call);
    return finished(out, site);
  };
  switch (v.type) {
    case dtype_id::i32:
      return run(tag<std::int32_t>{});
    case dtype_id::i64:
      return run(tag<std::int64_t>{});
    default:
      return visit_float(v, name, run);
  }
}

nb::object dot(const array_view& x, const array_view& y, dtype_id acc) {
  if (y.device_type != device_cuda || y.device_id != x.device_id)
    throw_value_error("y", "must be on the same device as x (CUDA device " + std::to_string(x.device_id) + ")");
  return visit_accumulated(x, acc, "dot", [&](auto t, auto a) -> nb::object {
    using T = type_of<decltype(t)>;
    using A = type_of<decltype(a)>;
    call_site site(x);
    device_output out(site, x, acc, 0, nullptr);
    cuda_backend::with_workspace(site, [&](void* ws, std::size_t& bytes) {
      cuda::dot<A>(ws, bytes, x.as<T>(), y.as<T>(), out.as<A>(), x.size(), site.stream());
    });
    return finished(out, site);
  });
}

nb::object statistic(const array_view& v, const layout& l, dtype_id acc, row_statistic which, std::int64_t ddof) {
  const char* name = which == row_statistic::logsumexp ? "logsumexp" : which == row_statistic::mean ? "mean" : "var";
  if (v.type == dtype_id::f64 || acc != dtype_id::f32)
    throw_type_error(v.type == dtype_id::f64 ? "x" : "dtype",
                     std::string(name) +
                         " on CUDA arrays runs on the GPU row family: float16, bfloat16 or float32 inputs with "
                         "float32 accumulation (the CPU backend also takes float64)");
  if (which == row_statistic::var && ddof != 0)
    throw_value_error("ddof",
                      "var on CUDA arrays is the population variance (ddof=0) only, got " + std::to_string(ddof));
  return visit_float(v, name, [&](auto t) -> nb::object {
    using T = type_of<decltype(t)>;
    if constexpr (std::is_same_v<T, double>) {
      return nb::none();  // refused above
    } else {
      // The rows the row kernel sees: the whole array as one row, the rows as they are, or the columns transposed.
      const std::uint64_t rows = output_count(l), cols = reduced_length(l);
      if (cols >= (std::uint64_t{1} << 32))
        throw_value_error("x", std::string(name) + " on CUDA arrays takes slices shorter than 2^32 elements");
      call_site site(v);
      device_output out(site, v, dtype_id::f32, l.out_ndim, l.out_shape);
      const T* x = v.as<T>();
      std::unique_ptr<workspace> transposed;
      if (l.kind == layout::first) {
        transposed = std::make_unique<workspace>(site, v.size() * sizeof(T));
        transpose_into(site, x, l.rows, l.cols, static_cast<T*>(transposed->data()));
        x = static_cast<const T*>(transposed->data());
      }
      const row_shape shape = dense_rows(rows, cols);
      float* y = out.as<float>();
      if (which == row_statistic::logsumexp) {
        cuda_backend::with_workspace(
            site, [&](void* ws, std::size_t& bytes) { cuda::row_logsumexp(ws, bytes, x, y, shape, site.stream()); });
      } else {
        workspace unused(site, rows * sizeof(float));  // the statistic not asked for
        float* mean = which == row_statistic::mean ? y : static_cast<float*>(unused.data());
        float* variance = which == row_statistic::mean ? static_cast<float*>(unused.data()) : y;
        cuda_backend::with_workspace(site, [&](void* ws, std::size_t& bytes) {
          cuda::row_mean_variance(ws, bytes, x, mean, variance, shape, site.stream());
        });
      }
      return finished(out, site);
    }
  });
}

nb::object cumsum(const array_view& v, bool exclusive, dtype_id acc) {
  return visit_accumulated(v, acc, "cumsum", [&](auto t, auto a) -> nb::object {
    using T = type_of<decltype(t)>;
    using A = type_of<decltype(a)>;
    if constexpr (!cuda::detail::sum_scan_pair<T, A>) {
      throw_type_error("dtype",
                       "cumsum of float16/bfloat16 CUDA arrays accumulates in float32 (the GPU scans' "
                       "type pairs); pass dtype=None or float32");
      return nb::none();
    } else {
      const std::int64_t n = std::int64_t(v.size());
      call_site site(v);
      device_output out(site, v, acc, 1, &n);
      cuda_backend::with_workspace(site, [&](void* ws, std::size_t& bytes) {
        if (exclusive)
          cuda::exclusive_sum_scan<A>(ws, bytes, v.as<T>(), out.as<A>(), std::uint64_t(n), site.stream());
        else
          cuda::inclusive_sum_scan<A>(ws, bytes, v.as<T>(), out.as<A>(), std::uint64_t(n), site.stream());
      });
      return finished(out, site);
    }
  });
}

}  // namespace detred::python::cuda_reductions
