"""Hypothesis properties: permutation invariance of method='exact' (sum_method.hpp: the same bits in any order),
batch invariance of axis=-1 (rows.hpp: f(x[:k]) == f(x)[:k] bitwise), ExactAccumulator merges equal one accumulator
(exact.hpp: any order of add() and merge() gives the same state), and pickling round trips."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import detred
from conftest import same_bits

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("ci")

float_dtypes = st.sampled_from([np.float16, np.float32, np.float64])


def finite_arrays(dtype, min_size=0, max_size=300):
    return hnp.arrays(dtype, st.integers(min_size, max_size),
                      elements=hnp.from_dtype(np.dtype(dtype), allow_nan=False, allow_infinity=False))


@st.composite
def array_and_permutation(draw):
    dtype = draw(float_dtypes)
    x = draw(finite_arrays(dtype))
    perm = draw(st.permutations(range(x.size))) if x.size else []
    return x, np.asarray(perm, dtype=np.int64)


@given(array_and_permutation(), st.sampled_from([None, np.float64]))
def test_exact_sum_is_permutation_invariant(xp, acc):
    x, perm = xp
    if acc is None and x.dtype == np.float64:
        acc = np.float64
    a = detred.sum(x, method="exact", dtype=acc)
    b = detred.sum(x[perm], method="exact", dtype=acc)
    assert same_bits(a, b)


@st.composite
def batches(draw):
    dtype = draw(float_dtypes)
    rows = draw(st.integers(1, 12))
    cols = draw(st.integers(0, 80))
    x = draw(hnp.arrays(dtype, (rows, cols),
                        elements=hnp.from_dtype(np.dtype(dtype), allow_nan=False, allow_infinity=False)))
    k = draw(st.integers(1, rows))
    return x, k


FUNCTIONS = [
    lambda x: detred.sum(x, axis=-1),
    lambda x: detred.sum(x, axis=-1, method="tree_neumaier"),
    lambda x: detred.sum(x, axis=-1, method="exact"),
    lambda x: detred.max(x, axis=-1),
    lambda x: detred.norm(x, axis=-1),
    lambda x: detred.logsumexp(x, axis=-1),
    lambda x: detred.mean(x, axis=-1),
    lambda x: detred.var(x, axis=-1),
    lambda x: detred.prod(x, axis=-1),
]


@given(batches(), st.sampled_from(range(len(FUNCTIONS))))
def test_row_reductions_are_batch_invariant(batch, which):
    x, k = batch
    f = FUNCTIONS[which]
    with np.errstate(all="ignore"):
        full = f(x)
        head = f(x[:k])
        assert same_bits(head, full[:k])
        assert same_bits(f(x[k - 1 : k]), full[k - 1 : k])  # f(x[r:r+1]) == f(x)[r:r+1]


@given(st.lists(finite_arrays(np.float64, max_size=60), min_size=1, max_size=6), st.randoms())
def test_merged_accumulators_equal_one_accumulator(parts, random):
    one = detred.ExactAccumulator("float64")
    for p in parts:
        one.add(p)
    pieces = []
    for p in parts:
        a = detred.ExactAccumulator("float64")
        a.add(p)
        pieces.append(a)
    random.shuffle(pieces)
    merged = detred.ExactAccumulator("float64")
    for a in pieces:
        merged.merge(a)
    assert merged == one
    assert merged.to_bytes() == one.to_bytes()
    assert same_bits(merged.value(), one.value())
    allx = np.concatenate(parts)
    assert same_bits(one.value(), detred.sum(allx, method="exact"))


@given(float_dtypes.flatmap(lambda d: finite_arrays(d, max_size=100)), st.sampled_from(["float32", "float64"]))
def test_pickling_round_trips(x, layout):
    if layout == "float32" and x.dtype == np.float64:
        x = x.astype(np.float32)
    a = detred.ExactAccumulator(layout)
    a.add(x)
    b = pickle.loads(pickle.dumps(a))
    assert b == a and b.dtype == layout and b.count == a.count == x.size
    assert same_bits(b.value(), a.value())
    c = detred.ExactAccumulator.from_bytes(a.to_bytes())
    assert c == a
