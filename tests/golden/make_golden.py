#!/usr/bin/env python3
"""Writes canonical_bits.txt: the bits of every canonical sum method (tree, tree_neumaier) for every input and
accumulation type pair, on seeded inputs of sizes around the CPU chunk boundary (2^16), computed by an INDEPENDENT
reference: docs/ORDER.md's definition (complete pairwise trees over the binary digits of n, left-folded largest first)
in numpy's IEEE float32/float64 arithmetic, vectorised level by level, and Neumaier's merge written from the paper
(Neumaier 1974: the error of s = a + b is (a - s) + b if |a| >= |b| else (b - s) + a), with detred's documented IEEE
rules (docs/ORDER.md section 5, accumulators/neumaier.hpp's header: compensation dropped once the sum is not finite;
result = sum when the compensation is zero). It shares no code with detred. bf16 inputs are float32 with the low 16
bits zero (exact widening; the contract never rounds back).

tests/test_golden_bits.cpp regenerates the same inputs (the splitmix64 recipe below) and requires detred's bits to
equal these, for several thread counts. Run this only on purpose, when canonical_order_version is bumped:
    python3 tests/golden/make_golden.py > tests/golden/canonical_bits.txt
"""
import sys

import numpy as np

CANONICAL_ORDER_VERSION = 2
MASK = (1 << 64) - 1
# n: small, and around the 2^16 chunk boundary, so that single-chunk, multi-chunk and tail paths are all pinned.
SIZES = [1, 2, 3, 5, 8, 13, 100, 1023, 4097, 65535, 65536, 65537, 131073, 196613, 262145]
# Input types: name, significand bits p, exponent range [lo, hi] of the values m * 2^(e - p), m < 2^p.
INPUTS = [("f16", 11, -8, 8), ("bf16", 8, -40, 40), ("f32", 24, -40, 40), ("f64", 53, -60, 60)]
PAIRS = [("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("f32", "f32"), ("f32", "f64"),
         ("f64", "f64")]
KINDS = ["wide", "cancel"]
# The exponent of the tiny values of "cancel": (r >> 60) * 2^TINY, exact in the input type (f16: subnormals).
TINY = [-24, -120, -120, -900]


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def values(kind_index, type_index, n):
    """The input as Python floats (each exact in its input type)."""
    _, p, lo, hi = INPUTS[type_index]
    state = 1000003 * n + 17 * type_index + kind_index
    out = [0.0] * n
    for i in range(n):
        state, r = splitmix64(state)
        state, q = splitmix64(state)
        m = r >> (64 - p)
        e = lo + q % (hi - lo + 1)
        v = float(m) * 2.0 ** (e - p)
        out[i] = -v if r & 1 else v
    if KINDS[kind_index] == "cancel":
        # Pairs (i, n-1-i) cancel exactly, but every 16th pair and the middle hold tiny values: the exact sum is the
        # sum of the tiny ones, the condition number astronomical (where compensated sums differ in their last bits).
        def tiny():
            nonlocal state
            state, r = splitmix64(state)
            v = float(r >> 60) * 2.0 ** TINY[type_index]
            return -v if r & 1 else v

        for i in range(n // 2):
            if i % 16:
                out[n - 1 - i] = -out[i]
            else:
                out[i] = tiny()
                out[n - 1 - i] = tiny()
        if n % 2:
            out[n // 2] = tiny()
    return out


def widened(vals, in_type, acc):
    """Exact conversion of the inputs to the accumulation type (numpy array)."""
    dtype = np.float32 if acc == "f32" else np.float64
    if in_type == "f16":
        return np.array(vals, dtype=np.float16).astype(dtype)  # exact: the values are float16 numbers
    if in_type == "bf16":
        f = np.array(vals, dtype=np.float32)
        assert not np.any(f.view(np.uint32) & 0xFFFF), "not a bfloat16 value"
        return f.astype(dtype)
    return np.array(vals, dtype=np.float32 if in_type == "f32" else np.float64).astype(dtype)


def plain_merge(left, right):
    return left + right


def neumaier_merge(left, right):
    (sl, cl), (sr, cr) = left, right
    s = sl + sr
    big_left = np.abs(sl) >= np.abs(sr)
    e = np.where(big_left, (sl - s) + sr, (sr - s) + sl)  # Neumaier 1974: the exact error of s when s is finite
    c = (cl + cr) + e
    c = np.where(np.isfinite(s), c, -np.zeros_like(c))
    return s, c


def block_roots(x, merge, leaf):
    """The roots of the complete trees over n's binary-digit blocks, largest first (docs/ORDER.md section 1)."""
    roots, start, n = [], 0, len(x)
    for k in range(n.bit_length() - 1, -1, -1):
        size = 1 << k
        if n & size:
            level = leaf(x[start:start + size])
            while (level[0] if isinstance(level, tuple) else level).size > 1:
                if isinstance(level, tuple):
                    level = merge((level[0][0::2], level[1][0::2]), (level[0][1::2], level[1][1::2]))
                else:
                    level = merge(level[0::2], level[1::2])
            roots.append(level)
            start += size
    return roots


def tree(x):
    roots = block_roots(x, plain_merge, lambda a: a.copy())
    acc = roots[0]
    for r in roots[1:]:
        acc = plain_merge(acc, r)  # the left fold
    return acc[0]


def tree_neumaier(x):
    roots = block_roots(x, neumaier_merge, lambda a: (a.copy(), -np.zeros_like(a)))
    s, c = roots[0]
    for r in roots[1:]:
        s, c = neumaier_merge((s, c), r)
    s, c = s[0], c[0]
    if not np.isfinite(s) or c == 0:
        return s
    return s + c


def hex_bits(v):
    if np.isnan(v):  # detred's canonical NaN
        return "7fc00000" if v.dtype == np.float32 else "7ff8000000000000"
    return "%08x" % int(v.view(np.uint32)) if v.dtype == np.float32 else "%016x" % int(v.view(np.uint64))


def main():
    np.seterr(all="ignore")
    out = sys.stdout
    out.write("# detred canonical bits, written by tests/golden/make_golden.py (an independent numpy reference).\n")
    out.write("# kind input accumulation n method bits\n")
    out.write("canonical_order_version %d\n" % CANONICAL_ORDER_VERSION)
    for k, kind in enumerate(KINDS):
        for t, (in_type, _, _, _) in enumerate(INPUTS):
            for n in SIZES:
                vals = values(k, t, n)
                for pair_in, acc in PAIRS:
                    if pair_in != in_type:
                        continue
                    x = widened(vals, in_type, acc)
                    out.write("%s %s %s %d tree %s\n" % (kind, in_type, acc, n, hex_bits(tree(x))))
                    out.write("%s %s %s %d tree_neumaier %s\n" % (kind, in_type, acc, n, hex_bits(tree_neumaier(x))))


if __name__ == "__main__":
    main()
