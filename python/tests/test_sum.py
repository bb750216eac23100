"""detred.sum: the documented order of every method (bits against reference.py), the error bounds of
include/detred/sum_method.hpp against exact fractions, correct rounding of method="exact", the same bits on every
thread count (docs/ORDER.md), and axis=-1 / axis=0 as reductions of each slice alone."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import detred
from conftest import (BFLOAT16, UNIT_ROUNDOFF, bits, exact_sum, gamma, needs_bfloat16, random_array,
                      round_fraction, same_bits)
from reference import reference_sum

ORDERED_METHODS = ["sequential", "pairwise", "kahan", "neumaier", "tree", "tree_neumaier"]


@pytest.mark.parametrize("method", ORDERED_METHODS)
@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float32, np.float64), (np.float64, np.float64),
                                       (np.float16, np.float32)])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 33, 100, 257])
def test_sum_is_the_documented_order_bit_for_bit(rng, method, dtype, acc, n):
    """sum_method.hpp: each method's order, against an independent Python implementation of it."""
    x = random_array(rng, n, dtype, "ill" if n > 4 else "normal")
    got = detred.sum(x, method=method, dtype=acc)
    assert same_bits(got, reference_sum(x, method, acc)), (method, n)


def bound(method: str, n: int, u: float, s: Fraction, S: Fraction) -> Fraction:
    h = 0 if n <= 1 else (n.bit_length() - 1) + bin(n).count("1") - 1  # canonical_depth(n)
    g = lambda k: Fraction(gamma(k, u))  # noqa: E731
    U = Fraction(u)
    return {
        "sequential": g(n - 1) * S,
        "pairwise": g(math.ceil(math.log2(n)) if n > 1 else 0) * S,
        "kahan": (2 * U + 4 * n * U * U) * S,
        "neumaier": U * abs(s) + g(n - 1) ** 2 * S,
        "tree": g(h) * S,
        "tree_neumaier": U * abs(s) + g(h + 1) ** 2 * S,
        "exact": U * abs(s),
    }[method]


@pytest.mark.parametrize("method", ORDERED_METHODS + ["exact"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["normal", "ill"])
def test_sum_error_within_the_stated_bound(rng, method, dtype, kind):
    """sum_method.hpp: |error| <= the method's bound, S = sum|x_i|, against the exact (Fraction) sum."""
    x = random_array(rng, 3001, dtype, kind)
    s = exact_sum(x)
    S = exact_sum(np.abs(x))
    got = detred.sum(x, method=method)
    err = abs(Fraction(float(got)) - s)
    assert err <= bound(method, x.size, UNIT_ROUNDOFF[np.dtype(dtype)], s, S)


@pytest.mark.parametrize("dtype,acc", [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64),
                                       (np.float16, np.float32), (np.float16, np.float64)])
@pytest.mark.parametrize("kind", ["normal", "ill"])
def test_exact_is_correctly_rounded(rng, dtype, acc, kind):
    """method='exact': the exact sum rounded once to nearest, ties to even (fractions reference; math.fsum too)."""
    x = random_array(rng, 2000, dtype, kind)
    got = detred.sum(x, method="exact", dtype=acc)
    assert got.dtype == np.dtype(acc)
    assert same_bits(got, round_fraction(exact_sum(x), acc))
    if np.dtype(acc) == np.float64:
        assert float(got) == math.fsum(x.astype(np.float64).tolist())


def test_exact_special_values():
    """exact.hpp: an exact zero is -0.0 only when every term was -0.0; [max, max, -max] is max; NaN canonical."""
    m = np.finfo(np.float64).max
    assert same_bits(detred.sum(np.array([m, m, -m]), method="exact"), np.float64(m))
    assert same_bits(detred.sum(np.array([-0.0, -0.0]), method="exact"), np.float64(-0.0))
    assert same_bits(detred.sum(np.array([-0.0, 0.0]), method="exact"), np.float64(0.0))
    assert same_bits(detred.sum(np.array([1.0, -1.0]), method="exact"), np.float64(0.0))
    assert same_bits(detred.sum(np.array([np.inf, -np.inf]), method="exact"), np.float64(np.nan))
    assert same_bits(detred.sum(np.array([1.0, np.nan]), method="tree"), np.float64(np.nan))


@pytest.mark.parametrize("method", ["tree", "tree_neumaier", "exact"])
def test_empty_sum_is_negative_zero(method):
    assert same_bits(detred.sum(np.zeros(0, np.float32), method=method), np.float32(-0.0))


