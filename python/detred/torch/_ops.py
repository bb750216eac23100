"""detred's row kernels as PyTorch custom operators (namespace ``detred``), each with a fake kernel (shapes only, for
torch.compile and FakeTensor tracing) and an autograd formula whose backward is itself a custom operator of detred's
kernels. The forward norms return their statistics as aten's do (``detred::rms_norm`` -> (out, rstd) like
``aten::_fused_rms_norm``, ``detred::layer_norm`` -> (out, mean, rstd) like ``aten::native_layer_norm``); the public
functions of detred.torch return the output alone.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from . import _kernels as K

# ---- RMSNorm ----------------------------------------------------------------------------------------------------


@torch.library.custom_op("detred::rms_norm", mutates_args=())
def rms_norm_op(x: Tensor, normalized_shape: list[int], weight: Optional[Tensor],
                eps: Optional[float]) -> tuple[Tensor, Tensor]:
    K.check_float(x)
    return K.rms_norm_forward(x, normalized_shape, weight, eps)


@rms_norm_op.register_fake
def _(x, normalized_shape, weight, eps):
    k = K.normalized_dims(x, normalized_shape)
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            x.new_empty(K.stat_shape(x, k), dtype=torch.float32))


@torch.library.custom_op("detred::rms_norm_backward", mutates_args=())
def rms_norm_backward_op(dy: Tensor, x: Tensor, normalized_shape: list[int], rstd: Tensor,
                         weight: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    dx, dw = K.rms_norm_backward(dy, x, normalized_shape, rstd, weight)
    if dw is None:  # no weight: the gradient an all-ones weight would get
        dw = torch.empty(0, dtype=x.dtype, device=x.device)
    return dx, dw


@rms_norm_backward_op.register_fake
def _(dy, x, normalized_shape, rstd, weight):
    dw = (x.new_empty(0) if weight is None else torch.empty_like(weight, memory_format=torch.contiguous_format))
    return torch.empty_like(x, memory_format=torch.contiguous_format), dw


def _rms_norm_setup(ctx, inputs, output):
    x, normalized_shape, weight, _ = inputs
    ctx.normalized_shape = normalized_shape
    ctx.has_weight = weight is not None
    ctx.save_for_backward(x, weight, output[1])


def _rms_norm_grad(ctx, dout, drstd):
    x, weight, rstd = ctx.saved_tensors
    dx, dw = torch.ops.detred.rms_norm_backward(dout, x, ctx.normalized_shape, rstd, weight)
    return dx, None, (dw if ctx.has_weight else None), None


rms_norm_op.register_autograd(_rms_norm_grad, setup_context=_rms_norm_setup)

# ---- LayerNorm --------------------------------------------------------------------------------------------------


@torch.library.custom_op("detred::layer_norm", mutates_args=())
def layer_norm_op(x: Tensor, normalized_shape: list[int], weight: Optional[Tensor], bias: Optional[Tensor],
                  eps: float) -> tuple[Tensor, Tensor, Tensor]:
    K.check_float(x)
    return K.layer_norm_forward(x, normalized_shape, weight, bias, eps)


@layer_norm_op.register_fake
def _(x, normalized_shape, weight, bias, eps):
    k = K.normalized_dims(x, normalized_shape)
    s = K.stat_shape(x, k)
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            x.new_empty(s, dtype=torch.float32), x.new_empty(s, dtype=torch.float32))


@torch.library.custom_op("detred::layer_norm_backward", mutates_args=())
def layer_norm_backward_op(dy: Tensor, x: Tensor, normalized_shape: list[int], mean: Tensor, rstd: Tensor,
                           weight: Optional[Tensor], bias: Optional[Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    dx, dw, db = K.layer_norm_backward(dy, x, normalized_shape, mean, rstd, weight, bias)
    empty = torch.empty(0, dtype=x.dtype, device=x.device)
    return dx, (empty if dw is None else dw), (empty.clone() if db is None else db)


@layer_norm_backward_op.register_fake
def _(dy, x, normalized_shape, mean, rstd, weight, bias):
    def like(p):
        return x.new_empty(0) if p is None else torch.empty_like(p, memory_format=torch.contiguous_format)

    return torch.empty_like(x, memory_format=torch.contiguous_format), like(weight), like(bias)


def _layer_norm_setup(ctx, inputs, output):
    x, normalized_shape, weight, bias, _ = inputs
    ctx.normalized_shape = normalized_shape
    ctx.has = (weight is not None, bias is not None)
    ctx.save_for_backward(x, weight, bias, output[1], output[2])


def _layer_norm_grad(ctx, dout, dmean, drstd):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    dx, dw, db = torch.ops.detred.layer_norm_backward(dout, x, ctx.normalized_shape, mean, rstd, weight, bias)
    return dx, None, (dw if ctx.has[0] else None), (db if ctx.has[1] else None), None


layer_norm_op.register_autograd(_layer_norm_grad, setup_context=_layer_norm_setup)

# ---- softmax, log-softmax ---------------------------------------------------------------------------------------


def _check_causal(x: Tensor, dim: int, causal: bool) -> None:
    if causal and (x.dim() < 2 or dim % x.dim() != x.dim() - 1 or x.shape[-1] != x.shape[-2]):
        raise ValueError("causal: causal rows need a [..., T, T] tensor and dim=-1")


@torch.library.custom_op("detred::softmax", mutates_args=())
def softmax_op(x: Tensor, dim: int = -1, causal: bool = False) -> Tensor:
    K.check_float(x)
    _check_causal(x, dim, causal)
    return K.softmax_forward(x, dim, log=False, causal=causal)


@torch.library.custom_op("detred::log_softmax", mutates_args=())
def log_softmax_op(x: Tensor, dim: int = -1, causal: bool = False) -> Tensor:
    K.check_float(x)
    _check_causal(x, dim, causal)
    return K.softmax_forward(x, dim, log=True, causal=causal)


@torch.library.custom_op("detred::softmax_backward", mutates_args=())
def softmax_backward_op(dy: Tensor, y: Tensor, dim: int, causal: bool) -> Tensor:
    return K.softmax_backward(dy, y, dim, log=False, causal=causal)


@torch.library.custom_op("detred::log_softmax_backward", mutates_args=())
def log_softmax_backward_op(dy: Tensor, y: Tensor, dim: int, causal: bool) -> Tensor:
    return K.softmax_backward(dy, y, dim, log=True, causal=causal)


for _op in (softmax_op, log_softmax_op):
    _op.register_fake(lambda x, dim=-1, causal=False: torch.empty_like(x, memory_format=torch.contiguous_format))
for _op in (softmax_backward_op, log_softmax_backward_op):
    _op.register_fake(lambda dy, y, dim, causal: torch.empty_like(y, memory_format=torch.contiguous_format))


def _softmax_setup(ctx, inputs, output):
    _, dim, causal = inputs
    ctx.dim, ctx.causal = dim, causal
    ctx.save_for_backward(output)


def _softmax_grad(ctx, dout):
    (y,) = ctx.saved_tensors
    return torch.ops.detred.softmax_backward(dout, y, ctx.dim, ctx.causal), None, None


def _log_softmax_grad(ctx, dout):
    (y,) = ctx.saved_tensors
    return torch.ops.detred.log_softmax_backward(dout, y, ctx.dim, ctx.causal), None, None


softmax_op.register_autograd(_softmax_grad, setup_context=_softmax_setup)
log_softmax_op.register_autograd(_log_softmax_grad, setup_context=_softmax_setup)

# ---- log-sum-exp, sum, mean -------------------------------------------------------------------------------------


def _reduced_fake(x: Tensor, dim: list[int], keepdim: bool, dtype: torch.dtype) -> Tensor:
    return x.new_empty(K.reduced_shape(x, K.reduce_dims(x, dim), keepdim), dtype=dtype)


@torch.library.custom_op("detred::logsumexp", mutates_args=())
def logsumexp_op(x: Tensor, dim: list[int], keepdim: bool = False) -> Tensor:
    K.check_float(x)
    return K.logsumexp_forward(x, dim, keepdim)


@logsumexp_op.register_fake
def _(x, dim, keepdim=False):
    return _reduced_fake(x, dim, keepdim, x.dtype)


@torch.library.custom_op("detred::logsumexp_backward", mutates_args=())
def logsumexp_backward_op(dout: Tensor, x: Tensor, lse: Tensor, dim: list[int], keepdim: bool) -> Tensor:
    return K.logsumexp_backward(dout, x, lse, dim, keepdim)


@logsumexp_backward_op.register_fake
def _(dout, x, lse, dim, keepdim):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _logsumexp_setup(ctx, inputs, output):
    _, dim, keepdim = inputs
    ctx.dim, ctx.keepdim = dim, keepdim
    ctx.save_for_backward(inputs[0], output)


def _logsumexp_grad(ctx, dout):
    x, lse = ctx.saved_tensors
    return torch.ops.detred.logsumexp_backward(dout, x, lse, ctx.dim, ctx.keepdim), None, None


logsumexp_op.register_autograd(_logsumexp_grad, setup_context=_logsumexp_setup)


@torch.library.custom_op("detred::sum", mutates_args=())
def sum_op(x: Tensor, dim: list[int], keepdim: bool = False) -> Tensor:
    K.check_float(x)
    return K.sum_forward(x, dim, keepdim, mean=False)


@torch.library.custom_op("detred::mean", mutates_args=())
def mean_op(x: Tensor, dim: list[int], keepdim: bool = False) -> Tensor:
    K.check_float(x)
    return K.sum_forward(x, dim, keepdim, mean=True)


for _op in (sum_op, mean_op):
    _op.register_fake(lambda x, dim, keepdim=False: _reduced_fake(x, dim, keepdim, x.dtype))


def _sum_setup(ctx, inputs, output):
    x, dim, keepdim = inputs
    ctx.dim, ctx.keepdim, ctx.shape, ctx.dtype = dim, keepdim, x.shape, x.dtype


def _broadcast_grad(ctx, dout, mean):
    dims = list(range(len(ctx.shape))) if not ctx.dim else [d % max(len(ctx.shape), 1) for d in ctx.dim]
    g = dout
    if not ctx.keepdim:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    if mean:  # a float32 division by a tensor: IEEE division on every device (a scalar divisor may become a reciprocal)
        g = g.float()
        g = g / torch.full_like(g, math.prod(ctx.shape[d] for d in dims))
    return g.to(ctx.dtype).expand(ctx.shape), None, None


sum_op.register_autograd(lambda ctx, dout: _broadcast_grad(ctx, dout, False), setup_context=_sum_setup)
mean_op.register_autograd(lambda ctx, dout: _broadcast_grad(ctx, dout, True), setup_context=_sum_setup)

# ---- the eager path ---------------------------------------------------------------------------------------------
# The public functions of detred.torch call the same kernels (_kernels) through torch.autograd.Function when they run
# eagerly on plain tensors: the custom operators' Python dispatch (schema parsing, the autograd wrapper) costs about
# as much as the kernels' own glue, twice per forward and backward. Under torch.compile, and for tensor subclasses
# (FakeTensor, ...), they call the operators above. Both routes run the same calls: the same bits.


_PLAIN = (Tensor, torch.nn.Parameter)


def eager(*tensors) -> bool:
    return not torch.compiler.is_compiling() and all(t is None or type(t) in _PLAIN for t in tensors)


class RmsNorm(torch.autograd.Function):
    # The dense CUDA path (K.dense_cuda_cols) where it applies, the general functions otherwise: the same kernels.
    @staticmethod
    def forward(ctx, x, weight, normalized_shape, eps):
        cols = K.dense_cuda_cols(x, normalized_shape, weight)
        if cols:
            out, rstd = K.rms_norm_forward_dense(x, cols, weight, eps)
        else:
            out, rstd = K.rms_norm_forward(x, normalized_shape, weight, eps)
        ctx.cols, ctx.normalized_shape = cols, normalized_shape
        ctx.save_for_backward(x, weight, rstd)
        return out

    @staticmethod
    def backward(ctx, dout):
        x, weight, rstd = ctx.saved_tensors
        if ctx.cols:
            dx, dw = K.rms_norm_backward_dense(dout, x, ctx.cols, rstd, weight)
        else:
            dx, dw = K.rms_norm_backward(dout, x, ctx.normalized_shape, rstd, weight)
        return dx, dw, None, None


class LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, normalized_shape, eps):
        cols = K.dense_cuda_cols(x, normalized_shape, weight, bias)
        if cols:
            out, mean, rstd = K.layer_norm_forward_dense(x, cols, weight, bias, eps)
        else:
            out, mean, rstd = K.layer_norm_forward(x, normalized_shape, weight, bias, eps)
        ctx.cols, ctx.normalized_shape = cols, normalized_shape
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return out

    @staticmethod
    def backward(ctx, dout):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        if ctx.cols:
            dx, dw, db = K.layer_norm_backward_dense(dout, x, ctx.cols, mean, rstd, weight, bias)
        else:
            dx, dw, db = K.layer_norm_backward(dout, x, ctx.normalized_shape, mean, rstd, weight, bias)
        return dx, dw, db, None, None


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, causal, log):
        y = K.softmax_forward(x, dim, log=log, causal=causal)
        ctx.dim, ctx.causal, ctx.log = dim, causal, log
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dout):
        (y,) = ctx.saved_tensors
        return K.softmax_backward(dout, y, ctx.dim, log=ctx.log, causal=ctx.causal), None, None, None


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        out = K.logsumexp_forward(x, dim, keepdim)
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, dout):
        x, lse = ctx.saved_tensors
        return K.logsumexp_backward(dout, x, lse, ctx.dim, ctx.keepdim), None, None


class Sum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim, mean):
        _sum_setup(ctx, (x, dim, keepdim), None)
        ctx.mean = mean
        return K.sum_forward(x, dim, keepdim, mean=mean)

    @staticmethod
    def backward(ctx, dout):
        return _broadcast_grad(ctx, dout, ctx.mean)[0], None, None, None


def check_causal(x: Tensor, dim: int, causal: bool) -> None:
    _check_causal(x, dim, causal)
