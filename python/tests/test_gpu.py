"""GPU tests of the CUDA backend: every function gives the CPU backend's bits on PyTorch, CuPy and JAX CUDA arrays
(float16, bfloat16, float32, float64 inputs; axis None, -1, 0; every GPU sum method), runs on the framework's current
stream (a race would show as wrong bits), works inside a PyTorch CUDA-graph capture, on every device present, and
refuses bad inputs naming the argument. Marked ``gpu``; skipped, saying why, without a GPU or the CUDA backend."""

from __future__ import annotations

import numpy as np
import pytest

import detred
from conftest import BFLOAT16, same_bits

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not detred.cuda_available(),
                       reason="no CUDA GPU or no CUDA backend in this build (detred.cuda_available() is False)"),
]

DTYPES = ["float16", "bfloat16", "float32", "float64"]


def host_data(rng, shape, dtype, kind="normal"):
    """Test data as numpy (bfloat16 through ml_dtypes); ill-conditioned data for kind='ill'."""
    n = int(np.prod(shape))
    if kind == "ill":
        big = rng.standard_normal(n) * 2.0 ** rng.integers(0, 8 if dtype in ("float16", "bfloat16") else 20, n)
        x = np.where(rng.random(n) < 0.5, big, -big) + rng.standard_normal(n) * 1e-3
    else:
        x = rng.standard_normal(n)
    target = BFLOAT16 if dtype == "bfloat16" else np.dtype(dtype)
    return x.astype(np.float32 if dtype in ("float16", "bfloat16") else np.float64).astype(target).reshape(shape)


class Torch:
    name = "torch"

    def __init__(self):
        self.torch = pytest.importorskip("torch")
        if not self.torch.cuda.is_available():
            pytest.skip("PyTorch sees no CUDA device")

    def to_device(self, a, device=0):
        t = self.torch
        if a.dtype == BFLOAT16:
            return t.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(t.bfloat16).to(f"cuda:{device}")
        return t.from_numpy(np.ascontiguousarray(a)).to(f"cuda:{device}")

    def to_host(self, r):
        t = self.torch
        r = r.cpu()
        if r.dtype == t.bfloat16:
            return r.view(t.int16).numpy().view(np.uint16).view(BFLOAT16)
        return r.numpy()


class CuPy:
    name = "cupy"

    def __init__(self):
        self.cupy = pytest.importorskip("cupy")

    def to_device(self, a, device=0):
        if a.dtype == BFLOAT16:
            pytest.skip("CuPy has no bfloat16")
        with self.cupy.cuda.Device(device):
            return self.cupy.asarray(a)

    def to_host(self, r):
        return self.cupy.asnumpy(r)


class Jax:
    name = "jax"

    def __init__(self):
        self.jax = pytest.importorskip("jax")
        self.gpus = [d for d in self.jax.devices() if d.platform == "gpu"]
        if not self.gpus:
            pytest.skip("JAX sees no GPU")
        if not self.jax.config.jax_enable_x64:
            self.jax.config.update("jax_enable_x64", True)

    def to_device(self, a, device=0):
        return self.jax.device_put(a, self.gpus[device])

    def to_host(self, r):
        return np.asarray(r)


FRAMEWORKS = [Torch, CuPy, Jax]


def cpu_result(fn, a, **kw):
    return np.asarray(fn(a, **kw))


def check_same(framework, fn, a, **kw):
    a = np.ascontiguousarray(a)
    expected = cpu_result(fn, a, **kw)
    got = framework.to_host(fn(framework.to_device(a), **kw))
    assert same_bits(np.asarray(got), expected), f"{fn.__name__}{kw}: GPU {got!r} != CPU {expected!r}"


