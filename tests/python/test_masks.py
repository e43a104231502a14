"""Loader(masks=...) (issue 42, reader half): every delivered mask equals PIL's
Image.resize((w, h), NEAREST, box=...) of the stored mask over the image's box (last_boxes), then
FLIP_LEFT_RIGHT when the image was flipped, for random resized and centre crops, fresh and echoed; the
batch is (images, labels, masks[, indices]); mask_dtype int64 (torch.int64 too) gives the same values;
masks="name" reads another dataset; the NumPy front-end too; masks asked of a file without them fail
naming the file and the dataset. Run by ctest (h5pack_python_test)."""
import os
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    import torch
    from PIL import Image
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy, python3-torch and python3-pil)")

import h5pack
import h5pack.numpy

N, C, H, W, K = 30, 3, 40, 52, 6


def make_file(path, masks_name="masks"):
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, size=(N, C, H, W), dtype=np.uint8)
    # blobs of class indices, as a segmentation mask has: regions with sharp borders
    yy, xx = np.mgrid[0:H, 0:W]
    masks = np.stack([((yy // (3 + i % 5)) * 7 + (xx // (2 + i % 3)) * 3 + i) % 21 for i in range(N)]).astype(np.uint8)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("images", data=images, chunks=(K, C, H, W))
        d.attrs["layout"] = "NCHW"
        f.create_dataset("labels", data=np.arange(N, dtype=np.int64) % 4)
        f.create_dataset(masks_name, data=masks, chunks=(K, H, W))
    return masks


def pil_expected(stored, box, size):
    y, x, h, w, flip = (int(v) for v in box)
    out = Image.fromarray(stored).resize((size[1], size[0]), Image.NEAREST, box=(x, y, x + w, y + h))
    if flip:
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(out)


def check_epoch(loader, stored, what, want_dtype, echo=1):
    batches = flips = 0
    for images, labels, masks, indices in loader:
        check(masks.dtype == want_dtype, f"{what}: masks dtype {masks.dtype}", fatal=True)
        check(tuple(masks.shape) == (images.shape[0],) + tuple(images.shape[2:]), f"{what}: masks {tuple(masks.shape)} "
              f"for images {tuple(images.shape)}", fatal=True)
        boxes = loader.last_boxes
        for i, row in enumerate(indices.tolist()):
            want = pil_expected(stored[row], boxes[i].tolist(), masks.shape[1:])
            got = masks[i].numpy()
            flips += int(boxes[i][4])
            if not check(np.array_equal(got, want), f"{what}: sample {row} box {boxes[i].tolist()}: "
                         f"{int((got != want).sum())} pixels differ from PIL's NEAREST"):
                return
        batches += 1
    check(batches == echo * ((N + 6) // 7), f"{what}: {batches} batches")
    check(flips > 0, f"{what}: no flips")


def main():
    work = tempfile.mkdtemp(prefix="h5pack-masks-")
    path = os.path.join(work, "seg.h5")
    stored = make_file(path)
    common = dict(batch_size=7, device="cpu", threads=2, dtype="float32", norm="none", flip=True, masks=True,
                  with_indices=True)
    runs = [
        ("random resized", dict(crop="random_resized", output_size=(24, 32)), torch.uint8, 1),
        ("random resized int64", dict(crop="random_resized", output_size=(57, 61), mask_dtype="int64"), torch.int64, 1),
        ("centre", dict(crop="center", output_size=28, mask_dtype=torch.int64), torch.int64, 1),
        ("batch echo", dict(crop="random_resized", output_size=16, echo=2), torch.uint8, 2),
        ("sample echo", dict(crop="random_resized", output_size=16, echo=2, echo_mode="sample"), torch.uint8, 2),
    ]
    for what, extra, dtype, echo in runs:
        loader = h5pack.Loader(path, **common, **extra)
        for _ in range(2):  # two epochs: other boxes
            check_epoch(loader, stored, what, dtype, echo)
        loader.close()

    # (images, labels, masks) without indices; another dataset name
    other = os.path.join(work, "other.h5")
    stored_other = make_file(other, masks_name="seg")
    loader = h5pack.Loader(other, batch_size=5, device="cpu", masks="seg", epochs=1)
    for batch in loader:
        check(len(batch) == 3, f"masks='seg': a batch of {len(batch)} members", fatal=True)
        images, labels, masks = batch
        check(masks.dtype == torch.uint8 and tuple(masks.shape) == (images.shape[0], H, W), f"masks='seg': {masks.shape}")
    loader.close()
    check(stored_other.shape == (N, H, W), "stored masks")

    # the NumPy front-end
    loader = h5pack.numpy.Loader(path, batch_size=7, device="cpu", masks=True, mask_dtype="int64", crop="center",
                                 output_size=20, with_indices=True, epochs=1)
    for images, labels, masks, indices in loader:
        check(masks.dtype == np.int64, f"numpy: {masks.dtype}")
        boxes = loader.last_boxes
        for i, row in enumerate(indices.tolist()):
            check(np.array_equal(masks[i], pil_expected(stored[row], list(boxes[i]), masks.shape[1:])),
                  f"numpy: sample {row}")
    loader.close()

    # refusals: no such dataset, a bad mask_dtype
    try:
        h5pack.Loader(path, device="cpu", masks="nothing")
        check(False, "masks='nothing' opened")
    except Exception as e:  # noqa: BLE001 - the library's error, whatever its class
        check("nothing" in str(e) and path in str(e), f"masks='nothing': {e}")
    try:
        h5pack.Loader(path, device="cpu", masks=True, mask_dtype="float32")
        check(False, "mask_dtype='float32' accepted")
    except ValueError as e:
        check("mask_dtype" in str(e), f"mask_dtype='float32': {e}")
    h5test.finish("masks")


if __name__ == "__main__":
    main()
