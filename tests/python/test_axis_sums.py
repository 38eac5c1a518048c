"""er.sum over axes keeps its references compact (scatter.h's compact_reference_array, about 56 bytes per element):
every element answers exactly what the full reference (~2.3 KB) answers — count, exact, abs_sum, every rounding,
bound, covers, verdict and its sensitivity, explain, ulp_error, indexing, iteration, repr, pickling — on random and
adversarial data, every dtype, any axes, keepdims, strided and non-contiguous input; and the memory per element."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import exactref as er
from exactref import _core
from exactref._arrays import host_array
from exactref._reference import Reference
from exact_oracle import NUMPY_DTYPES, frac, needs_bfloat16

KERNEL = 64  # compact_reference_array::kernel_terms: rows from here on take the superaccumulator kernel
ROUNDINGS = ("nearest", "toward_zero", "upward", "downward")


def full_sum(x, axis=None, keepdims=False, structure=None):
    """er.sum's references as one full reference per element (the path er.sum took with structure=), for comparing."""
    a, name = host_array(x, "x")
    axes = tuple(range(a.ndim)) if axis is None else tuple(d % a.ndim for d in np.atleast_1d(axis))
    keep = [d for d in range(a.ndim) if d not in axes]
    models = er._structures(structure) if structure is not None else []
    refs = _core.sum(a.transpose(keep + list(axes)), "bfloat16" if name == "bfloat16" else None, len(axes), models, 1,
                     False)
    shape = [1 if d in axes else a.shape[d] for d in range(a.ndim)] if keepdims else [a.shape[d] for d in keep]
    return Reference(refs, np.arange(len(refs), dtype=np.int64).reshape(shape))


def results_near(r, dtype):
    """Results to judge: RN(s), and one ulp up and down from it (one of them usually beyond a tight standard)."""
    rn = np.asarray(r.nearest(dtype))
    with np.errstate(over="ignore", invalid="ignore"):
        return [rn, np.nextafter(rn, np.asarray(np.inf, rn.dtype)), np.nextafter(rn, np.asarray(-np.inf, rn.dtype))]


def same_objects(a, b):
    """Two results of an object-valued query equal element by element (NaN equal to NaN)."""
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    return a.shape == b.shape and [repr(v) for v in a.ravel()] == [repr(v) for v in b.ravel()]


def assert_same_references(c, f, dtype):
    """Every query of Reference c (compact) equals that of f (full), element by element."""
    assert (c.shape, c.dtype, c.size) == (f.shape, f.dtype, f.size)
    assert np.array_equal(c.count, f.count)
    for query in ("exact", "abs_sum", "decimal"):  # Fractions, or nan/inf floats for the special states
        assert same_objects(getattr(c, query), getattr(f, query)), query
    for to in ("float64", "float32", "float16"):
        for mode in ROUNDINGS:
            a, b = np.asarray(c.nearest(to, mode)), np.asarray(f.nearest(to, mode))
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (to, mode)
    for standard, params in (("any_order", {}), ("exact", {}), ("faithful", {}), ("tree", {"height": 40}),
                             ("directed:any_order", {}), ("mixed", {"acc": "float64", "out": dtype})):
        assert np.array_equal(c.bound(standard, **params), f.bound(standard, **params), equal_nan=True), standard
        for res in results_near(c, dtype):
            assert np.array_equal(c.covers(res, standard, **params), f.covers(res, standard, **params)), standard
    res = results_near(c, dtype)[1]
    if c.size:
        assert np.array_equal(c.ratios(res), f.ratios(res), equal_nan=True)
        assert np.array_equal(c.ulp_error(res), f.ulp_error(res), equal_nan=True)
        vc, vf = c.verdict(res), f.verdict(res)
        assert (vc.covered, vc.vacuous, vc.advice, vc.message()) == (vf.covered, vf.vacuous, vf.advice, vf.message())
        assert np.array_equal([vc.bound, vc.ratio, vc.ulps], [vf.bound, vf.ratio, vf.ulps], equal_nan=True)
        sc, sf = vc.sensitivity, vf.sensitivity  # of_largest too: the largest term is kept beside the cells
        assert np.array_equal([sc.of_sum, sc.of_abs_sum, sc.of_largest], [sf.of_sum, sf.of_abs_sum, sf.of_largest],
                              equal_nan=True)
        first = (0,) * c.ndim
        one = np.asarray(c[first].nearest())
        assert [str(e) for e in c[first].explain(one)] == [str(e) for e in f[first].explain(one)]
        assert repr(c[first]) == repr(f[first])
    assert repr(c) == repr(f)


