"""The timeline from Python and its plot: Loader(timeline=...) writes the library's CSV (the count columns
add up to the loader's batches, GPU columns "nan" on the CPU), H5PACK_TIMELINE is honoured and
timeline="" turns it off, an unwritable path raises naming it; `h5pack-stats plot` turns the CSV into SVG
that parses as XML and has a line per series, and rejects a broken CSV naming FILE:LINE.

usage: test_timeline.py H5PACK_STATS"""
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    import torch  # noqa: F401  (the Loader needs it)
    import h5pack
except ImportError as e:
    h5test.skip(e)

N, BATCH = 64, 8


def make_file(path):
    # the latest format, as h5pack writes: no forked probe of its metadata (an old-format file is probed
    # in a child process, which a threaded, sanitized process can stall: issue 41)
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("images", data=np.random.default_rng(0).integers(0, 255, (N, 3, 16, 16), dtype=np.uint8),
                         chunks=(8, 3, 16, 16))
        f.create_dataset("labels", data=np.arange(N) % 5)


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def test_loader(h5, tmp):
    tl = os.path.join(tmp, "loader.csv")
    loader = h5pack.Loader(h5, batch_size=BATCH, device="cpu", epochs=1, order="random", cache="4K",
                           timeline=tl, timeline_interval=0.02)
    n = 0
    for images, labels in loader:
        n += images.shape[0]
        time.sleep(0.03)  # a training step: rows keep coming meanwhile
    loader.close()
    check(n == N, f"{n} samples")
    header, rows = read_rows(tl)
    check(header[:3] == ["t_s", "dt_s", "epoch"], f"header {header}")
    for name in ("samples_per_s", "read_mb_per_s", "delivered_mb_per_s", "stall_fraction", "hit_rate",
                 "cache_bytes", "device_idle_fraction"):
        check(name in header, f"column {name}")
    col = {name: i for i, name in enumerate(header)}
    check(len(rows) >= 3, f"{len(rows)} rows")
    check(sum(r[col["samples"]] for r in rows) == N, "samples add up")
    check(all(math.isnan(r[col["device_idle_fraction"]]) for r in rows), "no GPU columns on the CPU")
    check(all(0 <= r[col["stall_fraction"]] <= 1 for r in rows), "stall in [0, 1]")
    return tl


def test_env(h5, tmp):
    tl = os.path.join(tmp, "env.csv")
    os.environ["H5PACK_TIMELINE"] = tl
    try:
        h5pack.Loader(h5, batch_size=BATCH, device="cpu", epochs=1, timeline="").close()
        check(not os.path.exists(tl), 'timeline="" wrote the H5PACK_TIMELINE file')
        loader = h5pack.Loader(h5, batch_size=BATCH, device="cpu", epochs=1)
        for _ in loader:
            pass
        loader.close()
        check(os.path.exists(tl), "H5PACK_TIMELINE ignored")
        check(sum(r[4] for r in read_rows(tl)[1]) == N, "env timeline samples add up")
    finally:
        del os.environ["H5PACK_TIMELINE"]
    bad = os.path.join(tmp, "no_such_dir", "t.csv")
    try:
        h5pack.Loader(h5, batch_size=BATCH, device="cpu", timeline=bad)
        check(False, "an unwritable timeline opened")
    except RuntimeError as e:
        check(bad in str(e), f"message names the path: {e}")


