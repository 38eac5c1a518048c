"""Reference.covers and bound for every standard: real summation orders are covered, planted values just outside the
bound (computed here with fractions, independently of exactref) are not, and the special-value rules hold."""

import math
import random
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import exactref as er
from exact_oracle import FORMATS, abs_sum, exact_sum, frac, next_down, next_up, round_to, to_dtype, ulp_exponent


def u_of(name):
    return Fraction(1, 2 ** FORMATS[name][0])


def gamma(k, u):
    return k * u / (1 - k * u)


def rounded_up_double(q):
    d = float(q)
    if Fraction(d) < q:
        d = math.nextafter(d, math.inf)
    return d


float32_lists = st.lists(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=32), min_size=1, max_size=300)


def left_fold(values, dtype):
    total = values[0]
    for v in values[1:]:
        total = dtype(total + v)
    return total


def random_tree(values, rng, dtype):
    """A random binary tree over `values` in order: (result, height), every addition rounded to dtype."""
    if len(values) == 1:
        return values[0], 0
    cut = rng.randint(1, len(values) - 1)
    a, ha = random_tree(values[:cut], rng, dtype)
    b, hb = random_tree(values[cut:], rng, dtype)
    return dtype(a + b), max(ha, hb) + 1


# ---- real orders are covered ----------------------------------------------------------------------------------------

@given(float32_lists, st.integers(0, 2 ** 32 - 1))
def test_shuffled_left_folds_are_covered_by_any_order(values, seed):
    x = np.array(values, dtype=np.float32)
    r = er.sum(x)
    order = list(x)
    random.Random(seed).shuffle(order)
    result = left_fold(order, np.float32)
    assert r.covers(result, standard="any_order"), seed
    assert r.covers(result, standard="split_k", chunks=1), seed  # one chunk of n terms in any order


@given(float32_lists, st.integers(0, 2 ** 32 - 1))
def test_random_trees_are_covered_by_tree_of_their_height(values, seed):
    x = np.array(values, dtype=np.float32)
    rng = random.Random(seed)
    order = list(x)
    rng.shuffle(order)
    result, height = random_tree(order, rng, np.float32)
    r = er.sum(x)
    assert r.covers(result, standard="any_order"), seed
    assert r.covers(result, standard="tree", height=height), seed  # height 0: one value, the exact s


@given(float32_lists)
def test_library_trees_and_orders_are_covered(values):
    x = np.array(values, dtype=np.float32)
    r = er.sum(x)
    for shape in ("halving256", "fold16", "halving4", "fold2"):
        result = er.tree_sum(x, shape=shape)
        assert r.covers(result, standard="any_order"), shape
        assert r.covers(result, standard="tree", height=er.tree_height(shape, x.size)), shape
    for order in (er.fold_sum, er.pairwise_sum, er.kahan_sum):
        assert r.covers(order(x), standard="any_order"), order.__name__


