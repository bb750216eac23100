// detred._detred._rows: the batch-invariant row kernels (detred/rows.hpp, detred/norms.hpp and their CUDA twins
// detred/cuda/rows.hpp, detred/cuda/norms.hpp) as low-level calls on caller-allocated outputs, for detred.torch's
// custom ops and aten overrides (python/detred/torch/).
//
// Every call reads its arrays in place (CPU arrays through DLPack, PyTorch and CuPy CUDA arrays by pointer), writes
// into the outputs it is given and returns None. An input of last dimension C is a batch of rows of C elements (the
// leading dimensions are the batch); per-row statistics are float32 arrays of one element per row, in any shape. CPU
// arrays run the CPU twins; CUDA arrays run detred::cuda on the framework's current stream, without a host
// synchronisation (the outputs are the caller's: nothing to wait for). Both give the same bits, and every row's
// outputs are batch-invariant (docs/PYTHON.md, "detred.torch"). Inputs float16, bfloat16 or float32; float32
// accumulation. TypeError for a wrong dtype, ValueError for a wrong shape, device or layout, each naming the argument.
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "detred/norms.hpp"
#include "detred/rows.hpp"

#ifdef DETRED_PY_HAS_CUDA
#include "cuda_backend.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/rows.hpp"
#endif

namespace detred::python {

namespace {

template <class T>
using type_of = typename std::remove_cvref_t<T>::type;

// The arguments of one call: imported, checked against the first input (device, dtype, element count), and the
// batch of rows the first input holds.
class row_call {
 public:
  row_call(nb::handle x, const char* name) : name_(name) {
    import_array(x, name, x_);
    if (x_.type != dtype_id::f16 && x_.type != dtype_id::bf16 && x_.type != dtype_id::f32)
      throw_type_error(name, std::string("expected float16, bfloat16 or float32 elements, got ") + dtype_name(x_.type));
    if (x_.ndim < 1) throw_value_error(name, "expected at least one dimension (the row)");
    cols_ = std::uint64_t(x_.shape[x_.ndim - 1]);
    rows_ = 1;
    for (int d = 0; d + 1 < x_.ndim; ++d) rows_ *= std::uint64_t(x_.shape[d]);
  }

  const array_view& x() const { return x_; }
  std::uint64_t rows() const { return rows_; }
  std::uint64_t cols() const { return cols_; }
  bool on_cuda() const { return x_.device_type == device_cuda; }

  // Another array of the call: on x's device, of `type`, with `count` elements, read or written in place.
  void take(nb::handle a, const char* name, dtype_id type, std::uint64_t count, array_view& v, bool output) const {
    import_array(a, name, v);
    if (v.device_type != x_.device_type || v.device_id != x_.device_id)
      throw_value_error(name, std::string("must be on ") + name_ + "'s device");
    if (v.type != type)
      throw_type_error(name, std::string("expected ") + dtype_name(type) + " elements, got " + dtype_name(v.type));
    if (v.size() != count)
      throw_value_error(name, "expected " + std::to_string(count) + " elements, got " + std::to_string(v.size()));
    if (output && !v.copy.empty()) throw_value_error(name, "an output must be contiguous (it is written in place)");
  }
  // An array shaped like x (its type and element count).
  void like_x(nb::handle a, const char* name, array_view& v, bool output) const {
    take(a, name, x_.type, x_.size(), v, output);
  }
  // One float32 per row.
  void per_row(nb::handle a, const char* name, array_view& v, bool output) const {
    take(a, name, dtype_id::f32, rows_, v, output);
  }
  // One element per column (a weight or bias of x's type, or a float32 gradient of one).
  void per_column(nb::handle a, const char* name, dtype_id type, array_view& v, bool output) const {
    take(a, name, type, cols_, v, output);
  }

  row_shape dense() const { return dense_rows(rows_, cols_); }
  // Causal rows: x is [..., T, T]; row r holds (r % T) + 1 elements.
  row_shape rows_shape(bool causal) const {
    row_shape s = dense();
    if (causal) {
      if (x_.ndim < 2 || x_.shape[x_.ndim - 2] != x_.shape[x_.ndim - 1])
        throw_value_error(name_, "causal rows need a [..., T, T] array");
      s.causal_period = cols_;
    }
    return s;
  }

  template <class F>
  void visit(F&& f) const {
    switch (x_.type) {
      case dtype_id::f16:
        f(tag<half>{});
        return;
      case dtype_id::bf16:
        f(tag<bfloat16>{});
        return;
      default:
        f(tag<float>{});
        return;
    }
  }

