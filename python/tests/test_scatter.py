"""detred.scatter_add, index_add and segment_sum (docs/SCATTER.md): every output is the correctly rounded sum of its
contributions and its prior value (checked against fractions), the bits do not depend on the order of the
contributions (Hypothesis permutations), bad arguments raise TypeError / ValueError naming them; segment_sum gives
the canonical (row sum's) or the exact bits. GPU-marked tests: CUDA tensors give the CPU's bits, on the framework's
current stream; detred.torch's custom ops and its deterministic() overrides (embedding backward, GCNConv)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import detred
from conftest import BFLOAT16, bits, round_fraction, same_bits

VALUE_DTYPES = [np.float16, np.float32, np.float64] + ([BFLOAT16] if BFLOAT16 is not None else [])


def out_dtype(dtype):
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def reference_scatter(values, index, prior):
    """Each slot's correctly rounded sum of its contributions and its prior value (finite data)."""
    out = prior.copy()
    for s in range(prior.size):
        terms = [Fraction(float(prior.flat[s]))] + [Fraction(float(v)) for v in values[index == s]]
        out.flat[s] = round_fraction(sum(terms, Fraction(0)), prior.dtype)
    return out


def ill_values(rng, n, dtype):
    big = rng.standard_normal(n) * 2.0 ** rng.integers(0, 6 if np.dtype(dtype).itemsize == 2 else 25, n)
    return (big * np.where(rng.random(n) < 0.5, 1, -1) + rng.standard_normal(n) * 1e-3).astype(dtype)


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kind", ["uniform", "skewed", "one_slot"])
def test_scatter_add_is_correctly_rounded(rng, dtype, index_dtype, kind):
    n, m = 600, 17
    values = ill_values(rng, n, dtype)
    if kind == "uniform":
        index = rng.integers(0, m, n)
    elif kind == "skewed":
        index = np.minimum(rng.zipf(1.5, n) - 1, m - 1)
    else:
        index = np.full(n, 3)
    index = index.astype(index_dtype)
    prior = rng.standard_normal(m).astype(out_dtype(dtype))
    out = prior.copy()
    returned = detred.scatter_add(values, index, out)
    assert returned is out
    assert same_bits(out, reference_scatter(values, index, prior))


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("d", [1, 3, 8])
def test_index_add_is_correctly_rounded(rng, dtype, d):
    n, m = 200, 9
    source = ill_values(rng, n * d, dtype).reshape(n, d)
    index = rng.integers(0, m, n)
    prior = rng.standard_normal((m, d)).astype(out_dtype(dtype))
    out = prior.copy()
    detred.index_add(out, 0, index, source)
    for c in range(d):
        assert same_bits(out[:, c], reference_scatter(source[:, c], index, prior[:, c].copy()))


def test_index_add_takes_pytorch_argument_order_and_leading_rows(rng):
    out = np.zeros((4, 2, 3), np.float32)
    source = np.ones((5, 2, 3), np.float32)
    detred.index_add(out, 0, np.array([0, 3, 3, 1, 3]), source)
    assert same_bits(out[:, 0, 0], np.array([1, 1, 0, 3], np.float32))
    detred.index_add(out, -3, np.array([2, 2, 2, 2, 2]), source)
    assert out[2, 1, 2] == 5


def test_exact_where_plain_summation_is_not():
    # 1 + 2^-24 + 2^-24: a sequential float32 sum loses both small terms; the exact sum rounds up to 1 + 2^-23.
    values = np.array([2.0**-24, 2.0**-24], np.float32)
    out = np.ones(1, np.float32)
    detred.scatter_add(values, np.array([0, 0]), out)
    assert out[0] == np.float32(1 + 2.0**-23)


def test_special_values_and_signed_zeros():
    values = np.array([np.nan, 1.0, np.inf, -np.inf, np.inf, -0.0, -0.0, 5.0, -5.0], np.float32)
    index = np.array([0, 0, 1, 1, 2, 3, 3, 4, 4])
    out = np.array([0.0, 0.0, 0.0, -0.0, -0.0], np.float32)
    detred.scatter_add(values, index, out)
    assert np.isnan(out[0]) and np.isnan(out[1])
    assert out[2] == np.inf
    assert bits(out[3]) == bits(np.float32(-0.0))  # -0.0 + -0.0 + prior -0.0
    assert bits(out[4]) == bits(np.float32(0.0))  # exact cancellation: +0.0
    big = np.finfo(np.float32).max
    out = np.zeros(1, np.float32)
    detred.scatter_add(np.array([big, big, -big], np.float32), np.array([0, 0, 0]), out)
    assert out[0] == big  # partial sums overflow, the exact sum does not


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 12))
def test_scatter_add_permutation_invariance(seed, n, m):
    rng = np.random.default_rng(seed)
    values = ill_values(rng, n, np.float32)
    index = rng.integers(0, m, n)
    first = np.zeros(m, np.float32)
    detred.scatter_add(values, index, first)
    perm = rng.permutation(n)
    second = np.zeros(m, np.float32)
    detred.scatter_add(values[perm], index[perm], second)
    assert same_bits(first, second)


