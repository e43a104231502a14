"""h5pack --tiles: huge images whole at their own size, each its own dataset in tiles (docs/format.md,
"Huge images in tiles").

Packs JPEG (baseline, progressive, gray, CMYK) and PNG (RGB, RGBA, palette, 16-bit gray) images with
corrupt files among them, and checks with h5py:
- every tiles/<i> equals the whole-image converter's pixels for the same file (h5pack without --size,
  whose pixels its own tests prove equal to PIL's), in RGB and gray, and PIL's decode directly for the
  RGB files;
- chunks are (min(T, h), min(T, w), C); image_shapes, filenames, labels and skips match; the
  attributes say storage "tiled", the tile and the largest size; mean/std are the exact statistics;
- gzip + fletcher32 store the same pixels;
- a 9000 x 12000 JPEG packs with a peak RSS under 128 MiB (the whole-image path needs over 300 MB) and
  equals PIL's decode in a sampled region;
- -j 3 (three images packed at once) writes the same datasets as -j 1, and --strict still stops;
- options that size images are refused with --tiles; the reader refuses the file with a message that
  says what it is.
Usage: test_convert_tiles.py H5PACK H5PACK_STATS"""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy and python3-pil)")

H5PACK, STATS = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="h5pack-tiles-")
h5test.verbose = True
RNG = np.random.default_rng(5)


def run(*args, expect=0):
    p = subprocess.run([H5PACK, *args], capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout + p.stderr)
    check(p.returncode == expect, f"h5pack {' '.join(args)}: exit {p.returncode}")
    return p.stderr


def smooth(h, w):
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / w, y * 255 / h, (x + y) % 256], -1)
    return np.clip(base + RNG.integers(0, 30, (h, w, 3)), 0, 255).astype(np.uint8)


def make_folder(src):
    os.makedirs(f"{src}/a"), os.makedirs(f"{src}/b")
    Image.fromarray(smooth(700, 500)).save(f"{src}/a/big.jpg", quality=90)
    Image.fromarray(smooth(300, 410)).save(f"{src}/a/prog.jpg", quality=85, progressive=True)
    Image.fromarray(smooth(257, 129)[..., 0]).save(f"{src}/a/gray.jpg", quality=90)
    Image.fromarray(smooth(50, 60)).convert("CMYK").save(f"{src}/a/cmyk.jpg")
    Image.fromarray(smooth(200, 333)).save(f"{src}/b/rgb.png")
    alpha = RNG.integers(0, 256, (190, 250, 1), dtype=np.uint8)
    Image.fromarray(np.concatenate([smooth(190, 250), alpha], -1), "RGBA").save(f"{src}/b/rgba.png")
    Image.fromarray(smooth(120, 130)).convert("P", palette=Image.ADAPTIVE).save(f"{src}/b/pal.png")
    Image.fromarray(smooth(64, 80)[..., 0].astype(np.uint16) * 257, "I;16").save(f"{src}/b/g16.png")
    with open(f"{src}/b/rgb.png", "rb") as f:
        open(f"{src}/b/cut.png", "wb").write(f.read()[:3000])
    with open(f"{src}/a/big.jpg", "rb") as f:
        open(f"{src}/a/cut.jpg", "wb").write(f.read()[:5000])


def whole_images(path):
    """name -> (h, w, C) pixels from a file of the whole-image converter (one size or several)."""
    out = {}
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["filenames"][:]]
        c = int(f.attrs["channels"])
        for i, n in enumerate(names):
            if "image_offsets" in f:
                off, (h, w) = int(f["image_offsets"][i]), f["image_shapes"][i]
                out[n] = f["images"][off:off + h * w * c].reshape(h, w, c)
            else:
                img = f["images"][i]
                out[n] = img if f.attrs["layout"] == b"NHWC" else img.transpose(1, 2, 0)
    return out


