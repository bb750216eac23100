"""Per-kernel device times of detred's index_add and of PyTorch's index_add_ at full clock, on bench_index_add_peer.py's
data (bf16 rows [2^20 x 128] into fp32 [2^16 x 128], Zipf(1.1) row indices): torch.profiler (CUPTI) over 20 calls after
5 warm-up calls, each call followed by a synchronize; the median of each kernel and memset a call, and their sum.
Nsight Compute locks the clocks and flushes the caches between kernels; this shows where a call's time goes as it runs.
Usage: python3 profile_index_add.py LIBRARY.so [LIBRARY.so ...]   (the libraries of index_add_peer.cu)
"""

from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from bench_index_add_peer import detred_call, index_add_data


def kernel_medians(fn, calls: int = 20) -> list[tuple[str, float, float]]:
    """(name, median us, launches a call) of every device activity of `calls` calls of fn, in order of first start."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(calls):
            fn()
            torch.cuda.synchronize()
    times: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times.setdefault(e.name, []).append(e.device_time)
    return [(name, sorted(t)[len(t) // 2], len(t) / calls) for name, t in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("libraries", nargs="+")
    args = parser.parse_args()
    source, source32, index, out = index_add_data()
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    fns = [(path, detred_call(path, out, index, source)) for path in args.libraries]
    fns.append(("index_add_ (fp32 source)", lambda: out.index_add_(0, index, source32)))
    for name, fn in fns:
        rows_out = kernel_medians(fn)
        print(f"== {name}")
        for kernel, us, per_call in rows_out:
            print(f"  {us:9.1f} us  x{per_call:.0f}  {kernel[:90]}")
        print(f"  {sum(us * per_call for _, us, per_call in rows_out):9.1f} us  the sum")


if __name__ == "__main__":
    main()
