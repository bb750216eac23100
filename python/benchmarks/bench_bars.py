"""The Python package's bars (docs/PERFORMANCE.md, "Python"), peers in the same process:

  throughput  detred.sum of a 1 GiB float32 CUDA tensor (tree and exact) against the C++ detred::cuda::sum of the same
              buffer, called from C++ in a loop (detred._detred._cpp_sum_loop): the Python layer's cost alone.
  overhead    detred.sum of a 1,024-element CUDA tensor against torch.sum: per call over 1,000 back-to-back calls
              between two CUDA events, and one call between two events.
  cpu         detred.sum of a 1,024-element numpy float32 array against numpy.sum, per call (timeit).

Medians of interleaved repetitions. Usage: python3 bench_bars.py [--repeat 30]; prints one line per figure.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np

import detred
from detred import _detred


def cuda_bars(repeat: int) -> None:
    import torch

    name = torch.cuda.get_device_name()
    print(f"device: {name}; torch {torch.__version__}; detred {detred.__version__}")
    stream = torch.cuda.current_stream()
    raw_stream = stream.cuda_stream

    def events_ms(fn, calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls

    # Throughput: 1 GiB float32 (several times the L2), tree and exact.
    n = 1 << 28
    x = torch.empty(n, device="cuda").normal_()
    out = torch.empty((), device="cuda")
    for method in ["tree", "exact"]:
        bytes_ = _detred._cpp_sum_workspace_bytes(n, method)
        ws = torch.empty(bytes_, dtype=torch.uint8, device="cuda")

        def cpp(k=10):
            _detred._cpp_sum_loop(x.data_ptr(), n, out.data_ptr(), ws.data_ptr(), bytes_, method, k, raw_stream)

        def py():
            detred.sum(x, method=method)

        for _ in range(3):
            events_ms(py, 5)
            cpp(5)
        py_ms, cpp_ms = [], []
        for _ in range(repeat):
            py_ms.append(events_ms(py, 10))
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            cpp(10)
            end.record()
            end.synchronize()
            cpp_ms.append(start.elapsed_time(end) / 10)
        p, c = statistics.median(py_ms), statistics.median(cpp_ms)
        gbs = 4 * n / (p * 1e-3) / 1e9
        print(f"throughput {method} 1GiB f32: python {p * 1e3:.1f} us ({gbs:.0f} GB/s), C++ {c * 1e3:.1f} us, "
              f"ratio C++/python {c / p:.4f} (bar >= 0.97)")
    del x

    # Overhead at 1,024 elements.
    small = torch.randn(1024, device="cuda")
    for _ in range(3):
        events_ms(lambda: torch.sum(small), 200)
        events_ms(lambda: detred.sum(small), 200)
    t_b2b, d_b2b, t_one, d_one = [], [], [], []
    for _ in range(repeat):
        t_b2b.append(events_ms(lambda: torch.sum(small), 1000))
        d_b2b.append(events_ms(lambda: detred.sum(small), 1000))
        t_one.append(events_ms(lambda: torch.sum(small), 1))
        d_one.append(events_ms(lambda: detred.sum(small), 1))
    tb, db = statistics.median(t_b2b) * 1e3, statistics.median(d_b2b) * 1e3
    to, do = statistics.median(t_one) * 1e3, statistics.median(d_one) * 1e3
    print(f"overhead 1024 f32 back-to-back (per call over 1000 calls between two events): detred {db:.2f} us, "
          f"torch.sum {tb:.2f} us, ratio {db / tb:.3f} (bar <= 1.5)")
    print(f"overhead 1024 f32 one call between two events: detred {do:.2f} us, torch.sum {to:.2f} us, "
          f"ratio {do / to:.3f}")
    for method in ["exact", "tree_neumaier"]:
        d = statistics.median([events_ms(lambda: detred.sum(small, method=method), 1000) for _ in range(repeat)])
        print(f"overhead 1024 f32 back-to-back, method={method}: detred {d * 1e3:.2f} us")


def cpu_bar(repeat: int) -> None:
    a = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    number = 20000
    d = min(timeit.repeat(lambda: detred.sum(a), number=number, repeat=repeat)) / number * 1e6
    n = min(timeit.repeat(lambda: np.sum(a), number=number, repeat=repeat)) / number * 1e6
    print(f"cpu 1024 f32 per call (best of {repeat} x {number}): detred {d:.3f} us, numpy.sum {n:.3f} us, "
          f"ratio {d / n:.3f} (bar <= 2)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    cpu_bar(min(args.repeat, 7))
    if detred.cuda_available():
        cuda_bars(args.repeat)
    else:
        print("no CUDA backend or GPU: CUDA bars skipped")


if __name__ == "__main__":
    main()
