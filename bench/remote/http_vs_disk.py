"""Reading over HTTP with latency against the same file from local disk (issue 44): samples/s of one epoch,
time to the first batch (from the Loader's construction), and requests per epoch against the file's
chunks, with every request to the server delayed by --latency-ms (tests/remote/rangeserver.py on
127.0.0.1, which also counts the requests). Local and remote runs alternate in one process, so both see
the same machine; the file is in the page cache for both (the server reads it from there too), so the
difference is the round trips. Each round also reads without the read-ahead (H5PACK_HTTP_INFLIGHT=0: each
worker waits for its one request, the reader before the read-ahead), unless --no-compare. Then the remote
read again with other thread counts.

usage: /usr/bin/python3 bench/remote/http_vs_disk.py --build BUILD [--n 3000] [--size 128x128]
       [--latency-ms 20] [--threads 2] [--scan 4,8,16] [--rounds 3] [--batch 64] [--epochs 3] [--dtype uint8]
       [--cache 48M] [--window 16] [--gzip] [--no-compare] [--dir DIR]
Needs a build (BUILD/h5pack, BUILD/h5pack-gen-images, BUILD/reader/libh5pack.so with libcurl) and numpy."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "python"), os.path.join(HERE, "..", "..", "tests", "remote")]


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--size", default="128x128")
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--scan", default="4,8,16", help="thread counts for the remote read afterwards ('' for none)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--dtype", default="uint8", help="uint8 (the pixels as stored), or float32 (normalised)")
    p.add_argument("--cache", default="48M", help="smaller than the file: every epoch reads")
    p.add_argument("--window", type=int, default=16, help="chunks in the chunk order's window (fits the cache)")
    p.add_argument("--gzip", action="store_true", help="pack with --compress gzip")
    p.add_argument("--no-compare", action="store_true", help="skip the reads without the read-ahead")
    p.add_argument("--dir", default=None)
    return p.parse_args()


def make_file(a, work):
    build = os.path.abspath(a.build)
    path = os.path.join(work, f"bench_{a.n}_{a.size}{'_gz' if a.gzip else ''}.h5")
    if os.path.exists(path):
        return path
    src = os.path.join(work, f"images_{a.n}")
    if not os.path.isdir(src):
        subprocess.run([f"{build}/h5pack-gen-images", src, "--classes", "10", "--per-class", str(a.n // 10),
                        "--min-size", "160", "--max-size", "320"], check=True, stdout=subprocess.DEVNULL)
    extra = ["--compress", "gzip"] if a.gzip else []
    subprocess.run([f"{build}/h5pack", "-q", "--size", a.size, *extra, src, path], check=True)
    return path


def run(np_loader, location, a, threads):
    """(samples/s from the first batch to the end, seconds from the Loader's construction to the first
    batch) of a.epochs epochs with a cache smaller than the file, so every epoch reads."""
    t0 = time.perf_counter()
    loader = np_loader(location, batch_size=a.batch, device="cpu", dtype=a.dtype, epochs=a.epochs, threads=threads,
                       cache=a.cache, window=a.window)
    n, first, t1 = 0, None, None
    for _ in range(a.epochs):
        for images, _ in loader:
            if first is None:
                t1 = time.perf_counter()
                first = t1 - t0
            else:
                n += images.shape[0]
    rate = n / (time.perf_counter() - t1)
    loader.close()
    return rate, first


def h5py_ros3(a, path):
    """h5py's ros3 driver over a server of its own (another process: h5py keeps the GIL)."""
    p = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tests", "remote", "rangeserver.py"),
                        os.path.dirname(path), f"--latency={a.latency_ms}", "--", sys.executable,
                        os.path.join(HERE, "h5py_ros3.py"), os.path.basename(path), str(a.batch)],
                       capture_output=True, text=True)
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"h5py ros3: did not run: {p.stderr[-500:]}")
        return
    if "error" in r:
        print(f"h5py ros3: {r['error']}")
        return
    requests = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    print(f"h5py ros3 (file order, batches of {a.batch}, one epoch): {r['rate']:.0f} samples/s, first batch "
          f"{r['first']:.3f} s ({requests})")


def main():
    a = parse()
    os.environ.setdefault("H5PACK_LIBRARY", os.path.join(os.path.abspath(a.build), "reader", "libh5pack.so"))
    os.environ.update(NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    import h5pack
    import h5pack.numpy
    from rangeserver import RangeServer

    work = a.dir or tempfile.mkdtemp(prefix="h5pack-remote-bench-")
    path = make_file(a, work)
    info = h5pack.info(path)
    chunks = info["n_chunks"]
    srv = RangeServer(os.path.dirname(path), latency=a.latency_ms / 1000.0)
    url = srv.url + os.path.basename(path)
    print(f"file {path}: {os.path.getsize(path) / 2**20:.1f} MiB, {info['n_samples']} images in {chunks} chunks "
          f"of {info['chunk_bytes'] / 2**20:.2f} MiB; server latency {a.latency_ms:g} ms per request; batch "
          f"{a.batch}, {a.dtype}, order chunk (window {a.window}), cache {a.cache}, {a.epochs} epochs, NumPy loader")
    run(h5pack.numpy.Loader, path, a, a.threads)  # warm: libraries, page cache
    local, remote, plain = [], [], []
    for r in range(a.rounds):
        local.append(run(h5pack.numpy.Loader, path, a, a.threads))
        srv.reset_counts()
        remote.append(run(h5pack.numpy.Loader, url, a, a.threads) + (srv.count() / a.epochs,))
        (lr, lf), (rr, rf, req) = local[-1], remote[-1]
        line = (f"round {r + 1}, {a.threads} threads: local {lr:8.0f} samples/s, first batch {lf:.3f} s | http "
                f"{rr:8.0f} samples/s ({rr / lr:.2f} of local), first batch {rf:.3f} s, requests per epoch "
                f"{req:.1f} (chunks {chunks})")
        if not a.no_compare:  # the same without the read-ahead: one request per worker at a time
            os.environ["H5PACK_HTTP_INFLIGHT"] = "0"
            plain.append(run(h5pack.numpy.Loader, url, a, a.threads))
            del os.environ["H5PACK_HTTP_INFLIGHT"]
            line += f" | no read-ahead {plain[-1][0]:8.0f} ({plain[-1][0] / lr:.2f}), first batch {plain[-1][1]:.3f} s"
        print(line, flush=True)
    best_l, best_r = max(x[0] for x in local), max(x[0] for x in remote)
    print(f"best of {a.rounds}: local {best_l:.0f}, http {best_r:.0f} samples/s: {best_r / best_l:.2f}"
          + (f"; without the read-ahead {max(x[0] for x in plain):.0f}" if plain else ""))
    h5py_ros3(a, path)
    for t in [int(x) for x in a.scan.split(",") if x]:
        srv.reset_counts()
        rate, first = run(h5pack.numpy.Loader, url, a, t)
        req = srv.count() / a.epochs
        lrate, _ = run(h5pack.numpy.Loader, path, a, t)
        print(f"{t:2d} threads: http {rate:8.0f} samples/s, local {lrate:8.0f} ({rate / lrate:.2f}), http first "
              f"batch {first:.3f} s, requests per epoch {req:.1f}")
    srv.stop()


main()