def test_thread_counts_give_the_same_bits(rng, restore_threads):
    values = ill_values(rng, 1 << 16, np.float32)
    index = rng.integers(0, 100, values.size)
    results = []
    for threads in [1, 2, 3, 7]:
        detred.set_num_threads(threads)
        out = np.zeros(100, np.float32)
        detred.scatter_add(values, index, out)
        results.append(out)
    assert all(same_bits(results[0], r) for r in results[1:])


def test_out_of_range_index_raises_before_writing():
    out = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"index\[2\] = 4"):
        detred.scatter_add(np.ones(3, np.float32), np.array([0, 1, 4]), out)
    assert np.all(out == 1)
    with pytest.raises(ValueError, match="index"):
        detred.index_add(np.zeros((2, 2), np.float32), 0, np.array([-1]), np.ones((1, 2), np.float32))


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="out"):
        detred.scatter_add(np.ones(2, np.float32), np.array([0, 1]), np.zeros(2, np.float64))
    with pytest.raises(TypeError, match="index"):
        detred.scatter_add(np.ones(2, np.float32), np.array([0.0, 1.0]), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="index"):
        detred.scatter_add(np.ones(2, np.float32), np.array([0]), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="out"):
        detred.scatter_add(np.ones(2, np.float32), np.array([0, 1]), np.zeros((2, 2), np.float32)[:, 0])
    readonly = np.zeros(2, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out"):
        detred.scatter_add(np.ones(2, np.float32), np.array([0, 1]), readonly)
    with pytest.raises(ValueError, match="dim"):
        detred.index_add(np.zeros((2, 2), np.float32), 1, np.array([0]), np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="source"):
        detred.index_add(np.zeros((2, 2), np.float32), 0, np.array([0]), np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="offsets"):
        detred.segment_sum(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="method"):
        detred.segment_sum(np.ones(3, np.float32), np.array([0, 3]), method="kahan")
    with pytest.raises(ValueError):
        detred.segment_sum(np.ones(3, np.float32), np.array([0, 2, 1]))


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_segment_sum_canonical_and_exact(rng, dtype):
    lengths = rng.integers(0, 300, 40)
    lengths[::7] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = ill_values(rng, int(offsets[-1]), dtype)
    tree = detred.segment_sum(values, offsets)
    exact = detred.segment_sum(values, offsets, method="exact")
    assert tree.dtype == out_dtype(dtype) and tree.shape == (40,)
    for s in range(40):
        segment = values[offsets[s] : offsets[s + 1]]
        if segment.size == 0:
            assert bits(tree[s]) == bits(out_dtype(dtype)(-0.0)) and bits(exact[s]) == bits(tree[s])
            continue
        # canonical: the bits of detred.sum of the segment alone (batch-invariant)
        assert same_bits(tree[s], detred.sum(segment, dtype=out_dtype(dtype)))
        ref = round_fraction(sum((Fraction(float(v)) for v in segment), Fraction(0)), out_dtype(dtype))
        assert same_bits(exact[s], ref)


def test_segment_sum_by_keys():
    keys = np.array([4, 4, 1, 1, 1, 4, 9], np.int32)
    values = np.arange(7, dtype=np.float32)
    unique, sums = detred.segment_sum(values, keys=keys)
    assert unique.tolist() == [4, 1, 4, 9] and unique.dtype == np.int32
    assert sums.tolist() == [1.0, 9.0, 5.0, 6.0]
    unique, sums = detred.segment_sum(values, keys=keys, method="exact")
    assert sums.tolist() == [1.0, 9.0, 5.0, 6.0]


# ---------------------------------------------------------------------------------------------------------------
# GPU: CUDA tensors give the CPU's bits; detred.torch.


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not (detred.cuda_available() and torch.cuda.is_available()):
        pytest.skip("no CUDA GPU or no CUDA backend in this build")
    return torch


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_cuda_scatter_family_gives_the_cpu_bits(dtype):
    torch = _torch_cuda()
    g = torch.Generator().manual_seed(7)
    tdtype = getattr(torch, dtype)
    acc = torch.float64 if dtype == "float64" else torch.float32
    n, m = 1 << 18, 1000
    values = (torch.randn(n, generator=g, dtype=torch.float64) * 2.0 ** torch.randint(0, 12, (n,), generator=g)).to(tdtype)
    index = torch.minimum(torch.from_numpy(np.random.default_rng(1).zipf(1.2, n) - 1), torch.tensor(m - 1))
    prior = torch.randn(m, generator=g, dtype=acc)
    cpu = detred.scatter_add(values, index, prior.clone())
    for _ in range(3):
        gpu = detred.scatter_add(values.cuda(), index.cuda(), prior.cuda())
        assert torch.equal(gpu.cpu().view(torch.int8), cpu.view(torch.int8))
    rows = values[: 4096 * 8].reshape(4096, 8)
    cpu = detred.index_add(prior[:800].clone().reshape(100, 8), 0, index[:4096] % 100, rows)
    gpu = detred.index_add(prior[:800].clone().reshape(100, 8).cuda(), 0, (index[:4096] % 100).cuda(), rows.cuda())
    assert torch.equal(gpu.cpu().view(torch.int8), cpu.view(torch.int8))
    # Mean length about 4,400 values (8.6 to 34 KiB of input): the CUDA call takes the register kernel.
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(torch.randint(0, 9000, (60,), generator=g), 0)])
    offsets = torch.minimum(offsets, torch.tensor(n))
    for method in ["tree", "exact"]:
        cpu = detred.segment_sum(values, offsets, method=method)
        gpu = detred.segment_sum(values.cuda(), offsets.cuda(), method=method)
        assert torch.equal(gpu.cpu().view(torch.int8), cpu.view(torch.int8))
    keys = torch.sort(index[:5000]).values
    cpu_keys, cpu_sums = detred.segment_sum(values[:5000], keys=keys)
    gpu_keys, gpu_sums = detred.segment_sum(values[:5000].cuda(), keys=keys.cuda())
    assert torch.equal(gpu_keys.cpu(), cpu_keys) and torch.equal(gpu_sums.cpu().view(torch.int8), cpu_sums.view(torch.int8))


