"""Every kind of file read through a store that is not a local file (mem://PATH, reader/store/store_mem.c)
gives what the file gives: the Loader's batches (whole images of one size, gzip, images of several sizes,
patches of images in tiles), h5pack.info(), and h5pack-stats info / run. The layer under every storage
kind is one: this is what a new transport (object storage) has to match.

usage: test_stores.py H5PACK_STATS H5PACK"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import numpy as np
    import torch  # noqa: F401  (the Loader hands out torch tensors)
    from PIL import Image
    import files
except ImportError as e:
    h5test.skip(e)

import h5pack

STATS, H5PACK = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="h5pack-stores-")


def batches(path, **kw):
    """Every batch of one epoch in file order, as numpy (images, labels, indices)."""
    loader = h5pack.Loader(path, batch_size=7, device="cpu", dtype="uint8", order="sequential", epochs=1,
                           with_indices=True, threads=2, **kw)
    out = [tuple(t.numpy().copy() for t in b) for b in loader]
    loader.close()
    return out


def same(a, b):
    return len(a) == len(b) and all(all(np.array_equal(x, y) for x, y in zip(p, q)) for p, q in zip(a, b))


def check_loader(name, path, **kw):
    plain, mem = batches(path, **kw), batches("mem://" + path, **kw)
    check(len(plain) > 0 and same(plain, mem), f"{name}: the Loader's batches through mem:// equal the file's "
          f"({len(plain)} batches)")


def make_tiled():
    os.makedirs(f"{WORK}/src/a", exist_ok=True)
    rng = np.random.default_rng(3)
    for i, (h, w) in enumerate(((300, 410), (90, 700))):
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(f"{WORK}/src/a/{i}.png")
    out = {}
    for name, extra in (("tiles", []), ("tiles_gzip", ["--compress", "gzip"])):
        out[name] = f"{WORK}/{name}.h5"
        p = subprocess.run([H5PACK, "-q", "--tiles", "--tile", "64", *extra, f"{WORK}/src", out[name]],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"h5pack --tiles {extra}: {p.stderr}", fatal=True)
    return out


def check_info_and_stats(path):
    loc = "mem://" + path
    a, b = h5pack.info(path), h5pack.info(loc)
    check(a == b, f"h5pack.info through mem:// equals the file's ({os.path.basename(path)})")
    p = subprocess.run([STATS, "info", loc], capture_output=True, text=True)
    check(p.returncode == 0 and loc in p.stdout, f"h5pack-stats info {loc}: exit {p.returncode} {p.stderr}")
    patch = ["--patch", "48"] if "tiles" in path else []
    p = subprocess.run([STATS, "run", loc, "--device", "cpu", "--batch", "7", "--threads", "2", *patch],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack-stats run {loc}: exit {p.returncode} {p.stderr}")


def main():
    plain = files.write(f"{WORK}/plain.h5")
    gz = files.write(f"{WORK}/gzip.h5", compression="gzip")
    ragged = files.write_ragged(f"{WORK}/ragged.h5")
    check_loader("implicit", plain)
    check_loader("gzip", gz)
    check_loader("several sizes", ragged, crop="center", output_size=5)
    tiled = make_tiled()
    for name, path in tiled.items():
        check_loader(name, path, patch=48, patch_mode="sliding", overlap=8)
    for path in (plain, gz, tiled["tiles"]):
        check_info_and_stats(path)
    p = subprocess.run([STATS, "run", "mem://" + tiled["tiles_gzip"], "--device", "cpu", "--patch", "48"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack-stats run --patch through mem://: exit {p.returncode} {p.stderr}")
    try:
        h5pack.Loader("nope://bucket/train.h5", device="cpu")
        check(False, "an unknown scheme is refused")
    except h5pack.H5packError as e:
        check("nope://" in str(e) and "mem://" in str(e), f"an unknown scheme names itself and the known ones: {e}")
    shutil.rmtree(WORK)
    h5test.finish("stores: the Loader, patches, info and h5pack-stats read every kind of file through mem:// as "
                  "through the file")


main()