@pytest.mark.parametrize("n", [1, 7, 128, 129, 1000, 100_000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_numpy_sum_is_covered_by_any_order(n, dtype):
    seed = 1000 + n
    x = np.random.default_rng(seed).standard_normal(n).astype(dtype)
    r = er.sum(x)
    if dtype == np.float16 and n > 2048:  # (n-1)·2^-11 >= 1: any_order is vacuous, and assert_covers says so
        with pytest.warns(er.VacuousCheckWarning, match="any_order in float16 is vacuous from n = 2049 on"):
            er.testing.assert_covers(np.sum(x), r, standard="any_order")
    else:
        er.testing.assert_covers(np.sum(x), r, standard="any_order")
    if dtype == np.float16:  # numpy sums float16 pairwise in float32 and rounds once
        er.testing.assert_covers(np.sum(x), r, standard="mixed", acc="float32", out="float16")


def test_numpy_axis_sums_are_covered():
    x = np.random.default_rng(11).standard_normal((300, 200)).astype(np.float32)
    for axis in (0, 1):
        r = er.sum(x, axis=axis)
        assert r.shape == (200,) if axis == 0 else (300,)
        er.testing.assert_covers(np.sum(x, axis=axis), r, standard="any_order")
    stacked = np.stack([np.sum(x, axis=1), np.sum(x[:, ::-1], axis=1)])  # two runs per row
    assert er.sum(x, axis=1).covers(stacked).shape == (2, 300)


# ---- planted values just outside each bound -------------------------------------------------------------------------

def planted(s, bound, name):
    """(inside, outside): the format values next to s + B on either side, checked here with fractions only."""
    target = s + bound
    inside = round_to(target, name, "downward")
    outside = round_to(target, name, "upward")
    if outside == target:
        outside = next_up(outside, name)
    assert outside - s > bound >= inside - s
    return inside, outside


@given(float32_lists)
def test_values_off_by_more_than_the_bound_are_not_covered(values):
    x = np.array(values, dtype=np.float32)
    r = er.sum(x)
    s, bound = exact_sum(x), (x.size - 1) * u_of("float32") * abs_sum(x)
    for sign in (1, -1):  # above s, then below it
        inside, outside = planted(sign * s, bound, "float32")
        assert not r.covers(to_dtype(sign * outside, np.float32))
        if inside >= sign * s:  # RD(s + B) may fall below s when B is less than an ulp
            assert r.covers(to_dtype(sign * inside, np.float32))


def sample(name, n, seed):
    rng = np.random.default_rng(seed)
    dtype = {"float64": np.float64, "float32": np.float32, "float16": np.float16}[name]
    return (rng.standard_normal(n) * (1 if name == "float16" else 1000)).astype(dtype)


CASES = [
    # (standard, params, the bound B as a function of n, u, S, |s|)
    ("any_order", {}, lambda n, u, S, s: (n - 1) * u * S),
    ("tree", {"height": 6}, lambda n, u, S, s: gamma(6, u) * S),  # 64 terms: the shallowest tree
    ("tree", {"height": 40}, lambda n, u, S, s: gamma(40, u) * S),
    ("split_k", {"chunks": 4}, lambda n, u, S, s: gamma(n // 4 + 4 - 2, u) * S),
    ("split_k", {"chunks": 4, "combine": "pairwise"}, lambda n, u, S, s: gamma(n // 4 - 1 + 2, u) * S),
    # Directed any_order: Higham's γ_{n-1} with 2u (the linear (n-1)·u form holds for round-to-nearest only).
    ("directed", {}, lambda n, u, S, s: gamma(n - 1, 2 * u) * S),
    ("directed", {"base": "tree", "height": 7}, lambda n, u, S, s: gamma(7, 2 * u) * S),
    ("any_order", {"directed": True}, lambda n, u, S, s: gamma(n - 1, 2 * u) * S),
]


@pytest.mark.parametrize("name", ["float64", "float32", "float16"])
@pytest.mark.parametrize("standard, params, formula", CASES)
def test_bound_and_planted_values(name, standard, params, formula):
    x = sample(name, 64, seed=64)
    r = er.sum(x)
    n, u, S, s = x.size, u_of(name), abs_sum(x), exact_sum(x)
    bound = formula(n, u, S, abs(s))
    assert r.bound(standard, **params) == rounded_up_double(bound)
    inside, outside = planted(s, bound, name)
    assert r.covers(to_dtype(inside, x.dtype), standard, **params)
    assert not r.covers(to_dtype(outside, x.dtype), standard, **params)
    # the same on the other side of s
    low_inside, low_outside = planted(-s, bound, name)
    assert r.covers(to_dtype(-low_inside, x.dtype), standard, **params)
    assert not r.covers(to_dtype(-low_outside, x.dtype), standard, **params)


def test_mixed_bound_and_planted_values():
    x = sample("float16", 200, seed=3)
    r = er.sum(x)
    n, S, s = x.size, abs_sum(x), exact_sum(x)
    acc = (n - 1) * u_of("float32") * S
    eta_out = Fraction(1, 2**25)  # 2^(emin - p) of float16: the final rounding may land among the subnormals
    bound = acc + u_of("float16") * (abs(s) + acc) + eta_out  # (n-1)·u_acc·S + u_out·(|s| + (n-1)·u_acc·S) + η_out
    assert r.bound("mixed", acc="float32", out="float16") == rounded_up_double(bound)
    assert r.bound("mixed", acc="float32") == rounded_up_double(bound)  # out defaults to the data's dtype
    inside, outside = planted(s, bound, "float16")
    assert r.covers(to_dtype(inside, np.float16), "mixed", acc="float32", out="float16")
    assert not r.covers(to_dtype(outside, np.float16), "mixed", acc="float32", out="float16")
    assert r.covers(to_dtype(inside, np.float16), "mixed:float32:float16")
    # float16 data accumulated in float32 by the library's own orders, rounded once: covered
    assert r.covers(np.float16(er.pairwise_sum(x, acc="float32")), "mixed", acc="float32")
    assert r.covers(np.float16(er.tree_sum(x, acc="float32")), "mixed", acc="float32")


def test_exact_and_faithful():
    x = sample("float32", 1000, seed=5)
    r = er.sum(x)
    s = exact_sum(x)
    rn, rd, ru = (round_to(s, "float32", m) for m in ("nearest", "downward", "upward"))
    assert r.covers(to_dtype(rn, np.float32), "exact")
    assert not r.covers(to_dtype(next_up(rn, "float32"), np.float32), "exact")
    assert not r.covers(to_dtype(next_down(rn, "float32"), np.float32), "exact")
    assert r.covers(np.array([rd, ru], dtype=np.float64).astype(np.float32), "faithful").all()
    assert not r.covers(to_dtype(next_down(rd, "float32"), np.float32), "faithful")
    assert not r.covers(to_dtype(next_up(ru, "float32"), np.float32), "faithful")
    assert r.bound("exact") == 0


# ---- special values and signed zero ---------------------------------------------------------------------------------

def test_special_value_rules():
    nan_ref = er.sum(np.array([1.0, np.nan], np.float32))
    assert nan_ref.covers(np.float32(np.nan))
    assert not nan_ref.covers(np.float32(1.0))
    assert not nan_ref.covers(np.float32(np.inf))
    inf_ref = er.sum(np.array([1.0, np.inf], np.float32))
    assert inf_ref.covers(np.float32(np.inf)) and not inf_ref.covers(np.float32(-np.inf))
    assert not inf_ref.covers(np.float32(np.nan))
    both = er.sum(np.array([np.inf, -np.inf], np.float32))
    assert both.covers(np.float32(np.nan)) and not both.covers(np.float32(np.inf))
    big = er.sum(np.array([3e38, 3e38], np.float32))  # overflow is reachable
    assert big.covers(np.float32(np.inf)) and not big.covers(np.float32(-np.inf))
    small = er.sum(np.array([1.0, 2.0], np.float32))
    assert not small.covers(np.float32(np.inf))
    assert math.isnan(nan_ref.bound())


def test_signed_zero_rules():
    r = er.sum(np.array([1.0, -1.0], np.float32))
    assert r.covers(np.float32(0.0))
    assert not r.covers(np.float32(-0.0))
    assert r.covers(np.float32(-0.0), any_zero_sign=True)
    assert r.covers(np.float32(-0.0), "directed")
    assert er.sum(np.array([-0.0, -0.0], np.float32)).covers(np.float32(-0.0))


# ---- shapes and errors ----------------------------------------------------------------------------------------------

def test_result_shapes_broadcast():
    x = np.random.default_rng(2).standard_normal((4, 50)).astype(np.float32)
    r = er.sum(x, axis=1)
    assert r.covers(x.sum(axis=1)).shape == (4,)
    assert r.covers(np.stack([x.sum(axis=1)] * 3)).shape == (3, 4)
    scalar = er.sum(x)
    assert scalar.covers(np.float32(x.sum())).shape == ()
    assert scalar.covers(np.full(5, x.sum(), np.float32)).shape == (5,)
    with pytest.raises(ValueError, match=r"result of shape \(5,\) does not match the reference's shape \(4,\)"):
        r.covers(np.zeros(5, np.float32))


def test_standard_errors_say_what_is_accepted():
    r = er.sum(np.ones(10, np.float32))
    with pytest.raises(ValueError, match="expected one of 'exact', 'faithful', 'any_order', 'tree'"):
        r.covers(np.float32(10), "banana")
    with pytest.raises(TypeError, match="needs height=h"):
        r.covers(np.float32(10), "tree")
    with pytest.raises(TypeError, match=r"takes height=, directed=.*got chunks=3"):
        r.covers(np.float32(10), "tree", chunks=3)
    with pytest.raises(ValueError, match=r"height=-1: expected an integer from 0 to 2\*\*64 - 1"):
        r.covers(np.float32(10), "tree", height=-1)
    with pytest.raises(ValueError, match=r"chunks=0: expected an integer from 1 to 2\*\*64 - 1"):
        r.covers(np.float32(10), "split_k", chunks=0)
    with pytest.raises(TypeError, match="needs chunks=s"):
        r.covers(np.float32(10), "split_k")
    with pytest.raises(ValueError, match="combine='random'"):
        r.covers(np.float32(10), "split_k", chunks=2, combine="random")
    with pytest.raises(TypeError, match="needs acc=dtype"):
        r.covers(np.float32(10), "mixed")
    with pytest.raises(ValueError, match="describes results in float16, but the result is float32"):
        r.covers(np.float32(10), "mixed", acc="float32", out="float16")
    with pytest.raises(ValueError):
        r.covers(np.float32(10), "directed", base="exact")
    with pytest.raises(TypeError, match="acc='quad'"):
        r.covers(np.float32(10), "mixed", acc="quad")
    assert er.standard("split_k", chunks=4, combine="pairwise").name == "split_k:4:pairwise"
    assert er.standard("directed", base="tree", height=5).name == "directed:tree:5"
    assert er.standard("tree:5") == er.standard("tree", height=5)


# ---- ulp_error, verdicts, assert_covers -----------------------------------------------------------------------------

def test_ulp_error_matches_the_oracle():
    x = sample("float32", 500, seed=9)
    r = er.sum(x)
    s = exact_sum(x)
    rn = round_to(s, "float32")
    results = [rn, next_up(rn, "float32"), next_down(next_down(rn, "float32"), "float32")]
    got = er.ulp_error(np.array([float(v) for v in results], np.float32), r)
    unit = Fraction(2) ** ulp_exponent(rn, "float32")
    assert list(got) == [float((v - s) / unit) for v in results]
    assert er.ulp_error(np.float32(float(rn)), r).shape == ()


def test_verdict_fields():
    x = sample("float32", 100, seed=4)
    r = er.sum(x)
    v = r.verdict(np.float32(er.fold_sum(x)))
    assert v.covered and bool(v)
    assert v.standard == "any_order" and v.result_dtype == "float32"
    assert v.exact == r.decimal
    assert v.bound == r.bound()
    assert "COVERED by any_order" in v.message()


def test_assert_covers_names_the_worst_element():
    x = np.random.default_rng(8).standard_normal((5, 100)).astype(np.float32)
    r = er.sum(x, axis=1)
    good = x.sum(axis=1)
    er.testing.assert_covers(good, r)
    bad = good.copy()
    s3 = r[3].exact
    bound3 = Fraction(r[3].bound())
    bad[3] = to_dtype(round_to(s3 + 4 * bound3, "float32", "upward"), np.float32)
    bad[1] = to_dtype(round_to(r[1].exact + 2 * Fraction(r[1].bound()), "float32", "upward"), np.float32)
    with pytest.raises(AssertionError) as e:
        er.testing.assert_covers(bad, r, standard="any_order")
    message = str(e.value)
    assert "2 of 5 result(s) not covered by any_order (float32)" in message
    assert "worst at index (3,)" in message
    assert f"bound {r[3].bound():.6g}" in message
    assert "ratio 4" in message
    assert r[3].decimal in message  # the exact value, every digit
    assert "first violations at 1, 3" in message


def test_assert_covers_scalar_message():
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    r = er.sum(x)
    bound = gamma(10, u_of("float32")) * abs_sum(x)  # 1000 terms: trees of height 10 or more
    result = to_dtype(round_to(exact_sum(x) + bound * 3 / 2, "float32", "upward"), np.float32)
    er.testing.assert_covers(result, r, standard="tree", height=20)  # γ_20 ≈ 2·γ_10: covered
    with pytest.raises(AssertionError, match=r"1 of 1 result\(s\) not covered by tree:10 \(float32\)\nworst: result"):
        er.testing.assert_covers(result, r, standard="tree", height=10)


# ---- tree height 0, result shapes, ranges, flags, dtype names -------------------------------------------------------

@pytest.mark.parametrize("shape", ["halving256", "fold16", "halving4", "fold2"])
@pytest.mark.parametrize("n", [0, 1])
def test_tree_height_zero_is_a_single_term(shape, n):
    # tree_height gives 0 for n <= 1, and standard="tree" takes it: γ_0 = 0, so only s itself is covered.
    x = np.array([0.1] * n, dtype=np.float32)
    r = er.sum(x)
    h = er.tree_height(shape, n)
    assert h == 0
    s = exact_sum(x)
    assert r.bound("tree", height=h) == 0.0
    assert r.covers(er.tree_sum(x, shape=shape), standard="tree", height=h)
    assert r.covers(to_dtype(s, np.float32), standard="tree", height=h)
    assert not r.covers(to_dtype(next_up(s, "float32"), np.float32), standard="tree", height=h)
    assert not r.covers(to_dtype(next_down(s, "float32"), np.float32), standard="tree", height=h)
    assert er.standard("tree", height=0) == er.standard("tree:0")


def test_tree_height_zero_refuses_two_terms():
    r = er.sum(np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match="a tree of height 0 holds at most 1 terms, and this reference has 2"):
        r.covers(np.float32(3.0), standard="tree", height=0)


def test_results_may_broadcast_to_the_references_shape():
    x = np.random.default_rng(21).standard_normal((2, 3, 40)).astype(np.float32)
    r = er.sum(x, axis=2)                                   # references of shape (2, 3)
    sums = x.sum(axis=2)
    assert r.covers(sums).shape == (2, 3)
    assert r.covers(np.stack([sums, sums[::-1]])).shape == (2, 2, 3)  # a stack of two runs
    row = r.covers(sums[0])                                 # shape (3,) broadcasts TO (2, 3): row 0 for both rows
    assert row.shape == (2, 3)
    assert row[0].all()
    np.testing.assert_array_equal(row[1], r[1].covers(sums[0]))
    one = er.sum(x[0, 0])
    assert one.covers(np.full((4, 5), sums[0, 0])).shape == (4, 5)  # a 0-d reference takes any stack


@pytest.mark.parametrize("reference_shape, result_shape", [((4,), (4, 1)), ((4,), (1, 4, 1)), ((3,), (2, 1)),
                                                            ((2, 3), (2, 1, 3)), ((2, 3), (1, 2, 1))])
def test_results_that_would_broadcast_the_references_are_refused(reference_shape, result_shape):
    # numpy broadcasts (4, 1) against (4,) to (4, 4): every result against every reference. Refused, naming both.
    x = np.random.default_rng(22).standard_normal(reference_shape + (50,)).astype(np.float32)
    r = er.sum(x, axis=-1)
    result = np.zeros(result_shape, np.float32)
    shapes = re.escape(f"result of shape {result_shape} would broadcast the reference's shape {reference_shape} to "
                       f"{np.broadcast_shapes(result_shape, reference_shape)}")
    for check in (lambda: r.covers(result), lambda: r.verdict(result), lambda: r.ulp_error(result),
                  lambda: er.ulp_error(result, r), lambda: er.testing.assert_covers(result, r)):
        with pytest.raises(ValueError, match=shapes) as e:
            check()
        assert "np.squeeze" in str(e.value) and "keepdims=False" in str(e.value)


def test_keepdims_sums_are_refused_and_squeezed_ones_covered():
    x = np.random.default_rng(23).standard_normal((4, 30))
    r = er.sum(x, axis=1)
    with pytest.raises(ValueError, match=r"\(4, 1\) would broadcast the reference's shape \(4,\) to \(4, 4\)"):
        r.covers(np.sum(x, axis=1, keepdims=True))
    assert r.covers(np.sum(x, axis=1, keepdims=False)).all()


def test_verdict_of_no_results_says_so():
    r = er.sum(np.ones((0, 3), np.float32), axis=1)
    assert r.covers(np.ones(0, np.float32)).shape == (0,)
    with pytest.raises(ValueError, match="no results to judge"):
        r.verdict(np.ones(0, np.float32))
    scalar = er.sum(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"no results to judge: the results have shape \(0,\)"):
        scalar.verdict(np.ones(0, np.float32))
    er.testing.assert_covers(np.ones(0, np.float32), scalar)  # nothing to judge: nothing fails


def test_counts_out_of_range_name_the_range():
    r = er.sum(np.ones(4, np.float32))
    for params in ({"height": 2 ** 64}, {"height": -1}):
        with pytest.raises(ValueError, match=r"height=-?\d+: expected an integer from 0 to 2\*\*64 - 1"):
            r.covers(np.float32(4), "tree", **params)
    with pytest.raises(ValueError, match=r"chunks=18446744073709551616: expected an integer from 1 to 2\*\*64 - 1"):
        er.standard("split_k", chunks=2 ** 64)
    assert er.standard("tree", height=2 ** 64 - 1).height == 2 ** 64 - 1
    assert r.covers(np.float32(4), "tree", height=np.uint64(2 ** 64 - 1))
    with pytest.raises(ValueError, match=r"n=18446744073709551616: expected an integer from 0 to 2\*\*64 - 1"):
        er.tree_height("fold16", 2 ** 64)
    with pytest.raises(ValueError, match=r"n=-1: expected an integer from 0"):
        er.tree_height("fold16", -1)
    # the largest n: fold16 has 2^60 leaves of 16, (16 - 1) + 60 roundings on a path
    assert er.tree_height("fold16", 2 ** 64 - 1) == 15 + 60
    with pytest.raises(TypeError, match="height=2.5: expected an integer"):
        er.standard("tree", height=2.5)


@pytest.mark.parametrize("flag", ["directed", "any_zero_sign", "fma"])
@pytest.mark.parametrize("value", ["no", 1, None, 0.0])
def test_flags_take_only_bools(flag, value):
    with pytest.raises(TypeError, match=rf"{flag}={value!r}: expected True or False"):
        er.standard("any_order", **{flag: value})


def test_flags_take_numpy_bools():
    assert er.standard("any_order", directed=np.bool_(True)).directed
    assert not er.standard("any_order", directed=np.bool_(False)).directed
    assert er.standard("tree:3", directed=False).name == "tree:3"


NUMPY_NAMES = ["float", "double", "single", "half", "f8", "f4", "f2", "d", "f", "e", "<f4", ">f8", "float64",
               "float32", "float16", float, np.float32, np.dtype(np.float16)]


@pytest.mark.parametrize("name", NUMPY_NAMES, ids=str)
def test_dtype_names_mean_what_numpy_means(name):
    expected = np.dtype(name).newbyteorder("=")
    # s = 1 + 2^-11 + 2^-24: exact in float64, a float32 tie that stays 1 + 2^-11, just above a float16 tie
    x = np.array([1.0, 2.0 ** -11, 2.0 ** -24], np.float16)
    r = er.sum(x)
    got = r.nearest(name)
    assert got.dtype == expected
    assert frac(got) == round_to(exact_sum(x), expected.name)
    assert r.bound("any_order", dtype=name) == r.bound("any_order", dtype=expected.name)
    model = er.standard("mixed", acc=name, out=name)
    assert model.acc == model.out == expected.name


def test_dtype_names_in_cli_spellings_and_orders_follow_numpy():
    assert er.standard("mixed:float:half") == er.standard("mixed", acc="float64", out="float16")
    assert er.standard("directed:mixed:single:e").name == "directed:mixed:float32:float16"
    h = np.random.default_rng(24).standard_normal(300).astype(np.float16)
    assert er.pairwise_sum(h, acc="single") == er.pairwise_sum(h, acc="float32")
    with pytest.raises(ValueError, match="acc='float64' for float16 data"):  # 'float' is float64, as in numpy
        er.pairwise_sum(h, acc="float")


@pytest.mark.parametrize("name, what", [("f16", "float128"), ("f32", "not a dtype numpy knows"),
                                        ("bf16", "not a dtype numpy knows"), ("int32", "int32"),
                                        ("longdouble", "float128"), (None, "None")])
def test_dtype_names_numpy_does_not_read_as_a_format_are_refused(name, what):
    r = er.sum(np.array([1.0]))
    with pytest.raises(TypeError, match="expected a numpy dtype or its name") as e:
        r.nearest(name) if name is not None else er.standard("mixed", acc=None, out="float32")
    assert what in str(e.value)


# ---- a new user's findings: keepdims advice, bool counts, +fma, explain's any_zero_sign, vacuous checks, hints ------

def test_keepdims_reference_against_a_squeezed_result_says_reshape():
    # The Reference keeps the reduced axis; the result does not: squeezing cannot help, reshaping does.
    x = np.random.default_rng(24).standard_normal((4, 30))
    r = er.sum(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match=re.escape("(4,) would broadcast the reference's shape (4, 1) to (4, 4)")) as e:
        r.covers(np.sum(x, axis=1))
    message = str(e.value)
    assert "result.reshape((4, 1))" in message and "keepdims=True as well" in message, message
    assert "build the Reference with keepdims=False" in message and "np.squeeze" not in message, message
    assert r.covers(np.sum(x, axis=1).reshape(4, 1)).all()


@pytest.mark.parametrize("name, param", [("tree", "height"), ("split_k", "chunks")])
@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_counts_refuse_bools(name, param, value):
    with pytest.raises(TypeError, match=rf"{param}={value!r}: expected an integer, not a bool"):
        er.standard(name, **{param: value})


def test_fma_suffix_is_accepted_as_the_cli_accepts_it():
    assert er.standard("any_order+fma") == er.standard("any_order", fma=True)
    assert er.standard("faithful+fma").fma and er.standard("tree:5+fma") == er.standard("tree", height=5, fma=True)
    x = np.ones(4)
    assert er.dot(x, x).covers(4.0, "any_order+fma")
    with pytest.raises(ValueError, match=re.escape("+fma applies to dot products, not to sums")):
        er.sum(x).covers(4.0, "any_order+fma")


def test_a_keyword_that_contradicts_the_spelling_is_refused():
    for text, flag in (("any_order+fma", "fma"), ("directed:any_order", "directed"), ("ftz:any_order", "ftz")):
        with pytest.raises(ValueError, match=re.escape(f"has {flag} in its spelling, and {flag}=False contradicts it")):
            er.standard(text, **{flag: False})
    assert er.standard("directed:any_order", directed=True).directed  # agreeing keywords are fine


def test_explain_takes_any_zero_sign():
    # The sum of -0.0 terms is -0.0; numpy's fold from +0.0 returns +0.0, which exact and faithful reject unless
    # either sign is taken; the option reaches every candidate.
    r = er.sum(np.full(5, -0.0))
    plain = {v.standard: v.covered for v in r.explain(0.0)}
    assert not plain["exact"] and not plain["faithful"]
    either = r.explain(0.0, any_zero_sign=True)
    assert either[0].standard == "exact" and all(v.covered for v in either), [(v.standard, v.covered) for v in either]
    assert not r.explain(5e-324, any_zero_sign=True)[0].covered
    with pytest.raises(TypeError, match="any_zero_sign='yes': expected True or False"):
        r.explain(0.0, any_zero_sign="yes")


def test_assert_covers_warns_when_the_check_is_vacuous():
    import warnings
    r = er.sum(np.full(3000, 0.5, np.float16))  # any_order in float16: B = 2999·2^-11·1500 = 2196.5 >= S = 1500
    with pytest.warns(er.VacuousCheckWarning, match=r"any_order is vacuous here \(float16.*no lost or doubled part"):
        er.testing.assert_covers(np.float16(0.0), r)  # passes: even 0 is covered
    with pytest.warns(er.VacuousCheckWarning), pytest.raises(AssertionError, match="not covered"):
        er.testing.assert_covers(np.float16(np.inf), r)  # a rejection of a vacuous check warns too
    assert er.VacuousCheckWarning is er.testing.VacuousCheckWarning and issubclass(er.VacuousCheckWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.VacuousCheckWarning)
        er.testing.assert_covers(np.float16(1500.0), r, standard="tree:12")  # γ_12·S: sees a lost term, no warning


def test_hint_never_names_a_format_whose_check_is_vacuous():
    # 3000 float16 halves judged in float32: 3000 is rejected (B = 0.27); read in float16 any_order covers it, but
    # only because it covers everything there (B >= S). No hint, as in the CLI (exactref::suggest_narrower_format).
    r = er.sum(np.full(3000, 0.5, np.float16))
    result = np.float32(3000.0)
    assert not r.covers(result) and r.covers(np.float16(3000.0)) and r.verdict(np.float16(3000.0)).vacuous
    assert r.hint(result) == ""
    with pytest.raises(AssertionError) as failure:
        er.testing.assert_covers(result, r)
    assert "hint:" not in str(failure.value)
    # Few enough terms that float16's any_order sees something: the hint is given.
    few = er.sum(np.full(30, 0.5, np.float16))
    assert few.hint(np.float32(15.001)) == ""  # not a float16 value
    assert not few.covers(np.float32(15.0078125))  # 15 + 2^-7: a float16 value within float16's B = 0.212
    assert "exactly representable in float16" in few.hint(np.float32(15.0078125)), few.hint(np.float32(15.0078125))
