"""A batch's labels as a torch tensor of its own (a copy: labels are tiny and users keep them): (B,) for a
file's labels (N,), (B, K) for (N, K); int64, or float32 when the file's labels are floating point
(h5pack_batch.labels / labels_float, K = label_columns)."""
import ctypes

import torch

from . import _tensors


def batch_labels(b, info, gpu):
    """None for a file without labels. On the GPU a device-to-device copy on the current stream (which
    already waits for the batch), else a host copy, moved next to the images."""
    is_float = bool(info.labels_are_float)
    host = b.labels_float if is_float else b.labels
    device = b.labels_float_device if is_float else b.labels_device
    if not host and not device:
        return None
    k = max(int(b.label_columns), 1)
    shape = (b.count, k) if info.label_rank == 2 else (b.count,)
    dtype, typestr, size = (torch.float32, "<f4", 4) if is_float else (torch.int64, "<i8", 8)
    if b.on_device and device:
        array = _tensors._CudaArray(device, (b.count * k,), typestr, None)
        return torch.as_tensor(array, device=f"cuda:{gpu}").view(shape).clone()
    raw = bytearray(ctypes.string_at(host, b.count * k * size))
    labels = torch.frombuffer(raw, dtype=dtype).view(shape)
    return labels.to(f"cuda:{gpu}") if b.on_device else labels
