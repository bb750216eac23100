"""The bars of detred.torch on the GPU (docs/PERFORMANCE.md, rows section): detred's custom ops against their peers,
measured in the same process, CUDA-event times (one call between two events), medians of --reps timed runs after
--warmup untimed ones, detred and its peers taking turns within each repetition. The norms are also timed back to back
(10 forward + backward calls between two events, per call: the host runs ahead as in a training loop, so the Python
glue's microseconds hide behind the kernels); one call between two events adds the host's time before the first
kernel and between the forward and the backward, which the autograd engine's Python call decides.

  RMSNorm fwd+bwd   bf16 [16384 x 4096]   >= 0.90x F.rms_norm; >= 1.5x the plain-PyTorch batch-invariant formula
  LayerNorm fwd+bwd bf16 [16384 x 4096]   >= 0.85x F.layer_norm
  log_softmax fwd   bf16, fp32 [16384 x 32768]  >= 1.0x batch_invariant_ops' Triton log_softmax; >= 0.90x
                    torch.log_softmax
  causal softmax    [8, 12, 1024, 1024]   >= 0.90x torch.softmax of the same masked input

A ratio is the peer's median time over detred's (above 1: detred faster). batch_invariant_ops is imported from
--bio (a checkout of thinking-machines-lab/batch_invariant_ops; its row is skipped, saying so, without it).

Usage: python python/benchmarks/bench_torch_ops.py [--reps 30] [--bio carry/bio] [--cases rms,ln,lsm,causal]
       [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn.functional as F

import detred.torch as dt
from cuda_timing import interleaved_median_ms, median_ms


def fwd_bwd(f, inputs, dy):
    def run():
        y = f(*inputs)
        torch.autograd.grad(y, inputs, dy)

    return run


def rms_norm_rows(x, w, dy, eps, warmup, reps, report):
    def plain_rms(a, b):
        af = a.float()
        return (af * torch.rsqrt(af.pow(2).mean(-1, keepdim=True) + eps) * b.float()).to(a.dtype)

    t_d, t_t, t_p = interleaved_median_ms([fwd_bwd(lambda a, b: dt.rms_norm(a, b, eps), (x, w), dy),
                                           fwd_bwd(lambda a, b: F.rms_norm(a, [4096], b, eps), (x, w), dy),
                                           fwd_bwd(plain_rms, (x, w), dy)], reps, warmup)
    report("RMSNorm fwd+bwd bf16 [16384x4096]", "F.rms_norm", t_d, t_t, 0.90)
    report("RMSNorm fwd+bwd bf16 [16384x4096]", "x*rsqrt(mean(x^2)+eps)*w in fp32", t_d, t_p, 1.5)
    t_d, t_t = interleaved_median_ms([fwd_bwd(lambda a, b: dt.rms_norm(a, b, eps), (x, w), dy),
                                      fwd_bwd(lambda a, b: F.rms_norm(a, [4096], b, eps), (x, w), dy)], reps, warmup,
                                     calls=10)
    report("RMSNorm fwd+bwd, 10 back to back", "F.rms_norm", t_d, t_t, 0.90)
    # The other routes to the same kernels: the custom operator, and aten's op under batch-invariant mode.
    t_op = median_ms(fwd_bwd(lambda a, b: torch.ops.detred.rms_norm(a, [4096], b, eps)[0], (x, w), dy), reps, warmup)
    with dt.batch_invariant():
        t_ov = median_ms(fwd_bwd(lambda a, b: F.rms_norm(a, [4096], b, eps), (x, w), dy), reps, warmup)
    print(f"  (torch.ops.detred.rms_norm: {t_op:.3f} ms; F.rms_norm inside batch_invariant(): {t_ov:.3f} ms)")


def layer_norm_rows(x, w, b, dy, warmup, reps, report):
    t_d, t_t = interleaved_median_ms([fwd_bwd(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b), dy),
                                      fwd_bwd(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b), dy)],
                                     reps, warmup)
    report("LayerNorm fwd+bwd bf16 [16384x4096]", "F.layer_norm", t_d, t_t, 0.85)
    t_d, t_t = interleaved_median_ms([fwd_bwd(lambda a, ww, bb: dt.layer_norm(a, [4096], ww, bb), (x, w, b), dy),
                                      fwd_bwd(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b), dy)],
                                     reps, warmup, calls=10)
    report("LayerNorm fwd+bwd, 10 back to back", "F.layer_norm", t_d, t_t, 0.85)
    t_op = median_ms(fwd_bwd(lambda a, ww, bb: torch.ops.detred.layer_norm(a, [4096], ww, bb, 1e-5)[0], (x, w, b), dy),
                     reps, warmup)
    with dt.batch_invariant():
        t_ov = median_ms(fwd_bwd(lambda a, ww, bb: F.layer_norm(a, [4096], ww, bb), (x, w, b), dy), reps, warmup)
    print(f"  (torch.ops.detred.layer_norm: {t_op:.3f} ms; F.layer_norm inside batch_invariant(): {t_ov:.3f} ms)")


def log_softmax_rows(dev, bio, warmup, reps, report):
    for dtype in (torch.bfloat16, torch.float32):
        name = "bf16" if dtype == torch.bfloat16 else "fp32"
        z = torch.randn(16384, 32768, device=dev, dtype=dtype) * 4
        with torch.no_grad():
            fns = [lambda: dt.log_softmax(z), lambda: torch.log_softmax(z, -1)]
            if bio is not None:
                fns.append(lambda: bio.log_softmax(z, -1))
            t_d, t_t, *t_bio = interleaved_median_ms(fns, reps, warmup)
            report(f"log_softmax fwd {name} [16384x32768]", "torch.log_softmax", t_d, t_t, 0.90)
            if bio is not None:
                t_b = t_bio[0]
                report(f"log_softmax fwd {name} [16384x32768]", "batch_invariant_ops log_softmax (Triton)", t_d,
                       t_b, 1.0)
            with dt.batch_invariant():
                t_o = median_ms(lambda: torch.log_softmax(z, -1), reps, warmup)
            print(f"  (torch.log_softmax inside batch_invariant(): {t_o:.3f} ms)")
        del z


def causal_rows(dev, warmup, reps, report):
    mask = torch.ones(1024, 1024, device=dev, dtype=torch.bool).triu(1)
    for dtype in (torch.float32, torch.bfloat16):
        name = "bf16" if dtype == torch.bfloat16 else "fp32"
        s = torch.randn(8, 12, 1024, 1024, device=dev, dtype=dtype)
        masked = s.masked_fill(mask, float("-inf"))
        with torch.no_grad():
            t_d, t_t, t_f = interleaved_median_ms([lambda: dt.softmax(masked, causal=True),
                                                   lambda: torch.softmax(masked, -1), lambda: dt.softmax(masked)],
                                                  reps, warmup)
        report(f"causal softmax fwd {name} [8,12,1024,1024]", "torch.softmax (masked input)", t_d, t_t, 0.90)
        print(f"  (detred full-row softmax of the masked input: {t_f:.3f} ms)")
        del s, masked


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--bio", default=None, help="path holding the batch_invariant_ops package")
    parser.add_argument("--json", default=None)
    parser.add_argument("--cases", default="rms,ln,lsm,causal", help="comma-separated subset of rms,ln,lsm,causal")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    bio = None
    if args.bio:
        sys.path.insert(0, args.bio)
        try:
            import batch_invariant_ops as bio
        except Exception as e:  # noqa: BLE001 (reported, the row skipped)
            print(f"batch_invariant_ops not importable from {args.bio}: {e}")
    dev = torch.device("cuda")
    torch.manual_seed(0)
    rows = []

    def report(case, peer, t_detred, t_peer, bar):
        ratio = t_peer / t_detred
        rows.append(dict(case=case, peer=peer, detred_ms=t_detred, peer_ms=t_peer, ratio=ratio, bar=bar,
                         passed=ratio >= bar))
        print(f"{case:38} {peer:44} detred {t_detred:8.3f} ms  peer {t_peer:8.3f} ms  ratio {ratio:5.2f}x  "
              f"bar {bar:.2f}x  {'PASS' if ratio >= bar else 'FAIL'}", flush=True)

    w_, r_ = args.warmup, args.reps
    if cases & {"rms", "ln"}:
        x = torch.randn(16384, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
        w = (torch.rand(4096, device=dev, dtype=torch.bfloat16) + 0.5).requires_grad_(True)
        b = torch.randn(4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn_like(x)
        if "rms" in cases:
            rms_norm_rows(x, w, dy, 1e-6, w_, r_, report)
        if "ln" in cases:
            layer_norm_rows(x, w, b, dy, w_, r_, report)
        del x, w, b, dy
    if "lsm" in cases:
        log_softmax_rows(dev, bio, w_, r_, report)
    if "causal" in cases:
        causal_rows(dev, w_, r_, report)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, reps {r_}, warmup {w_}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
