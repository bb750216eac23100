"""Where the time of detred.torch's fused-norm and softmax cases goes: the CUDA kernels (and their share) of one
forward + backward of each case of bench_torch_ops.py, detred's route beside PyTorch's own, from torch.profiler over
--reps calls after --warmup untimed ones. For reading a bar's gap (launches, copies, the kernels themselves), not for
the bars: those come from bench_torch_ops.py.

The timeline section (--cases timeline) prints, for one forward + backward of RMSNorm and LayerNorm at the bars'
shape, when the host issued each launch and when the GPU ran each kernel (microseconds from the call's start, one
clock, from the profiler's trace): where the GPU waits for the host.

The host section (--cases host) times the host side alone: microseconds a forward + backward takes to issue on
[8 x 4096] (the GPU idle in between), for detred's route and PyTorch's, and a cProfile of detred's route.

Usage: python python/benchmarks/profile_torch_ops.py [--reps 10] [--cases rms,ln,lsm,timeline,host]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import detred.torch as dt


def kernel_table(name, fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    print(f"== {name}: {reps} calls")
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=14, max_name_column_width=70))


_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
             "cudaMallocFromPoolAsync", "cudaFreeAsync")


def timeline(name, fn, warmup, calls=3):
    """The host's launch calls and the GPU's kernels of the last of `calls` calls of fn, in microseconds from the
    call's marker, then the call's GPU span and the GPU's idle time within it."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for k in range(calls):
            with torch.profiler.record_function(f"call {k}"):
                fn()
            torch.cuda.synchronize()
    events = prof.events()
    marker = [e for e in events if e.name == f"call {calls - 1}"][0]
    t0, t1 = marker.time_range.start, marker.time_range.end
    rows = []
    for e in events:
        start = e.time_range.start
        if e.device_type == torch.autograd.DeviceType.CUDA and start >= t0:
            rows.append((start - t0, e.time_range.end - t0, "gpu", e.name))
        elif e.name in _LAUNCHES and t0 <= start <= t1:
            rows.append((start - t0, e.time_range.end - t0, "host", e.name))
    rows.sort()
    print(f"== timeline of {name} (us from the call's start; host issue ends at {t1 - t0:.0f})")
    for start, end, side, what in rows:
        print(f"  {side:4} {start:8.1f} {end:8.1f}  {what[:90]}")
    gpu = [(s, e) for s, e, side, _ in rows if side == "gpu"]
    if gpu:
        busy = sum(e - s for s, e in gpu)
        print(f"  GPU span {gpu[0][0]:.1f} .. {max(e for _, e in gpu):.1f} us, kernels {busy:.1f} us, idle "
              f"{max(e for _, e in gpu) - gpu[0][0] - busy:.1f} us after the first kernel")


def host_us(fn, reps=300):
    """Host microseconds a call of fn: reps calls back to back, then one synchronize (the GPU work is small enough
    that the host is the bound)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps * 1e6


class _AllocateOnly(torch.autograd.Function):
    """The floor of any Python-defined autograd route: a forward and a backward that only allocate their results."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, dout):
        x, weight = ctx.saved_tensors
        return torch.empty_like(x), torch.empty_like(weight)


def component_cases(x, w, b, dy):
    """The parts of detred's RMSNorm and LayerNorm routes, each timed alone: the autograd floor, the Python glue with
    its kernels (_kernels), the bare pointer calls (preallocated outputs), and aten's route to the same kernels."""
    from detred.torch import _kernels as K
    from detred._detred import _rows

    xd, wd, bd = x.detach(), w.detach(), b.detach()
    out, rstd = K.rms_norm_forward(xd, [4096], wd, 1e-6)
    mean = torch.empty_like(rstd)
    dx, dw = torch.empty_like(xd), torch.empty(4096, device=x.device, dtype=torch.float32)
    db = torch.empty_like(dw)
    stream = torch._C._cuda_getCurrentRawStream(x.get_device())
    code = 1  # bfloat16

    def fb(f, inputs):
        return lambda: torch.autograd.grad(f(*inputs), inputs, dy)

    return {
        "autograd.Function allocating only, fwd+bwd": fb(_AllocateOnly.apply, (x, w)),
        "rms_norm forward glue + kernel": lambda: K.rms_norm_forward(xd, [4096], wd, 1e-6),
        "rms_norm backward glue + kernels": lambda: K.rms_norm_backward(dy, xd, [4096], rstd, wd),
        "cuda_rms_norm_forward pointer call": lambda: _rows.cuda_rms_norm_forward(
            code, 8, 4096, xd.data_ptr(), wd.data_ptr(), out.data_ptr(), rstd.data_ptr(), 1e-6, 0, stream),
        "cuda_rms_norm_backward pointer call": lambda: _rows.cuda_rms_norm_backward(
            code, 8, 4096, dy.data_ptr(), xd.data_ptr(), wd.data_ptr(), rstd.data_ptr(), dx.data_ptr(),
            dw.data_ptr(), 0, stream),
        "layer_norm backward glue + kernels": lambda: K.layer_norm_backward(dy, xd, [4096], mean, rstd, wd, bd),
        "cuda_layer_norm_backward pointer call": lambda: _rows.cuda_layer_norm_backward(
            code, 8, 4096, dy.data_ptr(), xd.data_ptr(), wd.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
            dx.data_ptr(), dw.data_ptr(), db.data_ptr(), 0, stream),
        "float32 -> bfloat16 of 4096 (.to)": lambda: dw.to(torch.bfloat16),
        "rms_norm fwd+bwd F.rms_norm in batch_invariant()": fb(
            lambda a, ww: F.rms_norm(a, [4096], ww, 1e-6), (x, w)),
        "layer_norm fwd+bwd F.layer_norm in batch_invariant()": fb(
            lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b)),
    }


