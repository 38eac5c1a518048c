"""er.dot and er.matmul: exact values against Python fractions, numpy/BLAS results covered by the dot-product
standards, numpy's shape rules, and the errors for wrong shapes and dtypes."""

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import exactref as er
from exact_oracle import FORMATS, NUMPY_DTYPES, frac, round_to, to_dtype

DTYPES = NUMPY_DTYPES
UINT = {8: np.uint64, 4: np.uint32, 2: np.uint16}


def finite_bits(name):
    p, _, _ = FORMATS[name]
    width = DTYPES[name].itemsize * 8
    special = ((1 << (width - p)) - 1) << (p - 1)
    return st.integers(0, (1 << width) - 1).filter(lambda b: (b & special) != special)


def vectors(name, n):
    d = DTYPES[name]
    return st.lists(finite_bits(name), min_size=n, max_size=n).map(
        lambda bits: np.array(bits, dtype=UINT[d.itemsize]).view(d))


def exact_dot(x, y):
    return sum((frac(a) * frac(b) for a, b in zip(x, y)), Fraction(0))


def rounded_up_double(q):
    d = float(q)
    if Fraction(d) < q:
        d = math.nextafter(d, math.inf)
    return d


@pytest.mark.parametrize("name", list(DTYPES))
@given(data=st.data())
def test_dot_is_exact(name, data):
    n = data.draw(st.integers(0, 40))
    x, y = data.draw(vectors(name, n)), data.draw(vectors(name, n))
    r = er.dot(x, y)
    assert r.shape == () and r.is_dot and r.count == n and r.dtype == name
    assert r.exact == exact_dot(x, y)
    assert r.abs_sum == sum((abs(frac(a) * frac(b)) for a, b in zip(x, y)), Fraction(0))
    rn = round_to(r.exact, name)
    assert (float(r.nearest()) == rn) if isinstance(rn, float) else (frac(r.nearest()) == rn)


def test_dot_strided_and_initial():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(301).astype(np.float32)
    y = rng.standard_normal(301).astype(np.float32)
    assert er.dot(x[::3], y[::-3]).exact == exact_dot(x[::3], y[::-3])
    r = er.dot(x, y, initial=np.float32(2.5))
    assert r.exact == Fraction(5, 2) + exact_dot(x, y)
    assert r.count == 302
    assert er.dot(x[:0], y[:0]).exact == 0


def test_cancellation_that_a_float32_loop_loses():
    x = np.array([1e20, 1.0, -1e20], np.float32)
    y = np.ones(3, np.float32)
    r = er.dot(x, y)
    assert r.nearest() == np.float32(1.0)
    assert r.covers(np.float32(0.0))  # n·u·T is far above 1: a left fold's 0 is within the model


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("method", ["automatic", "sliced", "per_element"])
def test_matmul_is_exact_per_element(name, method):
    rng = np.random.default_rng(12)
    scale = 2.0 ** rng.integers(-8, 8, (6, 9))
    a = (rng.standard_normal((6, 9)) * scale).astype(DTYPES[name])
    b = (rng.standard_normal((9, 4)) * 3).astype(DTYPES[name])
    b[2, 1] = 0
    r = er.matmul(a, b, method=method)
    assert r.shape == (6, 4) and r.is_dot
    exact = r.exact
    for i in range(6):
        for j in range(4):
            assert exact[i, j] == exact_dot(a[i], b[:, j]), (i, j)
    assert r[2, 3].exact == er.dot(a[2], b[:, 3]).exact
    np.testing.assert_array_equal(r.count, np.full((6, 4), 9))


def test_matmul_strided_and_with_initial_output():
    rng = np.random.default_rng(13)
    a = rng.standard_normal((12, 20))
    b = rng.standard_normal((10, 7))
    c = rng.standard_normal((6, 7))
    av, bv = a[::2, ::2], b[::-1]          # (6, 10) and (10, 7), neither contiguous
    r = er.matmul(av, bv, c=c)
    for i in range(6):
        for j in range(7):
            assert r[i, j].exact == Fraction(c[i, j]) + exact_dot(av[i], bv[:, j])
    assert r.count[0, 0] == 11


def test_matmul_shapes_follow_numpy():
    rng = np.random.default_rng(14)
    a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    for x, y in [(a, b), (a[0], b), (a, b[:, 0]), (a[0], b[:, 0]), (np.stack([a, a * 2]), b),
                 (a, np.stack([b, b, b])[:, None]), ]:
        r = er.matmul(x, y)
        assert r.shape == np.matmul(x, y).shape
        er.testing.assert_covers(np.matmul(x, y), r, standard="any_order", fma=True)
    assert er.dot(a, b).shape == (3, 4)  # np.dot of matrices is the matrix product


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("method", ["automatic", "sliced", "per_element"])
@pytest.mark.parametrize("shapes", [((7, 1, 2), (7, 2, 1)),          # small: one shared per-element reference
                                    ((2, 3, 4, 5), (3, 5, 2)),       # two batch axes, b broadcast over the first
                                    ((1, 4, 3), (6, 3, 2)),          # a broadcast over the batch
                                    ((3, 20, 20), (3, 20, 20)),      # larger: one product each
                                    ((0, 2, 3), (0, 3, 2))])         # an empty batch
