#!/usr/bin/env python3
"""Sliding-window patches of a huge tiled image: h5pack.Patches vs h5py slicing vs a plain memcpy, in one
process, rounds alternating so that a shared, noisy machine hurts every side alike.

Every S x S window (S - overlap stride, the reader's rule: h5pack.patches._windows_along) of every image of
a `h5pack --tiles` file, image after image, row by row, as uint8 (B, S, S, C) batches on the CPU:

  h5pack  h5pack.Patches(size=S, overlap=O, batch_size=B, device="cpu", dtype="uint8", layout="nhwc",
          threads=T): one pass of a fresh reader per round, its opening timed too (a reader kept open
          would fill its prefetch ring with the next pass while the other sides run). Its ring of batches
          is the one the previous reader left (h5pack keeps a closed reader's ring for the next of the
          same sizes), as h5py and memcpy below reuse their preallocated batch
  h5pack_trimmed  the same after h5pack.trim(): a first reader in the process, its ring in fresh memory
          (the kernel's page faults and zeroing, on a VM also its host's)
  h5py    f["tiles"][str(i)][y:y+S, x:x+S] read_direct into a preallocated (B, S, S, C) batch, with h5py's
          default chunk cache, one thread (HDF5 holds a global lock: more Python threads would not help)
  memcpy  np.copyto of the same patch bytes from windows of a preloaded 4096 x 4096 x C buffer into the
          batch: one thread, and T threads (numpy releases the GIL while it copies); the ratio takes the
          faster of the two

The page cache: by default the file is dropped from it and read back by one untimed h5pack pass first, as a
file read from disk is (--page-cache as-is keeps whatever state it is in; see bring_in).

The input (unless --h5) is a SIDE x SIDE RGB PNG written chunk by chunk (a gradient plus small random
noise, never whole in memory) as WORK/side<SIDE>/src/a/big.png, packed with
`h5pack --tiles --tile T` into WORK/side<SIDE>/big-t<T>.h5; both are kept and reused. The packed file
is read from the page cache (it was just written, or the first round brings it in). Goals: h5pack >= 5x
h5py, h5pack >= 0.5x memcpy.

Run (from the repository root, after building into BUILD):

  PYTHONPATH=python H5PACK_LIBRARY=BUILD/reader/libh5pack.so /usr/bin/python3 \\
      bench/patches/sliding_vs_h5py.py --build BUILD [--side 20000] [--rounds 3] [--h5py-limit N]

--side 3000 is a quick check. --h5py-limit N times h5py on the first N windows only, for when a full pass
would take minutes; its patches/s are then extrapolated from them (the output says so).
"""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

import h5pack
from h5pack.patches import _windows_along

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_SIDE = 4096  # the memcpy side's preloaded buffer: larger than any cache, as the tiles are


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build-gpu"), help="build dir holding the h5pack binary")
    p.add_argument("--work", default="/tmp/h5pack-bench-patches", help="folder for the PNG and the packed file")
    p.add_argument("--h5", default=None, help="an existing `h5pack --tiles` file (skips generation)")
    p.add_argument("--side", type=int, default=20000, help="the generated image's side")
    p.add_argument("--tile", type=int, default=256, help="the packed file's tile side")
    p.add_argument("--size", type=int, default=512, help="patch side S")
    p.add_argument("--overlap", type=int, default=64, help="pixels shared by neighbouring windows")
    p.add_argument("--batch", type=int, default=64, help="patches per batch")
    p.add_argument("--threads", type=int, default=2, help="h5pack threads, and the threaded memcpy's")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each timing every side once")
    p.add_argument("--cache", default=None, help="h5pack's tile cache, e.g. 64M (default: the Loader's)")
    p.add_argument("--h5py-limit", type=int, default=None, help="time h5py on the first N windows only")
    p.add_argument("--page-cache", choices=("h5pack", "as-is"), default="h5pack",
                   help="h5pack (default): the file dropped from the page cache and read back by an untimed "
                        "h5pack pass, as a file read from disk is; as-is: whatever state it is in")
    a = p.parse_args()
    if not 0 <= a.overlap < a.size:
        p.error("--overlap must be in [0, size)")
    if a.rounds < 1 or (a.h5py_limit is not None and a.h5py_limit < 1):
        p.error("--rounds and --h5py-limit must be at least 1")
    return a


# ---- input --------------------------------------------------------------------------------------------

