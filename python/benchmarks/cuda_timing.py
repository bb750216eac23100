"""CUDA-event timing shared by the benchmark scripts of this folder (run as scripts, so it imports by name)."""

from __future__ import annotations

import statistics

import torch


def median_ms(fn, reps: int, warmup: int = 1) -> float:
    """Median milliseconds of `reps` calls of fn(), each between two CUDA events on the current stream (one call
    between two events, not back-to-back calls), after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def interleaved_median_ms(fns, reps: int, warmup: int = 1, calls: int = 1) -> list[float]:
    """Median milliseconds of each of fns, timed as median_ms does (one call between two events; with calls > 1,
    that many calls back to back between the two events, per call), the functions taking turns within every
    repetition (the order rotating from one repetition to the next), so that clock ramps, other tenants and the
    allocator's state weigh on each alike. Each timed call follows an untimed call of the same function (then a
    synchronize): a call's time depends on the work that ran just before it (detred's RMSNorm forward + backward took
    0.577 ms right after the fp32 plain formula's 3.7 ms, 0.482 ms right after F.rms_norm, on one H100), and a rotation
    of three or more functions puts some more often after a heavy neighbour than others. Returns one median per
    function, in fns' order."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for rep in range(reps):
        for k in range(len(fns)):
            i = (rep + k) % len(fns)
            fns[i]()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fns[i]()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) / calls)
    return [statistics.median(t) for t in times]