@pytest.mark.gpu
def test_cuda_out_of_range_indices_are_skipped():
    torch = _torch_cuda()
    out = torch.zeros(4, device="cuda")
    detred.scatter_add(torch.ones(5, device="cuda"), torch.tensor([0, 9, -1, 3, 3], device="cuda"), out)
    assert out.tolist() == [1.0, 0.0, 0.0, 2.0]


@pytest.mark.gpu
def test_cuda_runs_on_the_current_stream():
    torch = _torch_cuda()
    values = torch.randn(1 << 22, device="cuda")
    index = torch.randint(0, 1 << 12, (1 << 22,), device="cuda")
    expected = detred.scatter_add(values.cpu(), index.cpu(), torch.zeros(1 << 12))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = torch.zeros(1 << 12, device="cuda")
        values2 = values * 1  # queued on the side stream: a call on another stream would race it
        detred.scatter_add(values2, index, out)
    stream.synchronize()
    assert torch.equal(out.cpu(), expected)


@pytest.mark.gpu
def test_torch_custom_ops_pass_opcheck_and_autograd():
    torch = _torch_cuda()
    from detred.torch import scatter as dts

    torch.manual_seed(0)

    values = torch.randn(64, device="cuda", requires_grad=True)
    index = torch.randint(0, 8, (64,), device="cuda")
    out = torch.randn(8, device="cuda", requires_grad=True)
    torch.library.opcheck(dts.scatter_add, (values, index, out))
    result = dts.scatter_add(values, index, out)
    result.backward(torch.arange(8.0, device="cuda"))
    assert torch.equal(values.grad, index.float()) and torch.equal(out.grad, torch.arange(8.0, device="cuda"))
    source = torch.randn(10, 3, device="cuda", requires_grad=True)
    base = torch.randn(4, 3, device="cuda", requires_grad=True)
    rows = torch.randint(0, 4, (10,), device="cuda")
    torch.library.opcheck(dts.index_add, (base, 0, rows, source))
    expected = base.detach().clone().index_add_(0, rows, source.detach())
    # PyTorch's atomics add in another order: within a few roundings of the terms (at most four a row here), not of
    # the result, which cancellation can make tiny (allclose's default atol failed 4 seeds in 300).
    assert torch.allclose(dts.index_add(base, 0, rows, source), expected, rtol=1e-5, atol=1e-6)
    seg_values = torch.randn(20, device="cuda", requires_grad=True)
    offsets = torch.tensor([0, 5, 5, 20], device="cuda")
    torch.library.opcheck(dts.segment_sum, (seg_values, offsets))
    dts.segment_sum(seg_values, offsets).backward(torch.tensor([1.0, 2.0, 3.0], device="cuda"))
    assert seg_values.grad.tolist() == [1.0] * 5 + [3.0] * 15


