"""Hand-made DLPack producers for the tests: a capsule built with ctypes (dlpack.h v0.8 layout, unversioned
"dltensor"), so the tests can present bfloat16 data and device memory without PyTorch or a GPU."""

from __future__ import annotations

import ctypes

import numpy as np

# dlpack.h: DLDeviceType and DLDataTypeCode values used here.
KDL_CPU = 1
KDL_CUDA = 2
KDL_FLOAT = 2
KDL_BFLOAT = 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeTensor:
    """An object with only __dlpack__ (no __dlpack_device__), over `storage` (a numpy array that stays alive),
    announcing the given DLPack dtype code/bits and device. Strides are those of `storage`, in elements."""

    def __init__(self, storage: np.ndarray, code: int, bits: int, device_type: int = KDL_CPU, device_id: int = 0):
        self.storage = storage
        self.code, self.bits = code, bits
        self.device_type, self.device_id = device_type, device_id
        self._keep = []

    def __dlpack__(self, **kwargs):
        a = self.storage
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        strides = (ctypes.c_int64 * max(a.ndim, 1))(*(s // a.itemsize for s in a.strides))
        managed = DLManagedTensor()
        managed.dl_tensor.data = a.ctypes.data
        managed.dl_tensor.device = DLDevice(self.device_type, self.device_id)
        managed.dl_tensor.ndim = a.ndim
        managed.dl_tensor.dtype = DLDataType(self.code, self.bits, 1)
        managed.dl_tensor.shape = shape
        managed.dl_tensor.strides = strides
        managed.dl_tensor.byte_offset = 0
        managed.manager_ctx = None
        managed.deleter = DELETER()  # NULL: the arrays above are owned by this object
        self._keep.append((shape, strides, managed))
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)


class DLPackOnly:
    """Forwards the DLPack protocol of a numpy array: an array library exactref has never heard of."""

    def __init__(self, a: np.ndarray):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class OnDevice:
    """Announces device memory through __dlpack_device__ (as torch.cuda tensors and cupy arrays do)."""

    def __dlpack__(self, **kwargs):
        raise AssertionError("exactref must refuse device memory before asking for the capsule")

    def __dlpack_device__(self):
        return (KDL_CUDA, 1)
