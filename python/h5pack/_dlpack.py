"""DLPack export of the reader's memory (the "dltensor" capsule, DLPack 0.8's unversioned form, which every
framework imports): how JAX and TensorFlow take a batch without a copy, on the host and on CUDA.

Memory(address, shape, dtype, device) has __dlpack__ and __dlpack_device__. Each capsule it makes holds a
DLManagedTensor whose deleter is libh5pack's h5pack_dlpack_mark_released: it only sets a flag (the
manager context) when the framework lets go of the memory (its last array over it gone; on JAX after the
work queued on it). No Python runs in the deleter: frameworks call it on their own threads, and inside
their error handling or a generator's end, where Python code cannot run safely. sweep() (called by the
loaders before they give buffers back) drops the exports whose flag is set; an export keeps its Memory
alive until then, so a Memory's life is the life of the arrays over its memory, which copy-on-hold
(_copy_on_hold.py) watches through a weak reference, as it watches PyTorch's exporters."""
import ctypes

import numpy as np

from ._core import lib

KDL_CPU, KDL_CUDA = 1, 2
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT = 0, 1, 2, 4


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_NAME = b"dltensor"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# address of each exported DLManagedTensor -> (the struct, its shape, its released flag, the Memory)
_EXPORTED = {}


def sweep():
    """Forgets the exports the frameworks let go of (their flag set): their Memory may die now."""
    # popped first, dropped after: a Memory dying here may run a loader's close(), which sweeps again
    gone = [_EXPORTED.pop(a, None) for a in [a for a, entry in list(_EXPORTED.items()) if entry[2].value]]
    del gone


def exported_count():
    """Exports the frameworks still hold (for tests: 0 once every array is gone)."""
    sweep()
    return len(_EXPORTED)


def data_type(dtype):
    """DLPack's type of a numpy dtype (bfloat16 by name: ml_dtypes' or TensorFlow's)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return _KDL_BFLOAT, 16
    code = {"f": _KDL_FLOAT, "i": _KDL_INT, "u": _KDL_UINT, "b": _KDL_UINT}[dtype.kind]
    return code, dtype.itemsize * 8


class Memory:
    """SHAPE x DTYPE at ADDRESS on DEVICE ((KDL_CPU, n) or (KDL_CUDA, gpu)), exported through DLPack; keeps
    OWNER (the loader) alive while any framework array uses it."""

    def __init__(self, address, shape, dtype, device, owner):
        self.address, self.shape, self.dtype = int(address), tuple(int(n) for n in shape), np.dtype(dtype)
        self.device, self.h5pack_owner = tuple(device), owner

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # The reader already ordered the batch before the stream the loader follows (or finished it on
        # the host): no synchronisation is needed on import, whatever STREAM the consumer names.
        if copy:
            raise BufferError("h5pack batches are exported without a copy (copy=True asked)")
        if dl_device is not None and tuple(dl_device) != self.device:
            raise BufferError(f"h5pack batch on DLPack device {self.device}, {tuple(dl_device)} asked")
        managed, flag = _Managed(), ctypes.c_uint64(0)
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        code, bits = data_type(self.dtype)
        managed.dl_tensor = _Tensor(self.address, _Device(*self.device), len(self.shape), _DataType(code, bits, 1),
                                    shape, None, 0)
        managed.manager_ctx = ctypes.addressof(flag)
        managed.deleter = ctypes.cast(lib().h5pack_dlpack_mark_released, ctypes.c_void_p).value
        address = ctypes.addressof(managed)
        _EXPORTED[address] = (managed, shape, flag, self)
        return _capsule_new(address, _NAME, None)
