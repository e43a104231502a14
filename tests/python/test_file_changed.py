"""A file that changes under a running loader is an H5packError naming the file and the change, never a
signal (issue 41): truncated to a third after 5 batches (mapped, pread, gzip, several sizes, tiles),
rewritten in place with the same size, and replaced by another file (rename): the open reader keeps
reading the old one; a reopen (an epoch after one left early, resume) refuses the new one, as do
h5pack.info()'s names.

usage: test_file_changed.py H5PACK H5PACK_GEN_IMAGES"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import numpy as np
    from PIL import Image
except ImportError as e:
    h5test.skip(e)

import h5pack
import h5pack.numpy

H5PACK, GEN = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="h5pack-changed-")


def pack(name, src, *options):
    out = f"{WORK}/{name}.h5"
    p = subprocess.run([H5PACK, "-q", *options, src, out], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack {' '.join(options)}: {p.stderr}", fatal=True)
    return out


def make_files():
    subprocess.run([GEN, f"{WORK}/photos", "--classes", "3", "--per-class", "120", "--min-size", "40",
                    "--max-size", "90"], check=True, capture_output=True)
    os.makedirs(f"{WORK}/huge/a")
    rng = np.random.default_rng(5)
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (400, 520, 3), dtype=np.uint8)).save(f"{WORK}/huge/a/{i}.png")
    return {
        "one size": (pack("one", f"{WORK}/photos", "--size", "48x48", "--chunk", "64"), {}),
        "gzip": (pack("gzip", f"{WORK}/photos", "--size", "48x48", "--chunk", "64", "--compress", "gzip"), {}),
        "several sizes": (pack("sizes", f"{WORK}/photos", "--chunk", "64"), {"crop": "center", "output_size": 32}),
        "tiles": (pack("tiles", f"{WORK}/huge", "--tiles", "--tile", "64"), {"patch": 48}),
    }


def loader(path, **kw):
    return h5pack.numpy.Loader(path, batch_size=8, threads=2, cache="1M", epochs=3, dtype="uint8", **kw)


def iterate_after(path, change, **kw):
    """5 batches, then CHANGE(path), then on to the end: the exception raised, or None."""
    ld = loader(path, **kw)
    it = iter(ld)
    for _ in range(5):
        next(it)
    change(path)
    try:
        for _ in range(100000):
            next(it)
    except StopIteration:
        return None
    except h5pack.H5packError as e:
        return e
    finally:
        ld.close()


def truncate_to_third(path):
    os.truncate(path, os.path.getsize(path) // 3)


def rewrite_in_place(path):
    data = open(path, "rb").read()
    with open(path, "r+b") as f:
        f.write(data[: 1 << 16])
        os.fsync(f.fileno())
    t = os.stat(path).st_mtime_ns
    os.utime(path, ns=(t + 1_000_000, t + 1_000_000))  # a coarse clock could leave the time as it was


def says_changed(e, path):
    return e is not None and os.path.basename(path) in str(e) and "changed" in str(e)


def check_truncations(files):
    for name, (path, kw) in files.items():
        paths = [("", path)] + ([("pread", path)] if name == "one size" else [])
        for how, original in paths:
            work = f"{WORK}/work.h5"
            shutil.copy(original, work)
            if how:
                os.environ["H5PACK_NO_MMAP"] = "1"
            try:
                e = iterate_after(work, truncate_to_third, **kw)
            finally:
                os.environ.pop("H5PACK_NO_MMAP", None)
            check(isinstance(e, h5pack.H5packError) and says_changed(e, work),
                  f"{name} {how}: truncated to a third while read -> an error naming the file and the change: {e}")


def check_rewrite(files):
    path = f"{WORK}/work.h5"
    shutil.copy(files["one size"][0], path)
    e = iterate_after(path, rewrite_in_place)
    check(says_changed(e, path) and "written" in str(e), f"rewritten in place, same size -> an error: {e}")


def check_replaced(files):
    path, other = f"{WORK}/work.h5", f"{WORK}/other.h5"
    shutil.copy(files["one size"][0], path)
    shutil.copy(files["gzip"][0], other)
    names = h5pack.info(path)["filenames"]
    ld = h5pack.numpy.Loader(path, batch_size=8, threads=2, epochs=3, order="sequential", with_indices=True)
    it = iter(ld)
    seen = [next(it)[2].copy()]
    os.replace(other, path)  # another file under the name: the open reader goes on with the old one
    seen += [idx.copy() for _, _, idx in it]
    check(np.array_equal(np.concatenate(seen), np.arange(360)), "the epoch under way when the file was replaced "
          "is read whole from the old file")
    for _, _, idx in ld:
        break  # an epoch left early: the next for reopens the file
    try:
        list(ld)
        check(False, "a reopen of a replaced file is refused")
    except h5pack.H5packError as e:
        check(says_changed(e, path) and "replaced" in str(e), f"the reopen names the replacement: {e}")
    ld.close()
    try:
        names[0]
        check(False, "names read after a replacement are refused")
    except h5pack.H5packError as e:
        check(says_changed(e, path), f"h5pack.info names after a replacement: {e}")


def main():
    files = make_files()
    check_truncations(files)
    check_rewrite(files)
    check_replaced(files)
    shutil.rmtree(WORK)
    h5test.finish("a file changed under the loader is an error naming it, on every path")


main()
