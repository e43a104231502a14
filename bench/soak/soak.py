"""Soak bench (issue 41): many open / iterate / close cycles of the Python loaders over every read path, in
one process, with resident memory, open descriptors, threads and child processes measured after each.

usage: /usr/bin/python3 bench/soak/soak.py [--cycles 1000] [--minutes M] [--seed S] [--dir DIR]
       [--h5pack PATH] [--gen-images PATH] [--lib libh5pack.so] [--warmup 100] [--window 100]
       [--max-rss-growth MIB] [--small] [--paths mapped,pread,...] [--front torch,numpy] [--json FILE]
       [--quiet]

Every cycle draws one configuration at random and runs it to its close:
  read path   mapped (uncompressed, h5py, implicit index), pread (the same file with H5PACK_NO_MMAP=1, which
              the library reads at each open: set for the whole cycle), old (h5py's default format: the
              open's probe runs in the helper process h5pack-isolate), gzip, sizes (images of several sizes,
              centre or random resized crop), tiles (Loader(patch=S) over images in tiles, random or
              sliding), rrc (random resized crops + flip), echo (batch echo 2-3), sample_echo;
  loader      h5pack.Loader (PyTorch) or h5pack.numpy.Loader, copy=True now and then; threads 1-4,
              prefetch 2-4, batch 8-32, order, cache, dtype float32 or uint8;
  iteration   one or two `for` loops, each left early by a `break` at a random batch (60 %) or run to the
              epoch's end;
  kept        now and then a batch's images are kept in a pool shared by all cycles (at most 16): held
              across batches, the close and later cycles (copy-on-hold / h5pack_detach), their digest
              checked after every cycle: a kept batch's values never change. Sometimes a *view* of the
              last batch (images[0]) outlives the close (the loader's deferred close), checked and dropped;
  resume      (30 %) mid-epoch state_dict(), the next batch taken as the reference, then load_state_dict()
              into the same loader or into a new one after close(): the next batch must be that one
              (images, labels and indices bit for bit).
After each cycle (every loader closed, views dropped): VmRSS (and RSS less the kept pool's bytes, the
measure of a leak), malloc's bytes in use (mallinfo2: tells a leak from free memory the arenas keep),
/proc/self/fd, /proc/self/task and child processes (any, zombies included).

Pass/fail (exit 1 on a failure, printed with its reason):
  - RSS: the mean of RSS less the kept bytes over the last WINDOW cycles exceeds its mean over cycles
    WARMUP .. WARMUP + WINDOW by more than --max-rss-growth MiB (default 16); the slope over every cycle
    after the warm-up is reported (KiB per cycle);
  - descriptors or threads: after the warm-up, any cycle that ends with more than it started with, or a
    last count above the count at the warm-up's end (a thread count above the cycle's start is read again
    for up to 2 s: a thread the close joined can stay listed a moment); a child process left after any cycle;
  - a kept batch whose values changed, a resumed batch that differs, any exception in a cycle.
--paths big_echo (not drawn by default) adds batch echo over 3x128x128 images in float32 batches of 64
(12 MiB): the CPU backend converts each echo on the consumer thread with OpenMP (reader/backend/backend_cpu.c),
and libgomp keeps that thread's pool of threads - 1 idle threads after the close, so the thread check
fails there (the pool is bounded by the largest `threads` and reused by the next reader; docs/performance.md).
Files are written once into DIR (default: a temporary folder): h5py for mapped/pread/old/gzip, and
h5pack-gen-images (or PIL: --gen-images pil) + the h5pack converter for sizes (--max-side 96) and tiles
(--tile 32). --small makes them tiny (the CI test, tests/soak/test_soak.py, imports this module and calls run()).
"""
import argparse
import gc
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MIB = 1 << 20
KINDS = ("mapped", "pread", "old", "gzip", "sizes", "tiles", "rrc", "echo", "sample_echo")
EXTRA_KINDS = ("big_echo",)  # only when named in --paths (see the module's docstring)
KEPT_MAX = 16


