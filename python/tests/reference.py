"""Independent Python references of detred's summation orders (docs/ORDER.md, include/detred/sum_method.hpp),
written from the documents with numpy scalar arithmetic (one IEEE rounding per operation), for small inputs.

They share no code with the C++ library: a result that matches them bit for bit is the documented order.
"""

from __future__ import annotations

import numpy as np


def _finite(x) -> bool:
    return bool(np.isfinite(x))


def canonical_reduce(leaves, combine, identity):
    """docs/ORDER.md: complete pairwise trees over the aligned blocks of n's binary digits, left-folded."""
    n = len(leaves)
    if n == 0:
        return identity

    def tree(a, size):
        if size == 1:
            return leaves[a]
        half = size // 2
        return combine(tree(a, half), tree(a + half, half))

    roots, start = [], 0
    for k in range(n.bit_length() - 1, -1, -1):
        if n >> k & 1:
            roots.append(tree(start, 1 << k))
            start += 1 << k
    acc = roots[0]
    for r in roots[1:]:
        acc = combine(acc, r)
    return acc


def neumaier_sum(a, b):
    """fl(a + b) and its error as neumaier.hpp computes it: (big - s) + small, the larger magnitude first."""
    s = a + b
    big, small = (a, b) if abs(a) >= abs(b) else (b, a)
    return s, (big - s) + small


def canonical_nan(acc):
    return acc.type(np.nan)


def reference_sum(x, method: str, acc):
    """sum<acc>(x, method) for every method but exact, from sum_method.hpp's definitions."""
    acc = np.dtype(acc)
    A = acc.type
    v = [A(float(t)) for t in np.asarray(x).ravel()]  # exact widening
    nz = A(-0.0)
    with np.errstate(all="ignore"):
        if not v:
            return nz
        if method == "sequential":
            s = v[0]
            for t in v[1:]:
                s = A(s + t)
        elif method == "pairwise":
            def pw(a, n):
                if n == 1:
                    return v[a]
                h = n // 2
                return A(pw(a, h) + pw(a + h, n - h))
            s = pw(0, len(v))
        elif method == "kahan":
            s, c = nz, A(0.0)
            for t in v:
                y = A(t - c)
                u = A(s + y)
                c = A(A(u - s) - y) if _finite(u) else A(0.0)
                s = u
        elif method == "neumaier":
            s, c = nz, nz
            for t in v:
                se, e = neumaier_sum(s, t)
                c = A(A(c + nz) + e)  # meaningless once se is not finite, and then never read
                s = se
            if _finite(s) and c != 0:
                s = A(s + c)
        elif method == "tree":
            s = canonical_reduce(v, lambda a, b: A(a + b), nz)
        elif method == "tree_neumaier":
            def merge(l, r):
                se, e = neumaier_sum(l[0], r[0])
                return (se, A(A(l[1] + r[1]) + e))
            s, c = canonical_reduce([(t, nz) for t in v], merge, (nz, nz))
            if _finite(s) and c != 0:
                s = A(s + c)
        else:
            raise ValueError(method)
    return canonical_nan(acc) if np.isnan(s) else A(s)


def reference_product(x, acc):
    A = np.dtype(acc).type
    v = [A(float(t)) for t in np.asarray(x).ravel()]
    with np.errstate(all="ignore"):
        return canonical_reduce(v, lambda a, b: A(a * b), A(1.0))


def reference_dot(x, y, acc):
    A = np.dtype(acc).type
    with np.errstate(all="ignore"):
        p = [A(A(float(a)) * A(float(b))) for a, b in zip(np.asarray(x), np.asarray(y))]
        return canonical_reduce(p, lambda a, b: A(a + b), A(-0.0))