 private:
  const char* name_;
  array_view x_;
  std::uint64_t rows_ = 0, cols_ = 0;
};

template <class T>
T* out_ptr(const array_view& v) {
  return static_cast<T*>(const_cast<void*>(v.data));
}

// Runs `cpu()` on CPU arrays (the GIL released for large ones) and `gpu(site)` on CUDA arrays.
template <class Cpu, class Gpu>
void dispatch(const row_call& c, Cpu&& cpu, [[maybe_unused]] Gpu&& gpu) {
  if (!c.on_cuda()) {
    run_maybe_released(c.x().size(), cpu);
    return;
  }
#ifdef DETRED_PY_HAS_CUDA
  cuda_backend::call_site site(c.x());
  gpu(site);
  site.finish();
#endif
}

#ifdef DETRED_PY_HAS_CUDA
using cuda_backend::with_workspace;  // the two-phase call with a pool workspace (cuda_backend.hpp)
#endif

void rms_norm_forward(nb::handle x, nb::handle weight, nb::handle out, nb::handle rstd, float eps) {
  row_call c(x, "x");
  array_view w, o, r;
  c.per_column(weight, "weight", c.x().type, w, false);
  c.like_x(out, "out", o, true);
  c.per_row(rstd, "rstd", r, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c, [&] { detred::rmsnorm_forward(c.x().as<T>(), w.as<T>(), out_ptr<T>(o), out_ptr<float>(r), s, eps); },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::rmsnorm_forward(ws, bytes, c.x().as<T>(), w.as<T>(), out_ptr<T>(o), out_ptr<float>(r), s, eps,
                                  site.stream());
          });
#endif
        });
  });
}

void rms_norm_backward(nb::handle dy, nb::handle x, nb::handle weight, nb::handle rstd, nb::handle dx,
                       nb::handle dweight) {
  row_call c(x, "x");
  array_view g, w, r, o, dw;
  c.like_x(dy, "dy", g, false);
  c.per_column(weight, "weight", c.x().type, w, false);
  c.per_row(rstd, "rstd", r, false);
  c.like_x(dx, "dx", o, true);
  c.per_column(dweight, "dweight", dtype_id::f32, dw, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c,
        [&] {
          detred::rmsnorm_backward(g.as<T>(), c.x().as<T>(), w.as<T>(), r.as<float>(), out_ptr<T>(o),
                                   out_ptr<float>(dw), s);
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::rmsnorm_backward(ws, bytes, g.as<T>(), c.x().as<T>(), w.as<T>(), r.as<float>(), out_ptr<T>(o),
                                   out_ptr<float>(dw), s, site.stream());
          });
#endif
        });
  });
}

void layer_norm_forward(nb::handle x, nb::handle weight, nb::handle bias, nb::handle out, nb::handle mean,
                        nb::handle rstd, float eps) {
  row_call c(x, "x");
  array_view w, b, o, m, r;
  c.per_column(weight, "weight", c.x().type, w, false);
  c.per_column(bias, "bias", c.x().type, b, false);
  c.like_x(out, "out", o, true);
  c.per_row(mean, "mean", m, true);
  c.per_row(rstd, "rstd", r, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c,
        [&] {
          detred::layernorm_forward(c.x().as<T>(), w.as<T>(), b.as<T>(), out_ptr<T>(o), out_ptr<float>(m),
                                    out_ptr<float>(r), s, eps);
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::layernorm_forward(ws, bytes, c.x().as<T>(), w.as<T>(), b.as<T>(), out_ptr<T>(o), out_ptr<float>(m),
                                    out_ptr<float>(r), s, eps, site.stream());
          });
#endif
        });
  });
}

void layer_norm_backward(nb::handle dy, nb::handle x, nb::handle weight, nb::handle mean, nb::handle rstd,
                         nb::handle dx, nb::handle dweight, nb::handle dbias) {
  row_call c(x, "x");
  array_view g, w, m, r, o, dw, db;
  c.like_x(dy, "dy", g, false);
  c.per_column(weight, "weight", c.x().type, w, false);
  c.per_row(mean, "mean", m, false);
  c.per_row(rstd, "rstd", r, false);
  c.like_x(dx, "dx", o, true);
  c.per_column(dweight, "dweight", dtype_id::f32, dw, true);
  c.per_column(dbias, "dbias", dtype_id::f32, db, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c,
        [&] {
          detred::layernorm_backward(g.as<T>(), c.x().as<T>(), w.as<T>(), m.as<float>(), r.as<float>(), out_ptr<T>(o),
                                     out_ptr<float>(dw), out_ptr<float>(db), s);
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::layernorm_backward(ws, bytes, g.as<T>(), c.x().as<T>(), w.as<T>(), m.as<float>(), r.as<float>(),
                                     out_ptr<T>(o), out_ptr<float>(dw), out_ptr<float>(db), s, site.stream());
          });
#endif
        });
  });
}