# ---- the process's resources ------------------------------------------------------------------------

def rss_anon():
    """RssAnon of this process in bytes (the heap: what a leak grows; RssFile is mapped files and code)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


_mallinfo2 = None


def heap_in_use():
    """Bytes glibc's malloc has handed out and not had back (mallinfo2: uordblks + hblkhd, every arena),
    0 where there is no mallinfo2. Flat while RSS grows: the growth is free memory the arenas keep
    (fragmentation), not a leak."""
    global _mallinfo2
    if _mallinfo2 is None:
        import ctypes

        class MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                        "fsmblks", "uordblks", "fordblks", "keepcost")]
        try:
            _mallinfo2 = ctypes.CDLL(None).mallinfo2
            _mallinfo2.restype = MallInfo2
        except (AttributeError, OSError):
            _mallinfo2 = False
    if not _mallinfo2:
        return 0
    m = _mallinfo2()
    return m.uordblks + m.hblkhd


def counts():
    """(VmRSS bytes, open descriptors, threads, child processes) of this process now."""
    with open("/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    fds = len(os.listdir("/proc/self/fd")) - 1  # less listdir's own descriptor
    tasks = os.listdir("/proc/self/task")
    children = 0
    for t in tasks:
        try:
            with open(f"/proc/self/task/{t}/children") as f:
                children += len(f.read().split())
        except OSError:  # a thread that ended meanwhile
            pass
    return rss, fds, len(tasks), children


def slope(ys):
    """Least-squares slope of YS against 0, 1, 2, ... (units of YS per cycle)."""
    n = len(ys)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(ys) / n
    return sum((i - mx) * (y - my) for i, y in enumerate(ys)) / sum((i - mx) ** 2 for i in range(n))


# ---- files ---------------------------------------------------------------------------------------------

def find_tool(name, given):
    if given:
        return given
    for b in ("build", "build-rel", "build-h5"):
        p = os.path.join(ROOT, b, name)
        if os.path.exists(p):
            return p
    return shutil.which(name) or ("pil" if name == "h5pack-gen-images" else None)


def write_files(d, h5pack, gen_images, small, big=False):
    """The files of every read path in D (written once): {name: path}; BIG: also big.h5 (big_echo)."""
    import h5py
    import numpy as np

    if big and not os.path.exists(os.path.join(d, "big.h5")):  # 256 images of 3x128x128: 12 MiB batches of 64
        with h5py.File(os.path.join(d, "big.h5"), "w", libver="latest") as f:
            f.create_dataset("images", data=np.random.default_rng(2).integers(0, 255, (256, 3, 128, 128), np.uint8),
                             chunks=(16, 3, 128, 128))
            f.create_dataset("labels", data=(np.arange(256) % 10).astype(np.int64))

    n = 192 if small else 768
    out = {k: os.path.join(d, k + ".h5") for k in ("uniform", "old", "gzip", "sizes", "tiles", "big")}
    rng = np.random.default_rng(0)
    data = rng.integers(0, 64, (n, 3, 32, 32), dtype=np.uint8)  # compressible by half with gzip
    labels = (np.arange(n) % 10).astype(np.int64)
    if not os.path.exists(out["uniform"]):  # latest format, early allocation: the implicit index (mapped)
        with h5py.File(out["uniform"], "w", libver="latest") as f:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((16, 3, 32, 32))
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            space = h5py.h5s.create_simple(data.shape)
            h5py.Dataset(h5py.h5d.create(f.id, b"images", h5py.h5t.NATIVE_UINT8, space, dcpl=dcpl))[...] = data
            f.create_dataset("labels", data=labels)
    for name, kw in (("old", {}), ("gzip", {"compression": "gzip"})):
        if not os.path.exists(out[name]):  # h5py's default (old) format: the open's probe in the helper
            with h5py.File(out[name], "w") as f:
                f.create_dataset("images", data=data, chunks=(16, 3, 32, 32), **kw)
                f.create_dataset("labels", data=labels)
    for name, gen, pack in (("sizes", ["--classes", "3", "--per-class", "8" if small else "40", "--min-size", "40",
                                       "--max-size", "160"], ["--max-side", "96"]),
                            ("tiles", ["--classes", "2", "--per-class", "3" if small else "8", "--min-size", "100",
                                       "--max-size", "300", "--seed", "3"], ["--tiles", "--tile", "32"])):
        if os.path.exists(out[name]):
            continue
        src = os.path.join(d, name + "-src")
        shutil.rmtree(src, ignore_errors=True)
        if gen_images == "pil":
            pil_images(src, gen)
        else:
            subprocess.run([gen_images, src, *gen], check=True, capture_output=True)
        subprocess.run([h5pack, "-q", "-f", *pack, src, out[name]], check=True, capture_output=True)
        shutil.rmtree(src, ignore_errors=True)
    return out


def pil_images(folder, gen):
    """h5pack-gen-images' folder made with PIL instead (builds without the samples): GEN's --classes,
    --per-class, --min-size, --max-size and --seed; noise PNGs of random sizes."""
    import numpy as np
    from PIL import Image

    o = dict(zip(gen[::2], gen[1::2]))
    rng = np.random.default_rng(int(o.get("--seed", 0)))
    lo, hi = int(o["--min-size"]), int(o["--max-size"])
    for c in range(int(o["--classes"])):
        os.makedirs(os.path.join(folder, f"class_{c:02d}"))
        for i in range(int(o["--per-class"])):
            h, w = rng.integers(lo, hi + 1, 2)
            Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
                os.path.join(folder, f"class_{c:02d}", f"img_{i:04d}.png"))


# ---- one cycle ---------------------------------------------------------------------------------------

def draw(rng, files, kinds=KINDS, fronts=("torch", "numpy")):
    """A random configuration among KINDS and FRONTS: (kind, front-end, path, keywords, no_mmap)."""
    kind = rng.choice(kinds)
    dtype = rng.choice(("float32", "float32", "uint8"))
    kw = dict(batch_size=rng.choice((8, 16, 32)), threads=rng.randint(1, 4), prefetch=rng.randint(2, 4),
              order=rng.choice(("chunk", "random", "sequential")), seed=rng.randrange(1 << 16),
              cache=rng.choice(("256k", "1M", "8M")), dtype=dtype, with_indices=True,
              copy=rng.random() < 0.1)
    path = files["gzip" if kind == "gzip" else "old" if kind == "old" else "uniform"]
    flip = dtype == "float32" and rng.random() < 0.5
    if kind == "sizes":
        path = files["sizes"]
        kw.update(crop=rng.choice(("center", "random_resized")), output_size=rng.choice((24, 32, 48)), flip=flip)
    elif kind == "tiles":
        path = files["tiles"]
        kw.update(patch=rng.choice((16, 32, 48)), flip=flip)
        if rng.random() < 0.5:
            kw.update(patch_mode="sliding", overlap=rng.choice((0, 8)))
        else:
            kw.update(patches_per_epoch=rng.choice((None, 64)))
    elif kind == "rrc":
        kw.update(crop="random_resized", output_size=rng.choice((24, 40)), flip=flip)
    elif kind == "big_echo":  # float32 batches of 12 MiB: an echo converts on the consumer thread with OpenMP
        path = files["big"]
        kw.update(batch_size=64, dtype="float32", echo=2, flip=True, cache="64M", threads=rng.randint(2, 4))
    elif kind in ("echo", "sample_echo"):
        path = files[rng.choice(("uniform", "gzip"))]
        kw.update(echo=rng.randint(2, 3), flip=flip)
        if kind == "sample_echo":
            kw.update(echo_mode="sample")
    return kind, rng.choice(fronts), path, kw, kind == "pread"


def digest(images):
    """A digest of an image batch's values (torch tensor or numpy array, on the host)."""
    import numpy as np

    a = images.numpy() if hasattr(images, "numpy") and not isinstance(images, np.ndarray) else images
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


