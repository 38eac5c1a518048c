"""er.sum: exact values against Python fractions, every dtype, special values, axis reductions, strided and DLPack
input, and the errors for wrong input."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import exactref as er
from dlpack_fakes import KDL_BFLOAT, KDL_CUDA, KDL_FLOAT, DLPackOnly, FakeTensor, OnDevice
from exact_oracle import BF16, FORMATS, NUMPY_DTYPES, abs_sum, exact_sum, frac, needs_bfloat16, round_to

DTYPES = NUMPY_DTYPES
UINT = {8: np.uint64, 4: np.uint32, 2: np.uint16}


def from_bits(bits, name):
    d = DTYPES[name]
    return np.array(bits, dtype=UINT[d.itemsize]).view(d)


def finite_bits(name):
    """Raw encodings of every finite value of the format: subnormals, zeros of both signs, the largest values."""
    p, _, _ = FORMATS[name]
    width = DTYPES[name].itemsize * 8
    exp_bits = width - p
    special = ((1 << exp_bits) - 1) << (p - 1)
    return st.integers(0, (1 << width) - 1).filter(lambda b: (b & special) != special)


def arrays(name, max_size=200):
    return st.lists(finite_bits(name), max_size=max_size).map(lambda bits: from_bits(bits, name))


def check_exact(x, name):
    r = er.sum(x)
    s = exact_sum(x)
    assert r.exact == s
    assert r.abs_sum == abs_sum(x)
    assert r.count == x.size
    assert r.dtype == name
    rn = round_to(s, name)
    nearest = r.nearest()
    assert nearest.dtype == DTYPES[name]
    if isinstance(rn, float):  # overflow
        assert float(nearest) == rn
    else:
        assert frac(nearest) == rn
        if rn == 0:  # -0.0 exactly when every term is -0.0 (and there is one)
            all_negative_zero = x.size > 0 and all(frac(v) == 0 and math.copysign(1, float(v)) < 0 for v in x)
            assert math.copysign(1, float(nearest)) == (-1 if all_negative_zero else 1)


@pytest.mark.parametrize("name", list(DTYPES))
@given(data=st.data())
def test_exact_sum_equals_the_sum_of_fractions(name, data):
    check_exact(data.draw(arrays(name)), name)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=300))
def test_exact_sum_of_python_floats(values):
    x = np.array(values, dtype=np.float64)
    r = er.sum(values)
    assert r.exact == sum(map(Fraction, values), Fraction(0))
    assert r.exact == er.sum(x).exact


@pytest.mark.parametrize("name", list(DTYPES))
@given(data=st.data())
def test_every_directed_rounding_matches_the_oracle(name, data):
    x = data.draw(arrays(name, max_size=50))
    r = er.sum(x)
    s = exact_sum(x)
    for mode in ("toward_zero", "upward", "downward"):
        expected = round_to(s, name, mode)
        got = r.nearest(rounding=mode)
        assert (float(got) == expected) if isinstance(expected, float) else (frac(got) == expected), mode


def test_nearest_in_another_dtype_rounds_once():
    # s = 1 + 2^-11 + 2^-30. float32 gives 1 + 2^-11, a float16 tie that would round to even (1) if one went
    # through float32; rounding s once to float16 gives 1 + 2^-10.
    x = np.array([1.0, 2.0 ** -11, 2.0 ** -30])
    r = er.sum(x)
    assert frac(r.nearest(np.float32)) == 1 + Fraction(1, 2 ** 11)
    assert frac(r.nearest("float16")) == 1 + Fraction(1, 2 ** 10)
    assert frac(np.float16(r.nearest(np.float32))) == 1  # the double rounding the library avoids
    if BF16 is not None:
        assert frac(r.nearest("bfloat16")) == 1
    assert frac(r.nearest(np.float64)) == 1 + Fraction(1, 2 ** 11) + Fraction(1, 2 ** 30)


@pytest.mark.parametrize(
    "terms, expected",
    [
        ([1.0, math.nan, 2.0], "nan"),
        ([math.inf, 1.0], "inf"),
        ([-math.inf, 1e308, 1e308], "-inf"),
        ([math.inf, -math.inf], "nan"),
        ([math.inf, math.inf, math.nan], "nan"),
    ],
)
@pytest.mark.parametrize("name", list(DTYPES))
def test_special_values(terms, expected, name):
    if name != "float64":  # finite terms that every format holds
        terms = [t if not math.isfinite(t) else 1.0 for t in terms]
    x = np.array(terms).astype(DTYPES[name])
    r = er.sum(x)
    value = float(r.nearest())
    if expected == "nan":
        assert math.isnan(r.exact) and math.isnan(value)
    else:
        sign = -1 if expected.startswith("-") else 1
        assert r.exact == sign * math.inf and value == sign * math.inf
    assert r.decimal == expected


def test_no_overflow_inside_the_sum():
    x = np.array([1e308, 1e308, -1e308])
    r = er.sum(x)
    assert r.exact == Fraction(1e308)
    assert r.nearest() == 1e308
    assert er.sum(np.array([1e308, 1e308])).nearest() == math.inf  # the exact sum overflows: RN gives +Inf


def test_signed_zero_and_empty():
    assert math.copysign(1, er.sum(np.array([-0.0, -0.0])).nearest()) == -1
    assert math.copysign(1, er.sum(np.array([-0.0, 0.0])).nearest()) == 1
    assert math.copysign(1, er.sum(np.array([1.0, -1.0])).nearest()) == 1
    assert math.copysign(1, er.sum(np.array([1.0, -1.0])).nearest(rounding="downward")) == -1  # IEEE 754 §6.3
    empty = er.sum(np.array([], dtype=np.float32))
    assert empty.count == 0 and empty.exact == 0 and empty.nearest() == 0
    assert math.copysign(1, empty.nearest()) == 1
    assert empty.decimal == "0"


# ---- shapes, axes, strides ------------------------------------------------------------------------------------------

def fraction_sums(x, axis):
    """The exact sums of x along `axis` (None, int or tuple) as an object array, with Fractions only."""
    obj = np.vectorize(frac, otypes=[object])(x) if x.size else np.zeros(x.shape, dtype=object)
    return np.sum(obj, axis=axis) if x.size else np.zeros(np.sum(np.zeros(x.shape), axis=axis).shape, dtype=object)


@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=4).map(tuple),
    data=st.data(),
)
def test_axis_reductions_are_exact_per_element(shape, data):
    ndim = len(shape)
    axis = data.draw(st.one_of(
        st.none(),
        st.integers(-ndim, ndim - 1),
        st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple),
    ))
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-30, 30, shape)).astype(np.float32)
    r = er.sum(x, axis=axis)
    assert r.shape == np.sum(x, axis=axis).shape, seed
    expected = fraction_sums(x, axis)
    got = r.exact
    if r.ndim == 0:
        assert got == expected, seed
    else:
        assert got.shape == expected.shape
        assert all(g == e for g, e in zip(got.ravel(), np.asarray(expected).ravel())), seed
        # the same elements through indexing
        first = (0,) * r.ndim
        if r.size:
            assert r[first].exact == np.asarray(expected)[first]


@pytest.mark.parametrize("view", [
    lambda a: a[::3],
    lambda a: a[::-1],
    lambda a: a.reshape(40, 25).T,
    lambda a: a.reshape(40, 25)[:, 3:17],
    lambda a: a.reshape(40, 25)[::2, ::-3],
    lambda a: np.broadcast_to(a[:7], (5, 7)),
    lambda a: a.reshape(10, 10, 10).transpose(2, 0, 1)[::2],
    lambda a: a.astype(a.dtype.newbyteorder(">")),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_strided_input_gives_the_same_exact_values_as_a_contiguous_copy(view, dtype):
    base = (np.random.default_rng(7).standard_normal(1000) * 100).astype(dtype)
    v = view(base)
    copy = np.ascontiguousarray(v)
    assert er.sum(v).exact == er.sum(copy).exact == exact_sum(copy.ravel())
    if v.ndim == 2:
        for axis in (0, 1):
            assert list(er.sum(v, axis=axis).exact) == list(er.sum(copy, axis=axis).exact)


def test_long_strided_input_is_gathered_in_pieces():
    base = np.random.default_rng(3).standard_normal(3 * 50_000)
    v = base[::3]  # 50,000 elements, more than the 8192-element gather buffer
    assert er.sum(v).exact == exact_sum(v)


def test_reference_indexing():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    r = er.sum(x, axis=2)
    assert r.shape == (2, 3) and len(r) == 2 and r.size == 6
    assert r[1, 2].exact == sum(range(20, 24))
    assert [s.exact for s in r[0]] == [6, 22, 38]
    assert r[:, 1].shape == (2,)
    np.testing.assert_array_equal(r.nearest(), x.sum(axis=2))
    np.testing.assert_array_equal(r.count, np.full((2, 3), 4))
    with pytest.raises(TypeError, match="0-d"):
        len(r[0, 0])


# ---- dtypes and DLPack ----------------------------------------------------------------------------------------------

@needs_bfloat16
def test_bfloat16_through_ml_dtypes():
    x = np.array([1.0, 2.0 ** -8, 2.0 ** -8, 3.5], dtype=BF16)
    r = er.sum(x)
    assert r.dtype == "bfloat16"
    assert r.exact == Fraction(9, 2) + Fraction(1, 128)
    assert r.nearest().dtype == BF16
    assert er.asarray(x).dtype == BF16


def test_any_dlpack_producer_is_read_in_place():
    a = np.random.default_rng(5).standard_normal((20, 30)).astype(np.float32)
    assert er.sum(DLPackOnly(a)).exact == exact_sum(a.ravel())
    assert er.sum(DLPackOnly(a[:, ::2])).exact == exact_sum(a[:, ::2].ravel())
    view = er.asarray(DLPackOnly(a))
    assert view.dtype == np.float32 and np.shares_memory(view, a)


@needs_bfloat16
def test_bfloat16_dlpack_capsule():
    bits = np.array([0x3F80, 0x4000, 0xBF00, 0x0001], dtype=np.uint16)  # 1, 2, -0.5, the smallest subnormal
    t = FakeTensor(bits, KDL_BFLOAT, 16)
    r = er.sum(t)
    assert r.dtype == "bfloat16"
    assert r.exact == Fraction(5, 2) + Fraction(1, 2 ** 133)
    arr = er.asarray(FakeTensor(bits, KDL_BFLOAT, 16))
    assert arr.dtype == BF16 and np.shares_memory(arr, bits)
    strided = np.arange(12, dtype=np.uint16).reshape(3, 4)[:, ::2] + np.uint16(0x3F80)
    assert er.sum(FakeTensor(strided, KDL_BFLOAT, 16)).exact == sum(frac(v) for v in strided.view(BF16).ravel())


def test_float16_dlpack_capsule():
    values = np.array([0.5, 0.25, -1.0], dtype=np.float16)
    assert er.sum(FakeTensor(values, KDL_FLOAT, 16)).exact == Fraction(-1, 4)


class RefusingProducer:
    """A producer whose __dlpack__ raises, as torch does for a tensor that requires grad."""

    def __dlpack__(self, **kwargs):
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")


def test_a_failing_dlpack_producer_is_reported_with_its_own_error():
    with pytest.raises(TypeError, match=r"RefusingProducer.__dlpack__\(\) failed: Can't export tensors that require"):
        er.sum(RefusingProducer())


def test_bfloat16_as_numpy_needs_ml_dtypes(monkeypatch):
    import exactref._arrays as arrays

    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)
    monkeypatch.setattr(arrays, "bfloat16_dtype", lambda: None)
    assert er.sum(FakeTensor(bits, KDL_BFLOAT, 16)).exact == 3  # reading does not need it
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        er.asarray(FakeTensor(bits, KDL_BFLOAT, 16))
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        er.sum(FakeTensor(bits, KDL_BFLOAT, 16)).nearest()


def test_device_arrays_are_refused_with_advice():
    with pytest.raises(ValueError, match=r"device memory \(cuda:1\).*copy it to the host"):
        er.sum(OnDevice())
    # no __dlpack_device__: the capsule's own device field is checked by the extension
    with pytest.raises(ValueError, match=r"device memory \(cuda:0\).*copy it to the host"):
        er.sum(FakeTensor(np.zeros(4, np.float32), KDL_FLOAT, 32, device_type=KDL_CUDA))
    r = er.sum(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="device memory"):
        r.covers(OnDevice())


# ---- errors ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, what", [
    (np.arange(5), "int64"),
    (np.array([1 + 2j]), "complex128"),
    (np.array([True]), "bool"),
    (np.array(["a"]), "<U1"),
    (np.zeros(3, dtype=np.longdouble), "float128"),
    (FakeTensor(np.zeros(3, np.int32), 0, 32), "int32"),
])
def test_wrong_dtype_says_what_was_expected(bad, what):
    with pytest.raises(TypeError, match=r"float16, float32, float64 or bfloat16") as e:
        er.sum(bad)
    assert what in str(e.value)


@pytest.mark.parametrize("bad, what", [("abc", "str"), (object(), "object"), ({1: 2}, "dict"), (None, "NoneType"),
                                       (3, "int"), ([1, 2], "int64"), ([[1.0], [2.0, 3.0]], "list")])
def test_non_numeric_objects_say_what_was_expected(bad, what):
    with pytest.raises(TypeError, match="expected a float16, float32, float64 or bfloat16 array") as e:
        er.sum(bad)
    assert what in str(e.value)


def test_integers_that_float64_cannot_hold_are_refused():
    with pytest.raises(TypeError, match="not a float64 value"):
        er.sum([0.5, 2 ** 53 + 1])
    assert er.sum([0.5, 2 ** 53]).exact == Fraction(1, 2) + 2 ** 53


def test_bad_axis():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="out of bounds for an array of dimension 2"):
        er.sum(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        er.sum(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis"):
        er.sum(x, axis=1.5)
    # A bool is an int to Python, but numpy refuses it as an axis: er.sum(x, True) (keepdims passed by position)
    # must not sum over axis 1.
    for bad in (True, False, np.True_, (0, True)):
        with pytest.raises(TypeError, match="not a bool"):
            er.sum(x, axis=bad)
    with pytest.raises(TypeError, match="not a bool"):
        er.sum(x, True)


def test_contiguous_input_is_not_copied():
    # numpy reports its buffers to tracemalloc: a copy of this 8 MB array anywhere in the Python layer would show.
    import tracemalloc

    x = np.random.default_rng(0).standard_normal(1_000_000)
    tracemalloc.start()
    try:
        er.sum(x)
        er.sum(x.reshape(1000, 1000), axis=1)
        er.sum(x[::2])  # strided: read in place too (gathered in a small C++ buffer)
        er.dot(x, x)
        peak = tracemalloc.get_traced_memory()[1]
        np.ascontiguousarray(x[::2])  # what a copy would cost: the check can fail
        copied = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert copied > 4_000_000


# ---- masked arrays, unaligned views, byte order, DLPack devices, lists ----------------------------------------------

MASKED = np.ma.array([1.0, 2.0, 4.0], mask=[0, 1, 0])


@pytest.mark.parametrize("call", [
    lambda m: er.sum(m),
    lambda m: er.sum(m.reshape(3, 1), axis=0),
    lambda m: er.asarray(m),
    lambda m: er.sum([m]),                                # inside a list: np.asarray would drop the mask too
    lambda m: er.dot(m, np.ones(3)),
    lambda m: er.dot(np.ones(3), np.ones(3), initial=m[:1]),
    lambda m: er.matmul(m.reshape(1, 3), np.ones((3, 1))),
    lambda m: er.matmul(np.ones((1, 3)), np.ones((3, 1)), c=m[:1]),
    lambda m: er.sum(np.ones(3)).covers(m),
    lambda m: er.ulp_error(m, er.sum(np.ones(3))),
    lambda m: er.tree_sum(m),
    lambda m: er.fold_sum(m),
    lambda m: er.tree_sum(np.ones(3), shape="fold16", mask=np.ma.array([True, True, True], mask=[0, 1, 0])),
])
def test_masked_arrays_are_refused_with_advice(call):
    # er.sum(MASKED) summed the masked 2.0 too (7, not 5).
    with pytest.raises(TypeError, match=r"masked array") as e:
        call(MASKED)
    assert ".compressed()" in str(e.value) or ".filled(" in str(e.value)
    assert er.sum(MASKED.compressed()).exact == 5
    assert er.sum(MASKED.filled(0.0)).exact == 5


def packed_field(values):
    """The field 'v' of a packed structured array: element stride itemsize + 1, every address misaligned."""
    s = np.zeros(values.shape, dtype=[("pad", "u1"), ("v", values.dtype)])
    s["v"] = values
    view = s["v"]
    assert not view.flags.aligned and view.strides[-1] % view.itemsize != 0
    return view


def unaligned_dtypes():
    return [np.float64, np.float32, np.float16] + ([BF16] if BF16 is not None else [])


@pytest.mark.parametrize("dtype", unaligned_dtypes(), ids=lambda d: np.dtype(d).name)
def test_unaligned_views_read_like_their_contiguous_copies(dtype):
    rng = np.random.default_rng(31)
    values = (rng.standard_normal((6, 7)) * 2.0 ** rng.integers(-8, 8, (6, 7))).astype(dtype)
    view = packed_field(values)
    copy = np.ascontiguousarray(view)
    assert er.sum(view).exact == er.sum(copy).exact == exact_sum(copy.ravel())
    assert er.sum(view).abs_sum == abs_sum(copy.ravel())
    assert list(er.sum(view, axis=0).exact) == list(er.sum(copy, axis=0).exact)
    assert list(er.sum(view[:, ::-2], axis=1).exact) == list(er.sum(copy[:, ::-2], axis=1).exact)
    got = er.asarray(view)
    assert got.flags.aligned and got.dtype == values.dtype
    np.testing.assert_array_equal(got.view(UINT[got.itemsize]), copy.view(UINT[copy.itemsize]))
    # as results: the same verdicts as the contiguous copy
    r = er.sum(values, axis=1)
    results = packed_field(copy.sum(axis=1).astype(dtype) if dtype is not BF16 else r.nearest())
    plain = np.ascontiguousarray(results)
    np.testing.assert_array_equal(r.covers(results), r.covers(plain))
    np.testing.assert_array_equal(er.ulp_error(results, r), er.ulp_error(plain, r))
    assert r.verdict(results).message() == r.verdict(plain).message()
    flat = packed_field(copy.ravel())
    assert er.tree_sum(flat) == er.tree_sum(copy.ravel())
    assert er.fold_sum(flat) == er.fold_sum(copy.ravel())


def test_big_endian_broadcast_views_are_not_materialised():
    # A '>f8' view of 10^6 elements over 1000 distinct values: the copy into native order keeps the broadcast axis
    # (8 KB), where byte-swapping every element would take 8 MB.
    import tracemalloc

    base = np.random.default_rng(32).standard_normal(1000).astype(">f8")
    view = np.broadcast_to(base, (1000, 1000))
    native = base.astype("<f8")
    tracemalloc.start()
    try:
        r = er.sum(view)
        rows = er.sum(view, axis=1)
        seen = er.asarray(view)
        peak = tracemalloc.get_traced_memory()[1]
        np.ascontiguousarray(view.astype("<f8"))  # what materialising costs: the check can fail
        materialised = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000, peak
    assert materialised > 8_000_000
    assert r.exact == 1000 * exact_sum(native)
    assert rows.shape == (1000,) and rows[17].exact == exact_sum(native)
    assert seen.dtype == np.dtype("<f8") and seen.shape == (1000, 1000) and seen.strides[0] == 0


def test_non_native_byte_order_is_copied_and_native_is_not():
    native = np.random.default_rng(33).standard_normal(50)
    swapped = native.astype(">f8")
    seen = er.asarray(swapped)
    assert seen.dtype == np.dtype("=f8") and not np.shares_memory(seen, swapped)
    np.testing.assert_array_equal(seen, native)
    assert np.shares_memory(er.asarray(native), native) and np.shares_memory(er.asarray(native[::3]), native)
    assert er.sum(swapped).exact == exact_sum(native)
    zero_d = er.asarray(np.array(1.5, ">f8"))  # a 0-d array stays an array
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and zero_d.dtype == np.dtype("=f8")


class DeviceRaises:
    def __dlpack__(self, **kwargs):
        raise AssertionError("not reached")

    def __dlpack_device__(self):
        raise RuntimeError("device query failed")


class DeviceNotATuple(DeviceRaises):
    def __dlpack_device__(self):
        return 1


class DeviceOfStrings(DeviceRaises):
    def __dlpack_device__(self):
        return ("cpu", "zero")


@pytest.mark.parametrize("producer, what", [
    (DeviceRaises(), r"DeviceRaises.__dlpack_device__\(\) failed: RuntimeError: device query failed"),
    (DeviceNotATuple(), r"DeviceNotATuple.__dlpack_device__\(\) returned 1; .*\(device_type, device_id\) tuple"),
    (DeviceOfStrings(), r"DeviceOfStrings.__dlpack_device__\(\) returned \('cpu', 'zero'\)"),
])
def test_a_broken_dlpack_device_query_is_a_type_error_naming_the_producer(producer, what):
    with pytest.raises(TypeError, match=what):
        er.sum(producer)
    with pytest.raises(TypeError, match=what):
        er.sum(np.ones(1)).covers(producer)


def test_lists_follow_numpy_conversion():
    # np.asarray([1.0, True]) is float64 [1.0, 1.0]: a list is read as numpy reads it, then must be float.
    assert er.sum([1.0, True]).exact == 2
    assert er.sum((0.5, 3)).exact == Fraction(7, 2)
    assert er.sum([np.float32(0.1), 0.2]).exact == Fraction(np.float32(0.1).item()) + Fraction(0.2)
    for bad, what in (([True, False], "bool"), ([1, 2], "int64")):
        with pytest.raises(TypeError, match=what):
            er.sum(bad)
    with pytest.raises(TypeError, match="got bool"):
        er.sum(True)
