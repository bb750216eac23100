"""The scatter family's PyTorch peers (docs/PERFORMANCE.md, "Scatter"), on the same CUDA tensors in one process:

  index_add   detred.index_add of bf16 rows [2^20 x 128] into fp32 [2^16 x 128], Zipf(1.1) row indices, against
              PyTorch's out.index_add_(0, index, source) with torch.use_deterministic_algorithms off (float atomics)
              and on (sort-based). PyTorch's index_add_ needs the source in out's dtype: its peer reads the same rows
              converted to fp32 beforehand (and, reported beside it, converting inside the timed call).
  scatter_add detred.scatter_add of 2^26 fp32 values into 2^20 slots (uniform and Zipf(1.1) indices) and into 256
              slots, against Tensor.scatter_add_ both ways.
  run to run  the number of distinct results (bitwise) of 5 runs of each on the same inputs.

Times are medians of single calls between two CUDA events; "ratio" = peer time / detred time (>= 1: detred faster).
Usage: python3 bench_scatter_torch.py [--repeat 15]
"""

from __future__ import annotations

import argparse

import torch

import detred
from cuda_timing import median_ms


def zipf_index(n: int, m: int, generator: torch.Generator, s: float = 1.1) -> torch.Tensor:
    """Zipf(s) over [0, m) by the continuous inverse CDF (bench/bench_scatter.cu's formula): slot 0 gets ~10%."""
    u = torch.rand(n, dtype=torch.float64, device="cuda", generator=generator)
    e = 1.0 - s
    x = ((m**e - 1.0) * u + 1.0) ** (1.0 / e)
    return (x.floor() - 1.0).clamp(0, m - 1).to(torch.int64)


def distinct_results(fn, runs: int = 5) -> int:
    """Distinct bit patterns of fn() (a fresh result each run) over `runs` runs."""
    seen = set()
    for _ in range(runs):
        r = fn()
        seen.add(r.view(torch.int32).to(torch.int64).mul(0x9E3779B1).remainder(2**61 - 1).sum().item())
    return len(seen)


def row(name: str, detred_ms: float, peer_ms: float, peer: str) -> None:
    print(f"{name:<52} {detred_ms:9.3f} {peer_ms:10.3f}  {peer:<34} {peer_ms / detred_ms:7.2f}", flush=True)


def deterministic(on: bool) -> None:
    torch.use_deterministic_algorithms(on)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rep = args.repeat
    g = torch.Generator(device="cuda").manual_seed(5)
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; detred {detred.__version__}")
    print(f"{'case':<52} {'detred ms':>9} {'peer ms':>10}  {'peer':<34} {'ratio':>7}")

    # index_add: bf16 [2^20 x 128] into fp32 [2^16 x 128], Zipf rows.
    rows, d, m = 1 << 20, 128, 1 << 16
    source = torch.empty(rows, d, device="cuda").uniform_(-1, 1, generator=g).to(torch.bfloat16)
    source32 = source.float()
    index = zipf_index(rows, m, g)
    out = torch.zeros(m, d, device="cuda")
    t_detred = median_ms(lambda: detred.index_add(out, 0, index, source), rep)
    deterministic(False)
    t_atomic = median_ms(lambda: out.index_add_(0, index, source32), rep)
    t_atomic_convert = median_ms(lambda: out.index_add_(0, index, source.float()), rep)
    deterministic(True)
    t_sorted = median_ms(lambda: out.index_add_(0, index, source32), max(3, rep // 3))
    deterministic(False)
    name = "index_add bf16 [2^20x128] -> fp32 [2^16x128] Zipf"
    row(name, t_detred, t_atomic, "index_add_ (atomics, fp32 source)")
    row(name, t_detred, t_atomic_convert, "index_add_ (atomics, .float() inside)")
    row(name, t_detred, t_sorted, "index_add_ deterministic (sort)")
    torch_runs = distinct_results(lambda: torch.zeros(m, d, device="cuda").index_add_(0, index, source32))
    detred_runs = distinct_results(lambda: detred.index_add(torch.zeros(m, d, device="cuda"), 0, index, source))
    print(f"  distinct results in 5 runs: index_add_ atomics {torch_runs}, detred {detred_runs}")

    # scatter_add: 2^26 fp32 values.
    del source, source32, out
    n = 1 << 26
    values = torch.empty(n, device="cuda").uniform_(-1, 1, generator=g)
    for label, slots, kind in [("2^20 uniform", 1 << 20, "u"), ("2^20 Zipf(1.1)", 1 << 20, "z"), ("256 uniform", 256, "u")]:
        if kind == "u":
            idx = torch.randint(0, slots, (n,), device="cuda", generator=g)
        else:
            idx = zipf_index(n, slots, g)
        out = torch.zeros(slots, device="cuda")
        t_detred = median_ms(lambda: detred.scatter_add(values, idx, out), rep)
        deterministic(False)
        t_atomic = median_ms(lambda: out.scatter_add_(0, idx, values), rep)
        deterministic(True)
        t_sorted = median_ms(lambda: out.scatter_add_(0, idx, values), 3)
        deterministic(False)
        row(f"scatter_add 2^26 fp32 -> {label}", t_detred, t_atomic, "scatter_add_ (atomics)")
        row(f"scatter_add 2^26 fp32 -> {label}", t_detred, t_sorted, "scatter_add_ deterministic (sort)")
        torch_runs = distinct_results(lambda: torch.zeros(slots, device="cuda").scatter_add_(0, idx, values))
        detred_runs = distinct_results(lambda: detred.scatter_add(values, idx, torch.zeros(slots, device="cuda")))
        print(f"  distinct results in 5 runs: scatter_add_ atomics {torch_runs}, detred {detred_runs}")


if __name__ == "__main__":
    main()
