"""A cache too small for the chunk order's window of 16 chunks is never silent (issue 41): the Loader warns
once (h5pack.ShuffleWarning) naming a cache that keeps the window, and that cache does keep it; an
explicit window, order="random" and a large cache give no warning; h5pack-stats simulate's advice names
the window, not only the bytes read.

usage: test_shuffle_window.py H5PACK_STATS"""
import re
import subprocess
import sys
import tempfile
import warnings

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
except ImportError as e:
    h5test.skip(e)

import h5pack
import h5pack.numpy

STATS = sys.argv[1]
N, K = 4000, 100  # 40 chunks of 100 images of 3x8x8


def write(path):
    with h5py.File(path, "w") as f:
        images = np.random.default_rng(1).integers(0, 256, (N, 3, 8, 8), dtype=np.uint8)
        f.create_dataset("images", data=images, chunks=(K, 3, 8, 8)).attrs["layout"] = np.bytes_("NCHW")
        f.create_dataset("labels", data=(np.arange(N) % 10).astype(np.int64))


def open_loader(path, **kw):
    """The loader's window and the ShuffleWarnings its open gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ld = h5pack.numpy.Loader(path, batch_size=32, threads=1, **kw)
    window = int(ld._info.window)
    ld.close()
    return window, [str(w.message) for w in caught if issubclass(w.category, h5pack.ShuffleWarning)]


def main():
    path = tempfile.mkdtemp(prefix="h5pack-shuffle-") + "/small.h5"
    write(path)
    window, said = open_loader(path, cache="40K")
    check(window < 16 and len(said) == 1, f"cache=40K: window {window}, one ShuffleWarning ({said})")
    m = re.search(r'cache="(\d+)M"', said[0]) if said else None
    check(m is not None and "40K" in said[0] and path in said[0], f"the warning names the file, the cache and "
          f"a cache that keeps the window: {said}")
    if m:
        window, again = open_loader(path, cache=f"{m.group(1)}M")
        check(window >= 16 and not again, f"the cache it names gives a window of {window} >= 16, no warning")
    for kw in ({"cache": "40K", "window": 2}, {"cache": "40K", "order": "random"}, {"cache": "1G"}):
        window, said = open_loader(path, **kw)
        check(not said, f"{kw}: no ShuffleWarning ({said})")
    p = subprocess.run([STATS, "simulate", path, "--cache", "40K,1M", "--policy", "belady", "--batch", "32"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "window of" in p.stdout and "shuffling weakens" in p.stdout,
          f"simulate's advice counts the window: {p.stdout[-600:]} {p.stderr}")
    h5test.finish("a narrow chunk-order window is warned about and the named cache widens it")


main()
