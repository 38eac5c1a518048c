"""Pickling Standard and Reference objects (multiprocessing, pytest-xdist): every field survives, checked through
the exported state and through every public query, the values against the fractions oracle; a state that is not
one exactref wrote is refused."""

import math
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exact_oracle import BF16, NUMPY_DTYPES, abs_sum, exact_sum, frac
from exactref import _core

# (name, params): built inside the tests, so that no extension object outlives the test session's modules.
STANDARDS = [
    ("exact", {}), ("faithful", {}), ("any_order", {}), ("tree", {"height": 0}), ("tree", {"height": 2 ** 64 - 1}),
    ("split_k", {"chunks": 3}), ("split_k", {"chunks": 4, "combine": "pairwise"}),
    ("mixed", {"acc": "float32", "out": "float16"}), ("mixed", {"acc": "float64", "out": "bfloat16"}),
    ("directed", {"base": "tree", "height": 7}), ("any_order", {"fma": True, "any_zero_sign": True}),
    ("directed", {"base": "mixed", "acc": "float32", "out": "float16", "fma": True}),
]
FIELDS = ("kind", "height", "chunks", "combine", "acc", "out", "directed", "fma", "any_zero_sign", "name")


@pytest.mark.parametrize("name, params", STANDARDS, ids=[f"{n}{sorted(p.items())}" for n, p in STANDARDS])
def test_standards_round_trip(name, params):
    model = er.standard(name, **params)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(model, protocol=protocol))
        assert back == model
        assert [getattr(back, f) for f in FIELDS] == [getattr(model, f) for f in FIELDS]


def test_the_standard_equality_sees_every_field():
    # == is what the round trip relies on: two standards that differ in one field only are not equal.
    assert er.standard("any_order") != er.standard("any_order", fma=True)
    assert er.standard("any_order") != er.standard("any_order", any_zero_sign=True)
    assert er.standard("split_k", chunks=4) != er.standard("split_k", chunks=4, combine="pairwise")
    assert er.standard("mixed:float32:float16") != er.standard("mixed:float64:float16")


@pytest.mark.parametrize("state, why", [
    (("banana", 0, 0, "any_order", None, None, False, False, False), "kind 'banana'"),
    (("tree", 3, 5, "any_order", None, None, False, False, False), "read back as 'tree:3'"),
    (("mixed", 0, 0, "any_order", "float32", None, False, False, False), "kind 'mixed'"),
])
def test_a_standard_state_exactref_did_not_write_is_refused(state, why):
    blank = er.Standard.__new__(er.Standard)
    with pytest.raises(ValueError, match=f"not the state of an exactref.Standard.*{why}"):
        blank.__setstate__(state)


# ---- references ------------------------------------------------------------------------------------------------------

def sums():
    rng = np.random.default_rng(41)
    yield "float32", er.sum(rng.standard_normal(1000).astype(np.float32))
    yield "nan", er.sum(np.array([1.0, np.nan, np.inf]))
    yield "three +inf", er.sum(np.array([np.inf, 2.0, np.inf, np.inf], np.float32))
    yield "+inf and -inf", er.sum(np.array([np.inf, -np.inf, -np.inf, 1.0]))
    yield "all -0.0", er.sum(np.array([-0.0, -0.0, -0.0], np.float16))
    yield "all +0.0", er.sum(np.array([0.0, 0.0]))
    yield "zeros of both signs", er.sum(np.array([0.0, -0.0]))
    yield "empty", er.sum(np.array([], np.float64))
    yield "top words", er.sum(np.array([1.7e308] * 5 + [-1e-300]))
    yield "lowest words", er.sum(np.array([5e-324, -1e-320, 1.0]))
    yield "axis", er.sum((rng.standard_normal((3, 4, 50)) * 100).astype(np.float16), axis=2)
    if BF16 is not None:
        yield "bfloat16", er.sum(rng.standard_normal(300).astype(BF16))
    # compact arrays: cells, spills (Inf/NaN, a span wider than a cell), empty and signed-zero elements
    values = np.array([1.5, np.inf, -0.0, 2.0 ** 900, -3.0, 2.0 ** -1000, np.nan, 7.0, -0.0, 0.25])
    ids = np.array([0, 1, 2, 3, 3, 3, 5, 0, 6, 6])
    yield "segment_sum", er.segment_sum(values, ids, 8)
    with np.errstate(over="ignore"):  # 2^900 becomes +Inf in float32: one more special weight
        weights = values.astype(np.float32)
    yield "bincount", er.bincount(ids, weights, minlength=9)
    yield "add_at", er.add_at(np.array([0.5, -0.0, np.inf]), np.array([0, 1, 1, 0]), np.array([1.0, -0.0, 2.0, 3.0]))
    yield "cumsum", er.cumsum((rng.standard_normal((3, 40)) * 2.0 ** rng.integers(-60, 60, (3, 40))).astype(np.float32),
                              axis=1)


