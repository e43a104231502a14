"""The kind of packing script users write today (PIL + h5py, one process): ImageFolder -> resize the
shorter side + centre crop -> (N,3,H,W) uint8 chunked like the CelebA example. Used by run_bench.sh.
Usage: /usr/bin/python3 pil_h5py_baseline.py SRC_DIR OUT.h5 SIZE"""
import os
import sys
import time

import h5py
import numpy as np
from PIL import Image


def main():
    src, out, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    files = [(os.path.join(root, f), label) for label, c in enumerate(classes)
             for root, _, names in sorted(os.walk(os.path.join(src, c))) for f in sorted(names)
             if f.lower().endswith((".jpg", ".jpeg", ".png"))]
    t0 = time.time()
    with h5py.File(out, "w") as h5:
        images = h5.create_dataset("images", (len(files), 3, size, size), dtype=np.uint8,
                                   chunks=(100, 3, size, size))
        labels = h5.create_dataset("labels", (len(files),), dtype=np.int64)
        for i, (path, label) in enumerate(files):
            img = Image.open(path).convert("RGB")
            w, h = img.size
            scale = size / min(w, h)
            img = img.resize((max(size, round(w * scale)), max(size, round(h * scale))), Image.BILINEAR)
            w, h = img.size
            left, top = (w - size) // 2, (h - size) // 2
            img = img.crop((left, top, left + size, top + size))
            images[i] = np.asarray(img).transpose(2, 0, 1)
            labels[i] = label
    dt = time.time() - t0
    print(f"pil+h5py: {len(files)} images in {dt:.3f} s = {len(files) / dt:.1f} images/s (1 process)")


if __name__ == "__main__":
    main()
