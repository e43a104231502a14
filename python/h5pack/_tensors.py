"""Torch tensors over reader memory: images without a copy (host: buffer protocol; device: CUDA array
interface), labels and indices as copies (they are tiny, and a user keeps them: docs/python.md, "Zero
copy"). An image tensor is made with set_() on the memory's storage, so it is no view of another tensor
(no _base): copy-on-hold (_copy_on_hold.py) can then move it onto a private copy in place."""
import ctypes

import torch

# h5pack_dtype value -> (torch dtype, bytes per element, CUDA array interface typestr)
_DTYPES = {
    0: (torch.float32, 4, "<f4"),
    1: (torch.float16, 2, "<f2"),
    2: (torch.bfloat16, 2, "<i2"),  # no typestr for bfloat16: exported as int16, the storage is untyped
    3: (torch.uint8, 1, "|u1"),
}


def element_size(h5_dtype):
    return _DTYPES[h5_dtype][1]


def torch_dtype(h5_dtype):
    return _DTYPES[h5_dtype][0]


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _on_memory_of(base, h5_dtype, shape, strides):
    """A tensor of SHAPE / STRIDES over BASE's storage (BASE: the memory as a flat tensor of the output
    dtype), not a view of BASE. Torch before 1.14 (Debian 12's) has typed storages only."""
    storage = base.untyped_storage() if hasattr(base, "untyped_storage") else base.storage()
    t = torch.empty(0, dtype=_DTYPES[h5_dtype][0], device=base.device)
    return t.set_(storage, 0, shape, strides if strides is not None else _contiguous_strides(shape))


def host_tensor(address, nbytes, h5_dtype, shape, owner, strides=None):
    """(tensor, exporter): a tensor of SHAPE (and STRIDES, in elements) over NBYTES of host memory at
    ADDRESS, without a copy. The exporter, a ctypes buffer, lives exactly as long as some tensor uses that
    memory (_copy_on_hold.py watches it); it keeps OWNER (the Loader) alive, so garbage collection never closes the
    reader under a tensor."""
    buf = (ctypes.c_uint8 * nbytes).from_address(address)
    buf.h5pack_owner = owner
    return _on_memory_of(torch.frombuffer(buf, dtype=_DTYPES[h5_dtype][0]), h5_dtype, shape, strides), buf


class _CudaArray:
    """Minimal __cuda_array_interface__ (version 3) exporter for device memory owned by the reader."""

    def __init__(self, address, shape, typestr, owner):
        self.h5pack_owner = owner
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (address, False), "version": 3,
            "strides": None,
            # The reader already made the consumer's stream wait for the batch (config.cuda_stream):
            # no synchronisation needed on import.
            "stream": None,
        }


def device_tensor(address, nbytes, h5_dtype, shape, gpu_id, owner, strides=None):
    """(tensor, exporter) as host_tensor, for device memory (the exporter is the _CudaArray)."""
    dtype, size, typestr = _DTYPES[h5_dtype]
    array = _CudaArray(address, (nbytes // size,), typestr, owner)
    base = torch.as_tensor(array, device=f"cuda:{gpu_id}")
    if dtype == torch.bfloat16:
        base = base.view(torch.bfloat16)  # exported as int16: same bytes
    return _on_memory_of(base, h5_dtype, shape, strides), array
