"""Structured standards from Python (levels:..., DESIGN §3 "Structured standards"), what a check can see (vacuous,
sensitivity, advice) and Reference.explain: the Standard record and its spellings, references built with
structure=, planted faults that only a structure sees (each fault's size checked here with fractions against the
structure's flat depth-form bound, which the data bound never exceeds), the error texts, and pickling."""

import math
import pickle
import re
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exact_oracle import abs_sum, exact_sum, frac, next_up, round_to, to_dtype

U32 = Fraction(1, 2 ** 24)
U16 = Fraction(1, 2 ** 11)
STRUCTURE = "levels:fold/4,any"  # 4 threads, OpenMP static chunks, combined with atomics


def gamma(k, u):
    return k * u / (1 - k * u)


def static_chunks(n, threads):
    """OpenMP's static schedule ("/N"): n = q·N + r, the first r chunks hold q + 1 terms."""
    q, r = divmod(n, threads)
    out, start = [], 0
    for t in range(threads):
        end = start + q + (1 if t < r else 0)
        out.append((start, end))
        start = end
    return out


def fold(values, dtype):
    """A left fold with every addition rounded to dtype (numpy's scalar addition of two values of that dtype)."""
    acc = dtype(0)
    for v in values:
        acc = dtype(acc + v)
    return acc


def gauss32(n, seed):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# ---- the Standard record ---------------------------------------------------------------------------------------------

def test_a_structured_standard_reflects_its_record():
    m = er.standard(STRUCTURE)
    assert m.name == STRUCTURE and m.structure == STRUCTURE and m.structured and m.rule == "bound"
    assert m.levels == [("fold", "chunks", 4, None), ("any", "rest", 0, None)]
    assert m.kind == "levels" and m.acc is None and m.out is None and not m.directed and not m.fma
    assert m.height == 0 and m.chunks == 0 and m.combine == "any_order"
    grid = er.standard("levels:fold%65536,tree:256,any")
    assert grid.levels == [("fold", "interleaved", 65536, None), ("tree", "consecutive", 256, None),
                           ("any", "rest", 0, None)]
    assert er.standard("levels:tree@3:8,any").levels[0] == ("tree", "consecutive", 8, 3)


def test_the_classic_standards_are_flat_structures_with_their_old_fields():
    tree = er.standard("tree", height=5)
    assert (tree.kind, tree.height, tree.structure, tree.structured) == ("tree", 5, "levels:tree@5", False)
    assert tree.levels == [("tree", "rest", 0, 5)]
    split = er.standard("split_k", chunks=4, combine="pairwise")
    assert (split.kind, split.chunks, split.combine, split.structure) == ("split_k", 4, "pairwise", "levels:fold/4,tree")
    assert er.standard("any_order").structure == "levels:any" and er.standard("any_order").kind == "any_order"
    exact = er.standard("exact")
    assert (exact.rule, exact.levels, exact.structure, exact.kind) == ("exact", [], None, "exact")
    assert er.standard("faithful").rule == "faithful"
    mixed = er.standard("mixed", acc="float32", out="float16")
    assert (mixed.kind, mixed.acc, mixed.out, mixed.structure) == ("mixed", "float32", "float16", "levels:any")