def batch_digest(batch):
    """Images, labels and indices of a delivery, bit for bit."""
    parts = [digest(batch[0])] + [digest(x) for x in batch[1:] if x is not None]
    return b"".join(parts)


class Soak:
    def __init__(self, files, seed, log, kinds=KINDS, fronts=("torch", "numpy")):
        import numpy as np  # noqa: F401  (before h5pack: the numpy front-end)
        import torch
        import warnings

        import h5pack
        import h5pack.numpy

        warnings.simplefilter("ignore", h5pack.ShuffleWarning)  # small caches on purpose
        self.loaders = {"torch": h5pack.Loader, "numpy": h5pack.numpy.Loader}
        self.torch = torch
        self.files, self.rng, self.log = files, random.Random(seed), log
        self.kinds, self.fronts = kinds, fronts
        self.kept = []  # [images, digest, nbytes, what]: batches kept across cycles
        self.per_kind = {k: dict(cycles=0, batches=0, breaks=0, resumes=0, kept=0, views=0, seconds=0.0)
                         for k in kinds}
        self.failures = []

    def fail(self, what):
        self.failures.append(what)
        self.log(f"FAIL: {what}")

    def keep(self, images, what):
        if len(self.kept) >= KEPT_MAX:
            self.kept.pop(self.rng.randrange(len(self.kept)))
        nbytes = images.nbytes if hasattr(images, "nbytes") else images.element_size() * images.nelement()
        self.kept.append([images, digest(images), int(nbytes), what])

    def check_kept(self, cycle):
        for entry in self.kept:
            images, d, _, what = entry
            if digest(images) != d:
                self.fail(f"cycle {cycle}: kept batch {what} changed value")
                entry[1] = digest(images)  # report it once

    def kept_bytes(self):
        return sum(e[2] for e in self.kept)

    def run_loop(self, ld, stats, cycle, what, resume):
        """One `for` over LD: a break at a random batch (60 %), keeping some batches; with RESUME, mid-epoch
        state_dict(), the next batch, then load_state_dict() (same loader or a new one): it must be that
        batch. Returns the loader in use (a new one after a resume into a new loader) and the last batch."""
        rng = self.rng
        n = len(ld)
        stop = rng.randrange(n) if rng.random() < 0.6 else None
        at = rng.randrange(n - 1) if resume and n > 1 else None
        it, last = iter(ld), None
        for k in range(n):
            try:
                batch = next(it)
            except StopIteration:
                break
            stats["batches"] += 1
            last = batch
            if rng.random() < 0.05:
                self.keep(batch[0], f"{what} batch {k}")
                stats["kept"] += 1
            if k == at:
                sd = ld.state_dict()
                ref = batch_digest(next(it))
                it.close()
                del it, batch, last
                if rng.random() < 0.5:
                    ld.load_state_dict(sd)
                else:
                    kw, front, path = ld._soak_args
                    ld.close()
                    ld = self.loaders[front](path, **kw)
                    ld._soak_args = (kw, front, path)
                    ld.load_state_dict(sd)
                it = iter(ld)
                got = next(it)
                if batch_digest(got) != ref:
                    self.fail(f"cycle {cycle}: {what}: the batch after load_state_dict({sd['epoch']}, {sd['batch']}, "
                              f"{sd['echo']}) differs from the one the interrupted run delivered")
                stats["resumes"] += 1
                last = got
                del got
            if stop is not None and k >= stop:
                stats["breaks"] += 1
                break
        it.close()
        return ld, last

    def cycle(self, i):
        rng = self.rng
        kind, front, path, kw, no_mmap = draw(rng, self.files, self.kinds, self.fronts)
        stats = self.per_kind[kind]
        what = f"{kind}/{front} {json.dumps(kw, sort_keys=True)}"
        t0 = time.monotonic()
        if no_mmap:
            os.environ["H5PACK_NO_MMAP"] = "1"
        ld = view = view_digest = None
        try:
            ld = self.loaders[front](path, **kw)
            ld._soak_args = (kw, front, path)
            for loop in range(rng.randint(1, 2)):
                ld, last = self.run_loop(ld, stats, i, what, resume=rng.random() < 0.3)
                if last is not None and rng.random() < 0.1 and loop == 0:
                    # a view of the latest batch that outlives the close: the reader's close waits for it
                    view = last[0][0]
                    view_digest = digest(view)
                    stats["views"] += 1
                del last
                if view is not None:
                    break  # no further batch while a view pins the reader's buffer
            ld.close()
            if view is not None and digest(view) != view_digest:
                self.fail(f"cycle {i}: {what}: a view of a batch changed value after close()")
        except Exception as e:  # noqa: BLE001 - recorded, the soak goes on
            self.fail(f"cycle {i}: {what}: {type(e).__name__}: {e}")
        finally:
            if ld is not None:
                ld.close()
            del ld, view
            if no_mmap:
                os.environ.pop("H5PACK_NO_MMAP", None)
        stats["cycles"] += 1
        stats["seconds"] += time.monotonic() - t0
        self.check_kept(i)


