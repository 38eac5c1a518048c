"""Input arrays: what exactref reads, and the checks that give clear errors.

Every array argument (data, results) goes through :func:`host_array`: numpy arrays and scalars are used in place,
any other object with ``__dlpack__`` is imported through DLPack (no copy), Python floats and sequences of floats
through :func:`numpy.asarray`. Two kinds of numpy array are copied first, because the extension reads native,
aligned elements: non-native byte order (big-endian on x86/ARM) and views whose strides or address are not
multiples of the element's alignment (a field of a packed structured array). The copy keeps broadcast (stride-0)
axes as they are, so only the distinct elements are copied. Device memory and masked arrays are refused with a
message that says what to pass instead.

Dtype names follow numpy (``np.dtype(name)``: 'float' and 'double' are float64, 'single' and 'f' float32, 'half' and
'e' float16, 'f16' is numpy's 16-byte float128 and refused), plus 'bfloat16'.
"""

from __future__ import annotations

import operator
from typing import Any, Iterator, Tuple

import numpy as np

from . import _core

#: The element types exactref reasons about (IEEE 754 binary64/32/16 and bfloat16).
FLOAT_DTYPES = ("float64", "float32", "float16", "bfloat16")

#: The largest count the library takes (heights, chunks, n): its counts are unsigned 64-bit integers.
MAX_COUNT = 2 ** 64 - 1

# DLPack device types (dlpack.h, DLDeviceType) the host can read, and names for the others in messages.
_HOST_DEVICES = {1, 3, 11, 13}  # kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged
_DEVICE_NAMES = {2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm", 12: "ext_dev",
                 14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}

_EXPECTED = ("a float16, float32, float64 or bfloat16 array (numpy, any object with __dlpack__ in host memory, "
             "or a Python float)")
_NAMES = ("a numpy dtype or its name ('float64', 'float32', 'float16', 'double', 'single', 'half', 'f8', 'f4', "
          "'f2', np.float32, float, ...; 'float' is float64 as in numpy) or 'bfloat16'")


