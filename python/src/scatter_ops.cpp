// detred.scatter_add, index_add, segment_sum: the exact scatter family (detred/scatter.hpp and its CUDA twin
// detred/cuda/scatter.hpp; docs/SCATTER.md). CPU arrays run the CPU twins; CUDA arrays run detred::cuda on the
// framework's current stream (cuda_backend.hpp), with the same bits.
#include <cstring>
#include <string>

#include "common.hpp"
#include "detred/scatter.hpp"
#ifdef DETRED_PY_HAS_CUDA
#include "cuda_backend.hpp"
#include "detred/cuda/scatter.hpp"
#endif

namespace detred::python {

namespace {

using namespace nb::literals;

template <class T>
using type_of = typename std::remove_cvref_t<T>::type;

constexpr const char* doc_scatter_add = R"(scatter_add(values, index, out)

out[index[i]] += values[i] for every i, in place; returns ``out``.

``values`` and ``index`` have the same number of elements (read flat, C order); ``out`` is a C-contiguous, writable
array of m elements (addressed flat). Types: float16, bfloat16 or float32 values into a float32 ``out``; float64
into float64; ``index`` int32 or int64. All three on one device (CPU, or one CUDA device).

Exact: each output element becomes the correctly rounded sum of all its contributions, its prior value included,
rounded once (round to nearest, ties to even). So the result does not depend on the order or multiplicity of the
indices, the thread count or the device: CPU and CUDA arrays give the same bits, on every run. NaN (detred's
canonical NaN) when a contribution is NaN or +Inf and -Inf meet; otherwise an infinity present gives that infinity;
a finite exact sum is +-Inf exactly when its magnitude reaches MAX + ulp(MAX)/2 (partial sums may overflow without
harm); an exact zero is -0.0 only when every contribution and the prior value are -0.0. At most 2^36 - 1
contributions a call.

Out-of-range indices (negative or >= m): on the CPU a ValueError naming the first, before ``out`` is written; on
CUDA arrays the contribution is skipped (raising would need a host synchronisation) and the other elements are
unaffected. CUDA calls run on the framework's current stream without synchronising the host.)";

constexpr const char* doc_index_add = R"(index_add(out, dim, index, source)

PyTorch's ``out.index_add_(dim, index, source)`` (alpha 1): out[index[i], ...] += source[i, ...] along dim 0, in
place; returns ``out``.

``out`` is [m, *rest] (C-contiguous, writable), ``source`` [n, *rest], ``index`` 1-d of n int32 or int64. ``dim``
must be 0 (or -out.ndim): rows are the unit. Types: float16, bfloat16 or float32 ``source`` into a float32 ``out``
(no rounding of the source: it is widened exactly); float64 into float64.

Exact, as ``scatter_add``: every output element becomes the correctly rounded sum of its contributions and its prior
value: the same bits in any order of the rows, on the CPU and on CUDA arrays, on every run. Out-of-range indices: a
ValueError on the CPU, skipped rows on CUDA arrays. CUDA calls run on the framework's current stream without
synchronising the host.)";

constexpr const char* doc_segment_sum = R"(segment_sum(values, offsets=None, *, keys=None, method="tree")

Sums of sorted segments of the 1-d ``values``, given either by CSR ``offsets`` (segments + 1 non-decreasing int32 or
int64 values: segment s is values[offsets[s]:offsets[s + 1]]; returns the segments' sums) or by ``keys`` (runs of
equal consecutive keys, int32 or int64, as many as values; returns ``(unique_keys, sums)``, one entry a run).
Results are float32 for float16, bfloat16 and float32 values, float64 for float64, of the input's framework and
device. An empty segment is -0.0.

method="tree": each segment is reduced in the canonical order of its own length (docs/ORDER.md), the bits of
``sum(values[a:b])`` and of ``sum(x, axis=-1)`` on a row of that length: batch-invariant (a segment's bits do not
depend on the other segments or its position), the same on the CPU and on CUDA arrays. method="exact": correctly
rounded. Offsets are checked on the CPU (ValueError), not on CUDA arrays. On CUDA arrays offsets= runs on the
framework's current stream without synchronising the host; keys= reads the number of runs back (one
synchronisation, as torch.unique_consecutive).)";

void require_same_device(const array_view& a, const array_view& b, const char* name) {
  if (a.device_type != b.device_type || (a.device_type == device_cuda && a.device_id != b.device_id))
    throw_value_error(name, "must be on the same device as the other arrays");
}

// The in-place output: contiguous and writable (a copy would drop the writes), not a JAX array (immutable).
void import_output(nb::handle out, array_view& v) {
  import_array(out, "out", v);
  if (!v.copy.empty()) throw_value_error("out", "must be C-contiguous: it is written in place");
  if (v.fw == framework::jax) throw_type_error("out", "must be a numpy, PyTorch or CuPy array: it is written in place");
  if (v.fw == framework::numpy && nb::hasattr(out, "flags") && !nb::cast<bool>(out.attr("flags").attr("writeable")))
    throw_value_error("out", "is read-only");
}

