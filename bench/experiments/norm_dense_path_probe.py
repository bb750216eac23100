"""Experiment (docs/PERFORMANCE.md, "Host"): detred.torch's fused norms through the dense CUDA path
(_kernels.dense_cuda_cols) against the general path (the same call with dense_cuda_cols forced to 0), interleaved with
F.layer_norm; the LayerNorm backward's pointer call with the pool's workspace against one from PyTorch's allocator;
the batch-invariant override's LayerNorm and RMSNorm. bf16 [16384 x 4096], forward + backward, one call each.
Run on a GPU machine from the repository root with the package importable:
    python bench/experiments/norm_dense_path_probe.py
Log: docs/device-runs/2026-11-27-h100-norms-dense-path-run2.txt. Timings only."""
import sys, torch, torch.nn.functional as F
sys.path.insert(0, "python/benchmarks")
import detred.torch as dt
from detred.torch import _kernels as K
from detred._detred import _rows
from cuda_timing import interleaved_median_ms, median_ms
dev = torch.device("cuda"); torch.manual_seed(0)
x = torch.randn(16384, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
w = (torch.rand(4096, device=dev, dtype=torch.bfloat16) + 0.5).requires_grad_(True)
b = torch.randn(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
dy = torch.randn_like(x)
def fb(f, inputs):
    return lambda: torch.autograd.grad(f(*inputs), inputs, dy)
dl = fb(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b))
tl = fb(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b))
dr = fb(lambda a, ww: dt.rms_norm(a, ww, 1e-6), (x, w))
real = K.dense_cuda_cols
def general(f):
    def run():
        K.dense_cuda_cols = lambda *a: 0
        try: f()
        finally: K.dense_cuda_cols = real
    return run
print("LN dense, LN general, F.layer_norm:", ["%.3f" % t for t in interleaved_median_ms([dl, general(dl), tl], 30, 5)])
print("RMS dense, RMS general:", ["%.3f" % t for t in interleaved_median_ms([dr, general(dr)], 30, 5)])
xd, wd, bd = x.detach(), w.detach(), b.detach()
out, mean, rstd = K.layer_norm_forward(xd, [4096], wd, bd, 1e-5)
stream = torch.cuda.current_stream().cuda_stream
need = _rows.cuda_layer_norm_backward_workspace(1, 16384, 4096)
print("LN backward workspace bytes", need, "RMS", _rows.cuda_rms_norm_backward_workspace(1, 16384, 4096))
dx = torch.empty_like(xd); dw = torch.empty(4096, device=dev); db = torch.empty(4096, device=dev)
def call(ws):
    def run():
        extra = () if ws is None else (ws().data_ptr(), need)
        _rows.cuda_layer_norm_backward(1, 16384, 4096, dy.data_ptr(), xd.data_ptr(), wd.data_ptr(), mean.data_ptr(), rstd.data_ptr(), dx.data_ptr(), dw.data_ptr(), db.data_ptr(), 0, stream, *extra)
    return run
print("LN backward pointer call, pool vs torch workspace:", ["%.3f" % t for t in interleaved_median_ms([call(None), call(lambda: torch.empty(need, dtype=torch.uint8, device=dev))], 30, 5)])
with dt.batch_invariant():
    print("override LN %.3f RMS %.3f" % (median_ms(tl, 30, 5), median_ms(fb(lambda a, ww: F.rms_norm(a, [4096], ww, 1e-6), (x, w)), 30, 5)))