def dots():
    rng = np.random.default_rng(42)
    x, y = rng.standard_normal(200).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    yield "dot with initial", er.dot(x, y, initial=np.float32(3.5))
    tiny = np.array([2.0 ** -10, 3.0, 2.0 ** -12], np.float16)  # products below float16's 2^-14 underflow
    yield "underflowing products", er.dot(tiny, np.array([2.0 ** -10, 1.0, 2.0 ** -13], np.float16))
    yield "inf times zero", er.dot(np.array([np.inf, 1.0]), np.array([0.0, 2.0]))
    a, b, c = rng.standard_normal((4, 30)), rng.standard_normal((30, 5)), rng.standard_normal((4, 5))
    yield "matmul with c", er.matmul(a, b, c=c)
    yield "matmul slice", er.matmul(a, b)[1:3, ::2]


CASES = [label for label, _ in sums()] + [label for label, _ in dots()]


def case(label):
    return dict(list(sums()) + list(dots()))[label]


def states(r):
    flat = np.ascontiguousarray(r._index, dtype=np.int64).ravel()
    return r._refs.export_states(flat)


def public(r):
    """Everything a Reference answers, as comparable values."""
    out = [r.shape, r.dtype, r.is_dot, np.asarray(r.count).tolist(), np.asarray(r.decimal).tolist()]
    out += [[repr(v) for v in np.asarray(values, dtype=object).ravel()] for values in (r.exact, r.abs_sum)]
    for name in NUMPY_DTYPES:
        for mode in ("nearest", "toward_zero", "upward", "downward"):
            out.append(np.asarray(r.nearest(name, rounding=mode)).tobytes())
    models = [("any_order", {}), ("split_k", {"chunks": 3}), ("split_k", {"chunks": 2, "combine": "pairwise"}),
              ("directed", {}), ("tree", {"height": 64}), ("exact", {})]
    if r.is_dot:
        models.append(("any_order", {"fma": True}))
    if r.dtype == "float16":
        models.append(("mixed", {"acc": "float32"}))
    for standard, params in models:
        out.append(np.asarray(r.bound(standard, **params)).tobytes())
        for result in candidates(r):
            out.append(r.covers(result, standard, **params).tobytes())
    return out


def candidates(r):
    """Results near and far from s in the references' own dtype: RN(s), its neighbours, specials, -0.0."""
    rn = np.asarray(r.nearest())
    kinds = [rn, np.nextafter(rn, np.inf) if rn.dtype != BF16 else rn]
    kinds += [np.full(rn.shape, v, dtype=rn.dtype) for v in (np.nan, np.inf, -0.0)]
    return kinds


@pytest.mark.parametrize("label", CASES)
def test_references_round_trip_every_field(label):
    r = case(label)
    back = pickle.loads(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL))
    assert states(back) == states(r)  # every field of every element, the Inf counts and zero flags included
    assert public(back) == public(r)
    assert back._refs.is_compact == r._refs.is_compact  # compact arrays load compact (48 bytes per element)


def test_compact_pickles_of_the_old_form_load_as_full_references():
    r = case("segment_sum")
    rebuild, args = r.__reduce__()
    old = rebuild(*args[:4])  # written before the compact flag: full references, the same answers
    assert not old._refs.is_compact and states(old) == states(r) and public(old) == public(r)
    part = r[np.array([3, 3, 0])]  # a gathered subset pickles its used elements once, compact
    back = pickle.loads(pickle.dumps(part))
    assert back._refs.is_compact and len(back._refs) == 2 and public(back) == public(part)


