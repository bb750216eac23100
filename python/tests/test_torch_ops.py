"""Tests of detred.torch (docs/PYTHON.md, "detred.torch"): the custom operators pass torch.library.opcheck; CUDA gives
the CPU twins' bits; every row's output and gradient row is batch-invariant (f(x[:k]) == f(x)[:k], bitwise); the
gradients agree with PyTorch's own formulation within float32/16-bit tolerances; batch-invariant mode routes aten's
CUDA kernels to detred's inside the context only and falls back to PyTorch's kernels for what it does not cover;
an op runs inside a CUDA-graph capture and under torch.compile(fullgraph=True). CPU tests skip without PyTorch;
CUDA tests are marked ``gpu`` and skip without a GPU or detred's CUDA backend."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")

import detred  # noqa: E402
import detred.torch as dt  # noqa: E402
from detred.torch import _kernels  # noqa: E402

F = torch.nn.functional
HAS_CUDA = detred.cuda_available() and torch.cuda.is_available()
gpu = [pytest.mark.gpu,
       pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend (detred.cuda_available() is False)")]
DEVICES = ["cpu", pytest.param("cuda", marks=gpu)]
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
C = 96  # a row length that is not a multiple of the kernels' vector widths


def bits(t: torch.Tensor) -> torch.Tensor:
    """The bit patterns of t on the host (-0.0 and +0.0 differ; NaNs compare by their bits)."""
    t = t.detach().cpu().contiguous()
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def assert_same_results(first, second) -> None:
    """Two routes' outputs and gradients, position by position: None in both or the same bits."""
    for a, c in zip(first, second, strict=True):
        assert (a is None) == (c is None)
        if a is not None:
            assert same_bits(a, c)