def test_the_spellings_and_keyword_forms_agree():
    m = er.standard(STRUCTURE)
    assert er.standard("levels", levels="fold/4,any") == m
    assert er.standard("levels", levels=["fold/4", "any"]) == m
    assert er.standard("levels", levels=STRUCTURE) == m
    assert er.standard("levels", levels="fold/4,any", directed=True).name == "directed:levels:fold/4,any"
    assert er.standard(STRUCTURE, directed=True) == er.standard("directed:" + STRUCTURE)
    mixed = er.standard(STRUCTURE, acc="float32", out="float16")
    assert mixed.name == "mixed:float32:float16:levels:fold/4,any" and mixed.structured and mixed.kind == "mixed"
    assert er.standard("levels", levels="fold/4,any", acc="single", out="half") == mixed
    assert er.standard("mixed", acc="float32", out="float16", base=STRUCTURE) == mixed
    assert er.standard("mixed:single:half:levels:fold/4,any") == mixed  # numpy's dtype names in the spelling
    assert er.standard("mixed", acc="float32", out="float16", base="tree", height=7).name == \
        "mixed:float32:float16:tree:7"
    fma = er.standard("levels:fold/8,any+fma")
    assert fma.fma and fma.name == "levels:fold/8,any+fma" and er.standard(fma.name) == fma
    assert er.standard("mixed:float32:float16+fma").fma  # the suffix after a mixed spelling
    assert er.standard(STRUCTURE, acc="float32", result_dtype="float16").out == "float16"  # covers() passes it
    with pytest.raises(TypeError, match="standard='levels:fold/4,any' needs out=dtype"):
        er.standard(STRUCTURE, acc="float32")


@pytest.mark.parametrize("spelling, error, message", [
    ("levels:foo/4,any", ValueError, "unknown level order 'foo' in standard 'levels:foo/4,any': a level is ORDER"),
    ("levels:fold/0,any", ValueError, "bad group count '0' in standard 'levels:fold/0,any': expected a positive "
                                      "integer"),
    ("levels:fold/4", ValueError, "the last level combines all that is left: it has no group suffix"),
    ("levels:fold,any", ValueError, "level 1 has no group suffix"),
    ("levels:", ValueError, "has no levels"),
    ("directed:exact", ValueError, "exact and faithful compare encodings and take no structure, 'ftz:', 'mixed:' or "
                                   "'directed:'"),
    ("mixed:float32:float16:faithful", ValueError, "exact and faithful compare encodings"),
])
def test_bad_spellings_show_the_accepted_one(spelling, error, message):
    with pytest.raises(error, match=re.escape(message)):
        er.standard(spelling)


def test_bad_keyword_forms_say_what_is_accepted():
    with pytest.raises(TypeError, match=r"standard='levels' needs levels=\.\.\., .*e\.g\. 'levels:fold/4,any'"):
        er.standard("levels")
    with pytest.raises(TypeError, match=r"levels=5: expected the levels as a string \('fold/4,any'\)"):
        er.standard("levels", levels=5)
    with pytest.raises(TypeError, match=r"standard='levels' takes levels=, acc=, out=, directed=.*got height=3"):
        er.standard("levels", levels="fold/4,any", height=3)
    with pytest.raises(TypeError, match=r"spells its parameters in the name \(acc= and out= may go with it\); got "
                                        r"chunks=4"):
        er.standard(STRUCTURE, chunks=4)
    with pytest.raises(TypeError, match="out= goes with acc="):
        er.standard(STRUCTURE, out="float16")
    with pytest.raises(TypeError, match="out= goes with acc="):
        er.standard("levels", levels="fold/4,any", out="float16")
    with pytest.raises(ValueError, match="it is mixed already"):
        er.standard("mixed:float32:float16", acc="float64", out="float16")
    with pytest.raises(ValueError, match="mixed\\(\\) applies to bound standards"):
        er.standard("mixed", acc="float32", out="float16", base="exact")
    with pytest.raises(ValueError, match="or a CLI spelling such as 'tree:5' or 'levels:fold/4,any'"):
        er.standard("banana")


