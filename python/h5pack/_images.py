"""h5pack.read_image: one stored image as a (height, width, channels) uint8 array, for looking at a file."""
import ctypes
import os

from . import _lib
from ._core import H5packError, H5packValueError, lib


def _call(path, index, out, out_len, dims):
    err = ctypes.create_string_buffer(1024)
    rc = lib().h5pack_read_image(os.fsencode(path), index, out, out_len, dims, err, len(err))
    if rc < 0:
        cls = H5packValueError if rc == _lib.EINVAL else H5packError
        raise cls(rc, err.value.decode(errors="replace") or lib().h5pack_strerror(rc).decode())


def read_image(path, index):
    """Image INDEX of the h5pack file PATH exactly as stored: a numpy uint8 array (height, width, channels),
    whatever the file's layout (NCHW, NHWC, gray) or storage (one size, or images of several sizes).
    Opens the file per call: for looking at images, not for training (use Loader)."""
    import numpy as np

    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"read_image: index must be an int >= 0, got {index!r}")
    dims = (ctypes.c_uint64 * 3)()
    _call(path, index, None, 0, dims)
    image = np.empty((dims[0], dims[1], dims[2]), dtype=np.uint8)
    _call(path, index, image.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), image.nbytes, dims)
    return image