@pytest.mark.gpu
def test_deterministic_embedding_backward_same_bits_every_run_and_on_the_cpu():
    torch = _torch_cuda()
    from detred.torch.scatter import deterministic

    torch.manual_seed(0)
    vocab, dim = 1000, 64
    indices = torch.from_numpy(np.minimum(np.random.default_rng(3).zipf(1.1, (64, 512)) - 1, vocab - 1))
    upstream = torch.randn(64, 512, dim)

    def grad(device):
        layer = torch.nn.Embedding(vocab, dim).to(device)
        (layer(indices.to(device)) * upstream.to(device)).sum().backward()
        return layer.weight.grad.cpu()

    plain = {bits(grad("cuda").numpy()).tobytes() for _ in range(5)}
    with deterministic():
        runs = [grad("cuda") for _ in range(5)]
        on_cpu = grad("cpu")
    assert all(torch.equal(r, runs[0]) for r in runs)
    assert torch.equal(runs[0], on_cpu)
    print(f"embedding backward: plain PyTorch {len(plain)} distinct result(s) in 5 runs; detred 1, equal to the CPU")


@pytest.mark.gpu
def test_deterministic_gcnconv_same_bits_every_run_and_on_the_cpu():
    torch = _torch_cuda()
    pyg = pytest.importorskip("torch_geometric")
    from torch_geometric.nn import GCNConv

    from detred.torch.scatter import deterministic

    torch.manual_seed(1)
    nodes, edges, channels = 20000, 400000, 32
    rng = np.random.default_rng(5)
    edge_index = torch.from_numpy(np.stack([rng.integers(0, nodes, edges), np.minimum(rng.zipf(1.3, edges) - 1, nodes - 1)]))
    x = torch.randn(nodes, channels)

    def forward(device, normalize):
        conv = GCNConv(channels, channels, normalize=normalize, bias=False).to(device)
        with torch.no_grad():
            conv.lin.weight.copy_(torch.eye(channels))  # an exact product: the aggregation alone decides the bits
        return conv(x.to(device), edge_index.to(device)).detach().cpu()

    plain = {bits(forward("cuda", True).numpy()).tobytes() for _ in range(5)}
    with deterministic():
        runs = [forward("cuda", True) for _ in range(5)]
        gpu, cpu = forward("cuda", False), forward("cpu", False)
    assert all(torch.equal(r, runs[0]) for r in runs)
    assert torch.equal(gpu, cpu)
    print(f"GCNConv: plain PyTorch {len(plain)} distinct result(s) in 5 runs; detred 1, equal to the CPU")


@pytest.mark.gpu
def test_deterministic_overrides_are_exact_on_every_form():
    torch = _torch_cuda()
    from detred.torch.scatter import deterministic

    g = torch.Generator().manual_seed(4)
    src = torch.randn(300, 7, generator=g)
    rows = torch.randint(0, 5, (300,), generator=g)
    cols = torch.randint(0, 3, (300, 7), generator=g)
    base = torch.randn(5, 7, generator=g)
    # float64 sums of these few float32 terms are exact: rounding them once is the correctly rounded result
    want_index_add = base.double().index_add_(0, rows, src.double()).float()
    want_index_add_t = base.t().double().index_add_(1, rows, src.t().double()).float()
    scatter_base = torch.randn(300, 3, generator=g)
    want_scatter = scatter_base.double().scatter_add_(1, cols, src.double()).float()
    want_put = base.double().index_put_((rows, cols[:, 0]), src[:, 0].double(), accumulate=True).float()
    with deterministic():
        for device in ["cuda", "cpu"]:
            b, s, r, c = base.to(device), src.to(device), rows.to(device), cols.to(device)
            assert torch.equal(b.clone().index_add_(0, r, s).cpu(), want_index_add)
            assert torch.equal(torch.index_add(b.t(), 1, r, s.t()).cpu(), want_index_add_t)
            assert torch.equal(scatter_base.to(device).scatter_add_(1, c, s).cpu(), want_scatter)
            assert torch.equal(b.clone().index_put_((r, c[:, 0]), s[:, 0], accumulate=True).cpu(), want_put)
            one_index = b.clone().index_put_((r,), s, accumulate=True).cpu()
            assert torch.equal(one_index, want_index_add)