@pytest.mark.parametrize("name", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("cols", [0, 1, 3, KERNEL - 1, KERNEL, KERNEL + 5])
def test_rows_equal_the_full_references(name, cols):
    if name == "bfloat16":
        needs_bfloat16()
    rng = np.random.default_rng(cols)
    spread = 8 if name == "float16" else 20  # binades: float16 stays finite
    x = (rng.standard_normal((6, cols)) * 2.0 ** rng.integers(-spread, spread, (6, cols))).astype(NUMPY_DTYPES[name])
    compact, full = er.sum(x, axis=1), full_sum(x, axis=1)
    assert_same_references(compact, full, name)
    if cols:
        assert all(e == sum(frac(v) for v in row) for e, row in zip(compact.exact, x))


ADVERSARIAL = [
    [-0.0], [-0.0, -0.0], [0.0, -0.0], [],
    [5e-324, -5e-324, 5e-324],                   # subnormals
    [5e-324, 2.0 ** 1023],                       # ~2100 bits: the element spills
    [2.0 ** 1023, 5e-324, -(2.0 ** 1023)],
    [1e308, 1e308],                              # overflows to inf when rounded
    [1.0, np.inf], [-np.inf, 2.0], [np.inf, -np.inf], [np.nan, 1.0],
    [1.0, 2.0 ** -125], [1.0, 2.0 ** -100],      # just beyond, and within, one cell's window
]


@pytest.mark.parametrize("row", ADVERSARIAL, ids=[str(r) for r in ADVERSARIAL])
@pytest.mark.parametrize("repeat", [1, KERNEL])
def test_adversarial_rows(row, repeat):
    rows = np.array([row * repeat, [-v for v in row] * repeat], dtype=np.float64).reshape(2, len(row) * repeat)
    with np.errstate(over="ignore", invalid="ignore"):
        assert_same_references(er.sum(rows, axis=1), full_sum(rows, axis=1), "float64")


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (2, 0), (1, 2), (0, 1, 2), None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_any_axes_and_keepdims(axis, keepdims):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 5, 300)) * 100).astype(np.float32)
    c = er.sum(x, axis=axis, keepdims=keepdims)
    assert c.shape == np.sum(x, axis=axis, keepdims=keepdims).shape
    assert_same_references(c, full_sum(x, axis=axis, keepdims=keepdims), "float32")
    er.testing.assert_covers(np.sum(x, axis=axis, keepdims=keepdims), c)


@pytest.mark.parametrize("view", [
    lambda a: a[:, ::3],                            # strided rows: gathered
    lambda a: a[::-1, ::-1],
    lambda a: a.T,                                  # columns
    lambda a: a[::2, 5:700],                        # rows read in place, long
    lambda a: np.broadcast_to(a[0, :9], (4, 9)),    # a zero stride
    lambda a: a.reshape(10, 20, 30)[:, ::-2].transpose(2, 0, 1),
    lambda a: a.astype(a.dtype.newbyteorder(">")),
])
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_strided_and_non_contiguous_input(view, axis):
    base = (np.random.default_rng(5).standard_normal((6, 1000)) * 1e3).astype(np.float64)
    v = view(base)
    c = er.sum(v, axis=axis)
    assert_same_references(c, full_sum(v, axis=axis), "float64")
    contiguous = er.sum(np.ascontiguousarray(v), axis=axis)
    assert same_objects(c.exact, contiguous.exact)


def test_threads_give_the_same_references():
    x = np.random.default_rng(9).standard_normal((3, 200_000)).astype(np.float32)
    x[1, 7] = np.inf
    one, four = er.sum(x, axis=1, threads=1), er.sum(x, axis=1, threads=4)
    assert_same_references(four, one, "float32")
    assert_same_references(four, full_sum(x, axis=1), "float32")


def test_indexing_iteration_and_pickling():
    x = np.random.default_rng(11).standard_normal((5, 7, 40)).astype(np.float16)
    c, f = er.sum(x, axis=2), full_sum(x, axis=2)
    for key in (3, (1, 2), np.s_[::2], np.s_[:, -1], np.array([[0, 4], [4, 4]]), c.count > 0):
        assert_same_references(c[key], f[key], "float16")
    rows_c, rows_f = list(c), list(f)  # iteration: one Reference of shape (7,) per row
    assert len(rows_c) == len(rows_f) == 5
    assert all(same_objects(a.exact, b.exact) and a.shape == (7,) for a, b in zip(rows_c, rows_f))
    back = pickle.loads(pickle.dumps(c))
    assert_same_references(back, f, "float16")


def test_planted_faults_are_rejected():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((1000, 10)).astype(np.float32)
    x[17, 4] = 32.0
    r = er.sum(x, axis=1)
    good = np.sum(x, axis=1)
    assert r.covers(good).all()
    dropped = good.copy()
    dropped[17] -= x[17, 4]
    twice = good.copy()
    twice[17] += x[17, 4]
    swapped = good.copy()
    swapped[[17, 18]] = swapped[[18, 17]]
    for bad in (dropped, twice, swapped):
        covered = r.covers(bad)
        assert not covered[17] and covered.sum() >= 998
        v = r.verdict(bad)
        assert not v.covered and "any_order" in v.message()