def data(shape, dtype, device, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(dtype).to(device)


# Each case: a name, the op as a function of (x, params) returning one tensor, and the params it needs. Gradients are
# taken with respect to x and the params.
def _params(kind, dtype, device):
    if kind == "rms":
        return [data([C], dtype, device, 1)]
    if kind == "ln":
        return [data([C], dtype, device, 1), data([C], dtype, device, 2)]
    return []


CASES = {
    "rms_norm": ("rms", lambda x, p: dt.rms_norm(x, p[0], 1e-5)),
    "rms_norm_no_weight": ("none", lambda x, p: dt.rms_norm(x, None, 1e-5)),
    "layer_norm": ("ln", lambda x, p: dt.layer_norm(x, [C], p[0], p[1], 1e-5)),
    "softmax": ("none", lambda x, p: dt.softmax(x, -1)),
    "log_softmax": ("none", lambda x, p: dt.log_softmax(x, -1)),
    "logsumexp": ("none", lambda x, p: dt.logsumexp(x, -1)),
    "sum": ("none", lambda x, p: dt.sum(x, -1)),
    "mean": ("none", lambda x, p: dt.mean(x, -1)),
}
TORCH_REFERENCE = {
    "rms_norm": lambda x, p: F.rms_norm(x, [C], p[0], 1e-5),
    "rms_norm_no_weight": lambda x, p: F.rms_norm(x, [C], None, 1e-5),
    "layer_norm": lambda x, p: F.layer_norm(x, [C], p[0], p[1], 1e-5),
    "softmax": lambda x, p: torch.softmax(x, -1),
    "log_softmax": lambda x, p: torch.log_softmax(x, -1),
    "logsumexp": lambda x, p: torch.logsumexp(x, -1),
    "sum": lambda x, p: torch.sum(x, -1),
    "mean": lambda x, p: torch.mean(x, -1),
}


def forward_backward(name, x, params, dy_seed=7):
    """The op's output and the gradients of <output, dy> with respect to x and the params."""
    kind, f = CASES[name]
    x = x.detach().requires_grad_(True)
    ps = [p.detach().requires_grad_(True) for p in params]
    y = f(x, ps)
    dy = data(list(y.shape), y.dtype, y.device, dy_seed)
    grads = torch.autograd.grad(y, [x] + ps, dy)
    return y.detach(), grads


# ---- opcheck --------------------------------------------------------------------------------------------------


def opcheck_cases(device):
    x = data([3, 4, C], torch.float32, device).requires_grad_(True)
    w = data([C], torch.float32, device, 1).requires_grad_(True)
    b = data([C], torch.float32, device, 2).requires_grad_(True)
    sq = data([2, 3, 8, 8], torch.float32, device, 3).requires_grad_(True)
    ops = torch.ops.detred
    return [
        ("rms_norm", ops.rms_norm, (x, [C], w, 1e-5)),
        ("rms_norm_no_weight", ops.rms_norm, (x, [C], None, None)),
        ("layer_norm", ops.layer_norm, (x, [C], w, b, 1e-5)),
        ("layer_norm_2d", ops.layer_norm, (x, [4, C], None, None, 1e-5)),
        ("softmax", ops.softmax, (x, -1, False)),
        ("softmax_dim1", ops.softmax, (x, 1, False)),
        ("softmax_causal", ops.softmax, (sq, -1, True)),
        ("log_softmax", ops.log_softmax, (x, -1, False)),
        ("log_softmax_causal", ops.log_softmax, (sq, -1, True)),
        ("logsumexp", ops.logsumexp, (x, [-1], False)),
        ("logsumexp_dims", ops.logsumexp, (x, [0, 2], True)),
        ("sum", ops.sum, (x, [-1], False)),
        ("sum_leading", ops.sum, (x, [0], True)),
        ("mean", ops.mean, (x, [1], False)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_passes_for_every_op(device):
    """torch.library.opcheck: schema, fake kernel, autograd registration and AOT dispatch of every custom op."""
    failures = {}
    for name, op, args in opcheck_cases(device):
        result = torch.library.opcheck(op, args)
        bad = {k: v for k, v in result.items() if v != "SUCCESS"}
        if bad:
            failures[name] = bad
    assert not failures


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_eager_functions_and_custom_ops_give_the_same_bits(dtype, device):
    """detred.torch's functions run eagerly through torch.autograd.Function, and through torch.ops.detred under
    torch.compile: both routes give the same outputs and gradients, bit for bit."""
    x = data([6, 5, C], dtype, device, 61)
    w, b = data([C], dtype, device, 62), data([C], dtype, device, 63)
    sq = data([2, 2, 9, 9], dtype, device, 64)
    ops = torch.ops.detred
    pairs = [
        (lambda t, ww, bb: dt.rms_norm(t, ww, 1e-5), lambda t, ww, bb: ops.rms_norm(t, [C], ww, 1e-5)[0], x),
        (lambda t, ww, bb: dt.layer_norm(t, [C], ww, bb), lambda t, ww, bb: ops.layer_norm(t, [C], ww, bb, 1e-5)[0],
         x),
        (lambda t, ww, bb: dt.softmax(t, 1), lambda t, ww, bb: ops.softmax(t, 1, False), x),
        (lambda t, ww, bb: dt.log_softmax(t, causal=True), lambda t, ww, bb: ops.log_softmax(t, -1, True), sq),
        (lambda t, ww, bb: dt.logsumexp(t, (0, 2)), lambda t, ww, bb: ops.logsumexp(t, [0, 2], False), x),
        (lambda t, ww, bb: dt.sum(t, 1), lambda t, ww, bb: ops.sum(t, [1], False), x),
        (lambda t, ww, bb: dt.mean(t, 0, True), lambda t, ww, bb: ops.mean(t, [0], True), x),
    ]
    for eager_f, op_f, inp in pairs:
        results = []
        for f in (eager_f, op_f):
            ts = [a.detach().requires_grad_(True) for a in (inp, w, b)]
            y = f(*ts)
            g = torch.autograd.grad(y, ts, data(list(y.shape), y.dtype, device, 65), allow_unused=True)
            results.append([y] + list(g))
        assert_same_results(*results)


# ---- same bits on CPU and CUDA ----------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_gives_the_cpu_twins_bits(name, dtype):
    """Forward and backward on CUDA equal the CPU twins' bits (determinism::cpu_gpu)."""
    kind = CASES[name][0]
    x = data([37, C], dtype, "cpu", 11)
    p = _params(kind, dtype, "cpu")
    y_cpu, g_cpu = forward_backward(name, x, p)
    y_gpu, g_gpu = forward_backward(name, x.cuda(), [q.cuda() for q in p])
    assert same_bits(y_cpu, y_gpu)
    for a, b in zip(g_cpu, g_gpu):
        assert same_bits(a, b)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cols", [768, 1000, 2048, 4096])
def test_norm_gradients_at_model_widths_give_the_cpu_bits(cols, dtype):
    """RMSNorm and LayerNorm forward and backward at model widths (whole warp segments, a tail, exactly 8 or 16
    segments: the forward's register-resident kernels and the streaming ones): the CPU twins' bits."""
    x = data([9, cols], dtype, "cpu", 51, scale=2.0)
    w, b = data([cols], dtype, "cpu", 52), data([cols], dtype, "cpu", 53)
    for f in (lambda t, ww, bb: dt.rms_norm(t, ww, 1e-5), lambda t, ww, bb: dt.layer_norm(t, [cols], ww, bb)):
        outs = []
        for dev in ("cpu", "cuda"):
            ts = [a.to(dev).requires_grad_(True) for a in (x, w, b)]
            y = f(*ts)
            outs.append([y] + list(torch.autograd.grad(y, ts, data([9, cols], dtype, dev, 54), allow_unused=True)))
        assert_same_results(*outs)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
@pytest.mark.parametrize("log", [False, True])
def test_causal_softmax_cuda_gives_the_cpu_bits(log):
    f = dt.log_softmax if log else dt.softmax
    x = data([2, 3, 33, 33], torch.bfloat16, "cpu", 5)
    assert same_bits(f(x, causal=True), f(x.cuda(), causal=True))
    masked = x.float().masked_fill(torch.ones(33, 33, dtype=torch.bool).triu(1), float("-inf"))
    ref = (torch.log_softmax if log else torch.softmax)(masked, -1).to(torch.bfloat16)
    torch.testing.assert_close(f(x, causal=True).float(), ref.float(), rtol=2e-2, atol=2e-2)


# ---- batch invariance -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_rows_are_batch_invariant(name, dtype, device):
    """f(x[:k]) == f(x)[:k] bitwise, and so are the rows of dx, for every k (the batch's other rows change nothing)."""
    kind = CASES[name][0]
    x = data([64, C], dtype, device, 21, scale=3.0)
    p = _params(kind, dtype, device)
    y_all, g_all = forward_backward(name, x, p)
    dy_all = data(list(y_all.shape), y_all.dtype, device, 7)
    for k in (1, 2, 5, 31, 63):
        kind_, f = CASES[name]
        xk = x[:k].detach().requires_grad_(True)
        ps = [q.detach().requires_grad_(True) for q in p]
        yk = f(xk, ps)
        (dxk,) = torch.autograd.grad(yk, [xk], dy_all[:k])
        assert same_bits(yk.detach(), y_all[:k]), f"output rows differ at k={k}"
        assert same_bits(dxk, g_all[0][:k]), f"gradient rows differ at k={k}"


@pytest.mark.parametrize("device", DEVICES)
def test_causal_softmax_is_batch_invariant(device):
    x = data([8, 4, 40, 40], torch.float32, device, 9)
    for f in (dt.softmax, dt.log_softmax):
        full = f(x, causal=True)
        for k in (1, 3):
            assert same_bits(f(x[:k], causal=True), full[:k])


# ---- gradients against PyTorch's formulation --------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_pytorch(name, dtype, device):
    """detred's outputs and gradients agree with PyTorch's own ops (float32: 1e-5 relative; bfloat16: 2^-6)."""
    kind = CASES[name][0]
    x = data([17, C], dtype, device, 31)
    p = _params(kind, dtype, device)
    y, g = forward_backward(name, x, p)
    xr = x.detach().requires_grad_(True)
    pr = [q.detach().requires_grad_(True) for q in p]
    yr = TORCH_REFERENCE[name](xr, pr)
    gr = torch.autograd.grad(yr, [xr] + pr, data(list(yr.shape), yr.dtype, yr.device, 7))
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == torch.float32 else dict(rtol=2**-6, atol=2**-5)
    torch.testing.assert_close(y.float(), yr.detach().float(), **tol)
    for a, b in zip(g, gr):
        scale = max(1.0, float(b.detach().float().abs().max()))
        torch.testing.assert_close(a.float() / scale, b.float() / scale, **tol)


def test_float32_gradients_match_finite_differences():
    """The float32 gradients of every op against central differences in float64 arithmetic of the op's own
    definition (torch's float64 formulation: detred's ops take no float64)."""
    x = data([4, 24], torch.float32, "cpu", 41)
    w = data([24], torch.float32, "cpu", 42)
    defs = {
        "rms_norm": (lambda t: dt.rms_norm(t, w, 1e-5), lambda t: F.rms_norm(t, [24], w.double(), 1e-5)),
        "layer_norm": (lambda t: dt.layer_norm(t, [24], w, None), lambda t: F.layer_norm(t, [24], w.double())),
        "softmax": (lambda t: dt.softmax(t), lambda t: torch.softmax(t, -1)),
        "log_softmax": (lambda t: dt.log_softmax(t), lambda t: torch.log_softmax(t, -1)),
        "logsumexp": (lambda t: dt.logsumexp(t), lambda t: torch.logsumexp(t, -1)),
    }
    dy = data([4, 24], torch.float64, "cpu", 43)
    for name, (ours, exact) in defs.items():
        xg = x.clone().requires_grad_(True)
        y = ours(xg)
        (g,) = torch.autograd.grad(y, [xg], (dy if y.dim() == 2 else dy[:, 0]).float())
        h, fd = 1e-6, torch.zeros(4, 24, dtype=torch.float64)
        for i in range(4):
            for j in range(24):
                e = torch.zeros(4, 24, dtype=torch.float64)
                e[i, j] = h
                yp, ym = exact(x.double() + e), exact(x.double() - e)
                w_dy = dy if yp.dim() == 2 else dy[:, 0]
                fd[i, j] = ((yp - ym) * w_dy).sum() / (2 * h)
        torch.testing.assert_close(g.double(), fd, rtol=1e-4, atol=1e-4, msg=name)


# ---- batch-invariant mode ---------------------------------------------------------------------------------------


def _rms_norm_is_fused() -> bool:
    """Whether F.rms_norm on CUDA runs aten::_fused_rms_norm (else PyTorch composes it of mean.dim and element-wise
    ops, which batch-invariant mode covers through mean.dim)."""
    x = torch.ones(2, 8, device="cuda", requires_grad=True)
    return "FusedRmsNorm" in type(F.rms_norm(x, [8]).grad_fn).__name__


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_overrides_are_active_inside_the_context_only(monkeypatch):
    """Inside batch_invariant() aten's CUDA kernels run detred's (counted), outside PyTorch's; the state returns."""
    calls = []
    for fn in ("softmax_forward", "softmax_backward", "layer_norm_forward", "layer_norm_backward", "rms_norm_forward",
               "rms_norm_backward", "sum_forward", "logsumexp_forward"):
        real = getattr(_kernels, fn)
        monkeypatch.setattr(_kernels, fn, lambda *a, _real=real, _fn=fn, **k: calls.append(_fn) or _real(*a, **k))
    x = data([16, C], torch.bfloat16, "cuda", 3).requires_grad_(True)
    w = data([C], torch.bfloat16, "cuda", 4).requires_grad_(True)

    def step():
        y = F.layer_norm(x, [C], w) + F.rms_norm(x, [C], w)
        z = torch.softmax(y, -1).sum(-1) + torch.logsumexp(y, -1)
        z.sum().backward()

    assert not dt.is_enabled()
    step()
    assert calls == []
    with dt.batch_invariant():
        assert dt.is_enabled()
        step()
        with dt.batch_invariant(False):
            n = len(calls)
            step()
            assert len(calls) == n
        assert dt.is_enabled()
    assert not dt.is_enabled()
    reached = ["softmax_forward", "softmax_backward", "layer_norm_forward", "layer_norm_backward", "sum_forward",
               "logsumexp_forward"]
    if _rms_norm_is_fused():
        reached += ["rms_norm_forward", "rms_norm_backward"]
    for fn in reached:
        assert fn in calls, f"{fn} was not reached through aten"
    n = len(calls)
    step()
    assert len(calls) == n


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_overrides_give_the_custom_ops_bits_and_fall_back_otherwise():
    x = data([33, C], torch.bfloat16, "cuda", 8)
    w = data([C], torch.bfloat16, "cuda", 9)
    d = data([5, 7], torch.float64, "cuda", 10)
    torch_d = torch.softmax(d, -1)
    with dt.batch_invariant():
        assert same_bits(torch.softmax(x, -1), dt.softmax(x))
        assert same_bits(torch.log_softmax(x, -1), dt.log_softmax(x))
        assert same_bits(F.layer_norm(x, [C], w), dt.layer_norm(x, [C], w))
        if _rms_norm_is_fused():
            assert same_bits(F.rms_norm(x, [C], w, 1e-5), dt.rms_norm(x, w, 1e-5))
        assert same_bits(x.sum(-1), dt.sum(x, -1))
        assert same_bits(x.mean(-1), dt.mean(x, -1))
        assert same_bits(torch.logsumexp(x, -1), dt.logsumexp(x, -1))
        assert same_bits(torch.softmax(d, -1), torch_d)  # float64: PyTorch's kernel
        assert torch.equal(torch.arange(6, device="cuda").reshape(2, 3).sum(-1),
                           torch.tensor([3, 12], device="cuda"))  # integers: PyTorch's kernel
    assert set(dt.overridden()) >= {"sum.dim_IntList", "mean.dim", "_softmax", "_log_softmax", "logsumexp",
                                    "native_layer_norm", "native_layer_norm_backward", "_softmax_backward_data",
                                    "_log_softmax_backward_data"}


# ---- CUDA graphs, torch.compile, errors -------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_ops_run_inside_a_cuda_graph_capture():
    x = data([64, C], torch.bfloat16, "cuda", 12)
    w = data([C], torch.bfloat16, "cuda", 13)
    static = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):  # warm-up outside the capture (allocator, lazy init)
            dt.rms_norm(static, w, 1e-5)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = dt.softmax(dt.rms_norm(static, w, 1e-5))
    fresh = data([64, C], torch.bfloat16, "cuda", 14)
    static.copy_(fresh)
    graph.replay()
    torch.cuda.synchronize()
    assert same_bits(y, dt.softmax(dt.rms_norm(fresh, w, 1e-5)))


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_has_no_graph_break(device):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(C, device=device))

        def forward(self, x):
            h = dt.rms_norm(x, self.w, 1e-5)
            return dt.log_softmax(h).sum(-1) + dt.logsumexp(h, -1)

    m = Block()
    x = data([8, C], torch.float32, device, 15).requires_grad_(True)
    compiled = torch.compile(m, fullgraph=True, backend="aot_eager")
    y = compiled(x)
    y.sum().backward()
    assert same_bits(y, m(x))


def test_errors_name_the_argument():
    x = data([4, C], torch.float32, "cpu")
    with pytest.raises(TypeError, match="^x: "):
        dt.softmax(x.double())
    with pytest.raises(ValueError, match="normalized_shape"):
        dt.layer_norm(x, [C + 1])
    with pytest.raises(ValueError, match="causal"):
        dt.softmax(x, causal=True)
    rows = detred._detred._rows
    with pytest.raises(TypeError, match="^out: "):
        rows.softmax_forward(x, torch.empty(4, C, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="^out: "):
        rows.softmax_forward(x, torch.empty(4, C + 1))
    with pytest.raises(ValueError, match="^out: .*contiguous"):
        rows.softmax_forward(x, torch.empty(C, 4).t())
    with pytest.raises(ValueError, match="^rstd: "):
        rows.rms_norm_forward(x, torch.ones(C), torch.empty(4, C), torch.empty(3), 1e-5)
    with pytest.raises(TypeError, match="^weight: "):
        rows.rms_norm_forward(x, torch.ones(C, dtype=torch.float16), torch.empty(4, C), torch.empty(4), 1e-5)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_arguments_on_another_device_are_refused():
    x = data([4, C], torch.float32, "cuda")
    with pytest.raises(ValueError, match="^out: .*device"):
        detred._detred._rows.softmax_forward(x, torch.empty(4, C))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_pointer_calls_check_the_tensors_they_pass():
    # detred.torch passes CUDA tensors to the kernels by address (_kernels._pointer_call): each is checked first, with
    # the array calls' errors.
    x = data([4, C], torch.float32, "cuda")
    with pytest.raises(ValueError, match="^weight: .*device"):
        dt.rms_norm(x, torch.ones(C))
    with pytest.raises(ValueError, match="^bias: .*device"):
        dt.layer_norm(x, [C], torch.ones(C, device="cuda"), torch.zeros(C))
    out, mean, rstd = _kernels.layer_norm_forward(x, [C], None, None, 1e-5)
    with pytest.raises(ValueError, match="^rstd: "):
        _kernels.layer_norm_backward(torch.ones_like(x), x, [C], mean, rstd[:3], None, None)
    with pytest.raises(TypeError, match="^mean: "):
        _kernels.layer_norm_backward(torch.ones_like(x), x, [C], mean.double(), rstd, None, None)
    with pytest.raises(ValueError, match="^dy: "):
        _kernels.softmax_backward(torch.ones(4, C + 1, device="cuda"), x, -1, log=False)
    with pytest.raises(ValueError, match="causal"):
        _kernels.softmax_forward(torch.ones(4, C, device="cuda"), -1, log=False, causal=True)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_norm_path_gives_the_general_paths_bits(dtype):
    """rms_norm and layer_norm on contiguous CUDA rows take the dense path (_kernels.dense_cuda_cols: flat statistics,
    the backward's workspace from PyTorch's allocator); a strided view of the same values takes the general path.
    Both give the same outputs and gradients, bit for bit, and the dense path is the one taken."""
    cols = 1000
    base = data([7, 2 * cols], dtype, "cuda", 81, scale=2.0)
    dense, strided = base[:, :cols].contiguous(), base[:, :cols]
    assert _kernels.dense_cuda_cols(dense, [cols], base[0, :cols].contiguous())
    assert not _kernels.dense_cuda_cols(strided, [cols], base[0, :cols].contiguous())
    w, b = data([cols], dtype, "cuda", 82), data([cols], dtype, "cuda", 83)
    dy = data([7, cols], dtype, "cuda", 84)
    for f in (lambda t, ww, bb: dt.rms_norm(t, ww, 1e-5), lambda t, ww, bb: dt.layer_norm(t, [cols], ww, bb)):
        outs = []
        for x in (dense, strided):
            ts = [a.detach().requires_grad_(True) for a in (x, w, b)]
            y = f(*ts)
            outs.append([y] + list(torch.autograd.grad(y, ts, dy, allow_unused=True)))
        assert_same_results(*outs)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_backward_norms_take_a_given_workspace_and_refuse_a_short_one():
    """The backward norms' pointer calls run on a workspace the caller allocated (the dense path's) with the pool's
    bits, and refuse one smaller than their size query."""
    rows, cols = 64, 512
    rows_module = detred._detred._rows
    x, dy = data([rows, cols], torch.bfloat16, "cuda", 85), data([rows, cols], torch.bfloat16, "cuda", 86)
    w = data([cols], torch.bfloat16, "cuda", 87)
    _, rstd = _kernels.rms_norm_forward_dense(x, cols, w, 1e-5)
    stream = torch.cuda.current_stream().cuda_stream
    needed = rows_module.cuda_rms_norm_backward_workspace(1, rows, cols)
    assert needed >= 16
    results = []
    for given in (None, torch.empty(needed, dtype=torch.uint8, device="cuda")):
        dx, dw = torch.empty_like(x), torch.empty(cols, device="cuda")
        extra = () if given is None else (given.data_ptr(), given.numel())
        rows_module.cuda_rms_norm_backward(1, rows, cols, dy.data_ptr(), x.data_ptr(), w.data_ptr(), rstd.data_ptr(),
                                           dx.data_ptr(), dw.data_ptr(), 0, stream, *extra)
        results.append((dx, dw))
    assert same_bits(results[0][0], results[1][0]) and same_bits(results[0][1], results[1][1])
    short = torch.empty(needed, dtype=torch.uint8, device="cuda")
    with pytest.raises(Exception, match="workspace"):
        rows_module.cuda_rms_norm_backward(1, rows, cols, dy.data_ptr(), x.data_ptr(), w.data_ptr(), rstd.data_ptr(),
                                           dx.data_ptr(), dw.data_ptr(), 0, stream, short.data_ptr(), needed - 1)
    assert rows_module.cuda_layer_norm_backward_workspace(1, rows, cols) >= 16


# ---- the demonstration ------------------------------------------------------------------------------------------


def _example():
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "batch_invariance.py"
    spec = importlib.util.spec_from_file_location("batch_invariance_example", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU or no CUDA backend")
def test_transformer_block_is_batch_invariant_forward_and_backward():
    """The example's block: with batch_invariant() every sequence's logits and gradient rows have the same bits for
    every batch size it is computed in."""
    ex = _example()
    report = ex.compare(batch_sizes=range(1, 17), invariant=True, matmul="fixed")
    assert all(r.mismatched_batch_sizes == 0 for r in report), [str(r) for r in report]