def run(argv=None, log=print):
    """Runs the soak with command-line ARGV; returns the summary dict (also for tests/soak/test_soak.py)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--dir")
    ap.add_argument("--h5pack")
    ap.add_argument("--gen-images", help="h5pack-gen-images, or 'pil' to draw the images with PIL")
    ap.add_argument("--lib", help="libh5pack.so (default: $H5PACK_LIBRARY, else the one beside --h5pack's build)")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--max-rss-growth", type=float, default=16.0, help="MiB")
    ap.add_argument("--small", action="store_true", help="tiny files (the CI test)")
    ap.add_argument("--paths", default=",".join(KINDS), help="read paths to draw from (comma-separated)")
    ap.add_argument("--front", default="torch,numpy", help="front-ends to draw from: torch, numpy")
    ap.add_argument("--json", help="also write the summary here")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    h5pack = find_tool("h5pack", a.h5pack)
    gen_images = find_tool("h5pack-gen-images", a.gen_images)
    if not h5pack or not gen_images:
        raise SystemExit("need the h5pack converter and h5pack-gen-images (--h5pack, --gen-images)")
    lib = a.lib or os.environ.get("H5PACK_LIBRARY") or os.path.join(os.path.dirname(h5pack), "reader", "libh5pack.so")
    if os.path.exists(lib):
        os.environ["H5PACK_LIBRARY"] = lib
    sys.path.insert(0, os.path.join(ROOT, "python"))
    tmp = None
    if not a.dir:
        tmp = tempfile.TemporaryDirectory(prefix="h5pack-soak-")
        a.dir = tmp.name
    os.makedirs(a.dir, exist_ok=True)
    files = write_files(a.dir, h5pack, gen_images, a.small, big="big_echo" in a.paths)
    kinds, fronts = tuple(a.paths.split(",")), tuple(a.front.split(","))
    if set(kinds) - set(KINDS + EXTRA_KINDS) or set(fronts) - {"torch", "numpy"}:
        raise SystemExit(f"--paths from {','.join(KINDS + EXTRA_KINDS)}; --front from torch,numpy")
    soak = Soak(files, a.seed, log, kinds, fronts)
    import h5pack as h5p

    log(f"libh5pack {h5p.__version__} from {h5p.lib().path_}; files in {a.dir}; seed {a.seed}")
    rows = []  # per cycle: rss, rss less kept, fds, threads, children, threads before
    late = []  # seconds a joined thread stayed listed after a close
    t_start = time.monotonic()
    for i in range(a.cycles):
        if a.minutes and time.monotonic() - t_start > a.minutes * 60:
            break
        before = counts()
        soak.cycle(i)
        gc.collect()
        rss, fds, threads, children = counts()
        if threads > before[2]:  # a joined thread can stay listed a moment: read again for up to 2 s
            t_wait = time.monotonic()
            while threads > before[2] and time.monotonic() - t_wait < 2:
                time.sleep(0.0005)
                threads = len(os.listdir("/proc/self/task"))
            if threads <= before[2]:
                late.append(time.monotonic() - t_wait)
        kept = soak.kept_bytes()
        rows.append(dict(rss=rss, net=rss - kept, anon=rss_anon() - kept, heap=heap_in_use() - kept, kept=kept,
                         fds=fds, threads=threads, children=children, fds_before=before[1], threads_before=before[2]))
        if children:
            soak.fail(f"cycle {i}: {children} child process(es) left after the close")
        if not a.quiet and (i + 1) % max(1, min(100, a.cycles // 10)) == 0:
            log(f"cycle {i + 1:5}: RSS {rss / MIB:7.1f} MiB (kept {kept / MIB:5.1f}), fds {fds}, threads {threads}, "
                f"{time.monotonic() - t_start:6.1f} s")
    elapsed = time.monotonic() - t_start
    soak.kept.clear()
    gc.collect()
    summary = summarise(rows, a, soak, elapsed, counts())
    summary["threads_late_cycles"], summary["threads_late_max_s"] = len(late), max(late, default=0.0)
    report(summary, soak, log)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    if tmp:
        tmp.cleanup()
    return summary


def summarise(rows, a, soak, elapsed, final):
    n = len(rows)
    warm = min(a.warmup, max(0, n - 2))
    win = max(1, min(a.window, (n - warm) // 2)) if n - warm >= 2 else 1
    early = rows[warm:warm + win]
    late = rows[-win:]
    mean = lambda rs, k: sum(r[k] for r in rs) / len(rs) if rs else 0.0  # noqa: E731
    after = rows[warm:]
    base = rows[warm - 1] if warm > 0 else rows[0]
    s = dict(cycles=n, seconds=round(elapsed, 1), warmup=warm, window=win,
             rss_first=rows[0]["rss"], rss_warm=base["rss"], rss_last=rows[-1]["rss"],
             rss_early_mean=mean(early, "net"), rss_late_mean=mean(late, "net"),
             rss_growth=mean(late, "net") - mean(early, "net"), anon_growth=mean(late, "anon") - mean(early, "anon"),
             heap_growth=mean(late, "heap") - mean(early, "heap"),
             heap_slope_kib_per_cycle=slope([r["heap"] for r in after]) / 1024,
             rss_slope_kib_per_cycle=slope([r["net"] for r in after]) / 1024,
             rss_max=max(r["rss"] for r in rows), kept_max=max(r["kept"] for r in rows),
             fds_warm=base["fds"], fds_last=rows[-1]["fds"], fds_max_after_warmup=max(r["fds"] for r in after),
             fds_grew_cycles=sum(r["fds"] > r["fds_before"] for r in after),
             threads_warm=base["threads"], threads_last=rows[-1]["threads"],
             threads_max_after_warmup=max(r["threads"] for r in after),
             threads_grew_cycles=sum(r["threads"] > r["threads_before"] for r in after),
             children_max=max(r["children"] for r in rows),
             final=dict(rss=final[0], fds=final[1], threads=final[2], children=final[3]),
             max_rss_growth_mib=a.max_rss_growth, per_kind=soak.per_kind)
    reasons = list(soak.failures)
    if s["rss_growth"] > a.max_rss_growth * MIB:
        reasons.append(f"RSS grew by {s['rss_growth'] / MIB:.1f} MiB (last {win} cycles against cycles "
                       f"{warm}..{warm + win - 1}), more than {a.max_rss_growth:g} MiB")
    if s["fds_grew_cycles"] or s["fds_last"] > s["fds_warm"]:
        reasons.append(f"descriptors leak: {s['fds_grew_cycles']} cycles after the warm-up ended with more than "
                       f"they began with; {s['fds_warm']} at the warm-up's end, {s['fds_last']} at the last cycle")
    if s["threads_grew_cycles"] or s["threads_last"] > s["threads_warm"]:
        reasons.append(f"threads left behind: {s['threads_grew_cycles']} cycles after the warm-up ended with more "
                       f"than they began with; {s['threads_warm']} at the warm-up's end, {s['threads_last']} last")
    if s["children_max"]:
        reasons.append(f"child processes left behind (up to {s['children_max']})")
    s["failures"] = reasons
    s["passed"] = not reasons
    s["rows"] = rows
    return s


def report(s, soak, log):
    log("")
    log(f"{'path':12} {'cycles':>6} {'batches':>8} {'breaks':>6} {'resumes':>7} {'kept':>5} {'views':>5} "
        f"{'ms/cycle':>8}")
    for k, v in s["per_kind"].items():
        ms = 1000 * v["seconds"] / v["cycles"] if v["cycles"] else 0
        log(f"{k:12} {v['cycles']:6} {v['batches']:8} {v['breaks']:6} {v['resumes']:7} {v['kept']:5} "
            f"{v['views']:5} {ms:8.1f}")
    w, n = s["window"], s["cycles"]
    log("")
    log(f"{n} cycles in {s['seconds']:.0f} s; warm-up {s['warmup']} cycles, windows of {w}")
    log(f"RSS          first {s['rss_first'] / MIB:.1f} MiB, after warm-up {s['rss_warm'] / MIB:.1f}, last "
        f"{s['rss_last'] / MIB:.1f}, max {s['rss_max'] / MIB:.1f} (kept pool up to {s['kept_max'] / MIB:.1f})")
    log(f"RSS - kept   cycles {s['warmup']}..{s['warmup'] + w - 1}: {s['rss_early_mean'] / MIB:.2f} MiB, last {w}: "
        f"{s['rss_late_mean'] / MIB:.2f} MiB, growth {s['rss_growth'] / MIB:+.2f} MiB (limit "
        f"{s['max_rss_growth_mib']:g}), slope {s['rss_slope_kib_per_cycle']:+.2f} KiB/cycle; RssAnon - kept "
        f"{s['anon_growth'] / MIB:+.2f} MiB")
    log(f"heap in use  (malloc's, less kept) growth {s['heap_growth'] / MIB:+.2f} MiB, slope "
        f"{s['heap_slope_kib_per_cycle']:+.2f} KiB/cycle")
    log(f"descriptors  after warm-up {s['fds_warm']}, max {s['fds_max_after_warmup']}, last {s['fds_last']}, "
        f"cycles that grew {s['fds_grew_cycles']}")
    log(f"threads      after warm-up {s['threads_warm']}, max {s['threads_max_after_warmup']}, last "
        f"{s['threads_last']}, cycles that grew {s['threads_grew_cycles']} (a joined thread still listed right "
        f"after the close: {s.get('threads_late_cycles', 0)} cycles, gone within "
        f"{1000 * s.get('threads_late_max_s', 0):.1f} ms)")
    log(f"children     max {s['children_max']} after a cycle")
    if s["failures"]:
        log(f"FAILED: {len(s['failures'])} problem(s):")
        for r in s["failures"][:20]:
            log(f"  - {r}")
    else:
        log("PASSED: RSS flat, no descriptor, thread or process left behind, kept batches unchanged, resumes exact")


if __name__ == "__main__":
    sys.exit(0 if run()["passed"] else 1)
