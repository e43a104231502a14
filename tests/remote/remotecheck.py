"""What the remote-store tests share (test_http.py, test_s3.py): the files of every storage kind, one
epoch of the Loader's batches, their comparison, and an error's check."""
import os
import subprocess
import sys
import time

import numpy as np
from PIL import Image

from h5test import check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import files  # noqa: E402  (tests/python/files.py: the binding tests' small files)

import h5pack  # noqa: E402


def batches(path, **kw):
    """Every batch of one epoch in file order, as numpy (images, labels, indices)."""
    kw = dict(dict(batch_size=7, device="cpu", dtype="uint8", order="sequential", epochs=1, with_indices=True,
                   threads=2), **kw)
    loader = h5pack.Loader(path, **kw)
    out = [tuple(t.numpy().copy() for t in b) for b in loader]
    loader.close()
    return out


def same(a, b):
    return len(a) == len(b) and all(all(np.array_equal(x, y) for x, y in zip(p, q)) for p, q in zip(a, b))


def pack(h5pack_cli, src, out, *args):
    p = subprocess.run([h5pack_cli, "-q", *args, src, out], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack {args}: {p.stderr}", fatal=True)
    return out


def image_folder(work, name, n, size, seed):
    rng = np.random.default_rng(seed)
    for i in range(n):
        os.makedirs(f"{work}/{name}/c{i % 3}", exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (size[0], size[1], 3), dtype=np.uint8)).save(
            f"{work}/{name}/c{i % 3}/{i}.png")
    return f"{work}/{name}"


def make_files(work, h5pack_cli):
    """Every storage kind, by name: h5py's files (one size, gzip, several sizes), h5pack's (one size in
    many chunks, the same with gzip, tiles, tiles with gzip)."""
    out = {"implicit": files.write(f"{work}/plain.h5"), "gzip": files.write(f"{work}/gzip.h5", compression="gzip"),
           "several sizes": files.write_ragged(f"{work}/ragged.h5")}
    src = image_folder(work, "src", 300, (24, 20), 1)
    out["packed"] = pack(h5pack_cli, src, f"{work}/packed.h5", "--size", "16x16", "--chunk", "8")
    out["packed gzip"] = pack(h5pack_cli, src, f"{work}/packed_gz.h5", "--size", "16x16", "--chunk", "8",
                              "--compress", "gzip")
    big = image_folder(work, "big", 2, (300, 410), 3)
    out["tiles"] = pack(h5pack_cli, big, f"{work}/tiles.h5", "--tiles", "--tile", "64")
    out["tiles gzip"] = pack(h5pack_cli, big, f"{work}/tiles_gz.h5", "--tiles", "--tile", "64", "--compress", "gzip")
    return out


# how each kind is read: several sizes to one size, tiles as patches
READ_AS = {"several sizes": dict(crop="center", output_size=5),
           "tiles": dict(patch=48, patch_mode="sliding", overlap=8),
           "tiles gzip": dict(patch=48, patch_mode="sliding", overlap=8)}


def check_kind(name, path, location, **kw):
    """The Loader's batches of LOCATION equal those of the local file PATH."""
    kw = dict(READ_AS.get(name, {}), **kw)
    local, remote = batches(path, **kw), batches(location, **kw)
    check(len(local) > 0 and same(local, remote), f"{name}: the Loader's batches of {location} equal the "
          f"file's ({len(local)} batches)")


def expect_error(what, fn, *texts, within=None):
    """FN raises an H5packError naming every one of TEXTS (within WITHIN seconds)."""
    t0 = time.monotonic()
    try:
        fn()
        check(False, f"{what}: refused")
        return
    except h5pack.H5packError as e:
        took, msg = time.monotonic() - t0, str(e)
    check(all(t in msg for t in texts), f"{what}: the error names {texts}: {msg}")
    if within is not None:
        check(took < within, f"{what}: the error came after {took:.1f} s (< {within} s)")