def check_tiled(path, src, tile, channels):
    want = whole_images(f"{path}.whole.h5")
    with h5py.File(path, "r") as f:
        check(f.attrs["storage"] == b"tiled" and int(f.attrs["tile"]) == tile, f"{path}: storage/tile attributes")
        check(int(f.attrs["h5pack_format_version"]) == 2 and f.attrs["layout"] == b"NHWC", f"{path}: version 2, NHWC")
        names = [n.decode() for n in f["filenames"][:]]
        check(sorted(names) == sorted(want), f"{path}: the images the whole-image converter kept")
        skipped = sorted(n.decode() for n in f["skipped/files"][:])
        check(skipped == ["a/cut.jpg", "b/cut.png"], f"{path}: skipped {skipped}")
        reasons = dict(zip((n.decode() for n in f["skipped/files"][:]), (r.decode() for r in f["skipped/reasons"][:])))
    with h5py.File(f"{path}.whole.h5", "r") as f:  # the same reason as the whole-image converter's (its detail aside)
        whole = dict(zip((n.decode() for n in f["skipped/files"][:]), (r.decode() for r in f["skipped/reasons"][:])))
    same = all(reasons[n].split(" (")[0] == whole[n].split(" (")[0] for n in skipped)
    check(same, f"{path}: skip reasons as the whole-image converter's ({reasons} vs {whole})")
    with h5py.File(path, "r") as f:
        shapes, total, sums, sq = f["image_shapes"][:], 0, np.zeros(channels), np.zeros(channels)
        for i, n in enumerate(names):
            d = f["tiles"][str(i)]
            img = d[:]
            h, w = img.shape[:2]
            check(d.chunks == (min(tile, h), min(tile, w), channels), f"{n}: chunks {d.chunks}")
            check(tuple(shapes[i]) == (h, w), f"{n}: image_shapes")
            check(np.array_equal(img, want[n]), f"{n}: pixels equal the whole-image converter's")
            if channels == 3 and n.endswith(("big.jpg", "prog.jpg", "rgb.png")):
                check(np.array_equal(img, np.asarray(Image.open(f"{src}/{n}").convert("RGB"))), f"{n}: PIL's decode")
            total += h * w
            sums += img.reshape(-1, channels).sum(0)
            sq += (img.reshape(-1, channels).astype(np.float64) ** 2).sum(0)
        check(int(f.attrs["height"]) == max(s[0] for s in shapes) and int(f.attrs["width"]) == max(s[1] for s in shapes),
              f"{path}: height/width attributes are the largest")
        mean = sums / total / 255
        std = np.sqrt(sq / total - (sums / total) ** 2) / 255
        check(np.allclose(f.attrs["mean"], mean, atol=1e-12) and np.allclose(f.attrs["std"], std, atol=1e-9),
              f"{path}: mean/std are the pixels' statistics")
        check(list(f["labels"][:]) == [0 if n.startswith("a/") else 1 for n in names], f"{path}: labels")


def datasets(path):
    """Every dataset of PATH by name -> its values."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def check_threads(src):
    """-j 3 packs three images at once: the same datasets as -j 1; --strict still stops at the first bad file."""
    one, three = f"{WORK}/j1.h5", f"{WORK}/j3.h5"
    run("--tiles", "--tile", "48", "-j", "1", src, one)
    run("--tiles", "--tile", "48", "-j", "3", src, three)
    a, b = datasets(one), datasets(three)
    same = sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a)
    check(same and any(k.startswith("tiles/") for k in a), f"-j 3: the same {len(a)} datasets as -j 1")
    run("--tiles", "-j", "3", "--strict", src, f"{WORK}/strict.h5", expect=2)
    check(not os.path.exists(f"{WORK}/strict.h5"), "--strict -j 3: nothing under the final name")


def limit_file_size():
    """In the child: files larger than 300 kB fail to grow (EFBIG), as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))


