"""The kind of packing script users write today: ImageFolder -> PIL decode (+ resize of the shorter side
and centre crop when SIZE is given) in a multiprocessing pool of PROCS processes -> numpy transpose ->
an (N,3,H,W) uint8 h5py dataset chunked like the CelebA example, written in order by the main process;
the file is then flushed to disk (os.fsync), as h5pack does, so both are timed to a durable file.
Used by run_bench.sh.
Usage: /usr/bin/python3 pil_h5py_baseline.py SRC_DIR OUT.h5 SIZE|none [PROCS=1]"""
import multiprocessing
import os
import sys
import time

import h5py
import numpy as np
from PIL import Image

SIZE = None  # set in main, inherited by the pool's processes


def load(path):
    img = Image.open(path).convert("RGB")
    if SIZE:
        w, h = img.size  # torchvision's Resize(SIZE) + CenterCrop(SIZE), as h5pack's crop mode
        short, long = min(w, h), max(w, h)
        other = int(SIZE * long / short)
        img = img.resize((SIZE, other) if w <= h else (other, SIZE), Image.BILINEAR)
        w, h = img.size
        left, top = int(round((w - SIZE) / 2.0)), int(round((h - SIZE) / 2.0))
        img = img.crop((left, top, left + SIZE, top + SIZE))
    return np.asarray(img).transpose(2, 0, 1)


def main():
    global SIZE
    src, out = sys.argv[1], sys.argv[2]
    SIZE = None if sys.argv[3] == "none" else int(sys.argv[3])
    procs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    files = [(os.path.join(root, f), label) for label, c in enumerate(classes)
             for root, _, names in sorted(os.walk(os.path.join(src, c))) for f in sorted(names)
             if f.lower().endswith((".jpg", ".jpeg", ".png"))]
    t0 = time.time()
    shape = load(files[0][0]).shape
    with multiprocessing.get_context("fork").Pool(procs) as pool, h5py.File(out, "w") as h5:
        images = h5.create_dataset("images", (len(files),) + shape, dtype=np.uint8, chunks=(100,) + shape)
        h5.create_dataset("labels", data=np.array([label for _, label in files], dtype=np.int64))
        for i, arr in enumerate(pool.imap(load, [path for path, _ in files], chunksize=32)):
            images[i] = arr
    fd = os.open(out, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    dt = time.time() - t0
    print(f"pil+h5py: {len(files)} images in {dt:.3f} s = {len(files) / dt:.1f} images/s ({procs} processes)")


if __name__ == "__main__":
    main()
