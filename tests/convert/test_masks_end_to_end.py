"""Issue 42 end to end: folders packed by `h5pack --masks`, then streamed by `h5pack.Loader(masks=True)`.

- Pairing: every mask file holds one value, its image's number + 1, and every image's red channel that
  number: through the packed (shuffled) order, the shuffle, the cache, random resized crops, flips and
  echo, each delivered mask is one value, its image's + 1, and the image is the one the file's row names.
- Geometry: blocky class masks; each delivered mask equals PIL's Image.resize(size, NEAREST, box=...) of
  the stored masks[i] over the delivered box (Loader.last_boxes), flipped when the image was.
Usage: test_masks_end_to_end.py H5PACK"""
import os
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image
    import torch  # noqa: F401  (h5pack.Loader's tensors)
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy, python3-pil and python3-torch)")

import h5pack

H5PACK = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="h5pack-masks-e2e-")
RNG = np.random.default_rng(7)
N = 60


def make_folders(root, mask_of):
    """N PNG images (lossless: their pixels survive exactly) of one size in 3 classes, and their masks."""
    for i in range(N):
        cls = f"c{i % 3}"
        for sub in ("images", "masks"):
            os.makedirs(f"{root}/{sub}/{cls}", exist_ok=True)
        img = RNG.integers(0, 256, (36, 44, 3), dtype=np.uint8)
        img[..., 0] = i
        Image.fromarray(img).save(f"{root}/images/{cls}/{i:03d}.png")
        Image.fromarray(mask_of(i)).save(f"{root}/masks/{cls}/{i:03d}.png")
    return f"{root}/images", f"{root}/masks"


def pack(root, mask_of, *options):
    src, masks = make_folders(root, mask_of)
    out = f"{root}/packed.h5"
    r = subprocess.run([H5PACK, "-q", "-f", "--masks", masks, *options, src, out], capture_output=True, text=True)
    check(r.returncode == 0, f"h5pack --masks: exit {r.returncode}: {r.stderr}", fatal=True)
    return out


def check_pairing():
    path = pack(f"{WORK}/pairing", lambda i: np.full((36, 44), i + 1, np.uint8), "--chunk", "7")
    with h5py.File(path, "r") as f:  # the packed order is shuffled: row -> source number, from the names
        sources = [int(os.path.basename(n.decode() if isinstance(n, bytes) else n)[:3]) for n in f["filenames"][:]]
    # uint8 without a crop delivers the stored pixels (no flip there); the crop flips too
    for crop, extra in (("none", {}), ("random_resized", {"output_size": (24, 24), "flip": True})):
        loader = h5pack.Loader(path, batch_size=8, device="cpu", dtype="uint8", masks=True, with_indices=True,
                               crop=crop, echo=2, cache="1M", seed=3, **extra)
        seen = 0
        for images, labels, masks, indices in loader:
            for k, row in enumerate(indices.tolist()):
                values = sorted(set(np.unique(masks[k].numpy()).tolist()))
                red = images[k][0].numpy().astype(np.int64)  # the source number (a resize keeps a constant)
                check(values == [int(red[0, 0]) + 1] and red.min() == red.max(),
                      f"{crop}: row {row}: mask values {values[:5]}, image of source {red.min()}..{red.max()}")
                check(int(red[0, 0]) == sources[row], f"{crop}: row {row}: the image of source {red[0, 0]}, "
                      f"the file's row holds source {sources[row]}")
                seen += 1
        check(seen == 2 * N, f"{crop}: {seen} deliveries for one epoch (one for loop) x echo 2 x {N}")


def blocky(i):
    m = RNG.integers(0, 9, (36 // 4 + 1, 44 // 4 + 1)).repeat(4, 0).repeat(4, 1)[:36, :44]
    m[RNG.random((36, 44)) < 0.1] = 9
    return (m * 25 + i % 3).astype(np.uint8)


def check_geometry():
    path = pack(f"{WORK}/geometry", blocky, "--size", "32x40", "--resize", "crop")
    with h5py.File(path, "r") as f:
        stored = f["masks"][:]
    for crop, size in (("random_resized", (29, 23)), ("center", (16, 20))):
        loader = h5pack.Loader(path, batch_size=16, device="cpu", masks=True, with_indices=True, crop=crop,
                               output_size=size, flip=True, epochs=1, seed=5)
        compared = 0
        for images, labels, masks, indices in loader:
            boxes = loader.last_boxes
            for k, row in enumerate(indices.tolist()):
                y, x, h, w, flip = (int(v) for v in boxes[k].tolist())
                want = Image.fromarray(stored[row]).resize((size[1], size[0]), Image.NEAREST, box=(x, y, x + w, y + h))
                if flip:
                    want = want.transpose(Image.FLIP_LEFT_RIGHT)
                check(np.array_equal(masks[k].numpy(), np.asarray(want)), f"{crop}: sample {row} box {boxes[k].tolist()}")
                compared += 1
        check(compared == N, f"{crop}: compared {compared} of {N}")


def main():
    check_pairing()
    check_geometry()
    h5test.finish(f"masks end to end: packed with --masks, delivered paired and PIL-exact ({WORK})")


if __name__ == "__main__":
    main()
