"""GPU tests (issue: the CUDA backend for Python): same bits as the CPU for every function and dtype on PyTorch,
CuPy and JAX CUDA arrays, non-default streams, CUDA-graph capture. The CUDA backend is not bound yet, so every test
here skips, saying so."""

import pytest

import detred

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not detred.cuda_available(),
                       reason="no CUDA backend for Python in this build (detred.cuda_available() is False)"),
]


def test_cuda_sum_has_the_cpu_bits():
    torch = pytest.importorskip("torch")
    x = torch.randn(1 << 20, device="cuda")
    assert detred.sum(x).item() == detred.sum(x.cpu().numpy()).item()