# ---- pickling standards ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, params", [
    (STRUCTURE, {}), ("levels:fold%65536,tree:256,any", {}), ("levels:tree@3:8,fold/2,any", {}),
    (STRUCTURE, {"directed": True}), (STRUCTURE, {"acc": "float32", "out": "bfloat16"}),
    ("levels:fold/8,any+fma", {"any_zero_sign": True}), ("mixed:float32:float16:tree:7", {}),
    ("exact", {"any_zero_sign": True}),
])
def test_structured_and_composed_standards_pickle(name, params):
    model = er.standard(name, **params)
    state = model.__getstate__()
    assert state == (model.name, model.any_zero_sign)  # the name parses back; the flag is not in it
    back = pickle.loads(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == model
    fields = ("name", "rule", "levels", "structure", "structured", "kind", "acc", "out", "directed", "fma",
              "any_zero_sign")
    assert [getattr(back, f) for f in fields] == [getattr(model, f) for f in fields]


@pytest.mark.parametrize("state, why", [
    (("levels:foo,any", False), "name 'levels:foo,any' does not parse: unknown level order 'foo'"),
    (("tree:05", False), re.escape("name 'tree:05' is not canonical (it reads back as 'tree:5')")),
    (("any_order", "no"), r"expected \(name: str, any_zero_sign: bool\)"),
    (("any_order", False, 3), r"expected \(name: str, any_zero_sign: bool\), got 3 fields"),
])
def test_a_new_form_state_exactref_did_not_write_is_refused(state, why):
    blank = er.Standard.__new__(er.Standard)
    with pytest.raises(ValueError, match=f"not the state of an exactref.Standard: {why}"):
        blank.__setstate__(state)


def test_the_state_of_the_earlier_model_still_loads():
    # (kind, height, chunks, combine, acc, out, directed, fma, any_zero_sign), as pickles written before the
    # levels model hold them.
    blank = er.Standard.__new__(er.Standard)
    blank.__setstate__(("split_k", 0, 4, "pairwise", None, None, True, False, False))
    assert blank == er.standard("directed:split_k:4:pairwise")


# ---- references with structures ----------------------------------------------------------------------------------------

def four_thread_runs(x):
    """(honest, dropped): 4 threads fold their static chunk in float32, the chunk results are combined in the order
    the atomics ran; `dropped` lost the last thread's chunk."""
    chunks = [fold(x[a:b], np.float32) for a, b in static_chunks(x.size, 4)]
    honest = fold([chunks[2], chunks[0], chunks[3], chunks[1]], np.float32)
    dropped = fold([chunks[2], chunks[0], chunks[1]], np.float32)
    return honest, dropped


def test_a_structure_sees_the_lost_chunk_and_the_lost_term_any_order_cannot():
    x = gauss32(10000, 5)
    r = er.sum(x, structure=STRUCTURE)
    assert r.structures == [STRUCTURE]
    honest, dropped = four_thread_runs(x)
    s, S = exact_sum(x), abs_sum(x)
    flat = gamma(2499 + 3, U32) * S  # the structure's flat depth form (Higham §4.2); the data bound is never above
    assert abs(frac(honest) - s) <= flat
    assert r.covers(honest, standard=STRUCTURE)
    assert 0 < Fraction(r.bound(STRUCTURE)) <= flat
    lost = exact_sum(x[7500:])
    assert abs(lost) > 2 * flat, "the planted fault must be beyond any bound of the structure"
    assert not r.covers(dropped, standard=STRUCTURE)
    # One lost term of the last chunk: inside any_order's (n-1)·u·S, beyond the structure's flat bound.
    any_bound = 9999 * U32 * S
    lo, hi = static_chunks(x.size, 4)[3]
    chunks = [fold(x[a:b], np.float32) for a, b in static_chunks(x.size, 4)]
    for j in range(lo, hi):
        last = fold(np.concatenate([x[lo:j], x[j + 1:hi]]), np.float32)
        result = fold([chunks[2], chunks[0], last, chunks[1]], np.float32)
        if flat < abs(frac(result) - s) <= any_bound:
            break
    else:
        pytest.fail("no term of the last chunk is a fault any_order cannot see")
    assert r.covers(result) and not r.covers(result, standard=STRUCTURE)
    v = r.verdict(result)
    assert not v.vacuous and v.sensitivity.of_largest >= 1
    assert "a lost term smaller than" in v.message() and "cannot be seen" in v.message()


def test_structures_compose_with_prefixes_and_axes():
    x = gauss32(4000, 6)
    r = er.sum(x, structure=[STRUCTURE, er.standard("levels:fold%64,tree:8,any"), "directed:" + STRUCTURE])
    assert r.structures == [STRUCTURE, "levels:fold%64,tree:8,any"]  # the same structure is kept once
    honest, _ = four_thread_runs(x)
    assert r.covers(honest, standard="directed:" + STRUCTURE)
    assert r.bound("directed:" + STRUCTURE) >= r.bound(STRUCTURE)
    # float16 data accumulated in float32 by 4 threads, rounded once to float16.
    h = x.astype(np.float16)
    rh = er.sum(h, structure=STRUCTURE)
    parts = [fold(h[a:b].astype(np.float32), np.float32) for a, b in static_chunks(h.size, 4)]
    result = np.float16(fold(parts[::-1], np.float32))
    assert rh.covers(result, standard=STRUCTURE, acc="float32")
    assert rh.covers(result, standard="mixed:float32:float16:" + STRUCTURE)
    # axis=: one structured bound per row; a strided block (columns of a C-order matrix) is gathered in C order of
    # the reduced axes and gives the bound of its contiguous copy.
    m = gauss32(6 * 500, 7).reshape(6, 500)
    rows = er.sum(m, axis=1, structure=STRUCTURE)
    assert rows.structures == [STRUCTURE]
    assert rows.covers(np.array([four_thread_runs(row)[0] for row in m]), standard=STRUCTURE).all()
    cols = er.sum(m.T, axis=1, structure=STRUCTURE)  # each row of m.T is a strided column of m
    copies = er.sum(np.ascontiguousarray(m.T), axis=1, structure=STRUCTURE)
    np.testing.assert_array_equal(cols.bound(STRUCTURE), copies.bound(STRUCTURE))
    cube = gauss32(2 * 3 * 400, 8).reshape(2, 3, 400)
    strided = er.sum(cube[:, :, ::2], axis=(1, 2), structure=STRUCTURE)
    copied = er.sum(np.ascontiguousarray(cube[:, :, ::2]).reshape(2, -1), axis=1, structure=STRUCTURE)
    np.testing.assert_array_equal(strided.bound(STRUCTURE), copied.bound(STRUCTURE))


def test_a_structure_the_reference_was_not_built_with_is_refused():
    x = gauss32(100, 9)
    r = er.sum(x)
    assert r.structures == []
    message = ("standard 'levels:fold/4,any' is structured: its bound comes from the data, so the reference must be "
               "built with it")
    for call in (lambda: r.covers(np.float32(x.sum()), standard=STRUCTURE), lambda: r.bound(STRUCTURE),
                 lambda: r.verdict(np.float32(x.sum()), standard=STRUCTURE),
                 lambda: er.sum(x, structure="levels:fold/8,any").covers(np.float32(0), standard=STRUCTURE)):
        with pytest.raises(ValueError, match=re.escape(message)) as e:
            call()
        assert 'er.sum(x, structure="levels:fold/4,any")' in str(e.value)


@pytest.mark.parametrize("structure, error, message", [
    ("exact", ValueError, "structure='exact': 'exact' is not a structured standard: its bound does not come from the "
                          "data (exact and faithful compare encodings; any_order, tree:H and split_k:S need only n "
                          "and S): give the kernel's structure in the levels spelling, e.g. 'levels:fold/4,any'"),
    ("any_order", ValueError, "structure='any_order': 'any_order' is not a structured standard"),
    (["levels:fold/4,any", "tree:5"], ValueError, "structure='tree:5': 'tree:5' is not a structured standard"),
    ("levels:fold/20000,any", ValueError, "level 1 asks for 20000 groups of 10000 items, so a group would be empty: "
                                          "give at most 10000"),
    ("levels:fold%4,bogus", ValueError, "unknown level order 'bogus'"),
    ("levels:fold/0,any", ValueError, "bad group count '0'"),
    (5, TypeError, "structure=5: expected a structured standard ('levels:fold/4,any'), an exactref.Standard, or a "
                   "list of them"),
    ([STRUCTURE, 4], TypeError, "structure: 4 is neither a standard's spelling nor an exactref.Standard"),
])
def test_a_structure_that_does_not_apply_is_refused_with_the_spelling(structure, error, message):
    with pytest.raises(error, match=re.escape(message)):
        er.sum(gauss32(10000, 10), structure=structure)


def test_a_structure_over_an_empty_sum_says_so_without_an_impossible_advice():
    # Before: "give at most 0 (fold/0 describes the same kernel ...)", a spelling the parser itself refuses.
    for call in (lambda: er.sum(np.zeros(0, np.float32), structure="levels:fold/4,any"),
                 lambda: er.sum(np.zeros((5, 0), np.float32), axis=1, structure="levels:fold/4,any")):
        with pytest.raises(ValueError, match=re.escape("asks for 4 groups of 0 items: a structured standard needs at "
                                                       "least one term; an empty sum is exactly +0.0")) as e:
            call()
        assert "fold/0" not in str(e.value)


# ---- dot products ------------------------------------------------------------------------------------------------------

def split_k_dot(x, y, chunks, fused):
    """A split-K dot in float32: each chunk a left fold of products (each product rounded, or fused: RN(acc + x·y)),
    the chunk results combined in reverse order."""
    parts = []
    for a, b in static_chunks(x.size, chunks):
        acc = Fraction(0)
        for xi, yi in zip(x[a:b], y[a:b]):
            if fused:
                acc = round_to(acc + frac(xi) * frac(yi), "float32")
            else:
                acc = round_to(acc + round_to(frac(xi) * frac(yi), "float32"), "float32")
        parts.append(acc)
    total = Fraction(0)
    for p in parts[::-1]:
        total = round_to(total + p, "float32")
    return to_dtype(total, np.float32)


def test_dot_products_take_structures():
    x, y = gauss32(800, 11), gauss32(800, 12)
    r = er.dot(x, y, structure=["levels:fold/8,any", "levels:fold/8,any+fma"])
    assert r.structures == ["levels:fold/8,any"]  # +fma is not part of the structure
    T = sum(abs(frac(a) * frac(b)) for a, b in zip(x, y))
    flat = gamma(99 + 1 + 7, U32) * T  # k = 100 products per chunk: one more rounding for the product
    for fused, model in ((False, "levels:fold/8,any"), (True, "levels:fold/8,any+fma")):
        result = split_k_dot(x, y, 8, fused)
        assert r.covers(result, standard=model), model
        assert 0 < Fraction(r.bound(model)) <= flat
    strided = er.dot(np.repeat(x, 2)[::2], np.repeat(y, 2)[::2], structure="levels:fold/8,any")
    assert strided.bound("levels:fold/8,any") == r.bound("levels:fold/8,any")
    assert math.isnan(r.verdict(split_k_dot(x, y, 8, False), standard="levels:fold/8,any").sensitivity.of_largest)
    with pytest.raises(ValueError, match="structured standards \\(structure=\\) describe the reduction of the "
                                         "products alone and take no initial value"):
        er.dot(x, y, initial=np.float32(1), structure="levels:fold/8,any")
    with pytest.raises(ValueError, match="structure= applies to the dot product of two vectors"):
        er.dot(x.reshape(2, 400), y.reshape(400, 2), structure="levels:fold/8,any")
    with pytest.raises(ValueError, match="'exact' is not a structured standard"):
        er.dot(x, y, structure="exact")


# ---- what a check can see ------------------------------------------------------------------------------------------------

def test_any_order_on_ten_thousand_float16_terms_is_vacuous_a_structure_is_not():
    h = np.random.default_rng(13).standard_normal(10000).astype(np.float16)
    blocked = "levels:fold:16,tree:16,any"  # flat depth 15 + 4 + 39: γ_58·S < S whatever the data
    r = er.sum(h, structure=[blocked, "levels:fold/8,any"])
    rn = r.nearest()
    v = r.verdict(rn)
    assert v.covered and v.vacuous and v.sensitivity.of_abs_sum == 9999 / 2048  # (n-1)·u: B/S exactly
    assert v.sensitivity.of_sum == float(Fraction(9999, 2048) * abs_sum(h) / abs(exact_sum(h)))
    assert "levels:" in v.advice and "any_order in float16 is vacuous from n = 2049 on" in v.advice
    assert "sees        : nothing (VACUOUS): " + v.advice in v.message()
    assert r.covers(np.float16(0))  # |0 - s| <= S <= B: even a result of 0
    assert r.verdict(np.float16(0)).vacuous
    for model in (blocked, "levels:fold/8,any"):
        w = r.verdict(rn, standard=model)
        assert w.covered and not w.vacuous and w.advice == "" and 0 < w.sensitivity.of_abs_sum < 1, model
        assert w.sensitivity.of_largest == w.bound / float(np.max(np.abs(h.astype(np.float64))))
        assert "sees        : a fault only if it moves the sum by more than B" in w.message()
    assert Fraction(r.bound(blocked)) <= gamma(58, U16) * abs_sum(h)
    exact = r.verdict(rn, standard="exact")
    assert not exact.vacuous and exact.sensitivity.of_abs_sum == 0 and exact.advice == ""
    assert "VACUOUS" in repr(v) and isinstance(v.sensitivity, er.Sensitivity)


def test_assert_covers_messages_say_what_the_check_can_see():
    h = np.random.default_rng(14).standard_normal(10000).astype(np.float16)
    blocked = "levels:fold:16,tree:16,any"  # flat bound γ_58·S: below S/2 whatever the data
    r = er.sum(h, structure=blocked)
    with pytest.warns(er.VacuousCheckWarning), pytest.raises(AssertionError) as e:
        er.testing.assert_covers(np.float16(np.nan), r)  # finite terms: NaN is never covered
    assert "sees        : nothing (VACUOUS): no lost or doubled part of the terms can be seen" in str(e.value)
    assert "describe the kernel's structure (levels:fold/T,any" in str(e.value)
    far = to_dtype(round_to(exact_sum(h) + abs_sum(h) / 2, "float16"), np.float16)
    assert gamma(58, U16) * abs_sum(h) < abs(frac(far) - exact_sum(h))
    with pytest.raises(AssertionError) as e:
        er.testing.assert_covers(far, r, standard=blocked)
    message = str(e.value)
    assert f"1 of 1 result(s) not covered by {blocked} (float16)" in message
    assert "sees        : a fault only if it moves the sum by more than B" in message
    assert "VACUOUS" not in message


# ---- explain ---------------------------------------------------------------------------------------------------------

def test_explain_lists_every_candidate_covering_ones_first_tightest_first():
    x = gauss32(1000, 15)
    r = er.sum(x, structure=STRUCTURE)
    rn = r.nearest()
    listing = r.explain(rn)
    assert all(isinstance(v, er.Verdict) for v in listing)
    assert [v.standard for v in listing[:2]] == ["exact", "faithful"] and all(v.covered for v in listing)
    bounds = [v.bound for v in listing[2:]]
    assert bounds == sorted(bounds)
    names = {v.standard for v in listing}
    assert {"tree:10", "split_k:2", "split_k:256", "any_order", "directed:any_order", STRUCTURE,
            "directed:" + STRUCTURE} <= names
    by_name = {v.standard: v for v in listing}
    assert by_name["any_order"].bound == r.bound() and by_name[STRUCTURE].bound == r.bound(STRUCTURE)
    # The other faithful neighbour: faithful first, exact last (the only standard that rejects it).
    s = exact_sum(x)
    other = next_up(frac(rn), "float32") if s > frac(rn) else -next_up(-frac(rn), "float32")
    listing = r.explain(to_dtype(other, np.float32))
    assert listing[0].standard == "faithful" and listing[0].covered
    assert listing[-1].standard == "exact" and not listing[-1].covered
    assert [v.standard for v in listing if not v.covered] == ["exact"]
    # float16 results get mixed:float32:float16 as a candidate.
    h = x.astype(np.float16)
    assert "mixed:float32:float16" in {v.standard for v in er.sum(h).explain(np.float16(h.astype(np.float32).sum()))}


def test_explain_takes_one_result_and_one_reference():
    rows = er.sum(gauss32(300, 16).reshape(3, 100), axis=1)
    with pytest.raises(ValueError, match=r"explain: the Reference has shape \(3,\): explain judges one result against "
                                         r"one reference; pick an element, r\[i\]\.explain\(result\[i\]\)"):
        rows.explain(np.float32(0))
    assert rows[1].explain(np.float32(0))
    with pytest.raises(ValueError, match=r"explain: the result has shape \(2,\): pass one result"):
        rows[1].explain(np.zeros(2, np.float32))


# ---- pickling structured references -------------------------------------------------------------------------------------

def test_structured_references_pickle_with_their_bounds():
    x = gauss32(2000, 17)
    r = er.sum(x, structure=[STRUCTURE, "levels:fold%32,any"])
    back = pickle.loads(pickle.dumps(r))
    assert back.structures == r.structures
    honest, dropped = four_thread_runs(x)
    assert abs(exact_sum(x[1500:])) > 2 * gamma(499 + 3, U32) * abs_sum(x), "the lost chunk must be visible"
    for model in (STRUCTURE, "levels:fold%32,any", "directed:" + STRUCTURE):
        assert back.bound(model) == r.bound(model)
    assert back.covers(honest, standard=STRUCTURE) and not back.covers(dropped, standard=STRUCTURE)
    assert back.verdict(honest).sensitivity.of_largest == r.verdict(honest).sensitivity.of_largest
    state = r._refs.export_states(np.zeros(1, np.int64))[0]
    assert state[8] == float(np.max(np.abs(x))) and [t[0] for t in state[9]] == r.structures
    dot_state = er.dot(x, x)._refs.export_states(np.zeros(1, np.int64))[0]
    assert dot_state[8] is None and dot_state[9] == []  # a dot's largest term is not known


def corrupted(state, **changes):
    st = list(state)
    structures = [list(t) for t in st[9]]
    for key, value in changes.items():
        if key == "largest":
            st[8] = value
        else:
            structures[0][{"name": 0, "error": 1, "leaves": 2}[key]] = value
    st[9] = [tuple(t) for t in structures]
    return [tuple(st)]


@pytest.mark.parametrize("changes, why", [
    ({"name": "levels:fold/4,bogus"}, "a structure 'levels:fold/4,bogus' that does not parse"),
    ({"name": "levels:fold/04,any"}, "a structure 'levels:fold/04,any' that is not canonical"),
    ({"name": "tree:5"}, "a structure 'tree:5' that is not canonical"),
    ({"error": [0.5] * 7}, "a structured bound with 7 entries instead of 8"),
    ({"error": [-1.0] * 8}, "a structured bound that is negative or NaN"),
    ({"error": [math.nan] * 8}, "a structured bound that is negative or NaN"),
    ({"leaves": 99}, "a structured bound over 99 terms of a reference of 100"),
    ({"largest": -1.0}, "a largest term that is not finite and >= 0"),
    ({"largest": math.inf}, "a largest term that is not finite and >= 0"),
])
def test_a_structured_state_exactref_did_not_write_is_refused(changes, why):
    from exactref import _core
    r = er.sum(gauss32(100, 18), structure=STRUCTURE)
    state = r._refs.export_states(np.zeros(1, np.int64))[0]
    assert len(_core.references_from_states("float32", False, [state])) == 1
    with pytest.raises(ValueError, match=f"not the pickled state of an exactref reference: {re.escape(why)}"):
        _core.references_from_states("float32", False, corrupted(state, **changes))
