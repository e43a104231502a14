"""Writes the foreign HDF5 files of the chunksrc h5py test into OUTDIR: the layouts h5py users make
(resizable chunked, gzip+shuffle NHWC, default contiguous, appended in pieces, partly written with a fill
value, h5py's automatic chunks (chunks=True: shapes that split images) plain, gzip+shuffle, NHWC and 3-D
gray, odd explicit chunks with fletcher32 and gzip, lzf). Pixels follow the C tests' pattern
(make_files.c test_pixel). Exit 77 when h5py is missing."""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    print("skipped: %s" % e)
    sys.exit(77)


def pattern(n, shape):
    """uint8 images whose flat byte j of image i is i*37 + (j//8)*3 + (j&1), as in make_files.c."""
    per = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)[:, None]
    j = np.arange(per, dtype=np.uint64)[None, :]
    return ((i * 37 + (j // 8) * 3 + (j & 1)) % 256).astype(np.uint8).reshape((n,) + tuple(shape))


def with_labels(f, n, classes=5, dtype="int64"):
    f["labels"] = (np.arange(n) % classes).astype(dtype)
    f["classes"] = ["class%d" % c for c in range(classes)]


def autochunked(f, name, shape, n, **kw):
    """A dataset with h5py's own chunk guess (chunks=True), which must split images for the test to mean
    anything; N images of the pattern written (the rest stays the fill value)."""
    d = f.create_dataset(name, shape=shape, dtype="uint8", chunks=True, **kw)
    if tuple(d.chunks[1:]) == tuple(shape[1:]):
        print("h5py's automatic chunks %s hold whole images: the test would prove nothing" % (d.chunks,))
        sys.exit(1)
    d[:n] = pattern(n, shape[1:])
    print("%s %s: h5py chose chunks %s" % (name, shape, d.chunks))


def write_autochunked(out):
    with h5py.File(out + "/autochunk.h5", "w") as f:
        autochunked(f, "images", (40, 3, 218, 178), 40)
        with_labels(f, 40)
    with h5py.File(out + "/autochunk_gzip.h5", "w") as f:
        autochunked(f, "images", (40, 3, 218, 178), 40, compression="gzip", shuffle=True)
    with h5py.File(out + "/autochunk_nhwc.h5", "w") as f:
        autochunked(f, "images", (40, 218, 178, 3), 40, compression="gzip")
    with h5py.File(out + "/autochunk_gray.h5", "w") as f:
        autochunked(f, "images", (60, 218, 178), 60)
    with h5py.File(out + "/issue13.h5", "w") as f:  # the shape; 5 images written, gzip keeps it small
        autochunked(f, "images", (3000, 3, 218, 178), 5, compression="gzip")


def main(out):
    n = 23
    with h5py.File(out + "/resizable.h5", "w") as f:
        f.create_dataset("images", data=pattern(n, (3, 8, 10)), maxshape=(None, 3, 8, 10), chunks=(4, 3, 8, 10))
        with_labels(f, n)
    with h5py.File(out + "/gzip_nhwc.h5", "w") as f:
        d = f.create_dataset("images", data=pattern(n, (8, 10, 3)), chunks=(5, 8, 10, 3), compression="gzip",
                             compression_opts=5, shuffle=True)
        d.attrs["layout"] = "NHWC"  # a variable-length string attribute
        with_labels(f, n, dtype="uint16")
    with h5py.File(out + "/contiguous.h5", "w") as f:
        f["images"] = pattern(n, (3, 8, 10))
        f.attrs["layout"] = np.bytes_("NCHW")  # a fixed-length string attribute, on the root
        f.attrs["mean"] = np.array([0.1, 0.2, 0.3])
        f.attrs["std"] = np.array([0.4, 0.5, 0.6])
        with_labels(f, n)
    with h5py.File(out + "/appended.h5", "w") as f:
        d = f.create_dataset("images", shape=(0, 3, 8, 10), maxshape=(None, 3, 8, 10), chunks=(6, 3, 8, 10),
                             dtype="uint8", compression="gzip")
        data = pattern(n, (3, 8, 10))
        for start in range(0, n, 7):  # appended in pieces, as a converter loop would
            part = data[start:start + 7]
            d.resize(d.shape[0] + len(part), axis=0)
            d[-len(part):] = part
        with_labels(f, n)
    with h5py.File(out + "/partial.h5", "w") as f:
        d = f.create_dataset("images", shape=(n, 3, 8, 10), chunks=(4, 3, 8, 10), dtype="uint8",
                             compression="gzip", fillvalue=7)
        d[:8] = pattern(8, (3, 8, 10))  # chunks 2.. never written: they read as the fill value 7
    write_autochunked(out)
    with h5py.File(out + "/odd_fletcher.h5", "w") as f:  # a checksum: the reader leaves it to HDF5
        f.create_dataset("images", data=pattern(50, (3, 20, 30)), chunks=(7, 2, 5, 9), fletcher32=True)
    with h5py.File(out + "/odd_gzip.h5", "w") as f:
        f.create_dataset("images", data=pattern(50, (3, 20, 30)), chunks=(7, 2, 5, 9), maxshape=(None, 3, 20, 30),
                         compression="gzip", shuffle=True)
    with h5py.File(out + "/lzf.h5", "w") as f:
        f.create_dataset("images", data=pattern(n, (3, 8, 10)), chunks=(4, 3, 8, 10), compression="lzf")


if __name__ == "__main__":
    main(sys.argv[1])
