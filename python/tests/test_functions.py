"""prod, min, max, argmin, argmax, dot, norm, logsumexp, mean, var, cumsum: the contracts of reduce.hpp, blas.hpp,
scan.hpp and rows.hpp, against independent references (reference.py's orders, numpy values, fractions)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import detred
from conftest import (BFLOAT16, UNIT_ROUNDOFF, exact_sum, gamma, needs_bfloat16, random_array, round_fraction,
                      same_bits)
from reference import reference_dot, reference_product, reference_sum


@pytest.mark.parametrize("n", [0, 1, 5, 64, 129])
@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float32)])
def test_prod_is_the_canonical_order(rng, n, dtype, acc):
    x = (1 + rng.standard_normal(n) * 0.1).astype(dtype)
    assert same_bits(detred.prod(x, dtype=acc), reference_product(x, acc))


def test_prod_bound_and_thread_counts(rng, restore_threads):
    """reduce.hpp: |error| <= gamma_(n-1) |product|; the same bits on every thread count."""
    x = (1 + rng.standard_normal(300000) * 1e-4).astype(np.float64)
    got = []
    for t in [1, 2, 4]:
        detred.set_num_threads(t)
        got.append(detred.prod(x))
    assert all(same_bits(g, got[0]) for g in got)
    small = x[:500]
    exact = Fraction(1)
    for v in small:
        exact *= Fraction(float(v))
    assert abs(Fraction(float(detred.prod(small))) - exact) <= Fraction(gamma(499, 2.0**-53)) * abs(exact)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_min_max_argmin_argmax_agree_with_numpy(rng, dtype):
    x = (rng.standard_normal(1000) * 100).astype(dtype)
    assert same_bits(detred.min(x), np.min(x)) and detred.min(x).dtype == x.dtype
    assert same_bits(detred.max(x), np.max(x))
    assert detred.argmin(x) == np.argmin(x) and detred.argmax(x) == np.argmax(x)
    assert isinstance(detred.argmin(x), np.int64)
    m = x.reshape(10, 100)
    assert same_bits(detred.max(m, axis=-1), np.max(m, axis=-1))
    assert same_bits(detred.min(m, axis=0), np.min(m, axis=0))
    assert np.array_equal(detred.argmax(m, axis=-1), np.argmax(m, axis=-1))
    assert np.array_equal(detred.argmin(m, axis=0), np.argmin(m, axis=0))


def test_extrema_ieee_semantics():
    """reduce.hpp: -0 < +0; NaN wins (first NaN's index); ties to the lowest index; empty min/max: +-Inf."""
    z = np.array([0.0, -0.0, 0.0], np.float32)
    assert same_bits(detred.min(z), np.float32(-0.0)) and detred.argmin(z) == 1
    assert same_bits(detred.max(np.array([-0.0, 0.0])), np.float64(0.0))
    assert detred.argmax(np.array([-0.0, 0.0])) == 1
    n = np.array([1.0, np.nan, 5.0, np.nan])
    assert np.isnan(detred.max(n)) and detred.argmax(n) == 1 and detred.argmin(n) == 1
    assert detred.argmax(np.array([3.0, 1.0, 3.0])) == 0
    assert same_bits(detred.min(np.zeros(0)), np.float64(np.inf))
    assert same_bits(detred.max(np.zeros(0, np.float32)), np.float32(-np.inf))


@needs_bfloat16
def test_bfloat16_extrema_keep_the_type():
    x = np.array([1.5, -2.0, 3.0], np.float32).astype(BFLOAT16)
    assert detred.max(x).dtype == BFLOAT16 and float(detred.max(x)) == 3.0
    assert detred.min(x.reshape(1, 3), axis=-1).dtype == BFLOAT16


@pytest.mark.parametrize("n", [0, 1, 17, 200])
@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float32)])
def test_dot_is_the_canonical_order(rng, n, dtype, acc):
    x, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    assert same_bits(detred.dot(x, y, dtype=acc), reference_dot(x, y, acc))


