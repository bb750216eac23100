"""detred.ExactAccumulator: the state of detred::exact_accumulator (exact.hpp) and its byte form (docs/EXACT.md)."""

from __future__ import annotations

import copy
import math
import pickle
import struct
from fractions import Fraction

import numpy as np
import pytest

import detred
from conftest import BFLOAT16, exact_sum, needs_bfloat16, random_array, round_fraction, same_bits


def test_value_is_the_correctly_rounded_sum(rng):
    x = random_array(rng, 5000, np.float64, "ill")
    acc = detred.ExactAccumulator("float64")
    acc.add(x[:1234])
    acc.add(x[1234:].reshape(-1, 2))  # any shape
    assert acc.count == 5000
    assert float(acc.value()) == math.fsum(x.tolist())
    assert same_bits(acc.value("float32"), round_fraction(exact_sum(x), np.float32))
    assert same_bits(acc.value(), detred.sum(x, method="exact"))


@pytest.mark.parametrize("layout,dtypes", [("float32", [np.float16, np.float32]),
                                           ("float64", [np.float16, np.float32, np.float64])])
def test_layouts_take_their_inputs(rng, layout, dtypes):
    acc = detred.ExactAccumulator(layout)
    parts = [random_array(rng, 100, d) for d in dtypes]
    for p in parts:
        acc.add(p)
    total = sum((exact_sum(p) for p in parts), Fraction(0))
    assert same_bits(acc.value(), round_fraction(total, layout))
    assert acc.value().dtype == np.dtype(layout)


def test_large_input_uses_the_parallel_state_with_the_same_bits(rng, restore_threads):
    x = random_array(rng, (1 << 22) + 7, np.float32, "ill")
    states = []
    for t in [1, 3, 8]:
        detred.set_num_threads(t)
        a = detred.ExactAccumulator("float32")
        a.add(x)
        states.append(a.to_bytes())
    assert states[0] == states[1] == states[2]
    b = detred.ExactAccumulator("float64")  # double layout: the same value
    b.add(x)
    assert same_bits(b.value("float32"), detred.sum(x, method="exact"))


def test_byte_form_is_the_documented_layout():
    """docs/PYTHON.md: DXA1, layout id, flags, limb count, count, normalised little-endian limbs."""
    for layout, limbs, ident in [("float32", 12, 1), ("float64", 69, 2)]:
        acc = detred.ExactAccumulator(layout)
        acc.add(np.array([1.0, -0.0, np.inf], np.float32))
        b = acc.to_bytes()
        assert len(b) == 16 + 8 * limbs
        magic, lid, flags, count_limbs, count = struct.unpack_from("<4sBBHQ", b)
        assert (magic, lid, count_limbs, count) == (b"DXA1", ident, limbs, 3)
        assert flags == 2 | 8  # +Inf seen; a term other than -0.0 seen
        value = sum(struct.unpack_from("<q", b, 16 + 8 * k)[0] << (32 * k) for k in range(limbs))
        low = -160 if layout == "float32" else -1088
        assert Fraction(value) * Fraction(2) ** low == 1  # the finite terms: 1.0 + (-0.0)
        assert float(acc.value()) == math.inf


def test_zero_signs_and_specials():
    a = detred.ExactAccumulator()
    assert same_bits(a.value(), np.float64(-0.0))  # no terms
    a.add(np.array([-0.0]))
    assert same_bits(a.value(), np.float64(-0.0))
    a.add(np.array([0.0]))
    assert same_bits(a.value(), np.float64(0.0))
    a.add(np.array([np.nan]))
    assert np.isnan(a.value())


@needs_bfloat16
def test_bfloat16_values():
    a = detred.ExactAccumulator("float32")
    a.add(np.array([1.0, 2.0 ** -10], np.float32).astype(BFLOAT16))
    assert a.value(BFLOAT16).dtype == BFLOAT16
    assert float(a.value()) == 1.0 + 2.0 ** -10


def test_copy_and_pickle():
    a = detred.ExactAccumulator("float32")
    a.add(np.arange(10, dtype=np.float32))
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a), copy.copy(a)):
        assert b == a and float(b.value()) == 45.0
    assert a != detred.ExactAccumulator("float32")
    assert "float32" in repr(a)
