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