@pytest.mark.parametrize("framework_class", FRAMEWORKS, ids=lambda f: f.__name__.lower())
@pytest.mark.parametrize("dtype", DTYPES)
def test_sums_have_the_cpu_bits(framework_class, dtype):
    fw = framework_class()
    rng = np.random.default_rng(7)
    for shape in [(0,), (1,), (1000,), (3, 5), (37, 300), (513, 129)]:
        for kind in ["normal", "ill"]:
            a = host_data(rng, shape, dtype, kind)
            for method in ["tree", "tree_neumaier", "exact"]:
                for axis in [None, -1, 0]:
                    check_same(fw, detred.sum, a, axis=axis, method=method)
            check_same(fw, detred.sum, a, dtype="float64")
            if len(shape) == 2:
                check_same(fw, detred.sum, a, axis=-1, dtype="float64")


@pytest.mark.parametrize("framework_class", FRAMEWORKS, ids=lambda f: f.__name__.lower())
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_function_has_the_cpu_bits(framework_class, dtype):
    fw = framework_class()
    rng = np.random.default_rng(11)
    for shape in [(1,), (777,), (17, 33), (64, 1000)]:
        a = host_data(rng, shape, dtype)
        for axis in [None, -1, 0]:
            check_same(fw, detred.prod, a[..., :20] if len(shape) == 2 else a[:20], axis=axis)
            check_same(fw, detred.norm, a, axis=axis)
            for f in (detred.min, detred.max, detred.argmin, detred.argmax):
                check_same(fw, f, a, axis=axis)
            if dtype != "float64":
                for f in (detred.logsumexp, detred.mean, detred.var):
                    check_same(fw, f, a, axis=axis)
        check_same(fw, detred.cumsum, a)
        check_same(fw, detred.cumsum, a, exclusive=True)
        if dtype in ("float32", "float64"):
            check_same(fw, detred.cumsum, a, dtype="float64")
        flat = a.reshape(-1)
        expected = np.asarray(detred.dot(flat, flat[::-1].copy()))
        got = fw.to_host(detred.dot(fw.to_device(flat), fw.to_device(flat[::-1].copy())))
        assert same_bits(np.asarray(got), expected)


@pytest.mark.parametrize("framework_class", FRAMEWORKS, ids=lambda f: f.__name__.lower())
def test_integer_extrema_and_float64_refusals(framework_class):
    fw = framework_class()
    a = np.arange(-50, 50, dtype=np.int64)[::-1].copy()
    for f in (detred.min, detred.max, detred.argmin, detred.argmax):
        check_same(fw, f, a)
    x = fw.to_device(np.ones(10))
    with pytest.raises(TypeError, match="^x: .*float32"):
        detred.logsumexp(x)
    with pytest.raises(ValueError, match="^method: "):
        detred.sum(x, method="kahan")


def test_results_are_of_the_inputs_framework_and_device():
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 100, device="cuda")
    r = detred.sum(x, axis=-1)
    assert isinstance(r, torch.Tensor) and r.device == x.device and r.shape == (4,) and r.dtype == torch.float32
    s = detred.sum(x)
    assert s.shape == () and s.device == x.device
    i = detred.argmax(x)
    assert i.dtype == torch.int64 and i.device == x.device


