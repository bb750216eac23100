"""Shared helpers of the detred Python tests: independent references (fractions, math.fsum, numpy) and bit checks.

The module under test is the C++ CPU API itself, so every reference here is independent of it: exact sums by
fractions.Fraction, correctly rounded results by exact comparison of neighbouring floats, values by numpy.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

try:
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 tests skip, saying so
    ml_dtypes = None
    BFLOAT16 = None

FLOAT_DTYPES = [np.float16, np.float32, np.float64] + ([BFLOAT16] if BFLOAT16 is not None else [])
UNIT_ROUNDOFF = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}


def bits(x):
    """The bit pattern(s) of a numpy scalar or array, for bitwise comparison (NaNs compare by their bits)."""
    a = np.asarray(x)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]).copy()


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


def exact_sum(values) -> Fraction:
    """The exact sum of finite floats."""
    return sum((Fraction(float(v)) for v in np.asarray(values).ravel().astype(np.float64)), Fraction(0))


def round_fraction(value: Fraction, dtype) -> np.generic:
    """value rounded to nearest, ties to even, in dtype (finite results), by exact comparison of neighbours."""
    dtype = np.dtype(dtype)
    guess = dtype.type(float(value))  # within one ulp (double rounding at most)
    candidates = [np.nextafter(guess, dtype.type(-np.inf)), guess, np.nextafter(guess, dtype.type(np.inf))]
    best = None
    for c in candidates:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - value)
        if best is None or d < best[0] or (d == best[0] and int(bits(c)) % 2 == 0):
            best = (d, c)
    result = best[1]
    if result == 0 and value == 0:
        return dtype.type(0.0)
    return result


def gamma(k: int, u: float) -> float:
    return k * u / (1 - k * u)


def random_array(rng: np.random.Generator, n: int, dtype, kind: str = "normal") -> np.ndarray:
    if kind == "normal":
        x = rng.standard_normal(n)
    elif kind == "ill":  # large cancelling terms plus small ones: a large condition number
        big = rng.standard_normal(n) * 2.0 ** rng.integers(0, 8 if np.dtype(dtype).itemsize == 2 else 30, n)
        x = np.concatenate([big[: n // 2], -big[: n // 2], rng.standard_normal(n - 2 * (n // 2))])
        x = x + rng.standard_normal(n) * 1e-3
        rng.shuffle(x)
    else:
        raise ValueError(kind)
    return x.astype(dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture
def restore_threads():
    import detred

    before = detred.get_num_threads()
    yield
    detred.set_num_threads(before)


needs_bfloat16 = pytest.mark.skipif(BFLOAT16 is None, reason="ml_dtypes is not installed: no numpy bfloat16")