def test_dot_bound(rng):
    """blas.hpp: |error| <= gamma_(h(n)+1) sum |x_i y_i|."""
    x, y = random_array(rng, 3000, np.float32, "ill"), random_array(rng, 3000, np.float32)
    exact = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)), Fraction(0))
    S = sum((abs(Fraction(float(a)) * Fraction(float(b))) for a, b in zip(x, y)), Fraction(0))
    h = 11 + bin(3000).count("1") - 1
    assert abs(Fraction(float(detred.dot(x, y))) - exact) <= Fraction(gamma(h + 1, 2.0**-24)) * S


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norm(rng, dtype):
    x = random_array(rng, 5000, dtype)
    assert np.isclose(float(detred.norm(x)), float(np.linalg.norm(x.astype(np.float64))), rtol=1e-5)
    big = np.array([1e300, 1e300], np.float64)  # no overflow of the squares
    assert float(detred.norm(big)) == pytest.approx(np.sqrt(2) * 1e300)
    assert same_bits(detred.norm(np.zeros(0, dtype)), dtype(0.0))
    assert np.isinf(detred.norm(np.array([1.0, np.inf], dtype)))
    m = x.reshape(50, 100)
    rows = detred.norm(m, axis=-1)
    assert all(same_bits(rows[r], detred.norm(m[r])) for r in range(50))


@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float32)])
def test_logsumexp(rng, dtype, acc):
    x = random_array(rng, 999, dtype) * dtype(3)
    want = np.logaddexp.reduce(x.astype(np.float64))
    got = detred.logsumexp(x, dtype=acc)
    assert got.dtype == np.dtype(acc)
    assert np.isclose(float(got), want, rtol=10 * UNIT_ROUNDOFF[np.dtype(acc)] * 1000)
    assert same_bits(detred.logsumexp(np.zeros(0, np.float32)), np.float32(-np.inf))
    assert np.isinf(detred.logsumexp(np.array([1.0, np.inf])))
    m = x.reshape(9, 111)
    rows = detred.logsumexp(m, axis=-1, dtype=acc)
    assert all(same_bits(rows[r], detred.logsumexp(m[r], dtype=acc)) for r in range(9))


@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64)])
def test_mean_and_var(rng, dtype, acc):
    x = (random_array(rng, 4321, dtype) + dtype(10)).astype(dtype)
    x64 = x.astype(np.float64)
    tol = 1e-5 if np.dtype(acc) == np.float32 else 1e-12
    assert np.isclose(float(detred.mean(x, dtype=acc)), x64.mean(), rtol=tol)
    assert np.isclose(float(detred.var(x, dtype=acc)), x64.var(), rtol=100 * tol)
    assert np.isclose(float(detred.var(x, dtype=acc, ddof=1)), x64.var(ddof=1), rtol=100 * tol)
    m = x[:4300].reshape(43, 100)
    for f in (detred.mean, detred.var):
        rows = f(m, axis=-1, dtype=acc)
        assert all(same_bits(rows[r], f(m[r], dtype=acc)) for r in range(43))
        cols = f(m, axis=0, dtype=acc)
        assert all(same_bits(cols[j], f(np.ascontiguousarray(m[:, j]), dtype=acc)) for j in range(100))
    assert np.isnan(detred.mean(np.zeros(0, np.float32)))
    assert np.isnan(detred.var(np.ones(1), ddof=1))


def test_var_of_constant_data_is_zero():
    assert float(detred.var(np.full(1000, 0.1))) == 0.0


@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float32),
                                       (np.float32, np.float64)])
def test_cumsum_every_prefix_is_the_tree_sum(rng, dtype, acc):
    """scan.hpp: out[i] == sum(x[:i+1], method='tree') bit for bit (inclusive); exclusive shifts by one, -0.0 first."""
    x = random_array(rng, 300, dtype, "ill")
    inc = detred.cumsum(x, dtype=acc)
    exc = detred.cumsum(x, exclusive=True, dtype=acc)
    assert inc.shape == (300,) and inc.dtype == np.dtype(acc)
    for i in range(300):
        assert same_bits(inc[i], reference_sum(x[: i + 1], "tree", acc))
        assert same_bits(exc[i], reference_sum(x[:i], "tree", acc))
    assert same_bits(exc[0], np.dtype(acc).type(-0.0))


def test_cumsum_same_bits_on_every_thread_count(rng, restore_threads):
    x = random_array(rng, (1 << 20) + 3, np.float32, "ill")
    got = []
    for t in [1, 2, 3, 8]:
        detred.set_num_threads(t)
        got.append(detred.cumsum(x))
    assert all(same_bits(g, got[0]) for g in got)
    assert same_bits(got[0][-1], detred.sum(x))
    assert detred.cumsum(x[: 1 << 20].reshape(1024, -1)[:, :1]).shape == (1024,)  # flattened, as numpy.cumsum


def test_sum_exact_matches_fraction_for_f16_rows(rng):
    x = random_array(rng, 40 * 25, np.float16).reshape(40, 25)
    rows = detred.sum(x, axis=-1, method="exact")
    for r in range(40):
        assert same_bits(rows[r], round_fraction(exact_sum(x[r]), np.float32))
