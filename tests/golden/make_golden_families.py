#!/usr/bin/env python3
"""Writes canonical_families.txt: the bits of every other canonical family (product, dot, nrm2, asum, a generic
reduce with a fixed non-commutative operator, inclusive sum scans at a few prefixes, row sums, row maxima, row means
and variances, row log-sum-exps, column sums, LayerNorm, RMSNorm forward and backward, softmax), computed by an
INDEPENDENT reference: docs/ORDER.md's canonical order (make_golden.block_roots: complete trees over the binary digits
of n, left-folded largest first) applied, in numpy's IEEE binary32/binary64 arithmetic, to each family's documented
leaf and merge (the header comments of detred/blas.hpp, reduce.hpp, scan.hpp, rows.hpp, norms.hpp,
rows/row_accumulators.hpp, rows/norm_formulas.hpp, detail/reduce_ops.hpp), every operation rounded once in the order
written. log and 1/sqrt are the correctly rounded values (Python's math library in binary64, then one rounding to
binary32): detred::specified's functions are correctly rounded except within 2^-50 of a midpoint, which none of these
inputs meets (the test would say so); the log-sum-exp terms use exp_float_lite, which is defined by its binary32
operations (written out here from its documented recipe). It shares no code with detred.

tests/test_golden_bits.cpp regenerates the same inputs (its splitmix_values, written from this file's) and requires
detred's bits to equal these. Run this only on purpose, when canonical_order_version is bumped:
    python3 tests/golden/make_golden_families.py > tests/golden/canonical_families.txt
Line format: family input accumulation case output bits[,bits...]  (hex of the output type's bit patterns).
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as g  # noqa: E402  (the canonical order and the sums' inputs)

F32 = np.float32
INPUTS = {"f16": (0, 11), "bf16": (1, 8), "f32": (2, 24), "f64": (3, 53)}
SIZES = [1, 2, 3, 5, 100, 1023, 4097, 65537]


def splitmix_values(type_name, n, salt, kind):
    """kind 'unit': +-m 2^(e-p), e in [-4, 3] (|v| < 8); kind 'factor': +-m 2^(f-p), m in [2^(p-1), 2^p), f in
    {0, 1} (|v| in [0.5, 2)). Exact in the input type. The recipe of golden_inputs.hpp's golden_family_values."""
    t, p = INPUTS[type_name]
    state = (7777777 * n + 131 * t + 1009 * salt) & g.MASK
    out = []
    for _ in range(n):
        state, r = g.splitmix64(state)
        state, q = g.splitmix64(state)
        m = r >> (64 - p)
        if kind == "factor":
            m |= 1 << (p - 1)
            e = int(q & 1)
        else:
            e = -4 + int(q % 8)
        v = float(m) * 2.0 ** (e - p)
        out.append(-v if r & 1 else v)
    return out


def as_acc(vals, in_type, acc):
    return g.widened(vals, in_type, acc)


def canonical(leaves, merge):
    """The canonical root of leaves (an array, or a tuple of arrays: one node per index) under an elementwise merge
    of two such nodes (docs/ORDER.md: complete trees over n's binary digits, largest first, left-folded)."""
    single = not isinstance(leaves, tuple)
    comps = (leaves,) if single else leaves
    join = (lambda a, b: (merge(a[0], b[0]),)) if single else merge
    n, start, acc = len(comps[0]), 0, None
    for k in range(n.bit_length() - 1, -1, -1):
        size = 1 << k
        if not n & size:
            continue
        level = tuple(c[start:start + size].copy() for c in comps)
        while len(level[0]) > 1:
            level = join(tuple(c[0::2] for c in level), tuple(c[1::2] for c in level))
        acc = level if acc is None else join(acc, level)
        start += size
    root = tuple(c[0] for c in acc)
    return root[0] if single else root


def tree_of(x):
    return canonical(x, lambda a, b: a + b)


def hexes(values):
    return ",".join(g.hex_bits(np.asarray(v)[()]) if not isinstance(v, str) else v for v in values)


def bf16_round(v):
    """float32 -> bfloat16 bits, to nearest even (finite values)."""
    b = int(np.asarray(v, dtype=F32).view(np.uint32))
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def to_type_hex(values, type_name):
    if type_name == "bf16":
        return ",".join("%04x" % bf16_round(v) for v in values)
    return hexes([F32(v) for v in values])


