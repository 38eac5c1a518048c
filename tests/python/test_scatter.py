"""er.segment_sum, er.scatter_add, er.index_add, er.add_at, er.bincount, er.cumsum and er.embedding_bag: every element
equals an exact oracle (Python fractions over the terms that land on it), the results of numpy, torch and jax are
covered element by element, planted faults (an index off by one, a dropped update, an update applied twice, a lost
initial value, a shifted scan) are rejected, and the errors name the argument and its first offending position.

Seeds are fixed (SEED below); a failure names the function and dtype in its parametrization."""

from fractions import Fraction
import math
import pickle

import numpy as np
import pytest

import exactref as er
from dlpack_fakes import DLPackOnly
from exact_oracle import NUMPY_DTYPES, abs_sum, exact_sum, frac, needs_bfloat16, round_to

SEED = 20261202
DTYPES = list(NUMPY_DTYPES)


def data(rng, shape, name, spread=True):
    """Values of `name` with a wide exponent spread (exactness stress) or N(0,1) (spread=False)."""
    x = rng.standard_normal(shape)
    if spread:
        top = 8 if name == "float16" else 40
        x = x * np.exp2(rng.integers(-top, top, size=shape))
    return x.astype(NUMPY_DTYPES[name])


def check_against(r, terms, name):
    """r (a Reference) equals the oracle element by element: terms[pos] lists the terms of element pos."""
    assert r.shape == terms.shape and r.dtype == name
    exact, absolute, counts, nearest = r.exact, r.abs_sum, r.count, r.nearest()
    for pos in np.ndindex(*r.shape):
        ts = terms[pos]
        q = exact_sum(ts)
        assert exact[pos] == q, (pos, ts)
        assert absolute[pos] == abs_sum(ts), pos
        assert counts[pos] == len(ts), pos
        rn = round_to(q, name)
        assert (float(nearest[pos]) == rn) if isinstance(rn, float) else (frac(nearest[pos]) == rn), pos


def lists(shape):
    out = np.empty(shape, dtype=object)
    for pos in np.ndindex(*shape):
        out[pos] = []
    return out


# ---- exact against the oracle -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("with_initial", [False, True])
def test_segment_sum_is_exact(name, with_initial):
    rng = np.random.default_rng(SEED)
    values = data(rng, 200, name)
    ids = rng.integers(-2, 12, size=200)  # some outside [0, 10): dropped, as jax does
    initial = data(rng, 10, name) if with_initial else None
    r = er.segment_sum(values, ids, num_segments=10, initial=initial)
    terms = lists((10,))
    for k in range(10):
        if with_initial:
            terms[k].append(initial[k])
    for v, k in zip(values, ids):
        if 0 <= k < 10:
            terms[k].append(v)
    check_against(r, terms, name)
    assert er.segment_sum(values, ids).shape == (12,)  # num_segments=None: max id + 1


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_is_exact(name, dim):
    rng = np.random.default_rng(SEED + 1)
    initial = data(rng, (5, 6), name)
    src = data(rng, (7, 6), name)
    d = dim % 2
    index = rng.integers(0, initial.shape[d], size=(4, 5))  # smaller than src, and than initial outside dim
    r = er.scatter_add(initial, dim, index, src)
    terms = lists(initial.shape)
    for pos in np.ndindex(*initial.shape):
        terms[pos].append(initial[pos])
    for i, j in np.ndindex(*index.shape):
        target = (index[i, j], j) if d == 0 else (i, index[i, j])
        terms[target].append(src[i, j])
    check_against(r, terms, name)


def test_scatter_add_rank_1():
    r = er.scatter_add(np.zeros(3), 0, np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]))
    assert r.nearest().tolist() == [4.0, 0.0, 2.0] and r.count.tolist() == [3, 1, 2]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_is_exact(name, dim):
    rng = np.random.default_rng(SEED + 2)
    initial = data(rng, (4, 5), name)
    source_shape = (9, 5) if dim == 0 else (4, 9)
    source = data(rng, source_shape, name)
    index = rng.integers(0, initial.shape[dim], size=9)
    r = er.index_add(initial, dim, index, source)
    terms = lists(initial.shape)
    for pos in np.ndindex(*initial.shape):
        terms[pos].append(initial[pos])
    for i, j in np.ndindex(*source_shape):
        target = (index[i], j) if dim == 0 else (i, index[j])
        terms[target].append(source[i, j])
    check_against(r, terms, name)
    one = er.index_add(initial[0], 0, index % 5, source.reshape(-1)[:9])  # rank 1
    assert one.shape == (5,)


