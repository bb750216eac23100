"""detred's index_add of bf16 rows [2^20 x 128] into fp32 [2^16 x 128] with Zipf(1.1) row indices against PyTorch's
index_add_, in one process on the same tensors, without the Python module: detred is called through the C entry point
of index_add_peer.cu (its build command is in that file), one shared library per build to compare.

PyTorch's index_add_ needs the source in out's dtype: its peer reads the rows converted to fp32 beforehand (and,
reported beside it, converting inside the timed call), as bench_scatter_torch.py does. Times: medians of single calls
between two CUDA events, the calls taking turns (cuda_timing.interleaved_median_ms); ratio = peer time / detred time.
Also the distinct results (bitwise) of 5 runs of each.
Usage: python3 bench_index_add_peer.py LIBRARY.so [LIBRARY.so ...] [--repeat 15]
"""

from __future__ import annotations

import argparse
import ctypes

import torch

from cuda_timing import interleaved_median_ms, median_ms


def zipf_index(n: int, m: int, generator: torch.Generator, s: float = 1.1) -> torch.Tensor:
    """Zipf(s) over [0, m) by the continuous inverse CDF (bench_scatter_torch.py's): slot 0 gets ~10%."""
    u = torch.rand(n, dtype=torch.float64, device="cuda", generator=generator)
    e = 1.0 - s
    x = ((m**e - 1.0) * u + 1.0) ** (1.0 / e)
    return (x.floor() - 1.0).clamp(0, m - 1).to(torch.int64)


def detred_call(path: str, out: torch.Tensor, index: torch.Tensor, source: torch.Tensor):
    """A function adding source's rows into out by the library at `path`, its workspace allocated once."""
    lib = ctypes.CDLL(path)
    f = lib.detred_index_add_bf16
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    f.argtypes += [ctypes.c_uint64] * 3
    n, d = source.shape
    m = out.shape[0]
    size = ctypes.c_size_t(0)
    if f(None, ctypes.byref(size), source.data_ptr(), index.data_ptr(), out.data_ptr(), n, m, d) != 0:
        raise RuntimeError(f"{path}: workspace query failed")
    workspace = torch.empty(max(size.value, 1), dtype=torch.uint8, device="cuda")

    def call(target: torch.Tensor = out) -> torch.Tensor:
        if f(workspace.data_ptr(), ctypes.byref(size), source.data_ptr(), index.data_ptr(), target.data_ptr(), n, m,
             d) != 0:
            raise RuntimeError(f"{path}: index_add failed")
        return target

    return call


def index_add_data(seed: int = 5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The benchmark's tensors on the GPU: bf16 source rows [2^20 x 128], the same rows in fp32 (PyTorch's peer needs
    the source in out's dtype), Zipf(1.1) row indices over 2^16 rows, and a zero fp32 output [2^16 x 128]."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    rows, d, m = 1 << 20, 128, 1 << 16
    source = torch.empty(rows, d, device="cuda").uniform_(-1, 1, generator=g).to(torch.bfloat16)
    index = zipf_index(rows, m, g)
    out = torch.zeros(m, d, device="cuda")
    torch.cuda.synchronize()  # the libraries run on the legacy default stream
    return source, source.float(), index, out


def distinct_results(fn, runs: int = 5) -> int:
    seen = set()
    for _ in range(runs):
        r = fn()
        torch.cuda.synchronize()
        seen.add(r.view(torch.int32).to(torch.int64).mul(0x9E3779B1).remainder(2**61 - 1).sum().item())
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("libraries", nargs="+")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    source, source32, index, out = index_add_data()
    m, d = out.shape
    calls = [detred_call(path, out, index, source) for path in args.libraries]
    torch.use_deterministic_algorithms(False)
    fns = calls + [lambda: out.index_add_(0, index, source32), lambda: out.index_add_(0, index, source.float())]
    times = interleaved_median_ms(fns, args.repeat)
    torch.use_deterministic_algorithms(True)
    t_sorted = median_ms(lambda: out.index_add_(0, index, source32), 3)
    torch.use_deterministic_algorithms(False)
    t_atomic, t_convert = times[-2], times[-1]
    print(f"{'library':<40} {'detred ms':>9}  {'index_add_ fp32 src':>19} {'.float() inside':>15} {'deterministic':>13}")
    for path, t in zip(args.libraries, times):
        print(f"{path:<40} {t:9.3f}  {t_atomic:9.3f} ({t_atomic / t:5.2f}x) {t_convert:8.3f} ({t_convert / t:4.2f}x) "
              f"{t_sorted:8.2f} ({t_sorted / t:5.1f}x)")
    torch_runs = distinct_results(lambda: torch.zeros(m, d, device="cuda").index_add_(0, index, source32))
    detred_runs = [distinct_results(lambda: call(torch.zeros(m, d, device="cuda"))) for call in calls]
    print(f"distinct results in 5 runs: index_add_ atomics {torch_runs}, detred {detred_runs}")
    want = calls[0](torch.zeros(m, d, device="cuda")).clone()
    for path, call in zip(args.libraries[1:], calls[1:]):
        same = torch.equal(call(torch.zeros(m, d, device="cuda")).view(torch.int32), want.view(torch.int32))
        print(f"{path}: bits equal to {args.libraries[0]}'s: {same}")


if __name__ == "__main__":
    main()
