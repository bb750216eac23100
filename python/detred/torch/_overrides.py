"""Batch-invariant mode: PyTorch's own CUDA kernels of the row-reducing aten operators replaced by detred's.

enable() registers CUDA implementations of the aten operators below through ``torch.library.Library("aten",
"IMPL")`` (the way batch-invariant libraries override aten), after taking the kernels they replace with
``torch.library.get_kernel``; disable() removes them, restoring PyTorch's. A call the row kernels do not cover (a dtype
other than float16, bfloat16 or float32, mixed parameter dtypes, an empty tensor, an out-of-range argument) goes to
the kernel that was replaced, unchanged (called with the dispatch key set the override received). The overrides sit
at the CUDA dispatch key, below autograd: PyTorch's own derivative formulas call the backward operators, which are
overridden too. CPU tensors are not affected.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Optional

import torch

from . import _kernels as K

_lock = threading.Lock()
_library: Optional[torch.library.Library] = None
_originals: dict[str, object] = {}
_KEY = "CUDA"


def _fallback(name: str, keyset, *args, **kwargs):
    return _originals[name].call_boxed(keyset, *args, **kwargs)


def _floats(*tensors) -> bool:
    return all(t is None or (t.dtype in K.FLOATS and t.numel() > 0) for t in tensors)


def _same_dtype(x: torch.Tensor, *params) -> bool:
    return all(p is None or p.dtype == x.dtype for p in params)


def _valid_dim(x: torch.Tensor, dim: int) -> bool:
    n = max(x.dim(), 1)
    return -n <= dim < n


def _valid_dims(x: torch.Tensor, dims) -> bool:
    if dims is None:
        return True
    n = max(x.dim(), 1)
    norm = [d % n for d in dims if -n <= d < n]
    return len(norm) == len(dims) and len(set(norm)) == len(norm)


def _sum(keyset, x, dim=None, keepdim=False, *, dtype=None):
    if not (_floats(x) and dtype in (None, x.dtype, torch.float32) and _valid_dims(x, dim)):
        return _fallback("sum.dim_IntList", keyset, x, dim, keepdim, dtype=dtype)
    return K.sum_forward(x, dim, keepdim, mean=False, dtype=dtype)


def _mean(keyset, x, dim=None, keepdim=False, *, dtype=None):
    if not (_floats(x) and dtype in (None, x.dtype, torch.float32) and _valid_dims(x, dim)):
        return _fallback("mean.dim", keyset, x, dim, keepdim, dtype=dtype)
    return K.sum_forward(x, dim, keepdim, mean=True, dtype=dtype)


def _logsumexp(keyset, x, dim, keepdim=False):
    if not (_floats(x) and _valid_dims(x, dim)):
        return _fallback("logsumexp", keyset, x, dim, keepdim)
    return K.logsumexp_forward(x, dim, keepdim)


def _softmax_impl(name: str, log: bool):
    def forward(keyset, x, dim, half_to_float):
        if not (_floats(x) and _valid_dim(x, dim)) or (half_to_float and x.dtype == torch.float32):
            return _fallback(name, keyset, x, dim, half_to_float)
        return K.softmax_forward(x.to(torch.float32) if half_to_float else x, dim, log)

    return forward


def _softmax_backward_impl(name: str, log: bool):
    def backward(keyset, grad_output, output, dim, input_dtype):
        if not (_floats(grad_output, output) and grad_output.dtype == output.dtype and _valid_dim(output, dim)
                and input_dtype in K.FLOATS):
            return _fallback(name, keyset, grad_output, output, dim, input_dtype)
        return K.softmax_backward(grad_output, output, dim, log).to(input_dtype)

    return backward


def _native_layer_norm(keyset, x, normalized_shape, weight, bias, eps):
    if not (_floats(x, weight, bias) and _same_dtype(x, weight, bias) and _trailing(x, normalized_shape)):
        return _fallback("native_layer_norm", keyset, x, normalized_shape, weight, bias, eps)
    return K.layer_norm_forward(x, normalized_shape, weight, bias, eps)


def _native_layer_norm_backward(keyset, dy, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    if not (_floats(dy, x, weight, bias) and _same_dtype(x, dy, weight, bias) and _trailing(x, normalized_shape)
            and mean.dtype in K.FLOATS and rstd.dtype in K.FLOATS):
        return _fallback("native_layer_norm_backward", keyset, dy, x, normalized_shape, mean, rstd, weight, bias,
                         output_mask)
    dx, dw, db = K.layer_norm_backward(dy, x, normalized_shape, mean, rstd, weight, bias)
    return (dx if output_mask[0] else None, dw if output_mask[1] else None, db if output_mask[2] else None)


def _fused_rms_norm(keyset, x, normalized_shape, weight, eps):
    if not (_floats(x, weight) and _same_dtype(x, weight) and _trailing(x, normalized_shape)):
        return _fallback("_fused_rms_norm", keyset, x, normalized_shape, weight, eps)
    return K.rms_norm_forward(x, normalized_shape, weight, eps)


def _fused_rms_norm_backward(keyset, dy, x, normalized_shape, rstd, weight, output_mask):
    if not (_floats(dy, x, weight) and _same_dtype(x, dy, weight) and _trailing(x, normalized_shape)
            and rstd.dtype in K.FLOATS):
        return _fallback("_fused_rms_norm_backward", keyset, dy, x, normalized_shape, rstd, weight, output_mask)
    dx, dw = K.rms_norm_backward(dy, x, normalized_shape, rstd, weight)
    return (dx if output_mask[0] else None, dw if output_mask[1] else None)


def _trailing(x, normalized_shape) -> bool:
    k = len(normalized_shape)
    return 0 < k <= x.dim() and tuple(x.shape[x.dim() - k:]) == tuple(normalized_shape)


# The operators routed to detred, by aten name (PyTorch 2.11's; an operator this PyTorch lacks is skipped).
OVERRIDES = {
    "sum.dim_IntList": _sum,
    "mean.dim": _mean,
    "logsumexp": _logsumexp,
    "_softmax": _softmax_impl("_softmax", log=False),
    "_log_softmax": _softmax_impl("_log_softmax", log=True),
    "_softmax_backward_data": _softmax_backward_impl("_softmax_backward_data", log=False),
    "_log_softmax_backward_data": _softmax_backward_impl("_log_softmax_backward_data", log=True),
    "native_layer_norm": _native_layer_norm,
    "native_layer_norm_backward": _native_layer_norm_backward,
    "_fused_rms_norm": _fused_rms_norm,
    "_fused_rms_norm_backward": _fused_rms_norm_backward,
}


def _exists(name: str) -> bool:
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    return packet is not None and (overload or "default") in packet.overloads()


def overridden() -> list[str]:
    """The aten operators batch-invariant mode replaces in this PyTorch."""
    return [name for name in OVERRIDES if _exists(name)]


def is_enabled() -> bool:
    """True while detred's kernels replace PyTorch's (between enable() and disable())."""
    return _library is not None


def enable() -> None:
    """Routes the CUDA kernels of overridden() to detred's batch-invariant row kernels, process-wide, until
    disable(). Idempotent."""
    global _library
    with _lock:
        if _library is not None:
            return
        library = torch.library.Library("aten", "IMPL")
        with warnings.catch_warnings():
            # PyTorch warns once that a kernel is overridden: that is the point here.
            warnings.simplefilter("ignore")
            for name in overridden():
                try:
                    _originals[name] = torch.library.get_kernel(f"aten::{name}", _KEY)
                except RuntimeError:  # no kernel of PyTorch's for this key: nothing to replace
                    continue
                library.impl(name, OVERRIDES[name], _KEY, with_keyset=True)
        _library = library


def disable() -> None:
    """Restores PyTorch's own kernels. Idempotent."""
    global _library
    with _lock:
        if _library is None:
            return
        _library._destroy()
        _library = None


@contextlib.contextmanager
def batch_invariant(enabled: bool = True):
    """Inside the block, the overridden() operators run detred's kernels on CUDA tensors (enabled=False: PyTorch's);
    the previous state comes back on exit."""
    previous = is_enabled()
    (enable if enabled else disable)()
    try:
        yield
    finally:
        (enable if previous else disable)()
