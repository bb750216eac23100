"""detred for PyTorch: batch-invariant row operations, forward and backward (docs/PYTHON.md, "detred.torch").

Custom operators (``torch.ops.detred.*``, registered with torch.library: schema, fake kernel, autograd), on CPU and
CUDA tensors of float16, bfloat16 or float32 with float32 accumulation: every row's result, and every row of its
gradient, is a function of that row alone in an order fixed by its length, so ``f(x[:k]) == f(x)[:k]`` bit for bit,
and CPU and CUDA give the same bits.

    rms_norm(x, weight=None, eps=None)          layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5)
    softmax(x, dim=-1)   log_softmax(x, dim=-1)  logsumexp(x, dim=-1, keepdim=False)
    sum(x, dim, keepdim=False)                   mean(x, dim, keepdim=False)

Batch-invariant mode routes PyTorch's own CUDA kernels of these operations (and their backward kernels) to detred's:

    with detred.torch.batch_invariant():
        loss = model(tokens)        # torch.softmax, F.layer_norm, F.rms_norm, x.sum(-1), ... run detred's kernels
        loss.backward()

or ``enable()`` / ``disable()``. Matrix products and attention kernels are not covered (combine with a batch-invariant
matmul). Importing this module needs PyTorch.

The exact scatter family, ``detred.torch.scatter``, is re-exported here: ``scatter_add``, ``index_add``,
``segment_sum`` (custom ops with autograd) and ``deterministic()`` (routes aten's index_add, scatter_add, index_put
with accumulate and embedding_dense_backward to them). ``detred.torch.distributed`` (reproducible gradient reduction
over NCCL: a DDP comm hook, an FSDP2 reduce-scatter) is imported on its own: it needs detred's NCCL module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

import torch

from . import _kernels, _ops
from ._overrides import batch_invariant, disable, enable, is_enabled, overridden
from .scatter import deterministic, index_add, scatter_add, segment_sum

__all__ = [
    "rms_norm", "layer_norm", "softmax", "log_softmax", "logsumexp", "sum", "mean",
    "batch_invariant", "enable", "disable", "is_enabled", "overridden",
    "scatter_add", "index_add", "segment_sum", "deterministic",
]

_Dims = Union[int, Sequence[int]]


def _dims(dim: _Dims) -> list[int]:
    return [int(dim)] if isinstance(dim, int) else [int(d) for d in dim]


def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: Optional[float] = None) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing dimensions weight spans (the last one without a
    weight); eps None: float32's machine epsilon (as torch.nn.functional.rms_norm). Output in x's type; weight
    is used in x's type."""
    shape = list(weight.shape) if weight is not None else [x.shape[-1]]
    if _ops.eager(x, weight):
        _kernels.check_float(x)
        return _ops.RmsNorm.apply(x, weight, shape, eps)
    return torch.ops.detred.rms_norm(x, shape, weight, eps)[0]


def layer_norm(x: torch.Tensor, normalized_shape: Sequence[int], weight: Optional[torch.Tensor] = None,
               bias: Optional[torch.Tensor] = None, eps: float = 1e-5) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized_shape (population variance, a second
    pass over the centred row), as torch.nn.functional.layer_norm."""
    if _ops.eager(x, weight, bias):
        _kernels.check_float(x)
        return _ops.LayerNorm.apply(x, weight, bias, list(normalized_shape), float(eps))
    return torch.ops.detred.layer_norm(x, list(normalized_shape), weight, bias, float(eps))[0]


def softmax(x: torch.Tensor, dim: int = -1, *, causal: bool = False) -> torch.Tensor:
    """exp(x - m) / sum(exp(x - m)) over dim, m the maximum. causal: x is [..., T, T], dim -1, and row i of each
    matrix keeps its first i + 1 entries (the rest are 0), as a softmax after a causal mask, reading only the kept
    entries."""
    if _ops.eager(x):
        _kernels.check_float(x)
        _ops.check_causal(x, dim, causal)
        return _ops.Softmax.apply(x, dim, causal, False)
    return torch.ops.detred.softmax(x, dim, causal)


def log_softmax(x: torch.Tensor, dim: int = -1, *, causal: bool = False) -> torch.Tensor:
    """x - logsumexp(x, dim) (causal as softmax; the masked entries are -inf)."""
    if _ops.eager(x):
        _kernels.check_float(x)
        _ops.check_causal(x, dim, causal)
        return _ops.Softmax.apply(x, dim, causal, True)
    return torch.ops.detred.log_softmax(x, dim, causal)


def logsumexp(x: torch.Tensor, dim: _Dims = -1, keepdim: bool = False) -> torch.Tensor:
    """log(sum(exp(x))) over dim: m + log(sum(exp(x - m))), m the maximum, the sum in the canonical order, result in x's type."""
    if _ops.eager(x):
        _kernels.check_float(x)
        return _ops.LogSumExp.apply(x, _dims(dim), keepdim)
    return torch.ops.detred.logsumexp(x, _dims(dim), keepdim)


def sum(x: torch.Tensor, dim: _Dims, keepdim: bool = False) -> torch.Tensor:  # noqa: A001 (torch's name)
    """The canonical-order float32 sum over dim, rounded once to x's type."""
    if _ops.eager(x):
        _kernels.check_float(x)
        return _ops.Sum.apply(x, _dims(dim), keepdim, False)
    return torch.ops.detred.sum(x, _dims(dim), keepdim)


def mean(x: torch.Tensor, dim: _Dims, keepdim: bool = False) -> torch.Tensor:
    """The mean over dim (Welford merges in the canonical order; over leading dimensions the canonical column sum
    divided by the count), float32, rounded once to x's type."""
    if _ops.eager(x):
        _kernels.check_float(x)
        return _ops.Sum.apply(x, _dims(dim), keepdim, True)
    return torch.ops.detred.mean(x, _dims(dim), keepdim)