@pytest.mark.parametrize("dtype", list(NUMPY_DTYPES))
def test_unpickled_values_match_the_oracle(dtype):
    rng = np.random.default_rng(43)
    x = (rng.standard_normal(500) * 2.0 ** rng.integers(-12, 12, 500)).astype(NUMPY_DTYPES[dtype])
    back = pickle.loads(pickle.dumps(er.sum(x)))
    assert back.exact == exact_sum(x) and back.abs_sum == abs_sum(x) and back.count == 500
    y = x[::-1].copy()
    dot = pickle.loads(pickle.dumps(er.dot(x, y)))
    assert dot.exact == sum((frac(a) * frac(b) for a, b in zip(x, y)), Fraction(0))


def test_a_slice_pickles_only_its_elements():
    a, b = np.ones((40, 30)), np.ones((30, 50))
    r = er.matmul(a, b)
    part = r[3:5, 7]
    assert len(pickle.loads(pickle.dumps(part))._refs) == 2
    assert len(pickle.dumps(part)) * 100 < len(pickle.dumps(r))
    assert public(pickle.loads(pickle.dumps(part))) == public(part)
    broadcast = er.sum(np.ones((3, 4)), axis=1)[np.array([[0, 0], [2, 0]])]  # repeated elements, pickled once
    back = pickle.loads(pickle.dumps(broadcast))
    assert len(back._refs) == 2 and public(back) == public(broadcast)


def test_references_and_standards_cross_process_boundaries():
    x = np.random.default_rng(44).standard_normal((6, 100)).astype(np.float32)
    r = er.sum(x, axis=1)
    runs = np.stack([x.sum(axis=1), x[:, ::-1].sum(axis=1)])
    model = er.standard("split_k", chunks=4, combine="pairwise")
    with ProcessPoolExecutor(max_workers=1) as pool:
        remote = pool.submit(r.covers, runs, model).result(timeout=60)
        bound = pool.submit(r.bound, "any_order").result(timeout=60)
    np.testing.assert_array_equal(remote, r.covers(runs, model))
    np.testing.assert_array_equal(bound, r.bound("any_order"))


def corrupt(r, element=0, which=6, **changes):
    """The exported state of r with fields of one accumulator changed (which: 6 = s, 7 = S)."""
    names = ("negative", "magnitude", "exponent", "terms", "positive_inf", "negative_inf", "nan",
             "all_negative_zero", "all_positive_zero")
    st = [list(t) for t in states(r)]
    acc = dict(zip(names, st[element][which]))
    acc.update(changes)
    st[element][which] = tuple(acc[n] for n in names)
    return [tuple(t) for t in st]


@pytest.mark.parametrize("label, make, why", [
    ("more infinities than terms", lambda r: corrupt(r, terms=1, positive_inf=2), "more special terms than terms"),
    ("a trailing zero word", lambda r: corrupt(r, magnitude=states(r)[0][6][1] + b"\0\0\0\0"), "read back the same"),
    ("both zero flags", lambda r: corrupt(r, all_negative_zero=True, all_positive_zero=True), "both -0.0 and +0.0"),
    ("a -0.0 flag on a non-zero value", lambda r: corrupt(r, all_negative_zero=True), "a non-zero value"),
    ("an exponent out of range", lambda r: corrupt(r, exponent=4000), "outside the accumulator's range"),
    ("a misaligned exponent", lambda r: corrupt(r, exponent=states(r)[0][6][2] + 1), "outside the accumulator"),
    ("a ragged magnitude", lambda r: corrupt(r, magnitude=b"\1\2\3"), "a magnitude of 3 bytes"),
])
def test_a_reference_state_exactref_did_not_write_is_refused(label, make, why):
    r = er.sum(np.array([1.5, -0.25, 3.0]))
    assert _core.references_from_states("float64", False, states(r))  # the untouched state is taken
    with pytest.raises(ValueError, match=f"not the pickled state of an exactref reference: .*{re.escape(why)}"):
        _core.references_from_states("float64", False, make(r))
    with pytest.raises(ValueError, match="another dtype or kind than its list"):
        _core.references_from_states("float32", False, states(r))


def test_special_counts_survive_in_full():
    # Only "some +Inf" is visible in covers(), but the counts are state too: merge-sized counts round-trip.
    r = er.sum(np.full(100_003, np.inf))
    st = states(pickle.loads(pickle.dumps(r)))[0][6]
    assert st[3] == 100_003 and st[4] == 100_003 and st[5] == 0
    assert math.isinf(pickle.loads(pickle.dumps(r)).exact)