void require_index(const array_view& v, const char* name) {
  if (v.type != dtype_id::i32 && v.type != dtype_id::i64)
    throw_type_error(name, std::string("must be int32 or int64, got ") + dtype_name(v.type));
}

template <class T>
void require_output_type(const array_view& out) {
  constexpr dtype_id want = std::is_same_v<T, double> ? dtype_id::f64 : dtype_id::f32;
  if (out.type != want)
    throw_type_error("out", std::string("must be ") + dtype_name(want) + " for " + dtype_name(dtype_of<T>()) +
                                " values, got " + dtype_name(out.type));
}

template <class F>
decltype(auto) visit_index(const array_view& v, F&& f) {
  if (v.type == dtype_id::i32) return f(tag<std::int32_t>{});
  return f(tag<std::int64_t>{});
}

// scatter_add (d = 0: flat) and index_add (d >= 1: rows of d elements).
void scatter_rows(const array_view& src, const array_view& index, const array_view& out, std::uint64_t n,
                  std::uint64_t m, std::uint64_t d, bool rows, const char* function) {
  visit_float(
      src, function,
      [&](auto t) {
        using T = type_of<decltype(t)>;
        using R = scatter_output_t<T>;
        require_output_type<T>(out);
        visit_index(index, [&](auto i) {
          using I = type_of<decltype(i)>;
          const T* x = src.as<T>();
          const I* k = index.as<I>();
          R* y = static_cast<R*>(const_cast<void*>(out.data));
#ifdef DETRED_PY_HAS_CUDA
          if (src.device_type == device_cuda) {
            cuda_backend::call_site site(src);
            cuda_backend::with_workspace(site, [&](void* ws, std::size_t& bytes) {
              if (rows)
                cuda::index_add(ws, bytes, x, k, y, n, m, d, site.stream());
              else
                cuda::scatter_add(ws, bytes, x, k, y, n, m, site.stream());
            });
            site.finish();
            return;
          }
#endif
          run_maybe_released(n * (rows ? d : 1), [&] {
            if (rows)
              detred::index_add(x, k, y, n, m, d, module_cpu_options());
            else
              detred::scatter_add(x, k, y, n, m, module_cpu_options());
          });
        });
      },
      rows ? "source" : "values");
}

nb::object scatter_add_fn(nb::handle values, nb::handle index, nb::handle out) {
  array_view v, k, o;
  import_array(values, "values", v);
  import_array(index, "index", k);
  import_output(out, o);
  require_index(k, "index");
  require_same_device(v, k, "index");
  require_same_device(v, o, "out");
  if (v.size() != k.size())
    throw_value_error("index", "must have as many elements as values (" + std::to_string(v.size()) + "), got " +
                                   std::to_string(k.size()));
  scatter_rows(v, k, o, v.size(), o.size(), 1, false, "scatter_add");
  return nb::borrow(out);
}

nb::object index_add_fn(nb::handle out, nb::handle dim, nb::handle index, nb::handle source) {
  array_view o, k, s;
  import_output(out, o);
  import_array(index, "index", k);
  import_array(source, "source", s);
  require_index(k, "index");
  require_same_device(o, k, "index");
  require_same_device(o, s, "source");
  if (!PyLong_Check(dim.ptr()) || PyBool_Check(dim.ptr()))
    throw_type_error("dim", "expected an int, got " + nb::cast<std::string>(nb::type_name(dim.type())));
  const long given = PyLong_AsLong(dim.ptr());
  const int ndim = o.ndim == 0 ? 1 : o.ndim;
  if (given != 0 && given != -long(ndim))
    throw_value_error("dim", "only dim=0 is supported (rows of out), got " + std::to_string(given));
  if (k.ndim > 1) throw_value_error("index", "must be 1-d, got " + std::to_string(k.ndim) + " dimensions");
  if (s.ndim != o.ndim) throw_value_error("source", "must have as many dimensions as out");
  std::uint64_t d = 1;
  for (int a = 1; a < o.ndim; ++a) {
    if (s.shape[a] != o.shape[a])
      throw_value_error("source", "must match out in every dimension but dim 0 (dimension " + std::to_string(a) + ": " +
                                      std::to_string(s.shape[a]) + " vs " + std::to_string(o.shape[a]) + ")");
    d *= std::uint64_t(o.shape[a]);
  }
  const std::uint64_t n = s.ndim == 0 ? 1 : std::uint64_t(s.shape[0]);
  const std::uint64_t m = o.ndim == 0 ? 1 : std::uint64_t(o.shape[0]);
  if (k.size() != n)
    throw_value_error(
        "index", "must have one entry a row of source (" + std::to_string(n) + "), got " + std::to_string(k.size()));
  if (d == 0 || n == 0) return nb::borrow(out);
  scatter_rows(s, k, o, n, m, d, true, "index_add");
  return nb::borrow(out);
}

