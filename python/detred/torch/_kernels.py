"""The computations behind detred.torch's custom ops and aten overrides, on PyTorch tensors.

Each function allocates its results with PyTorch (on the input's device, so CUDA results come from PyTorch's caching
allocator and CUDA-graph pools), lays its input out as contiguous rows (the reduced dimensions last: a permuted copy
when they are not already) and calls one row kernel of detred._detred._rows: the CPU twin for CPU tensors, the CUDA
kernel on the current stream for CUDA tensors, with the same bits. Every row's result depends on that row alone, in an
order fixed by its length: batch-invariant by construction. Statistics (mean, rstd) are float32; sums accumulate in
float32 and are rounded once to the result type.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Optional

import torch

from .._detred import _rows

FLOATS = (torch.float16, torch.bfloat16, torch.float32)


# The pointer calls of detred._detred._rows (row_ops_cuda_pointers.cpp; where the module has its CUDA backend): the
# norms and softmax on CUDA tensors by device address, without the per-tensor import of the array calls (a norm's
# backward passes eight tensors; the host's microseconds decide a call's time wherever they exceed the kernels').
# Every tensor handed to them is checked here first (_same_device_as) or made here (contiguous, on x's device).
_POINTERS = hasattr(_rows, "cuda_rms_norm_forward")
_ELEMENT_CODE = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}


def _pointer_call(x: torch.Tensor) -> bool:
    return _POINTERS and x.is_cuda


def _device_and_stream(x: torch.Tensor) -> tuple[int, int]:
    device = x.get_device()
    return device, torch._C._cuda_getCurrentRawStream(device)


def _checked(t: torch.Tensor, device: int, dtype: torch.dtype, count: int, name: str) -> torch.Tensor:
    """t contiguous, after the checks the array calls make (device, dtype, element count), naming the argument."""
    if not t.is_cuda or t.get_device() != device:
        raise ValueError(f"{name}: must be on x's device (cuda:{device})")
    if t.dtype != dtype:
        raise TypeError(f"{name}: expected {str(dtype).removeprefix('torch.')} elements, got {t.dtype}")
    if t.numel() != count:
        raise ValueError(f"{name}: expected {count} elements, got {t.numel()}")
    return t.contiguous()


def _arg(t: torch.Tensor) -> torch.Tensor:
    # CPU tensors reach the module through DLPack, which refuses tensors that require grad.
    return t if t.is_cuda else t.detach()


def check_float(x: torch.Tensor, name: str = "x") -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in FLOATS:
        raise TypeError(f"{name}: expected float16, bfloat16 or float32, got {x.dtype}")


def normalized_dims(x: torch.Tensor, normalized_shape: Sequence[int], name: str = "normalized_shape") -> int:
    """The number of trailing dimensions that normalized_shape names (ValueError if they are not x's last ones)."""
    k = len(normalized_shape)
    if k == 0 or k > x.dim() or tuple(x.shape[x.dim() - k :]) != tuple(normalized_shape):
        raise ValueError(f"{name}: {list(normalized_shape)} is not the trailing shape of x {list(x.shape)}")
    return k


def stat_shape(x: torch.Tensor, k: int) -> list[int]:
    """The shape of a per-row statistic of x normalised over its last k dimensions (as aten's: ones kept)."""
    return list(x.shape[: x.dim() - k]) + [1] * k


def reduce_dims(x: torch.Tensor, dim: Optional[Sequence[int]], name: str = "dim") -> list[int]:
    """dim as sorted non-negative dimensions (None or empty: every dimension)."""
    if dim is None or len(dim) == 0:
        return list(range(x.dim()))
    n = max(x.dim(), 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise ValueError(f"{name}: dimension {d} out of range for a {x.dim()}-d tensor")
        out.append(d % n)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: dimension repeated in {list(dim)}")
    return sorted(out)


def reduced_shape(x: torch.Tensor, dims: list[int], keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if i in dims else s for i, s in enumerate(x.shape)]
    return [s for i, s in enumerate(x.shape) if i not in dims]


def _as_rows(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    """x with the reduced dimensions last, contiguous, as [rows, reduced elements]."""
    if x.dim() == 0:
        return x.reshape(1, 1).contiguous()
    kept = [i for i in range(x.dim()) if i not in dims]
    xp = x.permute(kept + dims) if kept + dims != list(range(x.dim())) else x
    return xp.contiguous().reshape(-1, math.prod(x.shape[i] for i in dims))


def _leading(dims: list[int]) -> bool:
    return dims == list(range(len(dims)))


# ---- RMSNorm ----------------------------------------------------------------------------------------------------


def _weight_or_ones(w: Optional[torch.Tensor], x: torch.Tensor, cols: int) -> torch.Tensor:
    if w is None:
        return torch.ones(cols, dtype=x.dtype, device=x.device)
    w = w if w.dtype == x.dtype else w.to(x.dtype)
    return w.contiguous() if w.dim() == 1 else w.contiguous().reshape(cols)


def rms_norm_forward(x: torch.Tensor, normalized_shape: Sequence[int], weight: Optional[torch.Tensor],
                     eps: Optional[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, rstd): out in x's type, rstd float32 of stat_shape; eps None: float32's machine epsilon (as aten)."""
    k = normalized_dims(x, normalized_shape)
    cols = math.prod(normalized_shape)
    eps = torch.finfo(torch.float32).eps if eps is None else float(eps)
    xc = x.contiguous()
    out = torch.empty_like(xc, memory_format=torch.contiguous_format)
    rstd = torch.empty(stat_shape(x, k), dtype=torch.float32, device=x.device)
    if _pointer_call(xc):
        device, stream = _device_and_stream(xc)
        w = _weight_or_ones(weight, x, cols)
        _checked(w, device, x.dtype, cols, "weight")
        _rows.cuda_rms_norm_forward(_ELEMENT_CODE[x.dtype], rstd.numel(), cols, xc.data_ptr(), w.data_ptr(),
                                    out.data_ptr(), rstd.data_ptr(), eps, device, stream)
        return out, rstd
    _rows.rms_norm_forward(_arg(xc).reshape(-1, cols), _arg(_weight_or_ones(weight, x, cols)),
                           out.reshape(-1, cols), rstd, eps)
    return out, rstd


def rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, normalized_shape: Sequence[int], rstd: torch.Tensor,
                      weight: Optional[torch.Tensor]) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
    """(dx, dweight): dweight in weight's type (None without a weight), canonical over the rows."""
    k = normalized_dims(x, normalized_shape)
    cols = math.prod(normalized_shape)
    xc = x.contiguous()
    dyc = (dy if dy.dtype == x.dtype else dy.to(x.dtype)).contiguous()
    dx = torch.empty_like(xc, memory_format=torch.contiguous_format)
    dw = torch.empty(cols, dtype=torch.float32, device=x.device)
    if _pointer_call(xc):
        device, stream = _device_and_stream(xc)
        rows = math.prod(x.shape[: x.dim() - k])
        w = _weight_or_ones(weight, x, cols)
        _rows.cuda_rms_norm_backward(
            _ELEMENT_CODE[x.dtype], rows, cols, _checked(dyc, device, x.dtype, xc.numel(), "dy").data_ptr(),
            xc.data_ptr(), _checked(w, device, x.dtype, cols, "weight").data_ptr(),
            _checked(rstd, device, torch.float32, rows, "rstd").data_ptr(), dx.data_ptr(), dw.data_ptr(), device,
            stream)
    else:
        rs = rstd.to(torch.float32).contiguous()
        _rows.rms_norm_backward(_arg(dyc).reshape(-1, cols), _arg(xc).reshape(-1, cols),
                                _arg(_weight_or_ones(weight, x, cols)), _arg(rs), dx.reshape(-1, cols), dw)
    return dx, (None if weight is None else _as_parameter(dw, weight))


def _as_parameter(g: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """A float32 gradient of cols elements in parameter p's shape and type."""
    g = g if g.dim() == p.dim() and g.shape == p.shape else g.reshape(p.shape)
    return g if p.dtype == torch.float32 else g.to(p.dtype)


# ---- LayerNorm --------------------------------------------------------------------------------------------------


def layer_norm_forward(x: torch.Tensor, normalized_shape: Sequence[int], weight: Optional[torch.Tensor],
                       bias: Optional[torch.Tensor], eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(out, mean, rstd): out in x's type, mean and rstd float32 of stat_shape."""
    k = normalized_dims(x, normalized_shape)
    cols = math.prod(normalized_shape)
    xc = x.contiguous()
    out = torch.empty_like(xc, memory_format=torch.contiguous_format)
    shape = stat_shape(x, k)
    mean = torch.empty(shape, dtype=torch.float32, device=x.device)
    rstd = torch.empty(shape, dtype=torch.float32, device=x.device)
    b = torch.zeros(cols, dtype=x.dtype, device=x.device) if bias is None else _weight_or_ones(bias, x, cols)
    w = _weight_or_ones(weight, x, cols)
    if _pointer_call(xc):
        device, stream = _device_and_stream(xc)
        _rows.cuda_layer_norm_forward(_ELEMENT_CODE[x.dtype], mean.numel(), cols, xc.data_ptr(),
                                      _checked(w, device, x.dtype, cols, "weight").data_ptr(),
                                      _checked(b, device, x.dtype, cols, "bias").data_ptr(), out.data_ptr(),
                                      mean.data_ptr(), rstd.data_ptr(), float(eps), device, stream)
        return out, mean, rstd
    _rows.layer_norm_forward(_arg(xc).reshape(-1, cols), _arg(w), _arg(b), out.reshape(-1, cols), mean, rstd,
                             float(eps))
    return out, mean, rstd


def layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, normalized_shape: Sequence[int], mean: torch.Tensor,
                        rstd: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor]
                        ) -> tuple[torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]:
    """(dx, dweight, dbias): dweight and dbias in their parameters' types (None where absent), canonical over rows."""
    k = normalized_dims(x, normalized_shape)
    cols = math.prod(normalized_shape)
    xc = x.contiguous()
    dyc = (dy if dy.dtype == x.dtype else dy.to(x.dtype)).contiguous()
    dx = torch.empty_like(xc, memory_format=torch.contiguous_format)
    dw = torch.empty(cols, dtype=torch.float32, device=x.device)
    db = torch.empty(cols, dtype=torch.float32, device=x.device)
    w = _weight_or_ones(weight, x, cols)
    if _pointer_call(xc):
        device, stream = _device_and_stream(xc)
        rows = math.prod(x.shape[: x.dim() - k])
        _rows.cuda_layer_norm_backward(
            _ELEMENT_CODE[x.dtype], rows, cols, _checked(dyc, device, x.dtype, xc.numel(), "dy").data_ptr(),
            xc.data_ptr(), _checked(w, device, x.dtype, cols, "weight").data_ptr(),
            _checked(mean, device, torch.float32, rows, "mean").data_ptr(),
            _checked(rstd, device, torch.float32, rows, "rstd").data_ptr(), dx.data_ptr(), dw.data_ptr(),
            db.data_ptr(), device, stream)
    else:
        _rows.layer_norm_backward(_arg(dyc).reshape(-1, cols), _arg(xc).reshape(-1, cols), _arg(w),
                                  _arg(mean.to(torch.float32).contiguous()), _arg(rstd.to(torch.float32).contiguous()),
                                  dx.reshape(-1, cols), dw, db)
    return (dx, None if weight is None else _as_parameter(dw, weight),
            None if bias is None else _as_parameter(db, bias))


# ---- the dense CUDA path of the fused norms ----------------------------------------------------------------------
# detred.torch.rms_norm and layer_norm's common case on CUDA: x contiguous and normalised over its last dimension, the
# parameters contiguous vectors of x's type on x's device. Recognised from a few attribute reads, then one pointer call
# with the statistics kept as flat float32 vectors (internal: only the backward reads them) and the backward's
# workspace taken from PyTorch's caching allocator on the current stream: a single forward + backward waits for the
# host's time before each kernel, and these calls spend less of it than the general functions above. The kernels, and
# so the bits, are the same.

_EPSILON32 = torch.finfo(torch.float32).eps


def dense_cuda_cols(x: torch.Tensor, normalized_shape: Sequence[int], *params: Optional[torch.Tensor]) -> int:
    """x's row length when the dense path takes x and params (each given), else 0 (the general functions)."""
    if not (_POINTERS and x.is_cuda and len(normalized_shape) == 1 and x.dim() >= 1 and x.is_contiguous()):
        return 0
    cols = x.shape[-1]
    if cols == 0 or cols != normalized_shape[0] or x.dtype not in _ELEMENT_CODE:
        return 0
    device = x.get_device()
    for p in params:
        if (p is None or p.dtype != x.dtype or not p.is_cuda or p.dim() != 1 or p.shape[0] != cols
                or not p.is_contiguous() or p.get_device() != device):
            return 0
    return cols


@functools.lru_cache(maxsize=512)
def _workspace_bytes(query, code: int, rows: int, cols: int) -> int:
    return query(code, rows, cols)


def _workspace(query, code: int, rows: int, cols: int, x: torch.Tensor) -> torch.Tensor:
    """A backward norm's workspace from PyTorch's allocator, on x's device (freed after the call, stream-ordered)."""
    return torch.empty(_workspace_bytes(query, code, rows, cols), dtype=torch.uint8, device=x.device)


def _dense_dy(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return dy if dy.dtype == x.dtype and dy.is_contiguous() else dy.to(x.dtype).contiguous()


def rms_norm_forward_dense(x: torch.Tensor, cols: int, weight: torch.Tensor,
                           eps: Optional[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """rms_norm_forward on dense_cuda_cols' case: (out, rstd), rstd a float32 vector of x's rows."""
    rows = x.numel() // cols
    out = torch.empty_like(x)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    device = x.get_device()
    _rows.cuda_rms_norm_forward(_ELEMENT_CODE[x.dtype], rows, cols, x.data_ptr(), weight.data_ptr(), out.data_ptr(),
                                rstd.data_ptr(), _EPSILON32 if eps is None else float(eps), device,
                                torch._C._cuda_getCurrentRawStream(device))
    return out, rstd


def rms_norm_backward_dense(dy: torch.Tensor, x: torch.Tensor, cols: int, rstd: torch.Tensor,
                            weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """rms_norm_backward after rms_norm_forward_dense (dy: the output's gradient, any layout and float type)."""
    dy = _dense_dy(dy, x)
    rows, code = rstd.numel(), _ELEMENT_CODE[x.dtype]
    dx = torch.empty_like(x)
    dw = torch.empty(cols, dtype=torch.float32, device=x.device)
    ws = _workspace(_rows.cuda_rms_norm_backward_workspace, code, rows, cols, x)
    device = x.get_device()
    _rows.cuda_rms_norm_backward(code, rows, cols, dy.data_ptr(), x.data_ptr(), weight.data_ptr(), rstd.data_ptr(),
                                 dx.data_ptr(), dw.data_ptr(), device, torch._C._cuda_getCurrentRawStream(device),
                                 ws.data_ptr(), ws.numel())
    return dx, _as_parameter(dw, weight)


def layer_norm_forward_dense(x: torch.Tensor, cols: int, weight: torch.Tensor, bias: torch.Tensor,
                             eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """layer_norm_forward on dense_cuda_cols' case: (out, mean, rstd), mean and rstd float32 vectors of x's rows."""
    rows = x.numel() // cols
    out = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    device = x.get_device()
    _rows.cuda_layer_norm_forward(_ELEMENT_CODE[x.dtype], rows, cols, x.data_ptr(), weight.data_ptr(),
                                  bias.data_ptr(), out.data_ptr(), mean.data_ptr(), rstd.data_ptr(), float(eps), device,
                                  torch._C._cuda_getCurrentRawStream(device))
    return out, mean, rstd


def layer_norm_backward_dense(dy: torch.Tensor, x: torch.Tensor, cols: int, mean: torch.Tensor, rstd: torch.Tensor,
                              weight: torch.Tensor, bias: torch.Tensor
                              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """layer_norm_backward after layer_norm_forward_dense (dy: the output's gradient, any layout and float type)."""
    dy = _dense_dy(dy, x)
    rows, code = rstd.numel(), _ELEMENT_CODE[x.dtype]
    dx = torch.empty_like(x)
    dw = torch.empty(cols, dtype=torch.float32, device=x.device)
    db = torch.empty(cols, dtype=torch.float32, device=x.device)
    ws = _workspace(_rows.cuda_layer_norm_backward_workspace, code, rows, cols, x)
    device = x.get_device()
    _rows.cuda_layer_norm_backward(code, rows, cols, dy.data_ptr(), x.data_ptr(), weight.data_ptr(), mean.data_ptr(),
                                   rstd.data_ptr(), dx.data_ptr(), dw.data_ptr(), db.data_ptr(), device,
                                   torch._C._cuda_getCurrentRawStream(device), ws.data_ptr(), ws.numel())
    return dx, _as_parameter(dw, weight), _as_parameter(db, bias)


# ---- softmax, log-softmax ---------------------------------------------------------------------------------------


def _last(t: torch.Tensor, dim: int) -> torch.Tensor:
    return t.contiguous() if dim == t.dim() - 1 else t.movedim(dim, -1).contiguous()


def _back(t: torch.Tensor, dim: int, ndim: int) -> torch.Tensor:
    return t if dim == ndim - 1 else t.movedim(-1, dim).contiguous()


def softmax_forward(x: torch.Tensor, dim: int, log: bool, causal: bool = False) -> torch.Tensor:
    """softmax (log=False) or log_softmax over dimension dim; causal: x is [..., T, T] and row i keeps its first i + 1
    entries (the others are 0 for softmax, -inf for log_softmax, as after a causal mask)."""
    n = max(x.dim(), 1)
    if not -n <= dim < n:
        raise ValueError(f"dim: {dim} out of range for a {x.dim()}-d tensor")
    dim %= n
    if x.dim() == 0:
        return softmax_forward(x.reshape(1), 0, log).reshape(())
    xl = _last(x, dim)
    # Causal rows: the kernel writes the masked entries too (0 or -inf): no fill pass over the output.
    out = torch.empty_like(xl, memory_format=torch.contiguous_format)
    if _pointer_call(xl):
        if causal and (xl.dim() < 2 or xl.shape[-1] != xl.shape[-2]):
            raise ValueError("x: causal rows need a [..., T, T] array")
        device, stream = _device_and_stream(xl)
        cols = xl.shape[-1]
        _rows.cuda_softmax_forward(_ELEMENT_CODE[xl.dtype], xl.numel() // cols if cols else 0, cols, xl.data_ptr(),
                                   out.data_ptr(), causal, log, device, stream)
    else:
        (_rows.log_softmax_forward if log else _rows.softmax_forward)(_arg(xl), out, causal)
    return _back(out, dim, x.dim())


def softmax_backward(dy: torch.Tensor, y: torch.Tensor, dim: int, log: bool, causal: bool = False) -> torch.Tensor:
    """The gradient of softmax_forward (log as there) given its output y and dy."""
    n = max(y.dim(), 1)
    dim %= n
    if y.dim() == 0:
        return softmax_backward(dy.reshape(1), y.reshape(1), 0, log).reshape(())
    yl = _last(y, dim)
    dyl = _last(dy if dy.dtype == y.dtype else dy.to(y.dtype), dim)
    dx = (torch.zeros_like if causal else torch.empty_like)(yl, memory_format=torch.contiguous_format)
    if _pointer_call(yl):
        if causal and (yl.dim() < 2 or yl.shape[-1] != yl.shape[-2]):
            raise ValueError("y: causal rows need a [..., T, T] array")
        device, stream = _device_and_stream(yl)
        cols = yl.shape[-1]
        _checked(dyl, device, yl.dtype, yl.numel(), "dy")
        _rows.cuda_softmax_backward(_ELEMENT_CODE[yl.dtype], yl.numel() // cols if cols else 0, cols, yl.data_ptr(),
                                    dyl.data_ptr(), dx.data_ptr(), causal, log, device, stream)
    else:
        (_rows.log_softmax_backward if log else _rows.softmax_backward)(_arg(yl), _arg(dyl), dx, causal)
    return _back(dx, dim, y.dim())


# ---- log-sum-exp, sum, mean -------------------------------------------------------------------------------------


def logsumexp_float(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    """The float32 log-sum-exp of x over dims, shape of the kept dimensions."""
    rows = _as_rows(x, dims)
    lse = torch.empty(rows.shape[0], dtype=torch.float32, device=x.device)
    _rows.logsumexp_forward(_arg(rows), lse)
    return lse


def logsumexp_forward(x: torch.Tensor, dim: Sequence[int], keepdim: bool) -> torch.Tensor:
    dims = reduce_dims(x, dim)
    return logsumexp_float(x, dims).to(x.dtype).reshape(reduced_shape(x, dims, keepdim))


def logsumexp_backward(dout: torch.Tensor, x: torch.Tensor, lse: torch.Tensor, dim: Sequence[int],
                       keepdim: bool) -> torch.Tensor:
    """dx = dout exp(x - lse), lse in float32 (recomputed from x when the forward's result was rounded to 16 bits)."""
    dims = reduce_dims(x, dim)
    lse32 = logsumexp_float(x, dims) if lse.dtype != torch.float32 else lse.contiguous().reshape(-1)
    rows = _as_rows(x, dims)
    dx = torch.empty_like(rows, memory_format=torch.contiguous_format)
    g = dout.to(torch.float32).contiguous().reshape(-1)
    _rows.logsumexp_backward(_arg(rows), _arg(lse32), _arg(g), dx)
    kept = [i for i in range(x.dim()) if i not in dims]
    perm = kept + dims
    if perm == list(range(x.dim())):
        return dx.reshape(x.shape)
    inverse = sorted(range(x.dim()), key=perm.__getitem__)
    return dx.reshape([x.shape[i] for i in perm]).permute(inverse).contiguous()


def sum_float(x: torch.Tensor, dims: list[int], mean: bool) -> torch.Tensor:
    """The float32 sum (or mean) over dims, flattened over the kept dimensions: leading dimensions by the column sum,
    any other by rows of the permuted input (the row sum, or the row mean of detred::row_mean_variance)."""
    if x.dim() > 0 and _leading(dims) and len(dims) < x.dim():
        cols = math.prod(x.shape[len(dims):])
        xc = x.contiguous().reshape(-1, cols)
        out = torch.empty(cols, dtype=torch.float32, device=x.device)
        _rows.column_sum_forward(_arg(xc), out)
        # A division by a tensor: IEEE division on every device (PyTorch turns a scalar divisor into a reciprocal on
        # CUDA, which would break the CPU's bits).
        return out / torch.full_like(out, xc.shape[0]) if mean else out
    rows = _as_rows(x, dims)
    out = torch.empty(rows.shape[0], dtype=torch.float32, device=x.device)
    (_rows.mean_forward if mean else _rows.sum_forward)(_arg(rows), out)
    return out


def sum_forward(x: torch.Tensor, dim: Optional[Sequence[int]], keepdim: bool, mean: bool,
                dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    dims = reduce_dims(x, dim)
    return sum_float(x, dims, mean).to(dtype or x.dtype).reshape(reduced_shape(x, dims, keepdim))
