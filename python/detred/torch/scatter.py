"""Exact scattered sums for PyTorch: custom ops and deterministic overrides of PyTorch's scatter kernels.

Custom ops (namespace ``detred``, registered with ``torch.library`` with fake kernels and autograd, so that
``torch.compile`` and ``torch.library.opcheck`` accept them), functional (they return new tensors):

- ``scatter_add(values, index, out)``: ``out`` with ``out[index[i]] += values[i]`` (flat);
- ``index_add(out, dim, index, source)``: ``out`` with ``source``'s rows added into rows ``index`` along ``dim``;
- ``segment_sum(values, offsets, method="tree")``: the sums of ``values[offsets[s]:offsets[s + 1]]``.

Each output of ``scatter_add`` and ``index_add`` is the correctly rounded sum of its contributions and its prior value
(``detred.scatter_add``): the same bits in any order of the indices, run to run, on the CPU and on CUDA. Gradients
are gathers (``grad[index]``), which are deterministic.

``deterministic()`` is a context manager that, while open, replaces PyTorch's CPU and CUDA kernels of
``aten::index_add``, ``aten::scatter_add``, ``aten::index_put_`` (``accumulate=True``) and
``aten::embedding_dense_backward`` with detred's exact ones, so that existing code (an embedding layer's backward, a
torch_geometric GCNConv) gives the same bits on every run and on the CPU and the GPU, without changes. Floating
tensors of float16 or bfloat16 accumulate in float32 and are rounded once to their type at the end; integer tensors
(exact anyway) keep PyTorch's arithmetic through ``scatter_reduce_``. ``index_put_`` without ``accumulate`` is
served by ``scatter_`` on the same positions (a repeated index writes one of its values, which PyTorch leaves
unspecified too). On CUDA, indices out of range are skipped, as detred.scatter_add documents (PyTorch would raise a
device-side assertion); on the CPU they raise ValueError. Within the context the overrides are process-wide.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, List, Optional, Sequence

import torch

import detred

__all__ = ["scatter_add", "index_add", "segment_sum", "deterministic"]

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


# ---------------------------------------------------------------------------------------------------------------
# Custom ops.


@torch.library.custom_op("detred::scatter_add", mutates_args=())
def scatter_add(values: torch.Tensor, index: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``out`` (a copy) with ``out.view(-1)[index[i]] += values[i]`` for every i, each element correctly rounded."""
    result = out.to(_accumulation_dtype(values.dtype), copy=True).contiguous()
    detred.scatter_add(values.contiguous(), index.contiguous(), result)
    return result


@scatter_add.register_fake
def _(values, index, out):
    return torch.empty(out.shape, dtype=_accumulation_dtype(values.dtype), device=out.device)


def _scatter_add_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    grad_values = grad.reshape(-1).index_select(0, index.reshape(-1)).reshape(ctx.values_shape).to(ctx.values_dtype)
    return grad_values, None, grad.to(ctx.out_dtype)


def _scatter_add_setup(ctx, inputs, output):
    values, index, out = inputs
    ctx.save_for_backward(index)
    ctx.values_shape, ctx.values_dtype, ctx.out_dtype = values.shape, values.dtype, out.dtype


scatter_add.register_autograd(_scatter_add_backward, setup_context=_scatter_add_setup)


