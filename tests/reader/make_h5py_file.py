"""Writes the files an h5py user would: a gzip dataset with maxshape=(None, ...) and a contiguous one.

Pixels follow pixel_of() in h5file.h, labels are sample % 7 (int64), so the C test can check every byte.
Usage: make_h5py_file.py OUT.h5   (exit 77 when h5py is missing: the test is then skipped)
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

N, C, H, W = 53, 3, 6, 5
s = np.arange(N, dtype=np.int64).reshape(N, 1, 1, 1)
c = np.arange(C).reshape(1, C, 1, 1)
y = np.arange(H).reshape(1, 1, H, 1)
x = np.arange(W).reshape(1, 1, 1, W)
pixels = ((s * 37 + (s >> 8) * 11 + c * 101 + y * 13 + x * 7) % 251).astype(np.uint8)

with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("images", data=pixels, maxshape=(None, C, H, W), chunks=(4, C, H, W), compression="gzip")
    f.create_dataset("contiguous", data=pixels)
    f.create_dataset("labels", data=np.arange(N, dtype=np.int64) % 7)