def exp_lite(x):
    """detred::specified::exp_float_lite as its header documents it, in binary32 operations each rounded once: k the
    nearest integer to x / ln2 (the 1.5 * 2^23 shift), r = (x - k c1) - k c2, e = (P(r) r^2 + r) + 1 with Cephes's
    coefficients, then (e * 2^k1) * 2^(k - k1), k1 = floor(k / 2)."""
    x = F32(x)
    if not x >= F32(-104.0):
        return x if x != x else F32(0.0)
    if x > F32(88.72283935546875):
        return F32(np.inf)
    shift = F32(12582912.0)
    k = (x * F32(1.44269504088896341) + shift) - shift
    r = (x - k * F32(0.693359375)) - k * F32(-2.12194440e-4)
    p = F32(1.9875691500e-4)
    for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1):
        p = p * r + F32(c)
    e = (p * (r * r) + r) + F32(1.0)
    k = int(k)
    k1 = k >> 1  # floor
    return (e * F32(2.0 ** k1)) * F32(2.0 ** (k - k1))


def lse_parts(row):
    """The two passes of detred's log-sum-exp (rows/row_accumulators.hpp): the maximum, the canonical plain sum of
    exp_lite(x - max), and max + log(sum) rounded once."""
    m = np.max(row)
    terms = np.array([exp_lite(v - m) for v in row], dtype=F32)
    s = tree_of(terms)
    return m, s, F32(float(m) + math.log(float(s)))


def rsqrt_f(x):
    return F32(1.0 / math.sqrt(float(x)))


# ---- BLAS-1, product, the generic reduce, scans -------------------------------------------------------------------

def nrm2_merge(left, right):
    (sl, ql), (sr, qr) = left, right
    big = np.where(sl < sr, sr, sl)
    one = np.ones_like(ql)
    with np.errstate(all="ignore"):
        ratio_l = np.where(sl != big, sl / big, one)
        ratio_r = np.where(sr != big, sr / big, one)
        ql2 = np.where(sl != big, (ratio_l * ratio_l) * ql, ql)
        qr2 = np.where(sr != big, (ratio_r * ratio_r) * qr, qr)
    zero = big == 0
    return (np.where(zero, 0 * big, big), np.where(zero, 0 * ql, ql2 + qr2))


def blas_lines(out):
    for in_type, acc in g.PAIRS:
        for n in SIZES:
            case = "n=%d" % n
            x = as_acc(splitmix_values(in_type, n, 1, "unit"), in_type, acc)
            y = as_acc(splitmix_values(in_type, n, 2, "unit"), in_type, acc)
            f = as_acc(splitmix_values(in_type, n, 3, "factor"), in_type, acc)
            out.append(("product", in_type, acc, case, "value", hexes([canonical(f, lambda a, b: a * b)])))
            out.append(("dot", in_type, acc, case, "value", hexes([tree_of(x * y)])))
            out.append(("asum", in_type, acc, case, "value", hexes([tree_of(np.abs(x))])))
            w = as_acc(g.values(0, INPUTS[in_type][0], n), in_type, acc)  # the sums' wide values
            a = np.abs(w)
            s, q = canonical(((a, np.where(a == 0, 0 * a, 1 + 0 * a))), nrm2_merge)
            out.append(("nrm2", in_type, acc, case, "value", hexes([s * np.sqrt(q)])))
            if in_type == acc or (in_type == "f32" and acc == "f64"):
                k = x.dtype.type(0.75)
                out.append(("reduce_affine", in_type, acc, case, "value",
                            hexes([canonical(x, lambda l, r: (l * k) + r)])))
    for in_type, acc in g.PAIRS:
        for n in [1000, 65537, 131073]:
            x = as_acc(g.values(0, INPUTS[in_type][0], n), in_type, acc)
            prefixes = [0, 1, 6, 999, n - 1]
            out.append(("inclusive_sum_scan", in_type, acc, "n=%d" % n, "at=" + "/".join(map(str, prefixes)),
                        hexes([tree_of(x[:k + 1]) for k in prefixes])))


# ---- Rows, columns, norms (float accumulation) --------------------------------------------------------------------

ROW_LENGTHS = [1, 2, 3, 7, 64, 300, 1025]
ROW_STRIDE = 1028


def welford_merge(left, right):
    (na, ma, qa), (nb, mb, qb) = left, right
    total = na + nb
    delta = mb - ma
    w = nb / total
    return (total, ma + delta * w, (qa + qb) + (delta * delta) * (na * w))


def neumaier_result(x):
    s, c = canonical(((x, -np.zeros_like(x))), g.neumaier_merge)
    return s if (not np.isfinite(s) or c == 0) else s + c


