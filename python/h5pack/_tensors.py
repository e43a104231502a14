"""Zero-copy views of reader memory as torch tensors (host: buffer protocol; device: CUDA array interface)."""
import ctypes

import torch

# h5pack_dtype value -> (torch dtype, bytes per element, CUDA array interface typestr, view dtype after)
_DTYPES = {
    0: (torch.float32, 4, "<f4", None),
    1: (torch.float16, 2, "<f2", None),
    2: (torch.bfloat16, 2, "<i2", torch.bfloat16),  # no typestr for bfloat16: wrap as int16, then view
    3: (torch.uint8, 1, "|u1", None),
}


def element_size(h5_dtype):
    return _DTYPES[h5_dtype][1]


def torch_dtype(h5_dtype):
    return _DTYPES[h5_dtype][0]


def host_tensor(address, nbytes, h5_dtype, shape, owner):
    """A tensor over NBYTES of host memory at ADDRESS, without a copy. The ctypes buffer keeps OWNER
    (the Loader) alive, so the reader is not closed by garbage collection while the tensor exists."""
    buf = (ctypes.c_uint8 * nbytes).from_address(address)
    buf.h5pack_owner = owner
    return torch.frombuffer(buf, dtype=_DTYPES[h5_dtype][0]).view(shape)


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


def device_tensor(address, h5_dtype, shape, gpu_id, owner):
    _, _, typestr, view_as = _DTYPES[h5_dtype]
    t = torch.as_tensor(_CudaArray(address, shape, typestr, owner), device=f"cuda:{gpu_id}")
    return t.view(view_as) if view_as is not None else t


def host_int64(address, count, owner):
    """COUNT int64 values (labels, or the uint64 sample indices, all < 2**63) in host memory."""
    buf = (ctypes.c_int64 * count).from_address(address)
    buf.h5pack_owner = owner
    return torch.frombuffer(buf, dtype=torch.int64)


def device_int64(address, count, gpu_id, owner):
    return torch.as_tensor(_CudaArray(address, (count,), "<i8", owner), device=f"cuda:{gpu_id}")


def host_boxes(address, count):
    """A (COUNT, 5) int32 copy of the batch's h5pack_crop_box array (y, x, height, width, flip)."""
    if not address or not count:
        return torch.zeros((count, 5), dtype=torch.int32)
    raw = ctypes.string_at(address, count * 5 * 4)
    return torch.frombuffer(bytearray(raw), dtype=torch.int32).view(count, 5)