def test_default_accumulation_and_result_types():
    assert detred.sum(np.ones(3, np.float16)).dtype == np.float32
    assert detred.sum(np.ones(3, np.float32)).dtype == np.float32
    assert detred.sum(np.ones(3, np.float64)).dtype == np.float64
    assert detred.sum(np.ones(3, np.float32), dtype=np.float64).dtype == np.float64
    assert detred.sum(np.ones(3, np.float32), dtype="float64").dtype == np.float64
    assert detred.sum(np.ones(3, np.float32), dtype=np.dtype("f8")).dtype == np.float64
    assert isinstance(detred.sum(np.ones(3, np.float32)), np.float32)  # a numpy scalar, as numpy.sum gives


@needs_bfloat16
def test_bfloat16_input():
    x = np.arange(-50, 77, dtype=np.float32).astype(BFLOAT16)
    assert same_bits(detred.sum(x), reference_sum(x, "tree", np.float32))
    assert same_bits(detred.sum(x, method="exact"), round_fraction(exact_sum(x), np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_agree_with_numpy(rng, dtype):
    x = random_array(rng, 10000, dtype)
    assert np.isclose(float(detred.sum(x)), float(np.sum(x.astype(np.float64))), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("method", ["tree", "tree_neumaier", "exact"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_bits_on_every_thread_count(rng, restore_threads, method, dtype):
    """reduce.hpp: the canonical-order methods and exact give the same bits for every thread count."""
    n = (1 << 22) + 12345 if method == "exact" else (1 << 20) + 12345  # enough chunks to run on several threads
    x = random_array(rng, n, dtype, "ill")
    results = []
    for threads in [1, 2, 3, 4, 8]:
        detred.set_num_threads(threads)
        results.append(detred.sum(x, method=method))
    assert all(same_bits(r, results[0]) for r in results)


def test_pairwise_equals_tree_on_powers_of_two(rng):
    """sum_method.hpp: pairwise is bitwise equal to tree when n is a power of two."""
    for k in [1, 5, 10, 17]:
        x = random_array(rng, 1 << k, np.float32, "ill")
        assert same_bits(detred.sum(x, method="pairwise"), detred.sum(x, method="tree"))


@pytest.mark.parametrize("method", ORDERED_METHODS + ["exact"])
@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float16, np.float32), (np.float64, np.float64),
                                       (np.float32, np.float64)])
def test_axis_last_is_each_row_alone(rng, method, dtype, acc):
    """rows.hpp: row r's result is the reduction of its own elements alone: sum(x, axis=-1)[r] == sum(x[r])."""
    x = random_array(rng, 7 * 300, dtype, "ill").reshape(7, 300)
    rows = detred.sum(x, axis=-1, method=method, dtype=acc)
    assert rows.shape == (7,) and rows.dtype == np.dtype(acc)
    for r in range(7):
        assert same_bits(rows[r], detred.sum(x[r], method=method, dtype=acc))
    assert same_bits(detred.sum(x[:3], axis=-1, method=method, dtype=acc), rows[:3])  # batch invariance


@pytest.mark.parametrize("method", ["tree", "tree_neumaier", "exact", "kahan"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_axis_first_is_each_column_alone(rng, method, dtype):
    """rows.hpp column_sum: column j is the canonical sum over i of x[i, j]: sum(x, axis=0)[j] == sum(x[:, j])."""
    x = random_array(rng, 301 * 37, dtype, "ill").reshape(301, 37)
    cols = detred.sum(x, axis=0, method=method)
    assert cols.shape == (37,)
    for j in range(37):
        assert same_bits(cols[j], detred.sum(np.ascontiguousarray(x[:, j]), method=method))


def test_batched_axis_last_reshapes_leading_dimensions(rng):
    x = random_array(rng, 2 * 3 * 50, np.float32).reshape(2, 3, 50)
    got = detred.sum(x, axis=-1)
    assert got.shape == (2, 3)
    assert same_bits(got.reshape(6), detred.sum(x.reshape(6, 50), axis=-1))
    assert same_bits(detred.sum(x, axis=2), got)
    assert detred.sum(x, axis=0).shape == (3, 50)


def test_one_dimensional_axis_is_the_whole_array(rng):
    x = random_array(rng, 100, np.float64)
    assert same_bits(detred.sum(x, axis=0), detred.sum(x))
    assert same_bits(detred.sum(x, axis=-1), detred.sum(x))


def test_non_contiguous_input_is_copied(rng):
    x = random_array(rng, 4000, np.float64).reshape(40, 100)
    assert same_bits(detred.sum(x[:, ::3]), detred.sum(np.ascontiguousarray(x[:, ::3])))
    assert same_bits(detred.sum(x.T, axis=-1), detred.sum(np.ascontiguousarray(x.T), axis=-1))
    assert same_bits(detred.sum(x[::-1]), detred.sum(np.ascontiguousarray(x[::-1])))