def test_batched_matmul_is_exact_per_element(name, method, shapes):
    rng = np.random.default_rng(15)
    a = (rng.standard_normal(shapes[0]) * 2.0 ** rng.integers(-6, 6, shapes[0])).astype(DTYPES[name])
    b = rng.standard_normal(shapes[1]).astype(DTYPES[name])
    full = np.matmul(a.astype(np.float64), b.astype(np.float64)).shape
    c = rng.standard_normal(full[-2:]).astype(DTYPES[name])  # broadcast over every batch axis
    for cc in (None, c):
        r = er.matmul(a, b, c=cc, method=method)
        assert r.shape == full
        ab, bb = np.broadcast_to(a, full[:-2] + a.shape[-2:]), np.broadcast_to(b, full[:-2] + b.shape[-2:])
        exact = r.exact
        for pos in np.ndindex(*full):
            *batch, i, j = pos
            want = exact_dot(ab[tuple(batch)][i], bb[tuple(batch)][:, j])
            if cc is not None:
                want += Fraction(float(cc[i, j]))
            assert exact[pos] == want, pos
        np.testing.assert_array_equal(r.count, np.full(full, a.shape[-1] + (cc is not None)))
        if r.size:
            got = np.matmul(a, b) if cc is None else np.matmul(a, b) + cc
            er.testing.assert_covers(got, r, standard="any_order", fma=True)
            bad = got.copy()
            bad.flat[r.size // 2] = bad.flat[r.size // 2] * 2 + 1  # a planted wrong element
            assert not r.covers(bad, standard="any_order", fma=True).flat[r.size // 2]


# ---- numpy and BLAS results are covered -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 10, 1000, 100_000])
def test_numpy_dot_is_covered(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    r = er.dot(x, y)
    # BLAS sdot may use FMA and any order: the dot-product any_order row with fma (γ_n·T + n(1+(n-1)u)η)
    er.testing.assert_covers(np.dot(x, y), r, standard="any_order", fma=True)
    er.testing.assert_covers(np.float32(sum(np.float32(a * b) for a, b in zip(x[:50], y[:50]))),
                             er.dot(x[:50], y[:50]), standard="any_order")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blas_matmul_is_covered(dtype):
    rng = np.random.default_rng(15)
    a, b = rng.standard_normal((64, 300)).astype(dtype), rng.standard_normal((300, 48)).astype(dtype)
    r = er.matmul(a, b)
    er.testing.assert_covers(a @ b, r, standard="any_order", fma=True)
    er.testing.assert_covers(np.dot(a, b), r, standard="any_order", fma=True)


def test_dot_bounds():
    rng = np.random.default_rng(16)
    x, y = rng.standard_normal(500).astype(np.float32), rng.standard_normal(500).astype(np.float32)
    r = er.dot(x, y)
    n, u = 500, Fraction(1, 2 ** 24)
    T = sum((abs(frac(a) * frac(b)) for a, b in zip(x, y)), Fraction(0))
    assert r.bound("any_order") == rounded_up_double(n * u * T)  # Jeannerod–Rump 2013, no product underflows
    eta = Fraction(1, 2 ** (126 + 24))  # η = 2^(emin - p)
    with_fma = n * u / (1 - n * u) * T + n * (1 + (n - 1) * u) * eta  # Higham (3.5)
    assert r.bound("any_order", fma=True) == rounded_up_double(with_fma)


def test_planted_matmul_error_is_caught_at_its_element():
    rng = np.random.default_rng(17)
    a, b = rng.standard_normal((8, 100)).astype(np.float32), rng.standard_normal((100, 6)).astype(np.float32)
    r = er.matmul(a, b)
    c = a @ b
    bound = Fraction(r[5, 2].bound(fma=True))
    c[5, 2] = to_dtype(round_to(r[5, 2].exact + 2 * bound, "float32", "upward"), np.float32)
    covered = r.covers(c, fma=True)
    assert covered.sum() == 47 and not covered[5, 2]
    with pytest.raises(AssertionError, match=r"1 of 48 result\(s\) not covered.*\nworst at index \(5, 2\)"):
        er.testing.assert_covers(c, r, standard="any_order", fma=True)


# ---- errors ---------------------------------------------------------------------------------------------------------

def test_shape_and_dtype_errors_say_what_was_expected():
    x = np.ones(5, np.float32)
    with pytest.raises(ValueError, match="x has 5 elements and y 4: pass two vectors of the same length"):
        er.dot(x, x[:4])
    with pytest.raises(ValueError, match=r"inner dimensions 3 and 4 differ"):
        er.matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(TypeError, match="a is float32, b is float64: pass every operand in the format"):
        er.matmul(np.ones((2, 3), np.float32), np.ones((3, 2)))
    with pytest.raises(TypeError, match="x is float32, y is float16"):
        er.dot(x, x.astype(np.float16))
    with pytest.raises(ValueError, match="at least one dimension"):
        er.matmul(np.float32(2), x)
    with pytest.raises(ValueError, match=r"^matmul: the batch axes \(2,\) of a \(shape \(2, 3, 4\)\) and \(5,\) of b "
                                         r"\(shape \(5, 4, 2\)\) do not broadcast: axis -3 \(counted from the end of "
                                         r"each\) has length 2 in a and 5 in b \(batch axes must be equal or 1\)$"):
        er.matmul(np.ones((2, 3, 4)), np.ones((5, 4, 2)))
    with pytest.raises(ValueError, match=r"axis -4 \(counted from the end of each\) has length 3 in a and 4 in b"):
        er.matmul(np.ones((3, 1, 2, 2)), np.ones((7, 4, 5, 2, 2)))
    with pytest.raises(ValueError, match="use er.matmul"):
        er.dot(np.ones((2, 2, 2)), np.ones(2))
    with pytest.raises(TypeError, match="expected a float16, float32, float64 or bfloat16 array"):
        er.dot(x, "abc")
    with pytest.raises(ValueError, match="method='fast'"):
        er.matmul(np.ones((2, 2)), np.ones((2, 2)), method="fast")


def test_dot_of_matrices_reports_its_errors_as_dot():
    # er.dot of 2-D operands is a matrix product; its errors still name dot and its arguments x, y, initial.
    with pytest.raises(ValueError, match=r"^dot: x has shape \(2, 3\) and y \(2, 3\): the inner dimensions 3 and 2 "
                                         r"differ \(x's last axis must match y's first\)"):
        er.dot(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"^dot: x is float32, y is float64"):
        er.dot(np.ones((2, 3), np.float32), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"^dot: initial has shape \(3,\) but the product has shape \(2, 2\)"):
        er.dot(np.ones((2, 3)), np.ones((3, 2)), initial=np.ones(3))
    with pytest.raises(ValueError, match=r"^matmul: a has shape \(2, 3\) and b \(2, 3\)"):
        er.matmul(np.ones((2, 3)), np.ones((2, 3)))


def packed_field(values):
    """The field 'v' of a packed structured array: element strides not multiples of the item size."""
    s = np.zeros(values.shape, dtype=[("pad", "u1"), ("v", values.dtype)])
    s["v"] = values
    assert not s["v"].flags.aligned
    return s["v"]


@pytest.mark.parametrize("name", list(DTYPES))
def test_unaligned_operands_read_like_their_contiguous_copies(name):
    # Views whose byte strides are not multiples of the item size went to nanobind's raw "incompatible function
    # arguments"; they are copied to aligned arrays and give the contiguous copies' references.
    rng = np.random.default_rng(18)
    a = (rng.standard_normal((5, 8)) * 4).astype(DTYPES[name])
    b = (rng.standard_normal((8, 3)) * 4).astype(DTYPES[name])
    c = (rng.standard_normal((5, 3)) * 4).astype(DTYPES[name])
    x, y, init = packed_field(a[1]), packed_field(b[:, 2].copy()), packed_field(c[0, :1].copy())
    assert er.dot(x, y).exact == er.dot(a[1], b[:, 2]).exact == exact_dot(a[1], b[:, 2])
    assert er.dot(x, y, initial=init).exact == er.dot(a[1], b[:, 2], initial=c[0, :1]).exact
    r = er.matmul(packed_field(a), packed_field(b), c=packed_field(c))
    expected = er.matmul(a, b, c=c)
    assert list(r.exact.ravel()) == list(expected.exact.ravel())
    assert list(r.abs_sum.ravel()) == list(expected.abs_sum.ravel())
    assert list(er.dot(packed_field(a), packed_field(b)).exact.ravel()) == list(er.matmul(a, b).exact.ravel())


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def test_matmul_engine_names_the_blas_and_never_runs_the_sse3_fallback_on_an_avx_cpu():
    # OpenBLAS 0.3.21 falls back to Prescott (SSE3) on Intel CPUs it does not know; exactref replaces that fallback
    # at import (src/blas_kernel.h), unless the environment forces a kernel or keeps OpenBLAS's choice.
    engine = er.matmul_engine()
    assert engine.startswith("OpenBLAS ") and "(kernel: " in engine, engine
    if os.environ.get("OPENBLAS_CORETYPE") is not None or os.environ.get("EXACTREF_BLAS_KERNEL") is not None:
        pytest.skip(f"the kernel is set from the environment: {engine}")
    if "avx" not in _cpu_flags():
        pytest.skip("no AVX: Prescott is this CPU's kernel")
    assert "(kernel: Prescott" not in engine, engine
