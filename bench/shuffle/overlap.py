"""How well the chunk order shuffles at a given cache: for each batch of epoch 2, the most images it shares
with any one batch of epoch 1 (the mean over batches, and the largest). A full per-sample shuffle
(order="random") shares about batch^2 / N; the chunk order mixes `window` chunks at a time, and with a
cache too small for 16 (h5pack.ShuffleWarning) consecutive batches come from the same few chunks.

usage: /usr/bin/python3 bench/shuffle/overlap.py [FILE] [--caches 2M,8M,16M,64M,1G] [--batch 256]
Without FILE it writes a CIFAR-10-sized file (50,000 x 3x32x32 uint8, chunks of 682 images = 2 MiB, the
converter's target) into a temporary folder. Needs numpy and h5py (to write that file)."""
import argparse
import os
import tempfile
import warnings

import numpy as np

import h5pack
import h5pack.numpy


def cifar_sized(folder):
    import h5py
    path = os.path.join(folder, "cifar-sized.h5")
    n = 50_000
    with h5py.File(path, "w") as f:
        images = np.random.default_rng(0).integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
        f.create_dataset("images", data=images, chunks=(682, 3, 32, 32)).attrs["layout"] = np.bytes_("NCHW")
        f.create_dataset("labels", data=(np.arange(n) % 10).astype(np.int64))
    return path


def epoch_indices(path, batch, **kw):
    """The indices of each batch of epochs 1 and 2, the window used and whether a ShuffleWarning came."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ld = h5pack.numpy.Loader(path, batch_size=batch, epochs=2, dtype="uint8", with_indices=True, threads=2, **kw)
    window = int(ld._info.window)
    epochs = [[idx.copy() for _, _, idx in ld] for _ in range(2)]
    ld.close()
    return epochs, window, any(issubclass(w.category, h5pack.ShuffleWarning) for w in caught)


def overlap(first, second, n):
    batch_of = np.empty(n, dtype=np.int64)
    for b, idx in enumerate(first):
        batch_of[idx] = b
    shared = [np.bincount(batch_of[idx]).max() for idx in second]
    return float(np.mean(shared)), int(np.max(shared))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--caches", default="2M,8M,16M,32M,64M,1G")
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = a.file or cifar_sized(tmp)
        n = h5pack.info(path)["n_samples"]
        print(f"{path}: {n} images, batch {a.batch}")
        print(f"{'order':8} {'cache':>6} {'window':>7} {'warned':>7} {'mean shared':>12} {'max shared':>11}")
        rows = [("chunk", c) for c in a.caches.split(",")] + [("random", a.caches.split(",")[-1])]
        for order, cache in rows:
            (first, second), window, warned = epoch_indices(path, a.batch, order=order, cache=cache)
            mean, most = overlap(first, second, n)
            print(f"{order:8} {cache:>6} {window if order == 'chunk' else '-':>7} {'yes' if warned else 'no':>7} "
                  f"{mean:12.1f} {most:11d}")


main()
