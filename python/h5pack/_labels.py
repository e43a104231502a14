"""A batch's labels as a torch tensor: (B,) for a file's labels (N,), (B, K) for (N, K); int64, or float32
when the file's labels are floating point (h5pack_batch.labels / labels_float, K = label_columns)."""
import ctypes

import torch

from . import _tensors


def _host(address, ctype, dtype, count, owner):
    buf = (ctype * count).from_address(address)
    buf.h5pack_owner = owner  # the tensor keeps the Loader (and so the reader's memory) alive
    return torch.frombuffer(buf, dtype=dtype)


def batch_labels(b, info, gpu, owner):
    """None for a file without labels. Device labels when the backend has them, else host labels moved
    next to the images (a small copy)."""
    is_float = bool(info.labels_are_float)
    host = b.labels_float if is_float else b.labels
    device = b.labels_float_device if is_float else b.labels_device
    if not host and not device:
        return None
    k = max(int(b.label_columns), 1)
    shape = (b.count, k) if info.label_rank == 2 else (b.count,)
    ctype, dtype, typestr = ((ctypes.c_float, torch.float32, "<f4") if is_float
                             else (ctypes.c_int64, torch.int64, "<i8"))
    if b.on_device and device:
        array = _tensors._CudaArray(device, (b.count * k,), typestr, owner)
        return torch.as_tensor(array, device=f"cuda:{gpu}").view(shape)
    labels = _host(host, ctype, dtype, b.count * k, owner).view(shape)
    return labels.to(f"cuda:{gpu}") if b.on_device else labels