def test_runs_on_the_current_stream_without_a_race():
    """The input is written on a side stream behind a long sleep; detred must run after it on that stream (a call on
    any other stream would read the old values). The result is read on the main stream after an event."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(1 << 22, device="cuda")
    values = torch.randn(1 << 22, device="cuda")
    expected = detred.sum(values.cpu().numpy())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time before the write
        x.copy_(values)
        r = detred.sum(x)
        rows = detred.sum(x.view(1024, -1), axis=-1)
        done = torch.cuda.Event()
        done.record(side)
    torch.cuda.current_stream().wait_event(done)
    assert same_bits(r.cpu().numpy(), np.asarray(expected))
    assert same_bits(rows.cpu().numpy(), np.asarray(detred.sum(values.cpu().numpy().reshape(1024, -1), axis=-1)))


def test_cupy_current_stream():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(3)
    a = rng.standard_normal(1 << 20).astype(np.float32)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.asarray(a)
        r = detred.sum(x, method="exact")
    s.synchronize()
    assert same_bits(cupy.asnumpy(r), np.asarray(detred.sum(a, method="exact")))


def test_cuda_graph_capture_and_replay():
    torch = pytest.importorskip("torch")
    static_x = torch.randn(64, 4096, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up, as PyTorch asks before a capture
        detred.sum(static_x)
        detred.sum(static_x, axis=-1)
        detred.sum(static_x, method="exact")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        total = detred.sum(static_x)
        rows = detred.sum(static_x, axis=-1)
        exact = detred.sum(static_x, method="exact")
        scan = detred.cumsum(static_x)
    for seed in range(3):
        fresh = torch.randn(64, 4096, device="cuda", generator=torch.Generator("cuda").manual_seed(seed))
        static_x.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        h = fresh.cpu().numpy()
        assert same_bits(total.cpu().numpy(), np.asarray(detred.sum(h)))
        assert same_bits(rows.cpu().numpy(), np.asarray(detred.sum(h, axis=-1)))
        assert same_bits(exact.cpu().numpy(), np.asarray(detred.sum(h, method="exact")))
        assert same_bits(scan.cpu().numpy(), np.asarray(detred.cumsum(h)))


def test_every_device():
    torch = pytest.importorskip("torch")
    count = torch.cuda.device_count()
    rng = np.random.default_rng(5)
    a = host_data(rng, (100, 1000), "float32", "ill")
    for d in range(count):
        x = torch.from_numpy(a).to(f"cuda:{d}")
        for axis in [None, -1, 0]:
            r = detred.sum(x, axis=axis)
            assert r.device == x.device
            assert same_bits(r.cpu().numpy(), np.asarray(detred.sum(a, axis=axis)))
    if count < 2:
        pytest.skip(f"{count} CUDA device: the multi-device part needs 2 or more (device 0 checked)")


def test_exact_accumulator_takes_cuda_arrays():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    for dtype, layout in [("float32", "float32"), ("float64", "float64"), ("float16", "float32"),
                          ("float32", "float64")]:
        a = host_data(rng, (100_000,), dtype, "ill")
        on_gpu, on_cpu = detred.ExactAccumulator(layout), detred.ExactAccumulator(layout)
        on_gpu.add(torch.from_numpy(a[:60_000]).cuda())
        on_gpu.add(torch.from_numpy(a[60_000:]).cuda())
        on_cpu.add(a)
        assert on_gpu == on_cpu and on_gpu.count == 100_000


def test_bad_cuda_inputs_name_the_argument():
    torch = pytest.importorskip("torch")
    x = torch.randn(10, 10, device="cuda")
    with pytest.raises(ValueError, match="^x: .*non-contiguous"):
        detred.sum(x.t())
    with pytest.raises(TypeError, match="^x: "):
        detred.sum(torch.ones(4, device="cuda", dtype=torch.complex64))
    with pytest.raises(ValueError, match="^(x|y): "):
        detred.dot(x.reshape(-1), x.reshape(-1).cpu())
    with pytest.raises(ValueError, match="^ddof: "):
        detred.var(x, ddof=1)


def test_audit_gpu_rows():
    if not detred._detred.has_audit:
        pytest.skip("this build has no audit (DETRED_BUILD_VERIFY=OFF)")
    gpu = [a for a in detred.audit_algorithms() if a.startswith("gpu/")]
    assert gpu, "no GPU rows in a CUDA build's audit"
    x = np.random.default_rng(2).standard_normal(100_000).astype(np.float32)
    report = detred.audit(x, algorithms=gpu, device="gpu", repeat=2, permute=2)
    assert report["exit_status"] == 0, report
    names = {r["algorithm"] for r in report["inputs"][0]["results"]}
    assert names, report
