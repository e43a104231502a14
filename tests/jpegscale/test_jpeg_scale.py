"""h5pack --size with --jpeg-scale exact (the default) and dct, end to end, read back with h5py.

exact: every stored image equals PIL's Image.open().convert("RGB").resize(BILINEAR) + centre crop (what
torchvision's Resize + CenterCrop computes on a PIL image) within 1 level (0 measured: PIL links the same
libjpeg-turbo, and the converter's resize is PIL's arithmetic). dct: JPEGs decoded at a reduced M/8 scale;
close to PIL (mean < 1.5 levels) but not equal, and the file says which one it used (jpeg_scale).
Usage: test_jpeg_scale.py H5PACK"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image, ImageFilter
except ImportError as e:  # ctest counts exit 77 as skipped
    h5test.skip(f"{e} (install python3-h5py, python3-numpy and python3-pil)")

h5test.verbose = True  # the log lists every image's numbers
H5PACK = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="h5pack-jpegscale-")
# (height, width): ImageNet-like, odd and prime sides, portrait, one much larger than the target
SOURCES = [(375, 500), (480, 640), (251, 333), (401, 293), (224, 224), (900, 1200), (375, 501)]


def make_folder():
    rng = np.random.default_rng(5)
    src = os.path.join(WORK, "src", "cls")
    os.makedirs(src)
    for i, (h, w) in enumerate(SOURCES):
        small = rng.integers(0, 256, (h // 8 + 1, w // 8 + 1, 3), dtype=np.uint8)
        im = Image.fromarray(small).resize((w, h), Image.BICUBIC).filter(ImageFilter.GaussianBlur(1.2))
        im.save(os.path.join(src, f"img{i}.jpg"), quality=92, subsampling=2 if i % 2 else 0)
    return os.path.dirname(src)


def index_of(name):
    return int(os.path.basename(name)[3:-4])


def pil_crop(path, th, tw):
    """torchvision Resize(min side) + CenterCrop on a PIL image."""
    return pil_fit_image(Image.open(path).convert("RGB"), th, tw)


def pil_fit_image(im, th, tw):
    """torchvision's arithmetic, transcribed (torchvision is not a dependency): Resize(s) gives the long
    side int(s * long / short); CenterCrop's offsets are int(round((size - crop) / 2.0))."""
    w, h = im.size
    if th * w >= tw * h:
        rh, rw = th, max(tw, int(th * w / h))
    else:
        rh, rw = max(th, int(tw * h / w)), tw
    r = im.resize((rw, rh), Image.BILINEAR) if (rw, rh) != (w, h) else im
    oy, ox = int(round((rh - th) / 2.0)), int(round((rw - tw) / 2.0))
    return np.asarray(r)[oy:oy + th, ox:ox + tw]


def convert(src, out, *args):
    p = subprocess.run([H5PACK, "-q", "-f", "--size", "224x224", *args, src, out], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack {' '.join(args) or '(default)'} converts (stderr: {p.stderr.strip()[:200]})")
    with h5py.File(out, "r") as f:
        scale = f.attrs["jpeg_scale"]
        scale = scale.decode() if isinstance(scale, bytes) else str(scale)
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["filenames"][()]]
        images = {n: f["images"][i].transpose(1, 2, 0) for i, n in enumerate(names)}
    return scale, images


def diffs(src, images):
    out = {}
    for name, got in images.items():
        want = pil_crop(os.path.join(src, name), 224, 224).astype(int)
        d = np.abs(got.astype(int) - want)
        out[name] = (int(d.max()), float(d.mean()))
    return out


def main():
    src = make_folder()
    scale, images = convert(src, os.path.join(WORK, "exact.h5"))
    check(scale == "exact", f"default jpeg_scale attribute is 'exact' (got {scale!r})")
    check(len(images) == len(SOURCES), f"all {len(SOURCES)} images stored")
    for name, (mx, mean) in sorted(diffs(src, images).items()):
        check(mx <= 1 and mean < 0.01, f"exact: {name} equals PIL decode + resize + crop (max {mx}, mean {mean:.4f})")

    scale, dct_images = convert(src, os.path.join(WORK, "dct.h5"), "--jpeg-scale", "dct")
    check(scale == "dct", f"--jpeg-scale dct is recorded (got {scale!r})")
    for name, (mx, mean) in sorted(diffs(src, dct_images).items()):
        # M/8 decoding is another low-pass, and the crop is computed on the scaled size: on this textured
        # content the difference is several levels (printed); unrelated pixels would differ by ~85.
        check(mean < 16, f"dct: {name} near PIL's full decode (max {mx}, mean {mean:.3f})")
    check(any(not np.array_equal(dct_images[n], images[n]) for n in images),
          "dct decodes differ from exact ones (a reduced scale was used for the large sources)")
    check(all(np.array_equal(dct_images[n], images[n]) for n in images if index_of(n) == 4),
          "the source at the target size (no room for a reduced scale) is the same in both")
    big = [n for n in images if index_of(n) == 5][0]  # 1200x900: 2/8 for us, 1/4 for PIL's draft() too
    drafted = Image.open(os.path.join(src, big))
    drafted.draft("RGB", (224, 224))
    want = pil_fit_image(drafted.convert("RGB"), 224, 224).astype(int)
    mx = int(np.abs(dct_images[big].astype(int) - want).max())
    check(drafted.size == (300, 225) and mx <= 1, f"dct: {big} equals PIL's draft() decode + resize + crop (max {mx})")

    p = subprocess.run([H5PACK, "--size", "224x224", "--jpeg-scale", "fast", src, os.path.join(WORK, "x.h5")],
                       capture_output=True, text=True)
    check(p.returncode == 1 and "--jpeg-scale: expected exact or dct, got 'fast'" in p.stderr,
          f"a bad --jpeg-scale value is refused naming the option (got: {p.stderr.strip()})")
    p = subprocess.run([H5PACK, "--jpeg-scale", "dct", src, os.path.join(WORK, "y.h5")], capture_output=True, text=True)
    check(p.returncode == 1 and "--jpeg-scale dct needs --size HxW" in p.stderr,
          f"--jpeg-scale dct without --size (nothing to scale for) is refused (got: {p.stderr.strip()})")
    h5test.finish("all --jpeg-scale checks passed")


try:
    main()
finally:  # kept for a look with H5PACK_KEEP_TEST_FILES=1, as the C tests' fixture does
    if not os.environ.get("H5PACK_KEEP_TEST_FILES"):
        shutil.rmtree(WORK, ignore_errors=True)
