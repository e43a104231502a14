"""h5pack.numpy.Loader: the loader for NumPy (and for anything that takes NumPy arrays or DLPack: CuPy,
scikit-learn, a framework of your own). Images are numpy arrays over the reader's host memory, without a
copy; labels and indices are arrays of their own.

    loader = h5pack.numpy.Loader("train.h5", batch_size=256, crop="random_resized", output_size=224, flip=True)
    for images, labels in loader:          # float32 (B, C, H, W), int64 (B,)
        ...

The keywords are h5pack.Loader's (docs/python.md), on the host: device="cpu" (or "auto"). A batch you keep
keeps its values: when the reader needs its memory back, the memory is handed over to your arrays
(h5pack_detach: no copy) and the reader takes new memory (docs/frameworks.md, "Zero copy").
"""
import ctypes

import numpy as np

from . import _lib
from ._stream import Stream

# h5pack_dtype name -> numpy dtype (bfloat16: numpy has none; ml_dtypes' when installed, else raw uint16)
_NUMPY_DTYPES = {"float32": np.float32, "float16": np.float16, "uint8": np.uint8}


def numpy_dtype(h5_dtype):
    """The numpy dtype of the h5pack_dtype value H5_DTYPE."""
    name = _lib.dtype_name(h5_dtype)
    if name == "bfloat16":
        try:
            import ml_dtypes  # shipped with jax; TensorFlow has its own

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype(np.uint16)  # the same bits
    return np.dtype(_NUMPY_DTYPES[name])


def host_array(address, nbytes, dtype, shape, owner):
    """(array, exporter): a numpy array of SHAPE over NBYTES of host memory at ADDRESS, without a copy.
    The exporter (a ctypes buffer, the array's base) lives exactly as long as some array uses that memory;
    it keeps OWNER alive, so garbage collection never closes the reader under an array."""
    buf = (ctypes.c_uint8 * nbytes).from_address(address)
    buf.h5pack_owner = owner
    return np.frombuffer(buf, dtype=dtype).reshape(shape), buf


def host_ints(raw, dtype, shape):
    """An array of its own from RAW bytes (zeros when RAW is empty)."""
    if not raw:
        return np.zeros(shape, dtype=dtype)
    return np.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)


def batch_labels(b, info):
    """The batch's labels as an array of its own: (B,) or (B, K), int64 or float32; None without labels."""
    is_float = bool(info.labels_are_float)
    host = b.labels_float if is_float else b.labels
    if not host:
        return None
    k = max(int(b.label_columns), 1)
    shape = (b.count, k) if info.label_rank == 2 else (b.count,)
    dtype = np.float32 if is_float else np.int64
    return host_ints(ctypes.string_at(host, b.count * k * np.dtype(dtype).itemsize), dtype, shape)


def host_only(cfg, device, framework):
    """Front-ends whose arrays live on the host: device "cpu" or "auto" (the CPU backend)."""
    if cfg.device == _lib.DEVICES["auto"]:
        cfg.device = _lib.DEVICES["cpu"]
    elif cfg.device != _lib.DEVICES["cpu"]:
        raise ValueError(f"{framework}: device={device!r}: numpy arrays live on the host; use device='cpu', or "
                         f"h5pack.Loader (PyTorch), h5pack.jax.Loader or h5pack.tf.dataset for batches on a GPU")


class Loader(Stream):
    """h5pack.Loader's iterable over batches, yielding numpy arrays: ``(images, labels)`` (``indices``
    last with ``with_indices=True``), images (B, C, H, W) (``layout="nhwc"``: (B, H, W, C)) of ``dtype``
    over the reader's memory, labels int64 (B,) (float32 / (B, K) as the file's labels are) of their own.
    Every keyword of h5pack.Loader applies except memory_format; device is "cpu"."""

    _framework = "h5pack.numpy.Loader"

    def _set_device(self, cfg, device):
        host_only(cfg, device, self._framework)

    def _images(self, b, shape, strides):
        return host_array(b.data, b.bytes, numpy_dtype(self._info.dtype), shape, self)

    def _host_ints(self, raw, dtype, shape):
        return host_ints(raw, dtype, shape)

    def _host_copy(self, address, nbytes, dtype, shape):
        """One copy, straight into the array (a batch of masks is megabytes: no bytes object between)."""
        out = np.empty(shape, dtype=dtype)
        if nbytes:
            ctypes.memmove(out.ctypes.data, address, nbytes)
        return out

    def _labels(self, b):
        return batch_labels(b, self._info)

    def _clone_images(self, images):
        return images.copy()