def check_write_failure(src):
    """The tiles' own writes (pwrite beside HDF5, in 2 MiB-aligned pieces) failing: exit 1, the file and
    the reason named, nothing under the final name."""
    out = f"{WORK}/full.h5"
    p = subprocess.run([H5PACK, "-q", "--tiles", "--tile", "64", src, out], capture_output=True, text=True,
                       preexec_fn=limit_file_size)
    check(p.returncode == 1 and "full.h5" in p.stderr and "cannot write" in p.stderr and "large" in p.stderr
          and f"{src}/" in p.stderr, f"tiles that cannot be written: exit 1 naming the file, the source image and "
          f"the reason ({p.returncode}: {p.stderr.strip()})")
    check(not os.path.exists(out), "tiles that cannot be written: nothing under the final name")


def main():
    src = f"{WORK}/src"
    make_folder(src)
    for channels, extra in ((3, []), (1, ["--channels", "1"])):
        out = f"{WORK}/t{channels}.h5"
        run(*extra, src, f"{out}.whole.h5")
        log = run("--tiles", "--tile", "64", *extra, src, out)
        check("in tiles of 64x64" in log, "the plan names the tiles")
        check_tiled(out, src, 64, channels)
    gz = f"{WORK}/gz.h5"
    shutil.copy(f"{WORK}/t3.h5.whole.h5", f"{gz}.whole.h5")
    run("--tiles", "--tile", "100", "--compress", "gzip", "--checksum", src, gz)
    check_tiled(gz, src, 100, 3)
    with h5py.File(gz, "r") as f:
        check(f["tiles"]["0"].compression == "gzip" and f["tiles"]["0"].fletcher32, "gzip + fletcher32 tiles")
    check_threads(src)
    check_write_failure(src)

    err = run("--tiles", "--size", "64x64", src, f"{WORK}/bad.h5", expect=1)
    check("--size does not apply" in err, "--tiles with --size: the message names the clash")
    info = subprocess.run([STATS, "info", f"{WORK}/t3.h5"], capture_output=True, text=True)
    check("a file of huge images in tiles" in info.stdout + info.stderr, "the reader says what the file is")

    huge = f"{WORK}/huge"
    os.makedirs(f"{huge}/c")
    y = np.linspace(0, 255, 9000, dtype=np.float32)[:, None]
    x = np.linspace(0, 255, 12000, dtype=np.float32)[None, :]
    img = np.empty((9000, 12000, 3), np.uint8)
    img[..., 0], img[..., 1], img[..., 2] = x + 0 * y, y + 0 * x, (x * 3 + y * 5) % 256
    Image.fromarray(img).save(f"{huge}/c/scene.jpg", quality=85)
    del img
    p = subprocess.run(["/usr/bin/time", "-f", "%M", H5PACK, "-q", "--tiles", huge, f"{WORK}/huge.h5"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"9000x12000 JPEG: exit {p.returncode} {p.stderr}")
    peak_kib = int(p.stderr.strip().splitlines()[-1])
    check(peak_kib < 128 * 1024, f"9000x12000 JPEG packed with a peak RSS of {peak_kib // 1024} MiB (< 128)")
    Image.MAX_IMAGE_PIXELS = None
    with h5py.File(f"{WORK}/huge.h5", "r") as f:
        d = f["tiles"]["0"]
        ref = np.asarray(Image.open(f"{huge}/c/scene.jpg"))
        check(d.shape == (9000, 12000, 3), "9000x12000: shape")
        for y0, x0 in ((0, 0), (4000, 7000), (8800, 11800)):
            check(np.array_equal(d[y0:y0 + 200, x0:x0 + 200], ref[y0:y0 + 200, x0:x0 + 200]),
                  f"9000x12000: region at ({y0}, {x0}) equals PIL's decode")
    print(f"tiles: {peak_kib // 1024} MiB peak for 9000x12000")
    shutil.rmtree(WORK)
    h5test.finish("convert_tiles: tiled images equal the whole-image converter and PIL; bands keep memory bounded")


main()