def row_lines(out):
    for in_type in ["f16", "bf16", "f32"]:
        vals = splitmix_values(in_type, len(ROW_LENGTHS) * ROW_STRIDE, 4, "unit")
        x = as_acc(vals, in_type, "f32")
        rows = [x[r * ROW_STRIDE:r * ROW_STRIDE + n] for r, n in enumerate(ROW_LENGTHS)]
        case = "lengths=" + "/".join(map(str, ROW_LENGTHS))
        one = F32(1)
        res = {"row_sum_tree": [], "row_sum_tree_neumaier": [], "row_max": [], "row_mean": [], "row_variance": [],
               "row_logsumexp": []}
        for row in rows:
            res["row_sum_tree"].append(tree_of(row))
            res["row_sum_tree_neumaier"].append(neumaier_result(row))
            res["row_max"].append(np.max(row))
            n_, m_, q_ = canonical(((np.full_like(row, one), row.copy(), np.zeros_like(row))), welford_merge)
            res["row_mean"].append(m_)
            res["row_variance"].append(q_ / n_)
            res["row_logsumexp"].append(lse_parts(row)[2])
        for family, values in res.items():
            out.append((family, in_type, "f32", case, "value", hexes(values)))
        for rows_, cols, stride in [(3, 65, 67), (1000, 130, 131), (4099, 7, 9)]:
            v = as_acc(splitmix_values(in_type, rows_ * stride, 5, "unit"), in_type, "f32").reshape(rows_, stride)
            sums = [tree_of(v[:, j].copy()) for j in range(cols)]
            out.append(("column_sum", in_type, "f32", "%dx%d/stride=%d" % (rows_, cols, stride), "value", hexes(sums)))


def norm_lines(out):
    eps = F32(1e-5)
    for in_type in ["f32", "bf16"]:
        for c in [7, 64, 300]:
            rows = 3
            case = "%dx%d" % (rows, c)
            X = as_acc(splitmix_values(in_type, rows * c, 6, "unit"), in_type, "f32").reshape(rows, c)
            W = as_acc(splitmix_values(in_type, c, 7, "unit"), in_type, "f32")
            B = as_acc(splitmix_values(in_type, c, 8, "unit"), in_type, "f32")
            DY = as_acc(splitmix_values(in_type, rows * c, 9, "unit"), in_type, "f32").reshape(rows, c)
            C = F32(c)
            ln_out, ln_mean, ln_rstd, rms_out, rms_rstd, dx, sm_out = [], [], [], [], [], [], []
            leaves_dw = []
            for t in range(rows):
                x = X[t]
                m = tree_of(x.copy()) / C
                d = x - m
                rs = rsqrt_f(tree_of(d * d) / C + eps)
                ln_out += list(((x - m) * rs) * W + B)
                ln_mean.append(m)
                ln_rstd.append(rs)
                r2 = rsqrt_f(tree_of(x * x) / C + eps)
                rms_out += list((x * r2) * W)
                rms_rstd.append(r2)
                dot = tree_of((W * DY[t]) * x)
                k = ((r2 * r2) * r2) * (dot / C)
                dx += list((W * DY[t]) * r2 - x * k)
                leaves_dw.append((DY[t] * x) * r2)
                mm, ss, _ = lse_parts(x)
                sm_out += [exp_lite(v - mm) / ss for v in x]
            dweight = [tree_of(np.array([leaves_dw[t][i] for t in range(rows)], dtype=F32)) for i in range(c)]
            acc = "f32"
            out.append(("layernorm_forward", in_type, acc, case, "out", to_type_hex(ln_out, in_type)))
            out.append(("layernorm_forward", in_type, acc, case, "mean", hexes(ln_mean)))
            out.append(("layernorm_forward", in_type, acc, case, "rstd", hexes(ln_rstd)))
            out.append(("rmsnorm_forward", in_type, acc, case, "out", to_type_hex(rms_out, in_type)))
            out.append(("rmsnorm_forward", in_type, acc, case, "rstd", hexes(rms_rstd)))
            out.append(("rmsnorm_backward", in_type, acc, case, "dx", to_type_hex(dx, in_type)))
            out.append(("rmsnorm_backward", in_type, acc, case, "dweight", hexes(dweight)))
            out.append(("softmax_forward", in_type, acc, case, "out", to_type_hex(sm_out, in_type)))


def main():
    np.seterr(all="ignore")
    lines = []
    blas_lines(lines)
    row_lines(lines)
    norm_lines(lines)
    w = sys.stdout.write
    w("# detred canonical bits of every other canonical family, written by tests/golden/make_golden_families.py\n")
    w("# (an independent numpy reference). family input accumulation case output bits[,bits...]\n")
    w("canonical_order_version %d\n" % g.CANONICAL_ORDER_VERSION)
    for line in lines:
        w(" ".join(line) + "\n")


if __name__ == "__main__":
    main()
