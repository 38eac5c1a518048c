"""er.matmul(...).covers(result): a whole product Reference judges its results in place (covers_whole over the
compact product, src/gemm_covers.cpp) and must give, element by element, the verdicts of the per-element reference
path (the same Reference indexed, r[...], whose elements are built as references and judged one by one) — for a lone
product, batches (shared or one product each), stacks of runs, an existing output c, Inf/NaN operands, every format,
several standards; numpy/OpenBLAS results are covered and planted faults caught."""

import numpy as np
import pytest

import exactref as er
from dlpack_fakes import DLPackOnly

STANDARDS = [dict(standard="any_order"), dict(standard="any_order", fma=True), dict(standard="exact"),
             dict(standard="faithful"), dict(standard="split_k", chunks=4), dict(standard="directed")]


def planted(r, c, rng):
    """Results around the product: c (a real GEMM), its neighbours a few ulps away, far-off values, specials."""
    out = np.array(c, copy=True)
    flat = out.reshape(-1)
    kind = rng.integers(0, 8, flat.size)
    step = np.where(kind == 1, 1, np.where(kind == 2, -1, np.where(kind == 3, 8, np.where(kind == 4, -8, 0))))
    flat[:] = np.where(step > 0, np.nextafter(flat, np.inf), np.where(step < 0, np.nextafter(flat, -np.inf), flat))
    flat[kind == 3] = flat[kind == 3] * (1 + 64 * np.finfo(flat.dtype).eps) + np.finfo(flat.dtype).eps
    flat[kind == 5] = 0.0
    flat[kind == 6] = -0.0
    flat[kind == 7] = flat[kind == 7] * 3 + 1
    if flat.size > 3:
        flat[0], flat[1], flat[2] = np.nan, np.inf, -np.inf
    return out


def same_as_reference_path(r, results, **params):
    whole = r.covers(results, **params)
    one_by_one = r[...].covers(results, **params)  # an index view: the per-element reference path
    assert whole.shape == one_by_one.shape
    np.testing.assert_array_equal(whole, one_by_one)
    return whole


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_matmul_is_covered_and_planted_faults_are_caught(dtype):
    rng = np.random.default_rng(20261203)
    a = rng.standard_normal((70, 130)).astype(dtype)
    b = rng.standard_normal((130, 50)).astype(dtype)
    r = er.matmul(a, b)
    c = a @ b  # OpenBLAS
    assert same_as_reference_path(r, c, standard="any_order", fma=True).all()
    wrong = c.copy()
    wrong[3, 4] += 1e3 * float(np.abs(c).max()) * np.finfo(dtype).eps * 130
    largest = int(np.argmax(np.abs(a[10] * b[:, 20])))
    wrong[10, 20] = np.dot(np.delete(a[10], largest), np.delete(b[:, 20], largest))  # one k-term dropped
    got = same_as_reference_path(r, wrong, standard="any_order", fma=True)
    assert not got[3, 4] and not got[10, 20]
    assert got.sum() == got.size - 2


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("params", STANDARDS, ids=lambda p: "-".join(str(v) for v in p.values()))
def test_planted_results_get_the_reference_paths_verdicts(dtype, params):
    rng = np.random.default_rng(7)
    scale = np.exp2(rng.integers(-6, 7, (9, 1))).astype(dtype)  # rows of other binades
    a = (rng.standard_normal((9, 33)) * scale).astype(dtype)
    b = rng.standard_normal((33, 8)).astype(dtype)
    c = rng.standard_normal((9, 8)).astype(dtype)
    for r, got in ((er.matmul(a, b), (a.astype(np.float64) @ b).astype(dtype)),
                   (er.matmul(a, b, c=c), (c + a.astype(np.float64) @ b).astype(dtype)),
                   (er.matmul(a[:, :1], b[:1]), (a[:, :1].astype(np.float64) @ b[:1]).astype(dtype))):  # K = 1
        same_as_reference_path(r, planted(r, got, rng), **params)


def test_cancellation_specials_and_far_entries():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((12, 16))
    a[:, 8:] = -a[:, :8]  # every product cancels: s = 0 exactly
    b = np.ones((16, 6))
    b[8:] = 1.0
    r = er.matmul(a, b)
    zeros = np.zeros((12, 6))
    assert same_as_reference_path(r, zeros).all()
    assert not same_as_reference_path(r, np.full((12, 6), 1.0)).any()
    same_as_reference_path(r, -zeros)
    wide = a * np.exp2(rng.integers(-300, 300, a.shape))  # exponents far apart: bits below the last slice
    wide[2, 3] = np.inf
    wide[5, 0] = np.nan
    rw = er.matmul(wide, rng.standard_normal((16, 6)))
    nearest = rw.nearest()
    for params in STANDARDS[:3]:
        same_as_reference_path(rw, nearest, **params)
        same_as_reference_path(rw, planted(rw, nearest, rng), **params)


def test_batches_and_stacks_of_runs():
    rng = np.random.default_rng(3)
    cases = [((4, 30, 20), (4, 20, 10)),      # one product each (sliced)
             ((3000, 1, 2), (3000, 2, 1)),    # small products sharing one per-element reference
             ((2, 3, 5, 7), (2, 3, 7, 4))]    # two batch axes
    for sa, sb in cases:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        r = er.matmul(a, b)
        c = np.matmul(a, b)
        assert same_as_reference_path(r, c, standard="any_order", fma=True).all()
        stack = np.stack([c, planted(r, c, rng)])  # a stack of two runs
        got = same_as_reference_path(r, stack, standard="any_order", fma=True)
        assert got.shape == (2,) + r.shape and got[0].all()
        same_as_reference_path(r, np.float32(0.0))  # one result broadcast to every element


def test_dlpack_results_and_bfloat16():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20, 40)).astype(np.float32)
    b = rng.standard_normal((40, 12)).astype(np.float32)
    r = er.matmul(DLPackOnly(a), DLPackOnly(b))
    c = a @ b
    np.testing.assert_array_equal(r.covers(DLPackOnly(c), fma=True), r[...].covers(c, fma=True))
    assert r.covers(DLPackOnly(c), fma=True).all()
    ml_dtypes = pytest.importorskip("ml_dtypes")
    ab, bb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    rb = er.matmul(ab, bb)
    got = (ab.astype(np.float32) @ bb.astype(np.float32)).astype(ml_dtypes.bfloat16)
    same_as_reference_path(rb, got, standard="mixed", acc="float32", out="bfloat16")


def test_errors_are_the_reference_paths():
    a = np.ones((3, 4), np.float32)
    r = er.matmul(a, a.T)
    with pytest.raises(ValueError) as whole:
        r.covers(np.ones((3, 3), np.float32), standard="levels:fold/2,any")
    with pytest.raises(ValueError) as one_by_one:
        r[...].covers(np.ones((3, 3), np.float32), standard="levels:fold/2,any")
    assert str(whole.value) == str(one_by_one.value)
    with pytest.raises(ValueError):
        r.covers(np.ones((2, 3), np.float32))


def test_a_structured_standard_on_a_product_says_to_use_a_flat_one():
    """Exact matrix products keep no data bounds: a levels: standard is refused with advice that applies to them."""
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match=r"exact matrix products \(exact_matmul, er\.matmul\) keep no data bounds: "
                                         r"judge them with a flat standard \(any_order, split_k:S"):
        er.matmul(a, b).covers(a @ b, standard="levels:fold/4,any")