def test_memory_per_element():
    # 10^6 rows of 10 float32 terms: the compact references take ~56 bytes per row (48 the cell, 8 its largest
    # term) plus the Reference's 8-byte index; the full ones took ~2.3 KB. Measured in a fresh process (VmHWM).
    script = textwrap.dedent("""
        import numpy as np, resource, exactref as er
        x = np.random.default_rng(0).standard_normal((1_000_000, 10)).astype(np.float32)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = er.sum(x, axis=1)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert r.covers(np.sum(x, axis=1)).all()
        print((after - before) * 1024 / 1_000_000)
    """)
    per_row = float(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                   text=True).stdout)
    assert per_row <= 72, f"{per_row:.1f} bytes per output element"


STRUCTURES = ["levels:fold:8,any", "levels:fold:8,tree:4,any"]


def planted_on_the_bound(c, standard, dtype):
    """Results at RN(s ± B) of each element and one ulp either side: where the exact comparison decides."""
    s = np.asarray(c.nearest("float64"), dtype=np.float64)
    b = np.asarray(c.bound(standard), dtype=np.float64)
    out = []
    with np.errstate(over="ignore", invalid="ignore"):
        for edge in (s + b, s - b):
            r = edge.astype(dtype)
            out += [r, np.nextafter(r, np.asarray(np.inf, r.dtype)), np.nextafter(r, np.asarray(-np.inf, r.dtype))]
    return out


@pytest.mark.parametrize("name", ["float64", "float32", "float16"])
@pytest.mark.parametrize("cols", [0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257])
def test_structured_rows_are_compact_and_judge_as_the_full_references(name, cols):
    rng = np.random.default_rng(1000 + cols)
    spread = 6 if name == "float16" else 20
    x = (rng.standard_normal((9, cols)) * 2.0 ** rng.integers(-spread, spread, (9, cols))).astype(NUMPY_DTYPES[name])
    if cols:
        x[1, 0] = np.inf  # a row with Inf, one with NaN, one of -0.0 terms
        x[2, -1] = np.nan
        x[3] = -0.0
    c, f = er.sum(x, axis=1, structure=STRUCTURES), full_sum(x, axis=1, structure=STRUCTURES)
    assert c._refs.is_compact and not f._refs.is_compact
    assert c.structures == f.structures == STRUCTURES
    with np.errstate(over="ignore", invalid="ignore"):
        for standard in STRUCTURES + ["directed:levels:fold:8,any", "any_order"]:
            assert np.array_equal(c.bound(standard), f.bound(standard), equal_nan=True), standard
            for res in results_near(c, name) + planted_on_the_bound(f, standard, x.dtype):
                assert np.array_equal(c.covers(res, standard), f.covers(res, standard)), standard
                if c.size:
                    assert c.verdict(res, standard).message() == f.verdict(res, standard).message(), standard
    # A structure it was not built with is refused, as for the full references (rows of 2 terms at least: /2).
    for refs in (c, f) if cols >= 2 else ():
        with pytest.raises(ValueError, match="must be built with it"):
            refs.covers(np.zeros(9, x.dtype), "levels:fold/2,any")
    back = pickle.loads(pickle.dumps(c))
    assert back.structures == STRUCTURES and back._refs.is_compact  # loads compact, its bounds kept
    assert np.array_equal(back.bound(STRUCTURES[1]), c.bound(STRUCTURES[1]), equal_nan=True)
    res = np.asarray(c.nearest(), dtype=x.dtype)
    assert np.array_equal(back.covers(res, STRUCTURES[0]), c.covers(res, STRUCTURES[0]))


def test_structured_rows_catch_what_the_flat_bound_misses():
    """A fold over groups of 8 then any order: the data bound of each row sees a planted error that the structure's
    flat bound (what a compact Reference without structure= judges with) lets through."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2000, 64)).astype(np.float32)
    folded = np.zeros(2000, np.float32)
    for g in range(8):  # each group of 8 folded left to right in float32, the groups added in order
        part = np.zeros(2000, np.float32)
        for j in range(8):
            part = (part + x[:, 8 * g + j]).astype(np.float32)
        folded = (folded + part).astype(np.float32)
    kept, flat = er.sum(x, axis=1, structure="levels:fold:8,any"), er.sum(x, axis=1)
    standard = "levels:fold:8,any"
    assert kept.covers(folded, standard).all()
    b_data = np.asarray(kept.bound(standard))
    assert (b_data < np.asarray(flat.bound(standard))).all()
    wrong = (np.asarray(kept.nearest("float64")) + 2 * b_data).astype(np.float32)  # twice the data bound away
    moved = wrong != folded
    assert moved.sum() > 1000
    assert not kept.covers(wrong, standard)[moved].any()
    assert flat.covers(wrong, standard)[moved].any()  # the looser flat bound misses some of them
