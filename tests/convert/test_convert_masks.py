"""h5pack --masks MASK_DIR (docs/converter.md, "Segmentation masks"; docs/format.md, the masks dataset).

Generates an ImageFolder of JPEG and PNG images of several sizes and a mask folder that mirrors it by stem
(8-bit gray 'L', 16-bit gray 'I;16', palette 'P' with a palette that is not the identity, 1-bit gray), packs
them with --masks and checks with h5py and PIL:
- masks (N,H,W) uint8 (uint16 as soon as one mask is 16-bit), chunked (K,H,W) with the images' K, each
  masks[i] equal to PIL's NEAREST resize of the mask file of filenames[i] (so the order is the images'),
  in the images' geometry: --size with --resize crop, stretch and pad, and no --size (kept as they are);
- the same masks with -j 1 and -j 2, with --compress gzip --checksum, and after the exact-size copy that
  skips at decode time cause (--chunk 4: chunk by chunk; default chunking: row by row);
- the attributes values / value_count / histogram equal numpy's over the stored masks;
- an image without a mask, a mask without an image, a mask of another size than its image, an RGB mask,
  a gray+alpha mask, a mask that is no PNG and two masks of one stem are skipped and named with the
  reason, exit status 0 (2 with --strict, nothing written);
- the images, mean and std are those of the same conversion without --masks;
- --masks with --tiles, --max-side, or images of several sizes without --size is refused (exit 1).
Usage: test_convert_masks.py H5PACK [H5PACK_STATS]"""
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
    from PIL import Image
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy and python3-pil)")

H5PACK = sys.argv[1]
STATS = sys.argv[2] if len(sys.argv) > 2 else None
WORK = tempfile.mkdtemp(prefix="h5pack-masks-")
RNG = np.random.default_rng(42)
# (height, width): down- and upscaled, odd aspects both ways, one as large as the target
SIZES = [(37, 23), (50, 61), (16, 16), (9, 40), (64, 48), (20, 24), (41, 77), (30, 11)]