def png_chunk(f, tag, data):
    f.write(struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data)))


def write_png(path, side, rows_per_block=256, seed=0):
    """A SIDE x SIDE RGB PNG, rows_per_block rows at a time: R/G/B gradients plus noise in [0, 16), every
    row filter 0, one zlib stream (level 1) split into IDAT chunks as it comes."""
    rng = np.random.default_rng(seed)
    x = np.arange(side, dtype=np.uint32)
    z = zlib.compressobj(1)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        png_chunk(f, b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
        for y0 in range(0, side, rows_per_block):
            y = np.arange(y0, min(y0 + rows_per_block, side), dtype=np.uint32)[:, None]
            rows = np.zeros((len(y), 1 + 3 * side), dtype=np.uint8)  # column 0: filter type 0 (none)
            pixels = rows[:, 1:].reshape(len(y), side, 3)
            pixels[..., 0] = x * 239 // side
            pixels[..., 1] = y * 239 // side
            pixels[..., 2] = (x + y) * 239 // (2 * side)
            pixels += rng.integers(0, 16, size=pixels.shape, dtype=np.uint8)
            data = z.compress(rows.tobytes())
            if data:
                png_chunk(f, b"IDAT", data)
        png_chunk(f, b"IDAT", z.flush())
        png_chunk(f, b"IEND", b"")


def make_input(a):
    """The packed file (made and timed unless it exists)."""
    if a.h5:
        return a.h5
    work = os.path.join(a.work, f"side{a.side}")
    h5 = os.path.join(work, f"big-t{a.tile}.h5")
    if os.path.exists(h5):
        print(f"input: {h5} (exists; generation skipped)", flush=True)
        return h5
    src = os.path.join(work, "src")
    png = os.path.join(src, "a", "big.png")
    os.makedirs(os.path.dirname(png), exist_ok=True)
    t0 = time.perf_counter()
    write_png(png, a.side)
    t1 = time.perf_counter()
    print(f"generation: {a.side}x{a.side} PNG of {os.path.getsize(png) / 2**20:.0f} MiB in {t1 - t0:.1f} s",
          flush=True)
    cmd = [os.path.join(a.build, "h5pack"), "--tiles", "--tile", str(a.tile), src, h5 + ".part", "-q"]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    os.rename(h5 + ".part", h5)
    print(f"packing: {os.path.getsize(h5) / 2**20:.0f} MiB in {time.perf_counter() - t1:.1f} s", flush=True)
    return h5


def window_list(h5, size, overlap):
    """Every window (image, y, x) in the reader's order, and the images' channel count."""
    with h5py.File(h5, "r") as f:
        shapes = f["image_shapes"][()]
        channels = f["tiles"]["0"].shape[2]
    stride = size - overlap
    wins = [(i, y, x) for i, (h, w) in enumerate(shapes)
            for y in _windows_along(int(h), size, stride) for x in _windows_along(int(w), size, stride)]
    return np.array(wins, dtype=np.int64), channels


def batches(n, batch):
    return [(b, min(b + batch, n)) for b in range(0, n, batch)]


# ---- the three sides ----------------------------------------------------------------------------------

def open_patches(h5, a):
    cache = {} if a.cache is None else {"cache": a.cache}
    return h5pack.Patches(h5, size=a.size, overlap=a.overlap, batch_size=a.batch, device="cpu", dtype="uint8",
                          layout="nhwc", threads=a.threads, **cache)


def check_first_batch(h5, a, wins):
    """h5pack's first batch holds the pixels h5py reads for the same windows (a separate, closed reader)."""
    with open_patches(h5, a) as p:
        images, where = next(iter(p))
        images = images.numpy().copy()
    n = len(where)
    expected = np.zeros_like(images)
    read_h5py(h5, wins[:n], a.size, expected, [(0, n)])
    if not (where.numpy() == wins[:n]).all() or not (images == expected).all():
        raise SystemExit("h5pack's first batch differs from h5py's slices of the same windows")


def bring_in(h5, a, wins):
    """The file out of the page cache, then read back by one untimed h5pack pass. How a file entered the
    page cache decides the size of its folios there (docs/patches.md, "Huge pages of the page cache"):
    read from disk, or written by h5pack, it is kept in 2 MiB folios; pulled back in by small preads
    (h5py's rounds of an earlier run, after part of it was evicted), in small ones, and then every h5pack
    pass pays for mapping them page by page. This makes the runs start from one state."""
    fd = os.open(h5, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    n, dt, _opened, _stats = pass_h5pack(h5, a, wins)
    print(f"page cache: {h5} dropped and read back from disk by one h5pack pass ({n} windows in {dt:.2f} s, "
          f"untimed)", flush=True)


def pass_h5pack(h5, a, wins, trim=False):
    """One pass of a fresh h5pack.Patches, timed from its opening (an open reader runs ahead into its next
    pass while the other sides are timed): (patches, seconds, seconds of them opening, the reader's
    stats). TRIM: the kept ring freed first (untimed). Checks the windows against WINS afterwards."""
    if trim:
        h5pack.trim()
    wheres, t0 = [], time.perf_counter()
    with open_patches(h5, a) as p:
        opened = time.perf_counter() - t0
        for _images, where in p:
            wheres.append(where)
        dt = time.perf_counter() - t0
        stats = p.stats()
    got = np.concatenate([w.numpy() for w in wheres]) if wheres else np.zeros((0, 3), np.int64)
    if got.shape != wins.shape or not (got == wins).all():
        raise SystemExit(f"h5pack.Patches yielded {len(got)} windows, expected {len(wins)} in the reader's order")
    return len(got), dt, opened, stats


def read_h5py(h5, wins, size, out, spans):
    """WINS into OUT batch by batch (SPANS of rows of WINS), through h5py's default chunk cache."""
    with h5py.File(h5, "r") as f:
        tiles = f["tiles"]
        for b0, b1 in spans:
            for j, (i, y, x) in enumerate(wins[b0:b1]):
                d = tiles[str(i)]
                h, w = min(size, d.shape[0] - y), min(size, d.shape[1] - x)
                if h < size or w < size:
                    out[j] = 0
                d.read_direct(out, np.s_[y:y + h, x:x + w], np.s_[j, :h, :w])


def bytes_read_by_process():
    """This process's bytes read through read/pread so far (/proc/self/io rchar, page cache hits too)."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


def pass_h5py(h5, wins, size, out, limit):
    """(patches, seconds, bytes read) of h5py reading the first LIMIT windows (None: all)."""
    n = len(wins) if limit is None else min(limit, len(wins))
    r0, t0 = bytes_read_by_process(), time.perf_counter()
    read_h5py(h5, wins[:n], size, out, batches(n, len(out)))
    return n, time.perf_counter() - t0, bytes_read_by_process() - r0


def copy_patches(src, offsets, size, out):
    for j, (y, x) in enumerate(offsets):
        np.copyto(out[j], src[y:y + size, x:x + size])


def pass_memcpy(src, wins, size, out, pool, threads):
    """The patch bytes of WINS copied from windows of SRC into OUT, batch by batch; POOL splits each
    batch between THREADS threads (None: this thread copies)."""
    offsets = wins[:, 1:] % (len(src) - size + 1)
    t0 = time.perf_counter()
    for b0, b1 in batches(len(wins), len(out)):
        if pool is None:
            copy_patches(src, offsets[b0:b1], size, out)
            continue
        cuts = np.linspace(0, b1 - b0, threads + 1).astype(int)
        jobs = [pool.submit(copy_patches, src, offsets[b0 + lo:b0 + hi], size, out[lo:hi])
                for lo, hi in zip(cuts[:-1], cuts[1:])]
        for job in jobs:
            job.result()
    return len(wins), time.perf_counter() - t0


# ---- report -------------------------------------------------------------------------------------------

def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def describe_pass(s):
    return (f"read {s['bytes_read'] / 2**20:.0f} MiB (x{s['read_amplification']:.2f}), "
            f"hit rate {s['hit_rate']:.3f}, busy read {s['busy_read_s']:.2f} s, "
            f"assemble {s['busy_assemble_s']:.2f} s, copy {s['busy_copy_s']:.2f} s, stall {s['stall_s']:.2f} s")


def run_rounds(h5, a, wins, channels):
    """Each round times every side once, in the same order; returns {side: [patches/s per round]} and the
    last h5pack reader's stats."""
    copies = [("memcpy_1t", 1)] + ([(f"memcpy_{a.threads}t", a.threads)] if a.threads > 1 else [])
    rates = {k: [] for k in ["h5pack", "h5pack_trimmed", "h5py"] + [key for key, _ in copies]}
    out = np.empty((a.batch, a.size, a.size, channels), dtype=np.uint8)
    side = max(SOURCE_SIDE, a.size)
    src = np.random.default_rng(1).integers(0, 256, (side, side, channels), dtype=np.uint8)
    with ThreadPoolExecutor(a.threads) as pool:
        for r in range(1, a.rounds + 1):
            for key in ("h5pack", "h5pack_trimmed"):
                n, dt, opened, pass_stats = pass_h5pack(h5, a, wins, trim=key == "h5pack_trimmed")
                rates[key].append(n / dt)
                if key == "h5pack":
                    stats = pass_stats
                print(f"round {r}: {key:10s} {n / dt:8.1f} patches/s ({n} in {dt:.2f} s, open {opened * 1e3:.0f} "
                      f"ms; {describe_pass(pass_stats)})", flush=True)
            n, dt, read = pass_h5py(h5, wins, a.size, out, a.h5py_limit)
            rates["h5py"].append(n / dt)
            part = "" if n == len(wins) else f", first {n} of {len(wins)} windows: extrapolated"
            print(f"round {r}: h5py       {n / dt:8.1f} patches/s ({n} in {dt:.2f} s{part}; read {read / 2**20:.0f} "
                  f"MiB, x{read / (n * out[0].nbytes):.2f} the patch bytes)", flush=True)
            for key, threads in copies:
                n, dt = pass_memcpy(src, wins, a.size, out, pool if threads > 1 else None, threads)
                rates[key].append(n / dt)
                print(f"round {r}: {key:10s} {n / dt:8.1f} patches/s ({n} in {dt:.2f} s)", flush=True)
    return rates, stats


def report(a, rates, stats, wins):
    med = {k: statistics.median(v) for k, v in rates.items()}
    best = {k: max(v) for k, v in rates.items()}
    for k in rates:
        print(f"{k:10s} median {med[k]:8.1f}  best {best[k]:8.1f} patches/s  rounds "
              + " ".join(f"{v:.1f}" for v in rates[k]))
    memcpy = max((k for k in rates if k.startswith("memcpy")), key=med.get)
    vs_h5py, vs_memcpy = med["h5pack"] / med["h5py"], med["h5pack"] / med[memcpy]
    print(f"h5pack_patches_per_s: {med['h5pack']:.1f}")
    print(f"h5py_patches_per_s: {med['h5py']:.1f}")
    print(f"memcpy_patches_per_s: {med[memcpy]:.1f}")
    print(f"memcpy_used: {memcpy}")
    print(f"h5pack_vs_h5py: {vs_h5py:.2f} (goal >= 5: {'met' if vs_h5py >= 5 else 'NOT met'})")
    print(f"h5pack_trimmed_vs_h5py: {med['h5pack_trimmed'] / med['h5py']:.2f} (a first reader, ring in fresh memory)")
    print(f"h5pack_vs_memcpy: {vs_memcpy:.2f} (goal >= 0.5: {'met' if vs_memcpy >= 0.5 else 'NOT met'})")
    print(f"h5pack_vs_h5py_best: {best['h5pack'] / best['h5py']:.2f}")
    print(f"h5pack_vs_memcpy_best: {best['h5pack'] / max(v for k, v in best.items() if k.startswith('memcpy')):.2f}")
    print(f"read_amplification: {stats['read_amplification']:.3f}")
    print(f"hit_rate: {stats['hit_rate']:.4f}")
    print(f"windows: {len(wins)}")
    print(f"nproc: {os.cpu_count()}")
    print(f"cpu: {cpu_model()}")
    print(f"command: {' '.join([sys.executable] + sys.argv)}")


def main():
    a = parse_args()
    t0 = time.perf_counter()
    h5 = make_input(a)
    wins, channels = window_list(h5, a.size, a.overlap)
    if a.page_cache == "h5pack":
        bring_in(h5, a, wins)
    check_first_batch(h5, a, wins)
    print(f"{h5}: {len(wins)} windows of {a.size}x{a.size}x{channels} (overlap {a.overlap}), batch {a.batch}, "
          f"h5pack threads {a.threads}, cache {a.cache or 'default'}, OMP_WAIT_POLICY "
          f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}, {a.rounds} rounds (values are medians over rounds)",
          flush=True)
    rates, stats = run_rounds(h5, a, wins, channels)
    report(a, rates, stats, wins)
    print(f"total_wall_s: {time.perf_counter() - t0:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