def host_section(dev):
    x = torch.randn(8, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.rand(4096, device=dev, dtype=torch.bfloat16) + 0.5).requires_grad_(True)
    b = torch.randn(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    z = torch.randn(8, 32768, device=dev, dtype=torch.bfloat16)

    def fb(f, inputs):
        return lambda: torch.autograd.grad(f(*inputs), inputs, dy)

    cases = {
        "rms_norm fwd+bwd detred": fb(lambda a, ww: dt.rms_norm(a, ww, 1e-6), (x, w)),
        "rms_norm fwd+bwd F.rms_norm": fb(lambda a, ww: F.rms_norm(a, [4096], ww, 1e-6), (x, w)),
        "layer_norm fwd+bwd detred": fb(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b)),
        "layer_norm fwd+bwd F.layer_norm": fb(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b)),
        "rms_norm fwd detred (no grad)": lambda: dt.rms_norm(x.detach(), w.detach(), 1e-6),
        "rms_norm fwd F.rms_norm (no grad)": lambda: F.rms_norm(x.detach(), [4096], w.detach(), 1e-6),
        "log_softmax fwd detred": lambda: dt.log_softmax(z),
        "log_softmax fwd torch": lambda: torch.log_softmax(z, -1),
        "an empty_like (for scale)": lambda: torch.empty_like(z),
    }
    cases.update(component_cases(x, w, b, dy))
    print("== host microseconds a call ([8 x 4096] bf16, 300 calls back to back)")
    for name, fn in cases.items():
        # The batch_invariant() cases: aten's operators routed to detred's kernels for the whole timing.
        with dt.batch_invariant(enabled="batch_invariant()" in name):
            print(f"  {name:52} {host_us(fn):8.1f} us")
    for name in ("layer_norm fwd+bwd detred", "rms_norm fwd+bwd detred"):
        prof = cProfile.Profile()
        fn = cases[name]
        prof.enable()
        for _ in range(200):
            fn()
        prof.disable()
        torch.cuda.synchronize()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(18)
        print(f"== cProfile of {name}, 200 calls (tottime)")
        print(text.getvalue())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cases", default="rms,ln,lsm")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(16384, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.rand(4096, device=dev, dtype=torch.bfloat16) + 0.5).requires_grad_(True)
    b = torch.randn(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)

    def fwd_bwd(f, inputs):
        def run():
            torch.autograd.grad(f(*inputs), inputs, dy)

        return run

    if "rms" in cases:
        kernel_table("detred.torch.rms_norm", fwd_bwd(lambda a, ww: dt.rms_norm(a, ww, 1e-6), (x, w)), args.reps,
                     args.warmup)
        kernel_table("F.rms_norm", fwd_bwd(lambda a, ww: F.rms_norm(a, [4096], ww, 1e-6), (x, w)), args.reps,
                     args.warmup)
    if "ln" in cases:
        kernel_table("detred.torch.layer_norm",
                     fwd_bwd(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b)), args.reps, args.warmup)
        kernel_table("F.layer_norm", fwd_bwd(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b)),
                     args.reps, args.warmup)
    if "timeline" in cases:
        timeline("detred.torch.rms_norm", fwd_bwd(lambda a, ww: dt.rms_norm(a, ww, 1e-6), (x, w)), args.warmup)
        timeline("F.rms_norm", fwd_bwd(lambda a, ww: F.rms_norm(a, [4096], ww, 1e-6), (x, w)), args.warmup)
        timeline("detred.torch.layer_norm", fwd_bwd(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b)),
                 args.warmup)
        timeline("F.layer_norm", fwd_bwd(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b)), args.warmup)
    if "host" in cases:
        host_section(dev)
    if "lsm" in cases:
        z = torch.randn(16384, 32768, device=dev, dtype=torch.bfloat16) * 4
        with torch.no_grad():
            kernel_table("detred.torch.log_softmax bf16", lambda: dt.log_softmax(z), args.reps, args.warmup)
            kernel_table("torch.log_softmax bf16", lambda: torch.log_softmax(z, -1), args.reps, args.warmup)


if __name__ == "__main__":
    main()