// softmax_forward and log_softmax_forward.
void softmax_like_forward(nb::handle x, nb::handle out, bool causal, bool log) {
  row_call c(x, "x");
  array_view o;
  c.like_x(out, "out", o, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.rows_shape(causal);
    dispatch(
        c,
        [&] {
          if (log)
            detred::log_softmax_forward(c.x().as<T>(), out_ptr<T>(o), s, causal);
          else
            detred::softmax_forward(c.x().as<T>(), out_ptr<T>(o), s, causal);
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          // Causal rows: the kernel also writes the masked entries (0 or -inf), so the output needs no fill pass.
          cuda::row_options options;
          options.fill_past_length = causal;
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            if (log)
              cuda::log_softmax_forward(ws, bytes, c.x().as<T>(), out_ptr<T>(o), s, site.stream(), options);
            else
              cuda::softmax_forward(ws, bytes, c.x().as<T>(), out_ptr<T>(o), s, site.stream(), options);
          });
#endif
        });
  });
}

// softmax_backward and log_softmax_backward, y the forward's output.
void softmax_like_backward(nb::handle y, nb::handle dy, nb::handle dx, bool causal, bool log) {
  row_call c(y, "y");
  array_view g, o;
  c.like_x(dy, "dy", g, false);
  c.like_x(dx, "dx", o, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.rows_shape(causal);
    dispatch(
        c,
        [&] {
          if (log)
            detred::log_softmax_backward(c.x().as<T>(), g.as<T>(), out_ptr<T>(o), s);
          else
            detred::softmax_backward(c.x().as<T>(), g.as<T>(), out_ptr<T>(o), s);
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            if (log)
              cuda::log_softmax_backward(ws, bytes, c.x().as<T>(), g.as<T>(), out_ptr<T>(o), s, site.stream());
            else
              cuda::softmax_backward(ws, bytes, c.x().as<T>(), g.as<T>(), out_ptr<T>(o), s, site.stream());
          });
#endif
        });
  });
}

enum class row_reduction { sum, mean, logsumexp };

void row_reduce(nb::handle x, nb::handle out, row_reduction which) {
  row_call c(x, "x");
  array_view o;
  c.per_row(out, "out", o, true);
  if (which == row_reduction::mean && c.cols() > (std::uint64_t{1} << 24))
    throw_value_error("x", "mean counts rows of at most 2^24 elements in float32");
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    float* y = out_ptr<float>(o);
    dispatch(
        c,
        [&] {
          if (which == row_reduction::sum) {
            detred::row_sum(c.x().as<T>(), y, s);
          } else if (which == row_reduction::logsumexp) {
            detred::row_logsumexp(c.x().as<T>(), y, s);
          } else {
            std::vector<float> variance(c.rows());
            detred::row_mean_variance(c.x().as<T>(), y, variance.data(), s);
          }
        },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          if (which == row_reduction::sum) {
            with_workspace(site, [&](void* ws, std::size_t& bytes) {
              cuda::row_sum(ws, bytes, c.x().as<T>(), y, s, site.stream());
            });
          } else if (which == row_reduction::logsumexp) {
            with_workspace(site, [&](void* ws, std::size_t& bytes) {
              cuda::row_logsumexp(ws, bytes, c.x().as<T>(), y, s, site.stream());
            });
          } else {
            cuda_backend::workspace variance(site, c.rows() * sizeof(float));  // the statistic not asked for
            with_workspace(site, [&](void* ws, std::size_t& bytes) {
              cuda::row_mean_variance(ws, bytes, c.x().as<T>(), y, static_cast<float*>(variance.data()), s,
                                      site.stream());
            });
          }
#endif
        });
  });
}

// out[j] = canonical sum over the rows of column j (detred::column_sum), float32.
void column_sum(nb::handle x, nb::handle out) {
  row_call c(x, "x");
  array_view o;
  c.per_column(out, "out", dtype_id::f32, o, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c, [&] { detred::column_sum(c.x().as<T>(), out_ptr<float>(o), s); },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::column_sum(ws, bytes, c.x().as<T>(), out_ptr<float>(o), s, site.stream());
          });
#endif
        });
  });
}

void logsumexp_backward(nb::handle x, nb::handle lse, nb::handle dout, nb::handle dx) {
  row_call c(x, "x");
  array_view l, g, o;
  c.per_row(lse, "lse", l, false);
  c.per_row(dout, "dout", g, false);
  c.like_x(dx, "dx", o, true);
  c.visit([&](auto t) {
    using T = type_of<decltype(t)>;
    const row_shape s = c.dense();
    dispatch(
        c, [&] { detred::row_logsumexp_backward(c.x().as<T>(), l.as<float>(), g.as<float>(), out_ptr<T>(o), s); },
        [&]([[maybe_unused]] const auto& site) {
#ifdef DETRED_PY_HAS_CUDA
          with_workspace(site, [&](void* ws, std::size_t& bytes) {
            cuda::row_logsumexp_backward(ws, bytes, c.x().as<T>(), l.as<float>(), g.as<float>(), out_ptr<T>(o), s,
                                         site.stream());
          });
#endif
        });
  });
}

}  // namespace