def blocky(h, w, levels, dtype=np.uint8):
    """A mask of class regions (so NEAREST's choice of source pixel shows) with a few random pixels."""
    m = RNG.integers(0, levels, (h // 3 + 1, w // 3 + 1)).repeat(3, 0).repeat(3, 1)[:h, :w]
    m[RNG.random((h, w)) < 0.1] = RNG.integers(0, levels)
    return m.astype(dtype)


def save_mask(path, kind, h, w):
    if kind == "L":
        Image.fromarray(blocky(h, w, 7) * 30).save(path)
    elif kind == "P":
        p = Image.fromarray(blocky(h, w, 12), "P")
        p.putpalette(RNG.permutation(256 * 3).astype(np.uint8).tobytes())  # colours unrelated to indices
        p.save(path)
    elif kind == "I;16":
        Image.fromarray(blocky(h, w, 9, np.uint16) * 7000 + 3, "I;16").save(path)
    elif kind == "1":
        Image.fromarray(blocky(h, w, 2).astype(bool)).save(path)


def make_folders(root, kinds, sizes=SIZES):
    """SRC/{a,b}/NNN.{jpg,png} and MASKS/{a,b}/NNN.png of the given kinds, round robin."""
    src, masks = f"{root}/images", f"{root}/masks"
    for i, (h, w) in enumerate(sizes):
        cls = "ab"[i % 2]
        os.makedirs(f"{src}/{cls}", exist_ok=True)
        os.makedirs(f"{masks}/{cls}", exist_ok=True)
        pixels = RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(f"{src}/{cls}/{i:03d}.{'png' if i % 3 == 0 else 'jpg'}", quality=95)
        save_mask(f"{masks}/{cls}/{i:03d}.png", kinds[i % len(kinds)], h, w)
    return src, masks


def geometry(sh, sw, h, w, mode):
    """The images' fit (docs/images.md): the size the whole image is resized to, the kept window's corner
    in it and where the window lands; torchvision's Resize + CenterCrop for crop."""
    height_binds = h * sw >= w * sh
    if mode == "stretch":
        return (h, w), (0, 0), (0, 0)
    if mode == "crop":
        rh, rw = (h, max(sw * h // sh, w)) if height_binds else (max(sh * w // sw, h), w)
        return (rh, rw), (round((rh - h) / 2), round((rw - w) / 2)), (0, 0)
    rh, rw = (min(max((2 * sh * w + sw) // (2 * sw), 1), h), w) if height_binds else \
        (h, min(max((2 * sw * h + sh) // (2 * sh), 1), w))
    return (rh, rw), (0, 0), ((h - rh) // 2, (w - rw) // 2)


def reference(path, size, mode):
    """PIL's NEAREST resize of the mask file in the images' geometry, as numpy values."""
    m = Image.open(path)
    if size is None:
        return np.asarray(m).astype(np.int64)
    h, w = size
    (rh, rw), (oy, ox), (dy, dx) = geometry(m.height, m.width, h, w, mode)
    r = np.asarray(m.resize((rw, rh), Image.NEAREST)).astype(np.int64)
    out = np.zeros((h, w), np.int64)
    win = r[oy:oy + min(h, rh), ox:ox + min(w, rw)]
    out[dy:dy + win.shape[0], dx:dx + win.shape[1]] = win
    return out


def run(*args, expect=0):
    p = subprocess.run([H5PACK, *args], capture_output=True, text=True)
    check(p.returncode == expect, f"h5pack {' '.join(args)}: exit {p.returncode} (expected {expect}) {p.stderr}",
          fatal=expect == 0 and p.returncode != 0)
    return p.stderr


def mask_path(masks, name):
    stem = os.path.splitext(name)[0]
    return f"{masks}/{stem}.png"


def check_masks(out, masks, size, mode, what, dtype="uint8"):
    """Every stored mask against PIL, the dataset's shape, type and chunks, and its attributes."""
    with h5py.File(out, "r") as f:
        names = list(f["filenames"].asstr()[:])
        d = f["masks"]
        stored = d[:]
        n = len(names)
        h, w = (size if size else (int(f.attrs["height"]), int(f.attrs["width"])))
        check(d.shape == (n, h, w), f"{what}: masks shape {d.shape}, expected {(n, h, w)}")
        check(d.dtype == np.dtype(dtype), f"{what}: masks dtype {d.dtype}, expected {dtype}")
        k = int(f.attrs["chunk_images"])
        check(d.chunks == (k, h, w) and f["images"].chunks[0] == k, f"{what}: masks chunks {d.chunks}, K {k}")
        bad = [nm for i, nm in enumerate(names) if not np.array_equal(stored[i], reference(mask_path(masks, nm), size,
                                                                                           mode))]
        check(not bad, f"{what}: {n - len(bad)} of {n} masks equal PIL's NEAREST resize of their file (differ: {bad})")
        values, counts = np.unique(stored, return_counts=True)
        check(list(d.attrs["values"]) == list(values[:256]), f"{what}: values attribute {list(d.attrs['values'])}")
        check(int(d.attrs["value_count"]) == len(values), f"{what}: value_count {int(d.attrs['value_count'])}")
        if dtype == "uint8":
            hist = np.zeros(256, np.int64)
            hist[values] = counts
            check(np.array_equal(d.attrs["histogram"], hist), f"{what}: histogram attribute equals numpy's")
        check(d.attrs["resample"] == b"nearest", f"{what}: resample attribute {d.attrs['resample']!r}")
        return stored, names


def check_sizes_and_modes(root):
    src, masks = make_folders(f"{root}/mix", ["L", "P", "1"])
    for mode in ("crop", "stretch", "pad"):
        for j in ("1", "2"):
            out = f"{root}/{mode}_{j}.h5"
            run("-q", "-j", j, "--size", "20x24", "--resize", mode, "--masks", masks, src, out)
            stored, _ = check_masks(out, masks, (20, 24), mode, f"--resize {mode} -j {j}")
            if j == "2":
                check(np.array_equal(stored, first), f"--resize {mode}: -j 1 and -j 2 store the same masks")
            first = stored
    out = f"{root}/gzip.h5"
    run("-q", "--size", "20x24", "--compress", "gzip", "--checksum", "--masks", masks, src, out)
    check_masks(out, masks, (20, 24), "crop", "--compress gzip --checksum")
    with h5py.File(out, "r") as f:
        check(f["masks"].compression == "gzip" and f["masks"].fletcher32, "gzip + fletcher32 on masks too")
    src16, masks16 = make_folders(f"{root}/deep", ["I;16", "L"])
    out = f"{root}/u16.h5"
    run("-q", "--size", "33x17", "--resize", "pad", "--masks", masks16, src16, out)
    check_masks(out, masks16, (33, 17), "pad", "16-bit masks", dtype="uint16")
    same, masks_same = make_folders(f"{root}/same", ["P", "L"], sizes=[(21, 19)] * 5)
    out = f"{root}/own_size.h5"
    run("-q", "--masks", masks_same, same, out)
    check_masks(out, masks_same, None, None, "no --size (one size)")
    return src, masks


def check_images_unchanged(root, src, masks):
    a, b = f"{root}/with.h5", f"{root}/without.h5"
    run("-q", "--size", "20x24", "--masks", masks, src, a)
    run("-q", "--size", "20x24", src, b)
    with h5py.File(a, "r") as f, h5py.File(b, "r") as g:
        check(np.array_equal(f["images"][:], g["images"][:]), "the images are those of a run without --masks")
        check(np.array_equal(f.attrs["mean"], g.attrs["mean"]) and np.array_equal(f.attrs["std"], g.attrs["std"]),
              "mean and std are the images' alone")
        check("masks" not in g, "no masks dataset without --masks")


def make_bad(root):
    src, masks = make_folders(f"{root}/bad", ["L", "P"])
    os.remove(f"{masks}/a/002.png")                                           # an image without a mask
    Image.fromarray(blocky(10, 10, 3)).save(f"{masks}/b/orphan.png")          # a mask without an image
    Image.fromarray(blocky(51, 61, 3)).save(f"{masks}/b/001.png")             # 50x61 image, 51x61 mask
    Image.fromarray(RNG.integers(0, 255, (41, 77, 3), dtype=np.uint8)).save(f"{masks}/a/006.png")  # RGB
    Image.fromarray(RNG.integers(0, 255, (16, 16, 2), dtype=np.uint8), "LA").save(f"{masks}/a/002x.png")
    os.makedirs(f"{src}/a", exist_ok=True)
    Image.fromarray(RNG.integers(0, 255, (16, 16, 3), dtype=np.uint8)).save(f"{src}/a/002x.jpg")
    with open(f"{masks}/b/003.txt", "w") as t:                                # a second file of stem b/003
        t.write("not a mask")
    os.remove(f"{masks}/b/005.png")
    with open(f"{masks}/b/005.tif", "w") as t:                                # no PNG at all
        t.write("not a PNG")
    return src, masks


def check_skips(root):
    src, masks = make_bad(root)
    want = {"a/002.jpg": "no mask", f"{masks}/b/orphan.png": "mask without an image",
            "b/001.jpg": "mask size differs", "a/006.png": "bad mask", "a/002x.jpg": "bad mask",
            "b/003.png": "bad mask", "b/005.jpg": "bad mask"}
    for chunk in (["--chunk", "4"], []):
        out = f"{root}/skips{len(chunk)}.h5"
        err = run("--size", "20x24", *chunk, "--masks", masks, src, out)
        with h5py.File(out, "r") as f:
            skipped = dict(zip(f["skipped/files"].asstr()[:], f["skipped/reasons"].asstr()[:]))
            names = list(f["filenames"].asstr()[:])
        for name, category in want.items():
            got = skipped.get(name, "")
            check(got.startswith(category), f"{name} skipped as {category!r}: {got!r}")
            check(f"skipped {name}: {category}" in err, f"{name} named on stderr with its reason")
        check("RGB PNG" in skipped.get("a/006.png", "") and "convert('L')" in skipped["a/006.png"],
              f"the RGB mask's reason says how to convert it: {skipped.get('a/006.png')}")
        check("gray+alpha" in skipped.get("a/002x.jpg", ""), f"the LA mask's reason: {skipped.get('a/002x.jpg')}")
        check("not a PNG" in skipped.get("b/005.jpg", ""), f"the non-PNG mask's reason: {skipped.get('b/005.jpg')}")
        check("51x61" in skipped.get("b/001.jpg", "") and "50x61" in skipped.get("b/001.jpg", ""),
              f"the size mismatch names both sizes: {skipped.get('b/001.jpg')}")
        check(len(names) == len(SIZES) + 1 - 6, f"{len(names)} images packed ({names})")
        check_masks(out, masks, (20, 24), "crop", f"after skips {' '.join(chunk) or 'default chunks'}")
    out = f"{root}/strict.h5"
    err = run("--strict", "--size", "20x24", "--masks", masks, src, out, expect=2)
    check(not os.path.exists(out), f"--strict: nothing written ({err.strip()[-200:]})")


def check_refusals(root, src, masks):
    for opts in (["--tiles"], ["--max-side", "30"], []):
        out = f"{root}/refused.h5"
        err = run("-q", *opts, "--masks", masks, src, out, expect=1)
        check("--masks works with images of one size" in err and not os.path.exists(out),
              f"--masks {' '.join(opts) or 'without --size over several sizes'} refused: {err.strip()}")


def check_info(root, masks):
    if not STATS:
        return
    p = subprocess.run([STATS, "info", f"{root}/crop_1.h5"], capture_output=True, text=True)
    check(p.returncode == 0 and "masks" in p.stdout and "uint8" in p.stdout and "values" in p.stdout,
          f"h5pack-stats info shows the masks: {p.stdout[-600:]} {p.stderr}")


def main():
    src, masks = check_sizes_and_modes(WORK)
    check_images_unchanged(WORK, src, masks)
    check_skips(WORK)
    check_refusals(WORK, src, masks)
    check_info(WORK, masks)
    shutil.rmtree(WORK)
    h5test.finish("convert_masks: masks equal PIL's NEAREST resize in every --resize mode, in the images' "
                  "order and chunks; bad and unpaired masks skipped and named")


main()
