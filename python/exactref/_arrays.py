"""Input arrays: what exactref reads, and the checks that give clear errors.

Every array argument (data, results) goes through :func:`host_array`: numpy arrays and scalars are used in place,
any other object with ``__dlpack__`` is imported through DLPack (no copy), Python floats and sequences of floats
through :func:`numpy.asarray`. Device memory is refused with a message that says to copy it to the host.
"""

from __future__ import annotations

import operator
from typing import Any, Tuple

import numpy as np

from . import _core

#: The element types exactref reasons about (IEEE 754 binary64/32/16 and bfloat16).
FLOAT_DTYPES = ("float64", "float32", "float16", "bfloat16")

_ALIASES = {
    "float64": "float64", "f64": "float64", "double": "float64", "f8": "float64",
    "float32": "float32", "f32": "float32", "float": "float32", "single": "float32", "f4": "float32",
    "float16": "float16", "f16": "float16", "half": "float16", "f2": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
}

# DLPack device types (dlpack.h, DLDeviceType) the host can read, and names for the others in messages.
_HOST_DEVICES = {1, 3, 11, 13}  # kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged
_DEVICE_NAMES = {2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm", 12: "ext_dev",
                 14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}

_EXPECTED = ("a float16, float32, float64 or bfloat16 array (numpy, any object with __dlpack__ in host memory, "
             "or a Python float)")


def bfloat16_dtype() -> Any:
    """numpy's bfloat16 dtype from ml_dtypes, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes  # noqa: PLC0415 - optional dependency
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def dtype_name(dtype: Any, what: str = "dtype") -> str:
    """The canonical name ('float64', 'float32', 'float16', 'bfloat16') of a dtype given as a name ('f32', 'half',
    'bf16', ...), a numpy dtype or a scalar type (np.float32, ml_dtypes.bfloat16). Raises TypeError otherwise."""
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype.lower())
        if name is None:
            raise TypeError(f"{what}={dtype!r}: expected one of {', '.join(FLOAT_DTYPES)} "
                            f"(or f64, double, f32, float, f16, half, bf16)")
        return name
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}={dtype!r}: expected a dtype, one of {', '.join(FLOAT_DTYPES)}") from None
    if d.name in FLOAT_DTYPES:
        return d.name
    raise TypeError(f"{what}={d}: expected one of {', '.join(FLOAT_DTYPES)}")


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
    device_type, device_id = device()
    if int(device_type) not in _HOST_DEVICES:
        name = _DEVICE_NAMES.get(int(device_type), f"device type {int(device_type)}")
        raise ValueError(f"{what} ({type(x).__name__}) lives in device memory ({name}:{device_id}); exactref reads "
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


def _typed(a: np.ndarray, what: str) -> Tuple[np.ndarray, str]:
    d = a.dtype
    if d.kind == "f" and d.itemsize in (2, 4, 8):
        if not d.isnative:
            a = a.astype(d.newbyteorder("="))  # exact: the same values in native byte order
        return a, d.name
    if d.name == "bfloat16":
        return a.view(np.uint16), "bfloat16"
    raise TypeError(f"{what}: expected {_EXPECTED}, got an array of {d}: convert it to the floating-point type "
                    f"it was computed in")


def host_array(x: Any, what: str = "x") -> Tuple[np.ndarray, str]:
    """(array, dtype name) for the C++ side: a numpy array of x's memory (bfloat16 as its uint16 storage) and
    'float64' | 'float32' | 'float16' | 'bfloat16'. No copy for numpy or DLPack input. Raises TypeError for another
    element type or object, ValueError for device memory."""
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
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise TypeError(f"{what}: expected {_EXPECTED}, got a {type(x).__name__} numpy cannot read as one "
                            f"array ({e})") from None
        if a.dtype.kind != "f":
            raise TypeError(f"{what}: expected {_EXPECTED}, got a {type(x).__name__} of {a.dtype} values")
        for item in np.asarray(x, dtype=object).ravel():
            # numpy turns Python ints in a float list into float64, rounding large ones: refuse those.
            if isinstance(item, int) and not isinstance(item, bool) and float(item) != item:
                raise TypeError(f"{what}: the integer {item} is not a float64 value; pass floats of the "
                                f"dtype you mean")
        return _typed(a, what)
    raise TypeError(f"{what}: expected {_EXPECTED}, got {type(x).__name__}")


def asarray(x: Any) -> np.ndarray:
    """The array exactref reads, as a numpy array, without copying.

    x: a numpy array or scalar (float16, float32, float64, or ml_dtypes.bfloat16), any object with ``__dlpack__``
    in host memory (PyTorch, JAX, CuPy pinned memory, ...), a Python float, or a list of floats. Shape is kept
    (a scalar gives a 0-d array). bfloat16 comes back as ml_dtypes.bfloat16 (ImportError without ml_dtypes).

    Raises TypeError for another element type or a non-numeric object, ValueError for device memory (copy it to the
    host first: ``tensor.cpu()``, ``cupy.asnumpy(a)``, ``jax.device_get(a)``).

    >>> er.asarray(np.float32(1.5))
    array(1.5, dtype=float32)
    """
    a, name = host_array(x, "x")
    if name == "bfloat16" and a.dtype == np.uint16:
        return a.view(numpy_dtype("bfloat16"))
    return a


def as_index(value: Any, what: str) -> int:
    """A Python int from an int-like value (int, numpy integer), with a clear error."""
    try:
        i = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}={value!r}: expected an integer") from None
    return i
