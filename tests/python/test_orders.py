"""er.tree_sum and the comparison orders, bit for bit against independent implementations of their shapes
(shared/DESIGN.md §4) written here with fractions and one correct rounding per operation."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exactref as er
from exact_oracle import NUMPY_DTYPES, frac, round_to

DTYPES = NUMPY_DTYPES


def adder(name):
    return lambda a, b: round_to(a + b, name)  # one IEEE addition: exact sum, rounded once


def combine_pairs(nodes, add):
    """Levels (0,1), (2,3), ...; an odd last node, or a node whose partner is absent (None), goes up unchanged."""
    while len(nodes) > 1:
        nxt = []
        for i in range(0, len(nodes), 2):
            a = nodes[i]
            b = nodes[i + 1] if i + 1 < len(nodes) else None
            nxt.append(a if b is None else b if a is None else add(a, b))
        nodes = nxt
    return nodes[0] if nodes and nodes[0] is not None else Fraction(0)  # nothing kept: the identity


def halving(values, leaf, add):
    leaves = []
    for start in range(0, len(values), leaf):
        slots = list(values[start:start + leaf])
        step = leaf // 2
        while step >= 1:
            for t in range(step):
                if t + step < len(slots):  # an absent partner leaves slot t unchanged
                    slots[t] = add(slots[t], slots[t + step])
            step //= 2
        leaves.append(slots[0])
    return combine_pairs(leaves, add)


def fold(values, leaf, add, mask=None):
    leaves = []
    for start in range(0, len(values), leaf):
        acc, kept = Fraction(0), False
        for i in range(start, min(start + leaf, len(values))):
            if mask is None or mask[i]:
                acc, kept = add(acc, values[i]), True
        leaves.append(acc if kept else None)
    return combine_pairs(leaves, add)


def left_fold(values, add):
    if not values:
        return Fraction(0)
    s = values[0]
    for v in values[1:]:
        s = add(s, v)
    return s


def neumaier(values, add):
    if not values:
        return Fraction(0)
    s, c = values[0], Fraction(0)
    for x in values[1:]:
        t = add(s, x)
        c = add(c, add(add(s, -t), x) if abs(s) >= abs(x) else add(add(x, -t), s))
        s = t
    return add(s, c)


def numpy_pairwise(values, add):
    """numpy/_core/src/umath/loops_utils.h.src, pairwise_sum: blocks of 128 with 8 partial sums."""
    n = len(values)
    if n < 8:
        res = Fraction(0)
        for v in values:
            res = add(res, v)
        return res
    if n <= 128:
        r = list(values[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] = add(r[j], values[i + j])
            i += 8
        res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        while i < n:
            res = add(res, values[i])
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return add(numpy_pairwise(values[:n2], add), numpy_pairwise(values[n2:], add))


def data_of(name, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 2.0 ** rng.integers(-6, 6, n)).astype(DTYPES[name])


@pytest.mark.parametrize("name", list(DTYPES))
@settings(max_examples=25)
@given(n=st.integers(0, 600), seed=st.integers(0, 2 ** 32 - 1))
def test_trees_match_the_shapes_bit_for_bit(name, n, seed):
    x = data_of(name, n, seed)
    values = [frac(v) for v in x]
    add = adder(name)
    for leaf in (256, 4):
        assert frac(er.tree_sum(x, shape=f"halving{leaf}")) == halving(values, leaf, add), (leaf, seed)
    for leaf in (16, 2):
        assert frac(er.tree_sum(x, shape=f"fold{leaf}")) == fold(values, leaf, add), (leaf, seed)
    assert frac(er.fold_sum(x)) == left_fold(values, add), seed
    assert frac(er.pairwise_sum(x)) == numpy_pairwise(values, add), seed
    assert frac(er.kahan_sum(x)) == neumaier(values, add), seed


@pytest.mark.parametrize("name", [n for n in ("float16", "bfloat16") if n in DTYPES])
@settings(max_examples=25)
@given(n=st.integers(1, 600), seed=st.integers(0, 2 ** 32 - 1))
def test_float32_accumulation_of_narrow_data(name, n, seed):
    x = data_of(name, n, seed)
    values = [frac(v) for v in x]
    add = adder("float32")
    result = er.tree_sum(x, acc="float32")
    assert result.dtype == np.float32
    assert frac(result) == halving(values, 256, add), seed
    assert frac(er.pairwise_sum(x, acc="float32")) == numpy_pairwise(values, add), seed
    assert frac(er.fold_sum(x, acc=np.float32)) == left_fold(values, add), seed


@given(n=st.integers(1, 200), seed=st.integers(0, 2 ** 32 - 1))
def test_fold_with_mask(n, seed):
    x = data_of("float32", n, seed)
    mask = np.random.default_rng(seed + 1).random(n) < 0.3
    expected = fold([frac(v) for v in x], 16, adder("float32"), mask=list(mask))
    assert frac(er.tree_sum(x, shape="fold16", mask=mask)) == expected


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [5, 8, 100, 128, 129, 1000, 12345])
def test_pairwise_is_numpys_add_reduce(dtype, n):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    assert er.pairwise_sum(x) == np.add.reduce(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 2, 5, 7, 8, 9, 20, 128, 129, 200, 1000])
def test_pairwise_signed_zeros_are_numpys(dtype, n):
    """np.add.reduce starts its output at the identity +0.0 and adds the pairwise sum to it: an all -0.0 array sums
    to +0.0 (the pairwise sum alone would keep -0.0), any other array to the pairwise sum. Bits, not ==
    (-0.0 == 0.0); numpy itself is the reference. float16: numpy sums in float32 and rounds once."""
    def pairwise(x):
        if dtype == np.float16:
            return np.float16(er.pairwise_sum(x, acc="float32"))
        return er.pairwise_sum(x)

    zeros = np.full(n, -0.0, dtype)
    arrays = [zeros, zeros[::-1].copy()]
    for pos in (0, n // 2, n - 1):
        for value in (0.0, -np.finfo(dtype).smallest_subnormal, -1.5):
            x = zeros.copy()
            x[pos] = value
            arrays.append(x)
    for x in arrays:
        want, got = np.add.reduce(x), pairwise(x)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (x[:10], got, want)
    assert not np.signbit(pairwise(zeros))  # numpy 2.4: np.add.reduce(np.full(n, -0.0)) is 0.0


def test_design_harmonic_numbers():
    # shared/DESIGN.md §4: 1/i, i = 1..10^7, in float64.
    x = 1.0 / np.arange(1, 10 ** 7 + 1, dtype=np.float64)
    assert er.tree_sum(x, shape="fold16") == 16.69531136585985
    assert er.fold_sum(x) == 16.695311365857272
    assert er.tree_sum(x, shape="halving256") == 16.695311365859855
    # The exact sum of these (rounded) terms, correctly rounded: math.fsum (Shewchuk's algorithm) is independent.
    # (DESIGN's "exact 16.6953113658598518153991…" is H(10^7) itself; the rounded terms sum to 16.69531136585985176….)
    assert er.sum(x).nearest() == math.fsum(x)
    assert er.sum(x).decimal.startswith("16.69531136585985176")


def test_signed_zero_shapes_and_other_ops():
    neg = np.array([-0.0])
    assert math.copysign(1, er.tree_sum(neg)) == -1           # halving: absent slots are not zeros
    assert math.copysign(1, er.tree_sum(neg, shape="fold16")) == 1   # fold starts from +0.0
    x = np.array([3.0, -1.5, 2.0, -0.0, 0.0, 7.25])
    assert er.tree_sum(x, op="max") == 7.25
    assert er.tree_sum(x, op="min") == -1.5
    assert er.tree_sum(x, op="product", shape="fold16") == -0.0
    assert er.tree_sum(np.array([2.0, 3.0, 0.5]), op="product") == 3.0
    assert er.tree_sum(x, op="any") == 1 and er.tree_sum(x, op="all") == 0
    assert math.isnan(er.tree_sum(np.array([1.0, np.nan, 3.0]), op="max"))
    assert er.tree_sum(np.array([], np.float32)) == 0
    assert er.tree_height("halving256", 1000) == 10 and er.tree_height("fold16", 1000) == 21


def test_orders_take_any_layout_in_c_order():
    x = np.random.default_rng(2).standard_normal((30, 40)).astype(np.float32)
    assert er.tree_sum(x.T) == er.tree_sum(np.ascontiguousarray(x.T).ravel())
    assert er.fold_sum(x[:, ::3]) == er.fold_sum(np.ascontiguousarray(x[:, ::3]).ravel())


def test_order_errors():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError):
        er.tree_sum(x, shape="halving100")  # not a power of two
    with pytest.raises(ValueError):
        er.tree_sum(x, op="mean")
    with pytest.raises(ValueError, match="fold"):
        er.tree_sum(x, shape="halving256", mask=np.ones(10, bool))
    with pytest.raises(ValueError, match="mask has 3 elements for 10 data elements"):
        er.tree_sum(x, shape="fold16", mask=np.ones(3, bool))
    with pytest.raises(TypeError, match="mask: expected a bool array"):
        er.tree_sum(x, shape="fold16", mask=np.ones(10))
    with pytest.raises(ValueError, match="acc='float64' for float32 data"):
        er.fold_sum(x, acc="float64")
    with pytest.raises(TypeError, match="float16, float32, float64 or bfloat16"):
        er.kahan_sum(np.arange(4))