@pytest.mark.parametrize("name", DTYPES)
def test_add_at_is_exact(name):
    rng = np.random.default_rng(SEED + 3)
    initial = data(rng, 8, name)
    indices = rng.integers(-8, 8, size=100)  # negative indices count from the end
    values = data(rng, 100, name)
    r = er.add_at(initial, indices, values)
    terms = lists((8,))
    for k in range(8):
        terms[k].append(initial[k])
    for k, v in zip(indices, values):
        terms[k % 8].append(v)
    check_against(r, terms, name)
    scalar = er.add_at(initial, indices, values[:1])  # one value for every index
    assert scalar.count.tolist() == [1 + int(np.sum(indices % 8 == k)) for k in range(8)]


@pytest.mark.parametrize("name", DTYPES)
def test_bincount_is_exact(name):
    rng = np.random.default_rng(SEED + 4)
    x = rng.integers(0, 6, size=90)
    weights = data(rng, 90, name)
    r = er.bincount(x, weights, minlength=9)
    terms = lists((9,))
    for k, w in zip(x, weights):
        terms[k].append(w)
    check_against(r, terms, name)
    assert er.bincount(x, weights).shape == (int(x.max()) + 1,)
    assert er.bincount(np.array([], np.int64), np.array([], NUMPY_DTYPES[name]), minlength=3).count.tolist() == [0] * 3


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum_is_exact(name, axis, exclusive):
    rng = np.random.default_rng(SEED + 5)
    x = data(rng, (6, 7), name)
    r = er.cumsum(x, axis, exclusive=exclusive)
    lines = [x.reshape(-1)] if axis is None else (list(x) if axis % 2 == 1 else list(x.T))
    out_shape = (x.size,) if axis is None else x.shape
    terms = lists(out_shape)
    for li, line in enumerate(lines):
        for i in range(len(line)):
            prefix = list(line[:i] if exclusive else line[:i + 1])
            pos = (i,) if axis is None else ((li, i) if axis % 2 == 1 else (i, li))
            terms[pos] = prefix
    check_against(r, terms, name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_is_exact(name, include_last_offset):
    rng = np.random.default_rng(SEED + 6)
    weight = data(rng, (10, 3), name)
    indices = rng.integers(0, 10, size=20)
    offsets = np.array([0, 4, 4, 11, 20] if include_last_offset else [0, 4, 4, 11])  # an empty bag
    r = er.embedding_bag(weight, indices, offsets, include_last_offset=include_last_offset)
    bounds = list(offsets) + ([] if include_last_offset else [len(indices)])
    terms = lists((len(bounds) - 1, 3))
    for b in range(len(bounds) - 1):
        for k in range(bounds[b], bounds[b + 1]):
            for d in range(3):
                terms[b, d].append(weight[indices[k], d])
    check_against(r, terms, name)
    fixed = er.embedding_bag(weight, indices.reshape(4, 5))  # 2-D indices: one bag per row, no offsets
    assert fixed.shape == (4, 3) and fixed.count.tolist() == [[5] * 3] * 4


def test_specials_and_wide_spreads_stay_exact():
    values = np.array([1e300, 1e-300, -1e300, np.nan, 1.0, np.inf, -0.0, -0.0])
    r = er.segment_sum(values, np.array([0, 0, 0, 1, 1, 2, 3, 3]), num_segments=5)
    assert r[0].exact == Fraction(1e-300)  # spans ~2000 binades: the element spills to a full accumulator
    assert math.isnan(r[1].exact) and r[2].exact == math.inf
    nearest = r.nearest()
    assert np.signbit(nearest[3]) and not np.signbit(nearest[4])  # all -0.0 terms; no terms (+0.0)
    assert r.covers(np.array([1e-300, np.nan, np.inf, -0.0, 0.0]), standard="exact").all()
    assert not r[1].covers(1.0) and not r[3].covers(0.0, standard="exact")


# ---- the Reference face on compact arrays ---------------------------------------------------------------------------


def test_indexing_stacks_broadcasting_and_pickling():
    rng = np.random.default_rng(SEED + 7)
    x = rng.standard_normal((30, 20)).astype(np.float32)
    r = er.cumsum(x, axis=1)
    result = np.cumsum(x, axis=1)
    assert r.covers(result).all()
    assert r[::-1, 3].covers(result[::-1, 3]).all()          # a gathered subset
    assert r[r.count > 10].covers(result[r.count > 10]).all()  # a mask
    stack = np.stack([result, result + np.float32(1.0)])     # two runs, the second wrong everywhere but prefixes
    covered = r.covers(stack)
    assert covered.shape == (2, 30, 20) and covered[0].all() and not covered[1].any()
    assert er.segment_sum(np.ones(4), np.zeros(4, np.int64), 1).covers(4.0)  # a scalar result broadcast
    back = pickle.loads(pickle.dumps(r[2:4]))
    assert back.shape == (2, 20) and (back.exact == r[2:4].exact).all() and back.covers(result[2:4]).all()
    worst = r.verdict(result)
    assert worst.covered and r.ratios(result).max() <= 1.0
    assert (r.bound()[:, 1:] > 0).all() and (r.bound()[:, 0] == 0.0).all()  # one term: no rounding
    assert r[1, 1].explain(result[1, 1])[0].covered
    assert er.ulp_error(result, r).shape == (30, 20)
    er.testing.assert_covers(result, r, standard="any_order")
    wrong = result.copy()
    wrong[4, 7] += np.float32(1.0)
    with pytest.raises(AssertionError, match=r"1 of 600 result\(s\) not covered by any_order \(float32\)\nworst at "
                                             r"index \(4, 7\)"):
        er.testing.assert_covers(wrong, r, standard="any_order")


def test_index_and_value_types():
    values = np.array([1.0, 2.0, 3.0])
    for ids in (np.array([0, 1, 0], np.int32), np.array([0, 1, 0], np.uint8), [0, 1, 0],
                DLPackOnly(np.array([0, 1, 0], np.int64)), np.array([0, 1, 0], ">i8")):
        assert er.segment_sum(values, ids).nearest().tolist() == [4.0, 2.0]
    assert er.segment_sum(DLPackOnly(values), [0, 1, 0]).nearest().tolist() == [4.0, 2.0]
    strided = np.arange(12.0)[::4]
    assert er.add_at(np.zeros(2), np.array([0, 1, 1, 0, 1, 1])[::2], strided).nearest().tolist() == [0.0, 12.0]
    emb = er.embedding_bag(np.ones((3, 2), np.float32), np.array([0, 1], np.int32), np.array([0], np.int64))
    assert emb.nearest().tolist() == [[2.0, 2.0]]  # int32 indices with int64 offsets


@needs_bfloat16
def test_bfloat16():
    bf = NUMPY_DTYPES["bfloat16"]
    r = er.add_at(np.zeros(2, bf), [0, 0, 1], np.array([1.0, 2.0 ** -9, 3.0], bf))
    assert r.dtype == "bfloat16" and r.exact.tolist() == [1 + Fraction(1, 512), 3]
    assert r.covers(np.array([1.0, 3.0], bf)).all()  # 1 + 2^-9 rounds to 1 in bfloat16: one rounding


# ---- real results covered, element by element ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_add_at_bincount_cumsum_covered(dtype):
    rng = np.random.default_rng(SEED + 8)
    n, bins = 20000, 64
    values = rng.standard_normal(n).astype(dtype)
    idx = rng.integers(0, bins, size=n)
    initial = rng.standard_normal(bins).astype(dtype)
    a = initial.copy()
    np.add.at(a, idx, values)
    assert er.add_at(initial, idx, values).covers(a, standard="any_order").all()
    counts = np.bincount(idx, weights=values)  # float64 in numpy, whatever the weights
    assert er.bincount(idx, values).covers(counts, standard="any_order").all()
    x = rng.standard_normal((300, 40)).astype(dtype)
    for axis in (None, 0, 1):
        assert er.cumsum(x, axis).covers(np.cumsum(x, axis=axis), standard="any_order").all(), axis


def test_parallel_scan_covered_by_tree():
    """A Hillis–Steele scan (log2 n rounds, each prefix a tree of height <= ceil(log2 n)) is covered by tree:H."""
    rng = np.random.default_rng(SEED + 9)
    x = rng.standard_normal(1024).astype(np.float32)
    y = x.copy()
    d = 1
    while d < len(y):
        y[d:] = y[d:] + y[:-d]
        d *= 2
    r = er.cumsum(x)
    assert r.covers(y, standard="tree", height=10).all() and r.covers(y).all()


# ---- planted faults rejected --------------------------------------------------------------------------------------


def faulty_add_at(initial, idx, values, fault):
    a = initial.copy()
    k = int(np.argmax(np.abs(values)))  # the largest update: a fault no bound can hide
    idx = idx.copy()
    if fault == "off_by_one":
        idx[k] = (idx[k] + 1) % len(a)
    keep = np.ones(len(idx), bool)
    if fault == "dropped":
        keep[k] = False
    np.add.at(a, idx[keep], values[keep])
    if fault == "twice":
        a[idx[k]] += values[k]
    if fault == "lost_initial":
        a -= initial
    return a


@pytest.mark.parametrize("fault", ["off_by_one", "dropped", "twice", "lost_initial"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planted_faults_rejected(fault, dtype):
    rng = np.random.default_rng(SEED + 10)
    values = rng.standard_normal(2000).astype(dtype)
    idx = rng.integers(0, 16, size=2000)
    initial = (rng.standard_normal(16) * 10).astype(dtype)
    wrong = faulty_add_at(initial, idx, values, fault)
    for r in (er.add_at(initial, idx, values), er.index_add(initial, 0, idx, values),
              er.scatter_add(initial, 0, idx, values), er.segment_sum(values, idx, 16, initial=initial)):
        covered = r.covers(wrong, standard="any_order")
        assert not covered.all(), fault
        assert covered.sum() >= 16 - (2 if fault == "off_by_one" else 16 if fault == "lost_initial" else 1)
    if fault != "lost_initial":  # bincount has no initial value
        counts = faulty_add_at(np.zeros(16), idx, values.astype(np.float64), fault)
        assert not er.bincount(idx, values).covers(counts).all()


def test_scan_faults_rejected():
    rng = np.random.default_rng(SEED + 11)
    x = rng.standard_normal(500).astype(np.float32)
    r = er.cumsum(x)
    exclusive = np.concatenate([[np.float32(0)], np.cumsum(x)[:-1]])
    covered = r.covers(exclusive)  # inclusive against exclusive: every prefix off by one term
    # any_order's bound grows with the prefix (docs/scatter.md): a late prefix may hide a small x_i; early ones cannot.
    assert not covered[:100].any() and covered.mean() < 0.05
    rows = x.reshape(50, 10)  # short lines: every prefix sees the missing term
    shifted = np.concatenate([np.zeros((50, 1), np.float32), np.cumsum(rows, axis=1)[:, :-1]], axis=1)
    assert not er.cumsum(rows, axis=1).covers(shifted).any()
    assert er.cumsum(x, exclusive=True).covers(exclusive).all()
    dropped = np.cumsum(np.delete(x, 100))
    assert not r[101:].covers(dropped[100:]).any()
    twice = np.cumsum(np.insert(x, 100, x[100]))[1:]  # x[100] applied twice from prefix 100 on
    verdict = r.verdict(twice)
    assert not verdict.covered and "NOT COVERED by any_order (float32)" in verdict.message()


# ---- torch and jax, when installed -----------------------------------------------------------------------------------


def test_torch_results_covered():
    torch = pytest.importorskip("torch", reason="torch is not installed; numpy's add.at and cumsum above are covered")
    rng = np.random.default_rng(SEED + 12)
    n, rows = 5000, 32
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    idx = torch.from_numpy(rng.integers(0, rows, size=n))
    initial = torch.from_numpy(rng.standard_normal(rows).astype(np.float32))
    assert er.index_add(initial, 0, idx, src).covers(initial.clone().index_add_(0, idx, src)).all()
    assert er.scatter_add(initial, 0, idx, src).covers(initial.clone().scatter_add_(0, idx, src)).all()
    x = torch.from_numpy(rng.standard_normal((64, 50)).astype(np.float32))
    for dim in (0, 1):
        assert er.cumsum(x, dim).covers(torch.cumsum(x, dim)).all()
    weight = torch.from_numpy(rng.standard_normal((100, 8)).astype(np.float32))
    indices = torch.from_numpy(rng.integers(0, 100, size=300))
    offsets = torch.tensor([0, 10, 10, 150])
    bags = torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum")
    assert er.embedding_bag(weight, indices, offsets).covers(bags).all()
    wrong = initial.clone().index_add_(0, idx[1:], src[1:])  # a dropped update
    assert not er.index_add(initial, 0, idx, src).covers(wrong).all()


def test_jax_results_covered():
    jax = pytest.importorskip("jax", reason="jax is not installed; numpy's add.at above is covered")
    jnp = jax.numpy
    rng = np.random.default_rng(SEED + 13)
    values = rng.standard_normal(5000).astype(np.float32)
    ids = rng.integers(0, 40, size=5000).astype(np.int32)
    out = jax.ops.segment_sum(jnp.asarray(values), jnp.asarray(ids), num_segments=40)
    r = er.segment_sum(values, ids, num_segments=40)
    assert r.covers(np.asarray(out), standard="any_order").all()
    initial = rng.standard_normal(40).astype(np.float32)
    at = jnp.asarray(initial).at[jnp.asarray(ids)].add(jnp.asarray(values))
    assert er.add_at(initial, ids, values).covers(np.asarray(at)).all()
    x = rng.standard_normal(1000).astype(np.float32)
    assert er.cumsum(x).covers(np.asarray(jnp.cumsum(jnp.asarray(x)))).all()


# ---- errors ----------------------------------------------------------------------------------------------------------


def test_index_errors_name_the_argument_and_position():
    with pytest.raises(IndexError, match=r"add_at: indices\[1\] = 5 lies outside \[-3, 3\).*numpy accepts -3 \.\. 2"):
        er.add_at(np.zeros(3), [0, 5], 1.0)
    with pytest.raises(IndexError, match=r"scatter_add: index\[0, 1\] = 3 lies outside \[0, 3\)"):
        er.scatter_add(np.zeros((3, 2)), 0, np.array([[0, 3]]), np.ones((1, 2)))
    with pytest.raises(IndexError, match=r"index_add: index\[1\] = -1 lies outside \[0, 2\)"):
        er.index_add(np.zeros(2), 0, [0, -1], np.ones(2))
    with pytest.raises(IndexError, match=r"embedding_bag: indices\[2\] = 7 lies outside \[0, 4\)"):
        er.embedding_bag(np.ones((4, 2)), [0, 1, 7], [0])
    with pytest.raises(IndexError, match=r"scatter_add: dim=2 is out of range for an array of rank 2"):
        er.scatter_add(np.zeros((3, 2)), 2, np.zeros((1, 1), np.int64), np.ones((1, 1)))


def test_bool_axes_and_dims_are_refused():
    # True is an int to Python; numpy and torch refuse it as an axis or dim, and so does exactref (no silent axis 1).
    with pytest.raises(TypeError, match=r"cumsum: axis=True: expected None or an integer \(not a bool\)"):
        er.cumsum(np.ones((2, 3)), axis=True)
    with pytest.raises(TypeError, match=r"index_add: dim=True: expected an integer \(not a bool\)"):
        er.index_add(np.zeros((2, 2)), True, [0, 1], np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"scatter_add: dim=False: expected an integer \(not a bool\)"):
        er.scatter_add(np.zeros((3, 2)), False, np.zeros((1, 1), np.int64), np.ones((1, 1)))


def test_value_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"bincount: x\[2\] = -1 is negative"):
        er.bincount([0, 1, -1], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"segment_sum: segment_ids has 1 elements, expected 2"):
        er.segment_sum([1.0, 2.0], [0])
    with pytest.raises(ValueError, match=r"offsets\[1\] = 1 is below offsets\[0\]|offsets\[0\] = 1 must be 0"):
        er.embedding_bag(np.ones((4, 2)), [0, 1], [1])
    with pytest.raises(ValueError, match=r"offsets\[2\] = 1 is below offsets\[1\]"):
        er.embedding_bag(np.ones((4, 2)), [0, 1, 2], [0, 2, 1])
    with pytest.raises(ValueError, match=r"scatter_add: index \(3, 1\) may not be larger than src"):
        er.scatter_add(np.zeros((2, 2)), 0, np.zeros((3, 1), np.int64), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"index_add: index has 1 elements, expected 2"):
        er.index_add(np.zeros(3), 0, [0], np.ones(2))
    with pytest.raises(ValueError, match=r"add_at: values has 2 elements for 3 indices"):
        er.add_at(np.zeros(3), [0, 1, 2], np.ones(2))
    with pytest.raises(ValueError, match=r"cumsum: x has shape \(2, 2, 2\)"):
        er.cumsum(np.ones((2, 2, 2)), axis=0)
    with pytest.raises(ValueError, match=r"cumsum: axis 2 is out of bounds"):
        er.cumsum(np.ones((2, 2)), axis=2)
    with pytest.raises(ValueError, match=r"segment_sum: initial has shape \(2,\); expected one value per segment"):
        er.segment_sum([1.0], [0], 3, initial=np.zeros(2))
    assert er.cumsum(np.ones((2, 2, 2))).shape == (8,)  # axis=None flattens any rank


def test_type_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"segment_sum: segment_ids: expected integer indices .* got an array of "
                                        r"float64"):
        er.segment_sum([1.0], [0.0])
    with pytest.raises(TypeError, match=r"add_at: indices is a bool array"):
        er.add_at(np.zeros(2), np.array([True, False]), 1.0)
    with pytest.raises(TypeError, match=r"index_add: initial is float32, source is float64"):
        er.index_add(np.zeros(2, np.float32), 0, [0], np.ones(1))
    with pytest.raises(TypeError, match=r"add_at: initial is float32 but values is float64 and not exactly"):
        er.add_at(np.zeros(2, np.float32), [0], 0.1)
    assert er.add_at(np.zeros(2, np.float32), [0], 0.5).dtype == "float32"  # exactly a float32 value: taken
    with pytest.raises(TypeError, match=r"bincount: x: expected integer indices"):
        er.bincount(np.array([0.0]), [1.0])


def test_cumsum_with_group_counts_says_which_standards_describe_a_scan():
    """A structure of '/N' or '%N' groups fits sums of one length; a scan's prefixes have every length from 1: the
    error names the standards for scans instead of advising fewer groups."""
    x = np.ones(10, np.float32)
    r = er.cumsum(x)
    got = np.cumsum(x, dtype=np.float32)
    with pytest.raises(ValueError, match="describes no scan.*'any_order'.*height=.*'levels:fold:N,any'"):
        r.covers(got, standard="levels:fold/4,any")
    for standard in ("any_order", "levels:fold:4,any"):
        assert r.covers(got, standard=standard).all()
    assert r.covers(got, standard="tree", height=4).all()


def test_group_counts_on_an_empty_or_short_segment_name_the_element():
    """Segment 3 is empty and segment 1 has 3 terms: a structure of 8 groups fits neither; the error names the first
    such element and the standards that judge the whole array."""
    ids = np.array([0] * 20 + [1] * 3 + [2] * 17)
    x = np.linspace(-1, 1, ids.size).astype(np.float32)
    r = er.segment_sum(x, ids, 4)
    got = np.zeros(4, np.float32)
    np.add.at(got, ids, x)
    with pytest.raises(ValueError, match=r"element 3 of the array has 0 terms.*'levels:fold:N,any'.*'any_order'"):
        r.covers(got, standard="levels:fold/8,any")
    assert r.covers(got, standard="levels:fold:8,any").all()
    assert r.covers(got, standard="any_order").all()