def test_plot(tool, tl, tmp):
    svg = os.path.join(tmp, "t.svg")
    p = subprocess.run([tool, "plot", tl, "-o", svg], capture_output=True, text=True)
    check(p.returncode == 0, f"plot failed: {p.stderr}")
    root = ET.parse(svg).getroot()
    check(root.tag.endswith("svg"), "root is <svg>")
    ns = "{http://www.w3.org/2000/svg}"
    texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
    for label in ("samples/s", "MB/s", "stall", "hit rate", "delivered"):
        check(label in texts, f"label {label}")
    check(len(list(root.iter(ns + "polyline"))) >= 4, "a line per series")
    lines = open(tl).read().splitlines()
    bad = os.path.join(tmp, "bad.csv")
    with open(bad, "w") as f:
        f.write("\n".join(lines[:3] + [lines[3].replace(",", ",x", 1)] + lines[4:]) + "\n")
    p = subprocess.run([tool, "plot", bad, "-o", svg], capture_output=True, text=True)
    check(p.returncode == 2 and f"{bad}:4:" in p.stderr, f"bad CSV: rc {p.returncode}, {p.stderr}")
    with open(bad, "w") as f:
        f.write("a,b\n1,2\n")
    p = subprocess.run([tool, "plot", bad, "-o", svg], capture_output=True, text=True)
    check(p.returncode == 2 and f"{bad}:1:" in p.stderr, f"not a timeline: {p.stderr}")
    p = subprocess.run([tool, "plot", tl], capture_output=True, text=True)
    check(p.returncode == 1 and "-o" in p.stderr, "missing -o")


def test_loader_reopens(h5, tmp, tool):
    """set_epoch(e) with a break after a few batches (a max-steps loop) reopens the reader every epoch:
    the file keeps every epoch's rows (it used to hold only the last), t_s keeps rising, and it plots."""
    tl = os.path.join(tmp, "reopen.csv")
    loader = h5pack.Loader(h5, batch_size=BATCH, device="cpu", order="random", cache="4K", timeline=tl,
                           timeline_interval=0.02)
    delivered = 0
    for epoch in range(3):
        loader.set_epoch(epoch)
        for k, (images, _) in enumerate(loader):
            delivered += images.shape[0]
            time.sleep(0.01)
            if k == 2:
                break
    loader.close()
    header, rows = read_rows(tl)
    col = {name: i for i, name in enumerate(header)}
    check(sum(r[col["samples"]] for r in rows) == delivered, f"samples {sum(r[col['samples']] for r in rows)} "
          f"of {delivered} delivered over three readers")
    check(sorted({int(r[col["epoch"]]) for r in rows}) == [0, 1, 2], "every epoch's rows are kept")
    check(all(b[0] >= a[0] for a, b in zip(rows, rows[1:])), "t_s never goes back")
    p = subprocess.run([tool, "plot", tl, "-o", os.path.join(tmp, "reopen.svg")], capture_output=True, text=True)
    check(p.returncode == 0, f"plot of the continued file: {p.stderr}")
    h5pack.Loader(h5, batch_size=BATCH, device="cpu", timeline=tl).close()  # a new Loader: a new file
    header, rows = read_rows(tl)
    check(sum(r[col["samples"]] for r in rows) == 0, "a new Loader overwrites the file")


def test_two_loaders(h5, tmp):
    """A train and a val loader on one name: each reopen continues the loader's own file, even after the
    other loader (holding the first name) is closed."""
    tl = os.path.join(tmp, "two.csv")
    make = lambda: h5pack.Loader(h5, batch_size=BATCH, device="cpu", order="random", cache="4K",  # noqa: E731
                                 timeline=tl, timeline_interval=0.02)
    a, b = make(), make()
    n = sum(images.shape[0] for images, _ in b)
    a.close()
    b.set_epoch(3)
    n += sum(images.shape[0] for images, _ in b)
    b.close()
    b_file = os.path.join(tmp, "two.1.csv")
    header, rows = read_rows(b_file)
    col = {name: i for i, name in enumerate(header)}
    check(sum(r[col["samples"]] for r in rows) == n == 2 * N, f"{b_file} holds both of b's readers")
    header, rows = read_rows(tl)
    check(sum(r[col["samples"]] for r in rows) == 0, f"{tl} (a's) got none of b's rows")


def main():
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="h5pack_timeline_") as tmp:
        h5 = os.path.join(tmp, "t.h5")
        make_file(h5)
        tl = test_loader(h5, tmp)
        test_env(h5, tmp)
        test_loader_reopens(h5, tmp, tool)
        test_two_loaders(h5, tmp)
        test_plot(tool, tl, tmp)
    h5test.finish("timeline python checks passed")


if __name__ == "__main__":
    main()