def bfloat16_dtype() -> Any:
    """numpy's bfloat16 dtype from ml_dtypes, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes  # noqa: PLC0415 - optional dependency
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def dtype_name(dtype: Any, what: str = "dtype") -> str:
    """The canonical name ('float64', 'float32', 'float16', 'bfloat16') of a dtype given the way numpy takes one:
    a name as np.dtype(name) reads it ('float' and 'double' are float64, 'single' and 'f4' float32, 'half' and 'f2'
    float16, byte-order prefixes allowed), a numpy dtype, a scalar type (np.float32, Python's float) or
    ml_dtypes.bfloat16; and the name 'bfloat16' (which numpy knows only once ml_dtypes is imported).
    Raises TypeError for anything else, e.g. 'f16' (numpy's 16-byte float128) or None."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return "bfloat16"
    if dtype is None:  # np.dtype(None) is float64; here None means "not given" and must not reach this point
        raise TypeError(f"{what}=None: expected {_NAMES}")
    try:
        d = np.dtype(dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{what}={dtype!r}: not a dtype numpy knows; expected {_NAMES}") from None
    if d.name in FLOAT_DTYPES:
        return d.name
    hint = ""
    if d.kind == "f":
        hint = f" (numpy reads {dtype!r} as {d.name}, a {d.itemsize}-byte float; half precision is 'float16')"
    raise TypeError(f"{what}={dtype!r}: {d.name} is not a format exactref takes{hint}; expected {_NAMES}")


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype of a canonical name; bfloat16 needs ml_dtypes."""
    if name == "bfloat16":
        bf = bfloat16_dtype()
        if bf is None:
            raise ImportError("bfloat16 values as a numpy array need ml_dtypes: pip install ml_dtypes "
                              "(exactref reads bfloat16 input without it, through DLPack)")
        return bf
    return np.dtype(name)


def _check_device(x: Any, what: str) -> None:
    device = getattr(x, "__dlpack_device__", None)
    if device is None:
        return
    kind = type(x).__name__
    try:
        answer = device()
    except Exception as e:  # the producer's own failure
        raise TypeError(f"{what}: {kind}.__dlpack_device__() failed: {type(e).__name__}: {e}") from None
    try:
        device_type, device_id = answer
        device_type, device_id = int(device_type), int(device_id)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: {kind}.__dlpack_device__() returned {answer!r}; the DLPack protocol expects a "
                        f"(device_type, device_id) tuple of two ints") from None
    if device_type not in _HOST_DEVICES:
        name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
        raise ValueError(f"{what} ({kind}) lives in device memory ({name}:{device_id}); exactref reads "
                         f"host memory: copy it to the host first (tensor.cpu(), cupy.asnumpy(a), "
                         f"jax.device_get(a))")


def _explain_dlpack_failure(x: Any, what: str) -> None:
    """The extension could not import x through DLPack; ask the producer again to surface its own error."""
    try:
        x.__dlpack__()
    except Exception as e:  # the producer's reason: requires grad, unsupported dtype, ...
        raise TypeError(f"{what}: {type(x).__name__}.__dlpack__() failed: {e}") from None
    raise TypeError(f"{what}: {type(x).__name__} offers __dlpack__, but its capsule could not be imported "
                    f"(expected a DLPack tensor in host memory)") from None


def _refuse_masked(what: str, verb: str = "is") -> None:
    raise TypeError(f"{what} {verb} a numpy masked array: exactref does not apply masks (it would read the masked "
                    f"elements too); pass .compressed() for the unmasked values, or .filled(value) to say what a "
                    f"masked element stands for")


def _distinct_copy(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A native, aligned copy of a's values in `dtype` (the same values). Axes of stride 0 (np.broadcast_to) stay
    broadcast: only the distinct elements are copied, so a broadcast view of n elements costs O(its base)."""
    keep = tuple(slice(0, 1) if stride == 0 and length > 1 else slice(None)
                 for stride, length in zip(a.strides, a.shape))
    distinct = np.array(a[keep], dtype=dtype, order="C")  # exact: the same values, native order, aligned
    return distinct if distinct.shape == a.shape else np.broadcast_to(distinct, a.shape)


def _typed(a: np.ndarray, what: str) -> Tuple[np.ndarray, str]:
    d = a.dtype
    if d.kind == "f" and d.itemsize in (2, 4, 8):
        if not d.isnative or not a.flags.aligned:
            a = _distinct_copy(a, d.newbyteorder("="))
        return a, d.name
    if d.name == "bfloat16":
        if not a.flags.aligned:
            a = _distinct_copy(a, d)
        return a.view(np.uint16), "bfloat16"
    raise TypeError(f"{what}: expected {_EXPECTED}, got an array of {d}: convert it to the floating-point type "
                    f"it was computed in")


def _leaves(x: Any) -> Iterator[Any]:
    """The items of nested lists and tuples (what np.asarray reads element by element)."""
    for item in x:
        if isinstance(item, (list, tuple)):
            yield from _leaves(item)
        else:
            yield item


def host_array(x: Any, what: str = "x") -> Tuple[np.ndarray, str]:
    """(array, dtype name) for the C++ side: a numpy array of x's values (bfloat16 as its uint16 storage) and
    'float64' | 'float32' | 'float16' | 'bfloat16'. No copy for native, aligned numpy input or DLPack input; a
    non-native byte order or an unaligned view is copied (broadcast axes stay broadcast). Raises TypeError for
    another element type, object or a masked array, ValueError for device memory."""
    if isinstance(x, np.ma.MaskedArray):
        _refuse_masked(what)
    if isinstance(x, np.ndarray):
        return _typed(x, what)
    if isinstance(x, np.generic):
        return _typed(np.asarray(x), what)
    if hasattr(x, "__dlpack__"):
        _check_device(x, what)
        try:
            return _core.host_view(x, None, what)
        except TypeError as e:
            if "incompatible function arguments" not in str(e):
                raise
            _explain_dlpack_failure(x, what)
            raise
    if isinstance(x, bool):
        raise TypeError(f"{what}: expected {_EXPECTED}, got bool")
    if isinstance(x, float):
        return np.asarray(x, dtype=np.float64), "float64"  # a Python float is a binary64 value: exact
    if isinstance(x, (list, tuple)):
        for item in _leaves(x):
            if isinstance(item, np.ma.MaskedArray):  # np.asarray would drop the mask (masked elements become nan)
                _refuse_masked(what, "holds")
            # numpy turns Python ints in a float list into float64, rounding large ones: refuse those.
            if isinstance(item, int) and not isinstance(item, bool) and float(item) != item:
                raise TypeError(f"{what}: the integer {item} is not a float64 value; pass floats of the "
                                f"dtype you mean")
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise TypeError(f"{what}: expected {_EXPECTED}, got a {type(x).__name__} numpy cannot read as one "
                            f"array ({e})") from None
        if a.dtype.kind != "f":
            raise TypeError(f"{what}: expected {_EXPECTED}, got a {type(x).__name__} of {a.dtype} values")
        return _typed(a, what)
    raise TypeError(f"{what}: expected {_EXPECTED}, got {type(x).__name__}")


def asarray(x: Any) -> np.ndarray:
    """The array exactref reads, as a numpy array of x's shape (a scalar gives a 0-d array).

    x: a numpy array or scalar (float16, float32, float64, or ml_dtypes.bfloat16), any object with ``__dlpack__``
    in host memory (PyTorch, JAX, CuPy pinned memory, ...), a Python float, or a list of floats (np.asarray's
    conversion; see exactref.sum). bfloat16 comes back as ml_dtypes.bfloat16 (ImportError without ml_dtypes).

    No copy for a native-byte-order, aligned numpy array or for DLPack input: the result shares x's memory.
    A non-native byte order ('>f8' on a little-endian machine) or a view whose strides are not multiples of the
    item size (a field of a packed structured array) comes back as a native, aligned copy of the same values; a
    broadcast (stride-0) axis stays broadcast, so only the distinct elements are copied.

    Raises TypeError for another element type, a non-numeric object or a numpy masked array (pass .compressed() or
    .filled(value)), ValueError for device memory (copy it to the host first: ``tensor.cpu()``,
    ``cupy.asnumpy(a)``, ``jax.device_get(a)``).

    >>> er.asarray(np.float32(1.5))
    array(1.5, dtype=float32)
    """
    a, name = host_array(x, "x")
    if name == "bfloat16" and a.dtype == np.uint16:
        return a.view(numpy_dtype("bfloat16"))
    return a


def as_index(value: Any, what: str) -> int:
    """A Python int from an int-like value (int, numpy integer), with a clear error. A bool is refused: True is an
    int to Python, but height=True is a mistake, not a height of 1 (as ftz='yes' is refused for a flag)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what}={value!r}: expected an integer, not a bool")
    try:
        i = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}={value!r}: expected an integer") from None
    return i


def as_count(value: Any, what: str, smallest: int = 0, context: str = "") -> int:
    """An int in smallest .. 2**64 - 1 (the library's unsigned 64-bit counts), or a clear error naming the range."""
    i = as_index(value, what)
    if not smallest <= i <= MAX_COUNT:
        raise ValueError(f"{context}{what}={i}: expected an integer from {smallest} to 2**64 - 1")
    return i


def as_threads(value: Any) -> int:
    """The threads= of a parallel call as the extension takes it: None or 0 (the default: EXACTREF_NUM_THREADS, else
    OMP_NUM_THREADS, else every core, read at each call) -> 0, or a positive int. Raises TypeError for a non-integer,
    ValueError for a negative count."""
    if value is None:
        return 0
    expected = ("expected None or 0 (the default: EXACTREF_NUM_THREADS, else OMP_NUM_THREADS, else every core) or "
                "a thread count from 1 to 65536")
    if isinstance(value, bool):
        raise TypeError(f"threads={value!r}: {expected}, not a bool")
    try:
        i = operator.index(value)
    except TypeError:
        raise TypeError(f"threads={value!r}: {expected}") from None
    if not 0 <= i <= 65536:
        raise ValueError(f"threads={i}: {expected}")
    return i
