"""Faces that disagreed or surprised (issue 15, item 7, Python side): abs_sum with special terms, the sign of an exact
zero under each rounding mode, bound()'s format, per-element ratios, numpy's pairwise height, the package namespace,
keepdims=, and the narrower-format hint. Expected values come from exact_oracle (Python fractions), from IEEE 754
read directly, or from a literal port of numpy's loop; seeds are fixed and printed in the assertion messages."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exact_oracle import BF16, abs_sum, exact_sum, frac, needs_bfloat16, round_to

MODES = ("nearest", "toward_zero", "upward", "downward")


# ---- abs_sum: one rule with the C++ reference and the CLI (tests/cli: cli.sum_abs_sum_specials) ---------------------

@pytest.mark.parametrize("values, expected", [
    ([2.0, math.inf, 3.0], math.inf), ([2.0, -math.inf, 3.0], math.inf), ([math.inf, -math.inf], math.inf),
    ([2.0, math.nan, 3.0], "nan"), ([math.nan, math.inf], "nan"), ([2.0, -0.5, 3.0], Fraction(11, 2)),
])
def test_abs_sum_counts_every_term(values, expected):
    r = er.sum(np.array(values))
    if expected == "nan":
        assert math.isnan(r.abs_sum)
    else:
        assert r.abs_sum == expected and type(r.abs_sum) is type(expected)
    # the same in an array Reference, element by element
    rows = er.sum(np.array([values, [1.0] * len(values)]), axis=1).abs_sum
    assert (math.isnan(rows[0]) if expected == "nan" else rows[0] == expected) and rows[1] == len(values)


def test_abs_sum_specials_do_not_change_the_finite_bounds():
    # The bound uses S over the finite terms; +Inf terms make only +Inf covered (DESIGN §3), whatever abs_sum shows.
    r = er.sum(np.array([2.0, math.inf, 3.0]))
    assert r.covers(np.inf) and not r.covers(5.0) and not r.covers(np.nan)


# ---- nearest(): the sign of an exact zero, IEEE 754-2019 §6.3 ----------------------------------------------------------

# (terms, expected sign bit per mode in MODES): §6.3: an exact zero sum of operands of opposite signs is +0 except
# under roundTowardNegative, where it is -0; x + x keeps the sign of x (so all -0.0 stays -0.0, all +0.0 stays
# +0.0 in every mode). No addition at all (n = 0) leaves the empty sum's +0.0.
ZERO_CASES = [
    ([], (0, 0, 0, 0)),
    ([0.0], (0, 0, 0, 0)),
    ([0.0, 0.0, 0.0], (0, 0, 0, 0)),
    ([-0.0], (1, 1, 1, 1)),
    ([-0.0, -0.0], (1, 1, 1, 1)),
    ([0.0, -0.0], (0, 0, 0, 1)),
    ([1.0, -1.0], (0, 0, 0, 1)),
    ([-1.0, 1.0, -0.0], (0, 0, 0, 1)),
    ([0.5, 0.25, -0.75, 0.0], (0, 0, 0, 1)),
]


@pytest.mark.parametrize("terms, signs", ZERO_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_nearest_zero_sign_in_every_mode(terms, signs, dtype):
    r = er.sum(np.array(terms, dtype=dtype))
    for mode, sign in zip(MODES, signs):
        z = r.nearest(dtype, rounding=mode)
        assert z == 0 and int(np.signbit(z)) == sign, (terms, mode, z)


def test_nearest_downward_zero_matches_a_fold_of_ieee_additions():
    # A left fold under roundTowardNegative, each addition's zero sign taken from §6.3 directly: the exact sum
    # of two non-zero opposite values is -0; -0 + -0 = -0, +0 + +0 = +0, and +0 + -0 = -0 under that mode.
    def add_downward(a, b):
        s = a + b  # exact here: the cases below are small integers and halves
        if s != 0:
            return s
        if a == 0 and b == 0:
            return -0.0 if (math.copysign(1, a) < 0 or math.copysign(1, b) < 0) else 0.0
        return -0.0
    rng = np.random.default_rng(15)
    for trial in range(300):
        n = int(rng.integers(1, 7))
        terms = [float(v) for v in rng.choice([-1.0, -0.5, -0.0, 0.0, 0.5, 1.0], size=n)]
        if sum(terms) != 0:
            continue
        acc = terms[0]
        for t in terms[1:]:
            acc = add_downward(acc, t)
        got = er.sum(np.array(terms)).nearest(rounding="downward")
        assert got == 0 and np.signbit(got) == (math.copysign(1, acc) < 0), (trial, terms)


def test_nearest_underflow_keeps_the_sign_of_s():
    r = er.sum(np.array([-1e-300]))
    assert [np.signbit(r.nearest("float32", rounding=m)) for m in MODES] == [True] * 4
    assert r.nearest("float32", rounding="downward") == -np.float32(2.0 ** -149)


# ---- bound(): the format of the result --------------------------------------------------------------------------------

@needs_bfloat16
def test_bound_takes_the_result_format_bfloat16_terms_float32_result():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1000).astype(BF16)
    r = er.sum(x)
    n, big_s = x.size, abs_sum(x)
    exact32 = (n - 1) * Fraction(1, 2 ** 24) * big_s
    exact16 = (n - 1) * Fraction(1, 2 ** 8) * big_s
    b32, b_default = r.bound("any_order", dtype="float32"), r.bound("any_order")
    assert Fraction(b32) >= exact32 and Fraction(np.nextafter(b32, 0)) < exact32
    assert Fraction(b_default) >= exact16 and Fraction(np.nextafter(b_default, 0)) < exact16  # the input's dtype
    assert r.bound("any_order", dtype=BF16) == b_default
    # covers() judges a float32 result with the float32 bound: its verdict shows the same B
    result = np.float32(np.sum(x.astype(np.float32)))
    v = r.verdict(result)
    assert v.result_dtype == "float32" and v.bound == b32 and v.covered
    assert r.verdict(result.astype(np.float64)).bound == r.bound("any_order", dtype="float64")
    # a result off by more than the float32 bound but less than the bfloat16 one is rejected as float32
    off = np.float32(round_to(exact_sum(x) + 3 * exact32, "float32"))
    assert Fraction(float(off)) - exact_sum(x) > exact32 and not r.covers(off)


# ---- ratios() -----------------------------------------------------------------------------------------------------------

def test_ratios_values_and_specials():
    r = er.sum(np.array([0.1, 0.2, 0.3]))
    s = r.nearest()
    below = np.nextafter(s, 0)
    got = r.ratios(np.array([s, below, np.inf, np.nan]))
    bound = Fraction(r.bound())
    assert got.dtype == np.float64 and got.shape == (4,)
    assert got[0] == pytest.approx(float(abs(frac(s) - r.exact) / bound), rel=1e-12)
    assert got[1] > 1 and got[1] == pytest.approx(float(abs(frac(below) - r.exact) / bound), rel=1e-12)
    assert math.isinf(got[2]) and math.isinf(got[3])
    assert r.ratios(s, "exact") == 0 and math.isinf(r.ratios(below, "exact"))
    assert np.ndim(r.ratios(s)) == 0
    z = er.sum(np.array([0.0, 0.0]))
    assert z.ratios(0.0) == 0 and math.isinf(z.ratios(-0.0)) and math.isinf(z.ratios(1e-300))
    assert er.sum(np.array([1.0, np.inf])).ratios(np.inf) == 0


@pytest.mark.parametrize("standard, params", [("any_order", {}), ("tree", {"height": 12}), ("faithful", {}),
                                              ("exact", {}), ("split_k", {"chunks": 4})])
def test_ratios_agree_with_covers_over_random_data_and_planted_faults(standard, params):
    seed = 2026
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((40, 1000)).astype(np.float32)
    r = er.sum(x, axis=1)
    honest = np.sum(x, axis=1)
    lost = honest - x[:, 17]                                              # a lost term
    edge = np.array([np.float32(round_to(r[i].exact + sgn * Fraction(r[i].bound(standard, **params)), "float32"))
                     for i, sgn in zip(range(40), np.tile([1, -1], 20))], dtype=np.float32)
    steps = np.stack([np.nextafter(edge, np.float32(np.inf)), np.nextafter(edge, np.float32(-np.inf))])
    results = np.stack([honest, lost, edge, *steps, r.nearest()])
    ratios, covered = r.ratios(results, standard, **params), r.covers(results, standard, **params)
    assert ratios.shape == covered.shape == results.shape
    assert np.array_equal(ratios <= 1, covered), f"seed {seed}"
    assert (~covered).any() and covered.any(), f"seed {seed}: both kinds must occur"


# ---- tree_height("pairwise", n): numpy's pairwise summation ---------------------------------------------------------

def simulated_pairwise_depths(n):
    """A literal port of numpy's @TYPE@_pairwise_sum (loops_utils.h.src) over depths instead of values: each
    addition of two partial sums gives the union of their leaves one level deeper; -0.0 + x is exact."""
    def pw(lo, hi):
        m = hi - lo
        if m < 8:
            depth = {}
            for i in range(lo, hi):  # res = -0.0; res += a[i]: the first addition is exact
                depth = {k: d + 1 for k, d in depth.items()}
                depth[i] = 1 if i > lo else 0
            return depth
        if m <= 128:
            r = [{lo + j: 0} for j in range(8)]
            i = lo + 8
            while i < hi - (m % 8):
                for j in range(8):
                    r[j] = {**{k: d + 1 for k, d in r[j].items()}, i + j: 1}
                i += 8

            def add(a, b):
                return {k: d + 1 for k, d in {**a, **b}.items()}
            res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
            while i < hi:
                res = {**{k: d + 1 for k, d in res.items()}, i: 1}
                i += 1
            return res
        n2 = m // 2
        n2 -= n2 % 8
        a, b = pw(lo, lo + n2), pw(lo + n2, hi)
        return {k: d + 1 for k, d in {**a, **b}.items()}
    return pw(0, n)


def test_pairwise_height_is_the_depth_of_the_deepest_leaf():
    for n in [*range(0, 300), 511, 512, 1000, 1023, 1024, 1025, 4097]:
        depths = simulated_pairwise_depths(n)
        assert er.tree_height("pairwise", n) == max(depths.values(), default=0), n


def test_pairwise_height_large_n_and_errors():
    assert er.tree_height("pairwise", 10 ** 6) == 31
    assert er.tree_height("pairwise", 2 ** 64 - 1) >= 64  # a tree of height h has at most 2^h leaves
    with pytest.raises(ValueError):
        er.tree_height("pairwise", -1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_np_sum_is_covered_by_the_pairwise_height(dtype):
    seed = 128
    rng = np.random.default_rng(seed)
    for n in [1, 7, 8, 127, 128, 129, 1000, 4099, 65536, 200_001]:
        x = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(dtype)
        got = np.sum(x)
        assert got.tobytes() == er.pairwise_sum(x).tobytes(), (seed, n)  # the order the height describes
        h = er.tree_height("pairwise", n)
        assert er.sum(x).covers(got, "tree", height=h), (seed, n, h)


# ---- the namespace ----------------------------------------------------------------------------------------------------

def test_namespace_is_the_public_api():
    for helper in ("np", "Any", "Sequence", "Union", "operator", "annotations", "host_array", "as_threads"):
        assert helper not in dir(er) and helper not in er.__all__, helper
    assert dir(er) == sorted([*er.__all__, "__version__"])
    namespace = {}
    exec("from exactref import *", namespace)  # noqa: S102 - the star import is what is tested
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(er.__all__)
    for name in er.__all__:
        assert getattr(er, name) is not None, name


# ---- keepdims= ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (2, 0), (0, 1, 2)])
def test_sum_keepdims_has_numpy_shapes_and_covers(axis):
    x = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    r, res = er.sum(x, axis=axis, keepdims=True), np.sum(x, axis=axis, keepdims=True)
    assert r.shape == res.shape
    assert r.covers(res).shape == res.shape and r.covers(res).all()
    flat = er.sum(x, axis=axis)
    assert np.array_equal(r.nearest().reshape(-1), np.asarray(flat.nearest()).reshape(-1))
    lost = res - np.float32(1.0)
    assert not r.covers(lost).any()
    with pytest.raises(TypeError, match="keepdims"):
        er.sum(x, axis=axis, keepdims="yes")


# ---- the narrower-format hint and dtype= -------------------------------------------------------------------------------

HINT32 = ("hint: the result is exactly representable in float32 and is covered when judged as float32: pass a "
          "np.float32 or dtype='float32'")


def test_float32_result_as_python_float_gets_the_hint_and_keeps_its_verdict():
    x = np.random.default_rng(1).standard_normal(10_000).astype(np.float32)
    r, result = er.sum(x), float(np.sum(x))
    assert not r.covers(result) and r.ratios(result) > 1  # judged as float64: rejected, the verdict stands
    assert r.covers(result, dtype="float32") and r.covers(np.float32(result))
    assert r.ratios(result, dtype=np.float32) <= 1
    assert r.hint(result) == HINT32
    with pytest.raises(AssertionError) as failure:
        er.testing.assert_covers(result, r)
    assert HINT32 in str(failure.value) and "not covered by any_order (float64)" in str(failure.value)
    er.testing.assert_covers(result, r, dtype="float32")
    assert r.hint(np.float32(result)) == "" and r.hint(float(r.nearest("float64"))) == ""


def test_no_hint_when_the_narrower_judgement_rejects_too_or_the_value_is_not_narrower():
    x = np.random.default_rng(2).standard_normal(1000).astype(np.float32)
    r = er.sum(x)
    far = float(np.float32(float(r.nearest()) + 1.0))  # a float32 value, rejected in float32 as well
    assert r.hint(far) == "" and not r.covers(far, dtype="float32")
    with pytest.raises(AssertionError) as failure:
        er.testing.assert_covers(far, r)
    assert "hint:" not in str(failure.value)
    odd = float(np.sum(x)) + 2.0 ** -40  # not a float32 value
    assert r.hint(odd) == ""
    with pytest.raises(ValueError, match="not all exactly float32 values"):
        r.covers(odd, dtype="float32")


def test_hint_for_float16_terms_and_overflowing_results():
    h = np.full(3, 30000, dtype=np.float16)  # overflows float16 (max 65504): inf is covered in float16 only
    r = er.sum(h)
    assert not r.covers(np.float32(np.inf)) and r.covers(np.float16(np.inf))
    assert "exactly representable in float16" in r.hint(np.float32(np.inf))
    # 3000 such terms: any_order in float16 is vacuous there ((n-1)·2^-11 >= 1), and no hint names a vacuous check.
    many = er.sum(np.full(3000, 30000, dtype=np.float16))
    assert many.covers(np.float16(np.inf)) and many.verdict(np.float16(np.inf)).vacuous
    assert many.hint(np.float32(np.inf)) == ""


@needs_bfloat16
def test_dtype_converts_exactly_between_float32_and_bfloat16():
    x = np.random.default_rng(4).standard_normal(300).astype(BF16)
    r = er.sum(x)
    as_bf16 = np.array(r.nearest("bfloat16"))                      # an ml_dtypes bfloat16 value
    assert r.covers(as_bf16, "exact") and r.covers(as_bf16, "exact", dtype="float32") == r.covers(
        as_bf16.astype(np.float32), "exact")
    wide = np.float32(r.nearest("float32"))                        # judged as bfloat16 only when exactly one
    if float(np.array(wide).astype(BF16).astype(np.float32)) == float(wide):
        assert r.covers(wide, "exact", dtype="bfloat16") == r.covers(np.array(wide).astype(BF16), "exact")
    else:
        with pytest.raises(ValueError, match="not all exactly bfloat16 values"):
            r.covers(wide, dtype="bfloat16")
    assert r.covers(np.float32(float(as_bf16)), dtype=BF16, standard="exact")