void bind_row_ops(nb::module_& m) {
  nb::module_ r = m.def_submodule(
      "_rows",
      "Row kernels for detred.torch (private): calls on caller-allocated outputs; the last dimension is the row, "
      "per-row statistics float32; CPU arrays run the CPU twins, CUDA arrays detred::cuda on the current stream "
      "(same bits).");
  r.def("rms_norm_forward", &rms_norm_forward, nb::arg("x"), nb::arg("weight"), nb::arg("out"), nb::arg("rstd"),
        nb::arg("eps"), "out = x rstd weight, rstd = 1/sqrt(mean(x^2) + eps) per row (detred::rmsnorm_forward).");
  r.def("rms_norm_backward", &rms_norm_backward, nb::arg("dy"), nb::arg("x"), nb::arg("weight"), nb::arg("rstd"),
        nb::arg("dx"), nb::arg("dweight"),
        "dx and float32 dweight (canonical over the rows) of rms_norm_forward (detred::rmsnorm_backward).");
  r.def("layer_norm_forward", &layer_norm_forward, nb::arg("x"), nb::arg("weight"), nb::arg("bias"), nb::arg("out"),
        nb::arg("mean"), nb::arg("rstd"), nb::arg("eps"),
        "out = (x - mean) rstd weight + bias per row (detred::layernorm_forward).");
  r.def("layer_norm_backward", &layer_norm_backward, nb::arg("dy"), nb::arg("x"), nb::arg("weight"), nb::arg("mean"),
        nb::arg("rstd"), nb::arg("dx"), nb::arg("dweight"), nb::arg("dbias"),
        "dx, float32 dweight and dbias (canonical over the rows) of layer_norm_forward (detred::layernorm_backward).");
  r.def(
      "softmax_forward", [](nb::handle x, nb::handle out, bool causal) { softmax_like_forward(x, out, causal, false); },
      nb::arg("x"), nb::arg("out"), nb::arg("causal") = false,
      "out = exp(x - max(row)) / sum(exp(x - max(row))) (detred::softmax_forward); causal: x is [..., T, T] and row r "
      "of each matrix "
      "holds its first r + 1 elements (the rest of out is not written).");
  r.def(
      "log_softmax_forward",
      [](nb::handle x, nb::handle out, bool causal) { softmax_like_forward(x, out, causal, true); }, nb::arg("x"),
      nb::arg("out"), nb::arg("causal") = false,
      "out = x - logsumexp(row) (detred::log_softmax_forward); causal as softmax_forward.");
  r.def(
      "softmax_backward",
      [](nb::handle y, nb::handle dy, nb::handle dx, bool causal) { softmax_like_backward(y, dy, dx, causal, false); },
      nb::arg("y"), nb::arg("dy"), nb::arg("dx"), nb::arg("causal") = false,
      "dx = y (dy - sum(dy y)) per row, y softmax's output (detred::softmax_backward).");
  r.def(
      "log_softmax_backward",
      [](nb::handle y, nb::handle dy, nb::handle dx, bool causal) { softmax_like_backward(y, dy, dx, causal, true); },
      nb::arg("y"), nb::arg("dy"), nb::arg("dx"), nb::arg("causal") = false,
      "dx = dy - exp(y) sum(dy) per row, y log_softmax's output (detred::log_softmax_backward).");
  r.def(
      "logsumexp_forward", [](nb::handle x, nb::handle out) { row_reduce(x, out, row_reduction::logsumexp); },
      nb::arg("x"), nb::arg("out"), "out[r] = log sum exp of row r, float32 (detred::row_logsumexp).");
  r.def("logsumexp_backward", &logsumexp_backward, nb::arg("x"), nb::arg("lse"), nb::arg("dout"), nb::arg("dx"),
        "dx = dout exp(x - lse) per row (detred::row_logsumexp_backward).");
  r.def(
      "sum_forward", [](nb::handle x, nb::handle out) { row_reduce(x, out, row_reduction::sum); }, nb::arg("x"),
      nb::arg("out"), "out[r] = canonical sum of row r, float32 (detred::row_sum, tree).");
  r.def(
      "mean_forward", [](nb::handle x, nb::handle out) { row_reduce(x, out, row_reduction::mean); }, nb::arg("x"),
      nb::arg("out"), "out[r] = mean of row r, float32 (detred::row_mean_variance's mean).");
  r.def("column_sum_forward", &column_sum, nb::arg("x"), nb::arg("out"),
        "out[j] = sum over the rows of column j, canonical over the row index, float32 (detred::column_sum).");
#ifdef DETRED_PY_HAS_CUDA
  bind_row_pointer_calls(r);
#endif
}

}  // namespace detred::python
