"""Writes the resume bench's file: N tiny images (1 x 4 x 4 uint8, chunks of K) with int64 labels, by h5py.
Usage: make_file.py OUT.h5 [N=1281167] [K=8] [--lazy]   (ImageNet's sample count; chunks of 8 give its chunk
count for 224 x 224 images packed 8 per chunk, 160,146 chunks). The chunks are allocated at creation, as
h5pack writes an uncompressed file (HDF5's implicit chunk index: opening locates no chunk); --lazy leaves
h5py's default (allocated as written: a chunk index the reader reads chunk by chunk at open, as for a
compressed file, which costs about 5 ms per 10,000 chunks, docs/performance.md)."""
import sys

import h5py
import numpy as np


def create_images(f, n, k, lazy):
    if lazy:
        return f.create_dataset("images", (n, 1, 4, 4), dtype="uint8", chunks=(k, 1, 4, 4))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((k, 1, 4, 4))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((n, 1, 4, 4))
    h5py.h5d.create(f.id, b"images", h5py.h5t.NATIVE_UINT8, space, dcpl=dcpl)
    return f["images"]


def main():
    args = [a for a in sys.argv[1:] if a != "--lazy"]
    out = args[0]
    n = int(args[1]) if len(args) > 1 else 1281167
    k = int(args[2]) if len(args) > 2 else 8
    with h5py.File(out, "w", libver="latest") as f:
        images = create_images(f, n, k, "--lazy" in sys.argv)
        images.attrs["layout"] = "NCHW"
        step = k * 8192
        for i in range(0, n, step):
            rows = np.arange(i, min(n, i + step), dtype=np.uint64)
            images[i:i + len(rows)] = np.broadcast_to((rows % 251).astype(np.uint8)[:, None, None, None],
                                                      (len(rows), 1, 4, 4))
        f.create_dataset("labels", data=(np.arange(n) % 1000).astype(np.int64))


if __name__ == "__main__":
    main()