nb::object segment_sum_fn(nb::handle values, nb::handle offsets, nb::handle keys, nb::handle method_arg) {
  const sum_method method = parse_method(method_arg);
  if (method != sum_method::tree && method != sum_method::exact)
    throw_value_error("method", "segment_sum takes method 'tree' (canonical) or 'exact'");
  if (offsets.is_none() == keys.is_none()) throw_value_error("offsets", "give exactly one of offsets= and keys=");
  const bool by_keys = !keys.is_none();
  const char* bounds_name = by_keys ? "keys" : "offsets";
  array_view v, b;
  import_array(values, "values", v);
  import_array(by_keys ? keys : offsets, bounds_name, b);
  require_index(b, bounds_name);
  require_same_device(v, b, bounds_name);
  if (v.ndim > 1) throw_value_error("values", "must be 1-d");
  if (b.ndim > 1) throw_value_error(bounds_name, "must be 1-d");
  const std::uint64_t n = v.size();
  if (by_keys && b.size() != n)
    throw_value_error(
        "keys", "must have as many elements as values (" + std::to_string(n) + "), got " + std::to_string(b.size()));
  if (!by_keys && b.size() == 0) throw_value_error("offsets", "must hold at least one value (segments + 1)");
  const std::uint64_t segments = by_keys ? n : b.size() - 1;
  return visit_float(
      v, "segment_sum",
      [&](auto t) -> nb::object {
        using T = type_of<decltype(t)>;
        using R = scatter_output_t<T>;
        constexpr dtype_id out_type = dtype_of<R>();
        return visit_index(b, [&](auto i) -> nb::object {
          using I = type_of<decltype(i)>;
          const T* x = v.as<T>();
          const I* k = b.as<I>();
          const std::int64_t shape[1] = {std::int64_t(segments)};
#ifdef DETRED_PY_HAS_CUDA
          if (v.device_type == device_cuda) {
            cuda_backend::call_site site(v);
            // The values count: the mean segment length, which chooses the canonical kernel (never the result).
            const cuda::segment_options options{method, 0, n};
            cuda_backend::device_output sums(site, v, out_type, 1, shape);
            if (!by_keys) {
              cuda_backend::with_workspace(site, [&](void* ws, std::size_t& bytes) {
                cuda::segment_sum(ws, bytes, x, k, sums.template as<R>(), segments, site.stream(), options);
              });
              site.finish();
              return sums.release(site);
            }
            cuda_backend::device_output unique(site, v, b.type, 1, shape);
            std::size_t bytes = 0;
            cuda::reduce_by_key(nullptr, bytes, k, x, unique.template as<I>(), sums.template as<R>(), nullptr, n,
                                site.stream(), options);
            cuda_backend::workspace ws(site, bytes + 256);
            auto* count = reinterpret_cast<std::uint64_t*>(static_cast<unsigned char*>(ws.data()) + bytes);
            cuda::reduce_by_key(ws.data(), bytes, k, x, unique.template as<I>(), sums.template as<R>(), count, n,
                                site.stream(), options);
            std::uint64_t runs = 0;
            cuda_backend::check(cudaMemcpyAsync(&runs, count, sizeof runs, cudaMemcpyDeviceToHost, site.stream()),
                                "cudaMemcpyAsync (run count)");
            cuda_backend::check(cudaStreamSynchronize(site.stream()), "cudaStreamSynchronize (run count)");
            site.finish();
            nb::object u = unique.release(site), s = sums.release(site);
            const nb::object first = nb::steal(PySlice_New(nullptr, nb::int_(runs).ptr(), nullptr));
            return nb::make_tuple(u[first], s[first]);
          }
#endif
          if (!by_keys) {
            result_buffer sums(out_type, 1, shape);
            run_maybe_released(
                n, [&] { detred::segment_sum(x, k, sums.as<R>(), segments, method, module_cpu_options()); });
            return export_result(std::move(sums), v);
          }
          std::uint64_t runs = 0;
          result_buffer unique(b.type, 1, shape), sums(out_type, 1, shape);
          run_maybe_released(n, [&] {
            detred::reduce_by_key(k, x, unique.as<I>(), sums.as<R>(), &runs, n, method, module_cpu_options());
          });
          unique.shape[0] = std::int64_t(runs);
          unique.count = std::size_t(runs);
          sums.shape[0] = std::int64_t(runs);
          sums.count = std::size_t(runs);
          return nb::make_tuple(export_result(std::move(unique), v), export_result(std::move(sums), v));
        });
      },
      "values");
}

}  // namespace

void bind_scatter(nb::module_& m) {
  m.def("scatter_add", &scatter_add_fn, "values"_a, "index"_a, "out"_a, doc_scatter_add);
  m.def("index_add", &index_add_fn, "out"_a, "dim"_a, "index"_a, "source"_a, doc_index_add);
  m.def("segment_sum", &segment_sum_fn, "values"_a, "offsets"_a = nb::none(), nb::kw_only(), "keys"_a = nb::none(),
        "method"_a = "tree", doc_segment_sum);
}

}  // namespace detred::python
