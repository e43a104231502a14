"""Resident memory per epoch against what the settings allow (issue 41): RSS (anonymous + file pages)
at the end of each epoch must stay <= cache + the batch ring + 64 MiB on a file of >= 10x the cache, on
every read path. The cache is the setting, or what the reader grew it to where it must (patches: two
batches' tiles, docs/patches.md); RSS is counted above what python3 with numpy and libh5pack holds. Each path runs in its own process (RSS is per process), NumPy front-end, 2 threads.

usage: /usr/bin/python3 bench/memory/rss_epochs.py [--epochs 20] [--cache 64M] [--gib 1.0] [--paths LIST]
       [--dir DIR] [--device cpu|cuda]
Paths: mapped (uncompressed, the default read), pread (H5PACK_NO_MMAP=1), gzip, sizes (images of several
sizes, centre crop), tiles (random patches of images in tiles). Files are written once into DIR (default
a temporary folder; h5py for the first three, the h5pack program for sizes and tiles: --h5pack PATH)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

MIB = 1 << 20


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def write_uniform(path, gib, compression=None):
    import h5py
    n = int(gib * (1 << 30) // (3 * 128 * 128))
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("images", (n, 3, 128, 128), np.uint8, chunks=(16, 3, 128, 128),
                             compression=compression)
        d.attrs["layout"] = np.bytes_("NCHW")
        block = rng.integers(0, 64, (1024, 3, 128, 128), dtype=np.uint8)  # compressible by half with gzip
        for i in range(0, n, 1024):
            d[i:i + 1024] = block[: min(1024, n - i)]
        f.create_dataset("labels", data=(np.arange(n) % 10).astype(np.int64))


def write_with_h5pack(h5pack, path, folder, gib, tiles):
    from PIL import Image
    rng = np.random.default_rng(1)
    os.makedirs(f"{folder}/a", exist_ok=True)
    side = 4096 if tiles else 200
    count = max(1, int(gib * (1 << 30) // (side * side * 3 * (1 if tiles else 1.6))))
    noise = rng.integers(0, 256, (side, side + 64, 3), dtype=np.uint8)
    for i in range(count):
        w = side if tiles else side - (i % 5) * 16  # several sizes
        Image.fromarray(noise[:, (i % 64): (i % 64) + w]).save(f"{folder}/a/{i:06d}.png", compress_level=0)
    extra = ["--tiles"] if tiles else []
    subprocess.run([h5pack, "-q", *extra, folder, path], check=True)


def files(args):
    d = args.dir
    os.makedirs(d, exist_ok=True)
    out = {}
    plan = {"mapped": "uniform.h5", "pread": "uniform.h5", "gzip": "gzip.h5", "sizes": "sizes.h5", "tiles": "tiles.h5"}
    for p in args.paths:
        path = os.path.join(d, plan[p])
        if not os.path.exists(path):
            print(f"writing {path} ...", flush=True)
            if p in ("mapped", "pread"):
                write_uniform(path, args.gib)
            elif p == "gzip":
                write_uniform(path, args.gib, compression="gzip")
            else:
                write_with_h5pack(args.h5pack, path, os.path.join(d, p + "-src"), args.gib, p == "tiles")
        out[p] = path
    return out


def run_one(path_kind, path, args):
    """In this process: the Loader for PATH_KIND, one line of JSON per epoch."""
    if path_kind == "pread":
        os.environ["H5PACK_NO_MMAP"] = "1"
    import h5pack.numpy
    kw = {"sizes": {"crop": "center", "output_size": 160}, "tiles": {"patch": 256}}.get(path_kind, {})
    ld = h5pack.numpy.Loader(path, batch_size=64, threads=2, cache=args.cache, epochs=args.epochs,
                             dtype="uint8", device=args.device, **kw)
    ring = int(ld._info.pinned_bytes)
    cache = int(ld._cfg.cache_bytes)
    for epoch in range(args.epochs):
        for _ in ld:
            pass
        anon, file_ = status_kib("RssAnon") * 1024, status_kib("RssFile") * 1024
        # patches: a cache smaller than two batches' tiles grows to them (docs/patches.md, "The cache plan")
        cache = max(cache, int(ld.stats()["cache_bytes_used"]))
        print(json.dumps({"epoch": epoch + 1, "anon": anon, "file": file_, "cache": cache, "ring": ring}), flush=True)
    ld.close()


def report(kind, lines, baseline):
    worst = 0.0
    for r in lines:
        rss = r["anon"] + r["file"] - baseline
        bound = r["cache"] + r["ring"] + 64 * MIB
        worst = max(worst, rss / bound)
        print(f"{kind:7} epoch {r['epoch']:2}: RSS {rss / MIB:7.1f} MiB (anon {r['anon'] / MIB:6.1f}, file "
              f"{r['file'] / MIB:6.1f}) of bound {bound / MIB:6.1f} MiB (cache {r['cache'] / MIB:.0f} + ring "
              f"{r['ring'] / MIB:.1f} + 64)")
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--cache", default="64M")
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--paths", default="mapped,pread,gzip,sizes,tiles")
    ap.add_argument("--dir")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--h5pack", default="build-rel/h5pack")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # KIND PATH: the child's side
    args = ap.parse_args()
    if args.one:
        run_one(args.one[0], args.one[1], args)
        return
    args.paths = args.paths.split(",")
    tmp = None
    if not args.dir:
        tmp = tempfile.TemporaryDirectory(prefix="h5pack-rss-")
        args.dir = tmp.name
    # what python3 + numpy + the library hold before any loader: not the reader's
    base = subprocess.run([sys.executable, "-c", "import numpy, h5pack.numpy, h5pack; h5pack.lib();"
                           "print([l for l in open('/proc/self/status') if l.startswith(('RssAnon','RssFile'))])"],
                          capture_output=True, text=True).stdout
    baseline = sum(int(x.split()[1]) * 1024 for x in eval(base)) if base.strip() else 0
    print(f"baseline (python3, numpy, libh5pack loaded, no loader): {baseline / MIB:.1f} MiB")
    worst = {}
    for kind, path in files(args).items():
        size = os.path.getsize(path)
        print(f"{kind}: {path} ({size / MIB:.0f} MiB, {size / (h5_size(args.cache)):.1f}x the cache)", flush=True)
        p = subprocess.run([sys.executable, __file__, "--one", kind, path, "--epochs", str(args.epochs), "--cache",
                            args.cache, "--device", args.device], capture_output=True, text=True)
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or not lines:
            print(f"{kind}: failed: {p.stderr[-800:]}")
            continue
        worst[kind] = report(kind, lines, baseline)
    print("worst RSS / bound per path: " + ", ".join(f"{k} {v:.2f}" for k, v in worst.items()))


def h5_size(text):
    import h5pack
    return h5pack.parse_size(text)


main()
