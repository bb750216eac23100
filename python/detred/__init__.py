"""detred: deterministic, accurate reductions (docs/PYTHON.md).

Numpy-like reductions over any array that speaks DLPack, with the C++ library's bits: ``sum`` (every
``sum_method``, ``method="exact"`` correctly rounded), ``cumsum``, ``prod``, ``min``, ``max``, ``argmin``,
``argmax``, ``dot``, ``norm``, ``logsumexp``, ``mean``, ``var``. ``axis=-1`` is the batch-invariant row
reduction (``f(x, axis=-1)[r] == f(x[r])`` bit for bit), ``axis=0`` the column reduction. Results are of the
input's framework. ``ExactAccumulator`` holds an exact sum you can merge, serialize and pickle; ``audit`` runs
detred-audit on an array and returns its JSON report as a dict.

CPU arrays run on the CPU backend (any thread count, the same bits); CUDA arrays (PyTorch, CuPy, JAX) on their GPU
with the same bits, on the framework's current stream (``cuda_available()`` says whether this build has the CUDA
backend and a GPU). ``scatter_add``, ``index_add`` and ``segment_sum`` are the exact scattered sums; ``detred.torch``
holds the PyTorch operators and ``detred.torch.distributed`` the reproducible collectives.
"""

from __future__ import annotations

import json as _json
from typing import Any, Dict, Iterable, Optional, Sequence

from ._detred import (
    ExactAccumulator,
    __version__,
    argmax,
    argmin,
    cuda_available,
    cumsum,
    dot,
    get_num_threads,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    scatter_add,
    index_add,
    segment_sum,
    set_num_threads,
    sum,
    sum_methods,
    var,
)
from . import _detred

__all__ = [
    "ExactAccumulator",
    "__version__",
    "argmax",
    "argmin",
    "audit",
    "audit_algorithms",
    "cuda_available",
    "cumsum",
    "dot",
    "get_num_threads",
    "logsumexp",
    "max",
    "mean",
    "min",
    "norm",
    "prod",
    "scatter_add",
    "index_add",
    "segment_sum",
    "set_num_threads",
    "sum",
    "sum_methods",
    "var",
]


def audit_algorithms() -> list:
    """The stable algorithm names ``audit`` accepts in this build (``detred-audit --list-algorithms``)."""
    if not _detred.has_audit:
        raise RuntimeError("this build of detred has no audit (built with DETRED_BUILD_VERIFY=OFF)")
    return list(_detred.audit_algorithms())


def audit(
    array: Any,
    algorithms: Optional[Iterable[str]] = None,
    device: str = "cpu",
    *,
    repeat: int = 5,
    permute: int = 10,
    configs: bool = True,
    threads: Sequence[int] = (1, 2, 3, 4, 8),
    seed: int = 1,
) -> Dict[str, Any]:
    """Audits the sums of ``array`` as ``detred-audit --json -`` does, in this process, and returns the report.

    The report is the tool's JSON (docs/AUDIT.md) as a dict: per algorithm its value (also as an exact hex-float
    string under ``value_hex``), the error against the exact sum, the a-priori bound and whether it holds, the time,
    and the number of distinct bit patterns over ``repeat`` runs, over the CPU ``threads`` counts and GPU launch
    configurations (``configs``) and over the input's order and ``permute`` random ones. ``report["exit_status"]``
    is the tool's: 0 when every promise held, 1 when a deterministic algorithm gave more than one bit pattern (or an
    exact one missed the correctly rounded sum); each such result lists its ``failures``.

    array: any CPU array (float16, bfloat16, float32, float64; any shape, read in C order).
    algorithms: names or suffixes as ``--algorithms`` takes them (``"cpu/tree"``, ``"kahan"``); None: all.
    device: ``"cpu"``, ``"gpu"`` or ``"all"`` (GPU rows need a build with the CUDA backend and a GPU).

    This links detred-audit's own library into the module (no subprocess, no temporary file). Errors: TypeError
    for a non-array or an unsupported dtype, ValueError for a bad value, each naming the argument.
    """
    if not _detred.has_audit:
        raise RuntimeError("this build of detred has no audit (built with DETRED_BUILD_VERIFY=OFF)")
    if isinstance(algorithms, str):
        algorithms = [a for a in algorithms.split(",") if a]
    names = [] if algorithms is None else list(algorithms)
    for a in names:
        if not isinstance(a, str):
            raise TypeError(f"algorithms: expected names (str), got {type(a).__name__}")
    if not isinstance(device, str):
        raise TypeError(f"device: expected 'cpu', 'gpu' or 'all', got {type(device).__name__}")
    for name, value in (("repeat", repeat), ("permute", permute), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name}: must be >= 0, got {value}")
    thread_list = list(threads)
    text = _detred._audit_json(array, names, device, repeat, permute, bool(configs), thread_list, seed)
    return _json.loads(text)
