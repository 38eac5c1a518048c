"""covers() over arrays in Python goes through the C++ array engine (a binary64 filter with proven margins, the exact
comparison where it cannot decide; docs/algorithms/covers-filter.md). Its verdicts must be those of the exact path,
element by element: checked against Reference.verdict of each element alone (covers_bits) and against the
covers_detail path, for sums with structures, matrix products and stacks of runs, with results planted at the bound."""

import numpy as np
import pytest

import exactref as er


def per_element(ref, results, standard):
    flat_refs = [ref[idx] for idx in np.ndindex(ref.shape)] if ref.shape else [ref]
    flat_res = results.reshape(-1)
    return np.array([bool(r.verdict(flat_res[i:i + 1].reshape(()), standard=standard).covered)
                     for i, r in enumerate(flat_refs)]).reshape(results.shape)


def candidates(ref, dtype, rng):
    """RN(s) and its neighbours, values a little off, sign flips, specials: one result per element."""
    rn = np.asarray(ref.nearest(dtype))
    out = rn.copy()
    pick = rng.integers(0, 6, size=rn.shape)
    nudged = np.nextafter(rn, np.asarray(np.inf, dtype))
    out = np.where(pick == 1, nudged, out)
    out = np.where(pick == 2, np.nextafter(rn, np.asarray(-np.inf, dtype)), out)
    out = np.where(pick == 3, rn * dtype(1.001), out)
    out = np.where(pick == 4, -rn, out)
    out = np.where(pick == 5, rn + dtype(0.002), out)
    flat = out.reshape(-1)
    if flat.size > 3:
        flat[0], flat[1], flat[2] = np.nan, np.inf, -0.0
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("standard", ["any_order", "levels:fold/4,any", "directed:any_order", "exact", "faithful"])
def test_sum_rows_same_as_exact_path(dtype, standard):
    rng = np.random.default_rng(20261202)
    x = (rng.standard_normal((40, 32)) * 2.0 ** rng.integers(-6, 6, size=(40, 32))).astype(dtype)
    ref = er.sum(x, axis=1, structure="levels:fold/4,any")
    results = candidates(ref, dtype, rng)
    got = ref.covers(results, standard=standard)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, per_element(ref, results, standard))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("standard", ["any_order", "split_k:4"])
def test_matmul_same_as_exact_path(dtype, standard):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((12, 48)).astype(dtype)
    b = rng.standard_normal((48, 10)).astype(dtype)
    ref = er.matmul(a, b)
    c = (a @ b).astype(dtype)
    assert ref.covers(c, standard=standard).all()
    results = candidates(ref, dtype, rng)
    np.testing.assert_array_equal(ref.covers(results, standard=standard), per_element(ref, results, standard))


def test_stack_of_runs_and_planted_bound():
    # Terms {2, 1, 1}: s = S = 4, any_order's B = 2u·4 = ulp(4): next_up(4) lies exactly on the bound.
    for dtype in (np.float64, np.float32, np.float16):
        ref = er.sum(np.array([2, 1, 1], dtype=dtype))
        four = dtype(4)
        up1 = np.nextafter(four, dtype(np.inf))
        up2 = np.nextafter(up1, dtype(np.inf))
        down2 = np.nextafter(np.nextafter(four, dtype(0)), dtype(0))
        down3 = np.nextafter(down2, dtype(0))
        runs = np.array([four, up1, up2, down2, down3], dtype=dtype)
        np.testing.assert_array_equal(ref.covers(runs), [True, True, False, True, False])
        v = ref.verdict(runs)
        assert not v.covered and v.ratio == 2.0


def test_large_array_is_fast_enough():
    # 2^18 row sums judged in well under a second (the exact path alone took tens of seconds).
    import time
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1 << 18, 8)).astype(np.float32)
    ref = er.sum(x, axis=1)
    results = x.sum(axis=1, dtype=np.float32)
    start = time.perf_counter()
    assert ref.covers(results).all()
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("standard", ["any_order", "levels:fold:8,any", "directed:any_order",
                                      "directed:levels:fold:8,any", "faithful"])
def test_whole_compact_arrays_read_in_place(dtype, standard):
    """A whole cumsum or segment-sum Reference judges its results in place (no index array, no copy): the same
    verdicts as the indexed path (r[...] with an explicit index), as each element alone, for one run, a stack of runs,
    a broadcast scalar and a strided result array."""
    rng = np.random.default_rng(20261203)
    x = (rng.standard_normal(900) * 2.0 ** rng.integers(-8, 8, size=900)).astype(dtype)
    ids = rng.integers(0, 60, size=900)
    ids[:3] = [0, 0, 1]  # small and empty segments: ids never hit 61..64
    for ref in (er.cumsum(x), er.segment_sum(x, ids, num_segments=65)):
        results = candidates(ref, dtype, rng)
        whole = ref.covers(results, standard=standard)
        indexed = ref[np.arange(ref.shape[0])].covers(results, standard=standard)
        np.testing.assert_array_equal(whole, indexed)
        np.testing.assert_array_equal(whole, per_element(ref, results, standard))
        stack = np.stack([results, np.asarray(ref.nearest(dtype))])
        np.testing.assert_array_equal(ref.covers(stack, standard=standard),
                                      ref[np.arange(ref.shape[0])].covers(stack, standard=standard))
        strided = np.repeat(results, 2)[::2]
        np.testing.assert_array_equal(ref.covers(strided, standard=standard), whole)
        scalar = dtype(results[5])
        np.testing.assert_array_equal(ref.covers(scalar, standard=standard),
                                      ref[np.arange(ref.shape[0])].covers(scalar, standard=standard))


def test_whole_compact_bfloat16_results():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(500).astype(ml_dtypes.bfloat16)
    ref = er.cumsum(x)
    results = np.cumsum(x.astype(np.float32)).astype(ml_dtypes.bfloat16)
    for standard in ("any_order", "directed:any_order", "levels:fold:8,any"):
        np.testing.assert_array_equal(ref.covers(results, standard=standard),
                                      ref[np.arange(500)].covers(results, standard=standard))