@torch.library.custom_op("detred::index_add", mutates_args=())
def index_add(out: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """``out`` (a copy) with ``out.index_add_(dim, index, source)``'s meaning, each element correctly rounded."""
    acc = _accumulation_dtype(source.dtype)
    dim = dim % max(out.dim(), 1)
    result = out.to(acc, copy=True).movedim(dim, 0).contiguous()
    detred.index_add(result, 0, index.contiguous(), source.movedim(dim, 0).contiguous())
    return result.movedim(0, dim).contiguous()


@index_add.register_fake
def _(out, dim, index, source):
    return torch.empty(out.shape, dtype=_accumulation_dtype(source.dtype), device=out.device)


def _index_add_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    grad_source = grad.index_select(ctx.dim, index).to(ctx.source_dtype)
    return grad.to(ctx.out_dtype), None, None, grad_source


def _index_add_setup(ctx, inputs, output):
    out, dim, index, source = inputs
    ctx.save_for_backward(index)
    ctx.dim, ctx.source_dtype, ctx.out_dtype = dim, source.dtype, out.dtype


index_add.register_autograd(_index_add_backward, setup_context=_index_add_setup)


@torch.library.custom_op("detred::segment_sum", mutates_args=())
def segment_sum(values: torch.Tensor, offsets: torch.Tensor, method: str = "tree") -> torch.Tensor:
    """The sums of the sorted segments ``values[offsets[s]:offsets[s + 1]]`` (detred.segment_sum)."""
    return detred.segment_sum(values.contiguous(), offsets.contiguous(), method=method)


@segment_sum.register_fake
def _(values, offsets, method="tree"):
    return torch.empty(offsets.shape[0] - 1, dtype=_accumulation_dtype(values.dtype), device=values.device)


def _segment_sum_backward(ctx, grad):
    (offsets,) = ctx.saved_tensors
    lengths = offsets[1:] - offsets[:-1]
    grad_values = torch.repeat_interleave(grad, lengths, output_size=ctx.count)
    return grad_values.to(ctx.values_dtype), None, None


def _segment_sum_setup(ctx, inputs, output):
    values, offsets, method = inputs
    ctx.save_for_backward(offsets)
    ctx.count, ctx.values_dtype = values.shape[0], values.dtype


segment_sum.register_autograd(_segment_sum_backward, setup_context=_segment_sum_setup)


# ---------------------------------------------------------------------------------------------------------------
# The aten overrides. Each works on a float32/float64 contiguous copy when it must and writes the result back.


def _exact_into(self: torch.Tensor, flat_index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """self.view(-1)[flat_index[i]] += values[i], exactly (floats) or by scatter_reduce_ (other types); in place."""
    if self.dtype not in _FLOATS or values.dtype not in _FLOATS:
        flat = self.view(-1) if self.is_contiguous() else self.reshape(-1)
        flat.scatter_reduce_(0, flat_index.reshape(-1), values.reshape(-1).to(self.dtype), "sum")
        if not self.is_contiguous():
            self.copy_(flat.view(self.shape))
        return self
    acc = _accumulation_dtype(self.dtype)
    work = self if self.dtype == acc and self.is_contiguous() else self.to(acc).contiguous()
    source = values.reshape(-1)
    if _accumulation_dtype(source.dtype) != acc:
        source = source.to(acc)
    detred.scatter_add(source.contiguous(), flat_index.reshape(-1).contiguous(), work.view(-1))
    if work is not self:
        self.copy_(work)
    return self


def _rows_into(self: torch.Tensor, index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """self[index[i], ...] += source[i, ...] (rows along dim 0), exactly; in place."""
    if self.dtype not in _FLOATS or source.dtype not in _FLOATS:
        expanded = index.view((-1,) + (1,) * (source.dim() - 1)).expand_as(source)
        return self.scatter_reduce_(0, expanded, source.to(self.dtype), "sum")
    acc = _accumulation_dtype(self.dtype)
    work = self if self.dtype == acc and self.is_contiguous() else self.to(acc).contiguous()
    if _accumulation_dtype(source.dtype) != acc:
        source = source.to(acc)
    detred.index_add(work, 0, index.contiguous(), source.contiguous())
    if work is not self:
        self.copy_(work)
    return self


def _index_add_inplace(self, dim, index, source, *, alpha=1):
    if alpha != 1:
        source = source * alpha
    dim = dim % max(self.dim(), 1)
    if self.dim() == 0:
        return _rows_into(self.view(1), index.view(-1), source.reshape(-1)).view(())
    if dim == 0:
        return _rows_into(self, index, source)
    moved = self.movedim(dim, 0).contiguous()
    _rows_into(moved, index, source.movedim(dim, 0))
    self.copy_(moved.movedim(0, dim))
    return self


def _index_add(self, dim, index, source, *, alpha=1):
    return _index_add_inplace(self.clone(memory_format=torch.contiguous_format), dim, index, source, alpha=alpha)


def _index_add_out(self, dim, index, source, *, alpha=1, out):
    out.copy_(self)
    return _index_add_inplace(out, dim, index, source, alpha=alpha)


def _scatter_targets(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """The flat position in a contiguous tensor of self's shape of each element of index (scatter along dim)."""
    strides = torch.empty(self.shape, device="meta").stride() if self.dim() else ()
    flat = index.to(torch.int64) * (strides[dim] if self.dim() else 1)
    for d in range(index.dim()):
        if d == dim:
            continue
        shape = [1] * index.dim()
        shape[d] = index.shape[d]
        flat = flat + (torch.arange(index.shape[d], device=index.device) * strides[d]).view(shape)
    return flat


def _scatter_add_inplace(self, dim, index, src):
    if index.numel() == 0:
        return self
    dim = dim % max(self.dim(), 1)
    if self.dim() == 0:
        return _exact_into(self, index.reshape(-1), src.reshape(-1)[: index.numel()])
    values = src[tuple(slice(0, s) for s in index.shape)]
    return _exact_into(self, _scatter_targets(self, dim, index), values)


def _scatter_add(self, dim, index, src):
    return _scatter_add_inplace(self.clone(memory_format=torch.contiguous_format), dim, index, src)


def _scatter_add_out(self, dim, index, src, *, out):
    out.copy_(self)
    return _scatter_add_inplace(out, dim, index, src)


def _index_put_inplace(self, indices: Sequence[Optional[torch.Tensor]], values, accumulate=False):
    # The flat target of every indexed element, by applying the same advanced indexing to the positions (aten::index,
    # which these overrides leave alone, so every indexing rule holds).
    if (
        accumulate
        and len(indices) == 1
        and indices[0] is not None
        and indices[0].dtype in (torch.int32, torch.int64)
        and indices[0].dim() == 1
        and self.dim() >= 1
    ):
        index = indices[0]
        rows = values.expand((index.shape[0],) + tuple(self.shape[1:]))
        return _rows_into(self, torch.where(index < 0, index + self.shape[0], index), rows)
    key = tuple(slice(None) if i is None else i for i in indices)
    positions = torch.arange(self.numel(), device=self.device).view(self.shape)[key]
    values = values.expand(positions.shape)
    if accumulate:
        return _exact_into(self, positions, values)
    flat = self.view(-1) if self.is_contiguous() else self.reshape(-1)
    flat.scatter_(0, positions.reshape(-1), values.reshape(-1).to(self.dtype))
    if not self.is_contiguous():
        self.copy_(flat.view(self.shape))
    return self


def _index_put(self, indices, values, accumulate=False):
    return _index_put_inplace(self.clone(memory_format=torch.contiguous_format), indices, values, accumulate)


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.shape[-1]
    index = indices.reshape(-1).to(torch.int64)
    grad = grad_output.reshape(-1, d)
    if scale_grad_by_freq:
        counts = torch.bincount(index, minlength=num_weights)
        grad = grad / counts.index_select(0, index).to(grad.dtype).unsqueeze(1)
    if padding_idx >= 0:
        # An index past the end is skipped on the GPU; on the CPU the rows are dropped.
        keep = index != padding_idx
        if grad_output.is_cuda:
            index = torch.where(keep, index, torch.full_like(index, num_weights))
        else:
            index, grad = index[keep], grad[keep]
    acc = _accumulation_dtype(grad_output.dtype)
    weight = torch.zeros(num_weights, d, dtype=acc, device=grad_output.device)
    detred.index_add(weight, 0, index.contiguous(), grad.contiguous())
    return weight.to(grad_output.dtype)


_OVERRIDES = [
    ("index_add_", _index_add_inplace),
    ("index_add", _index_add),
    ("index_add.out", _index_add_out),
    ("scatter_add_", _scatter_add_inplace),
    ("scatter_add", _scatter_add),
    ("scatter_add.out", _scatter_add_out),
    ("index_put_", _index_put_inplace),
    ("index_put", _index_put),
    ("embedding_dense_backward", _embedding_dense_backward),
]


@contextlib.contextmanager
def deterministic(devices: Sequence[str] = ("CUDA", "CPU")) -> Iterator[None]:
    """While open, PyTorch's index_add, scatter_add, index_put (accumulate=True) and embedding_dense_backward run
    detred's exact kernels on the given dispatch keys (CUDA and CPU by default): the same bits on every run, and
    on the CPU and the GPU. Overrides are removed on exit. Not re-entrant across threads (the registration is
    process-wide while open)."""
    library = torch.library.Library("aten", "IMPL")
    try:
        for key in devices:
            for name, fn in _OVERRIDES:
                library.impl(name, fn, key)
        yield
    finally:
        library._destroy()


def _registered() -> List[str]:
    return [name for name, _ in _OVERRIDES]
