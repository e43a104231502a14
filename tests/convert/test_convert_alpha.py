"""h5pack --alpha drop|black|white: what becomes of PNG transparency (docs/images.md, "What is decoded").

Writes PNGs with PIL in every kind that carries transparency (RGBA, LA, palette + tRNS, RGB + tRNS, gray +
tRNS; fully transparent pixels keep a non-zero colour), plus an opaque RGB PNG, packs them with h5pack and
checks with h5py, exactly (0 levels):
- default and --alpha drop: PIL's Image.open(f).convert('RGB') (torchvision's loader), and convert('L')
  with --channels 1;
- --alpha black / white: PIL's Image.alpha_composite on an opaque black / white background, then
  convert('RGB') or convert('L');
- the same through --tiles (band by band, tiles smaller than the images) and through --size (composite
  or drop first, then PIL's resize(BILINEAR));
- the opaque PNG is the same in every mode; drop and black really differ on every transparent file;
- the file's alpha attribute names the mode; a bad --alpha is refused.
Usage: test_convert_alpha.py H5PACK"""
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy and python3-pil)")

# PIL warns that a palette's transparency "should be converted to RGBA" when convert('RGB') drops it: expected.
warnings.filterwarnings("ignore", "Palette images with Transparency")
H5PACK = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="h5pack-alpha-")
RNG = np.random.default_rng(41)
H, W = 23, 37  # odd sizes; --tile 16 cuts them into several tiles and bands


def colours(h, w, c):
    return RNG.integers(1, 256, (h, w, c), dtype=np.uint8)  # never 0: a dropped alpha must show


def alpha_plane(h, w):
    """Every pixel fully transparent, fully opaque or in between (a third each, in stripes and at random)."""
    a = RNG.integers(1, 255, (h, w), dtype=np.uint8)
    a[::3] = 0
    a[1::3, ::2] = 255
    return a


def make_folder(src):
    os.makedirs(src)
    Image.fromarray(np.dstack([colours(H, W, 3), alpha_plane(H, W)]), "RGBA").save(f"{src}/rgba.png")
    Image.fromarray(np.dstack([colours(H, W, 1)[..., 0], alpha_plane(H, W)]), "LA").save(f"{src}/la.png")
    pal = Image.fromarray(RNG.integers(0, 64, (H, W), dtype=np.uint8), "P")
    pal.putpalette(colours(1, 64, 3).tobytes())
    trns = bytes([0, 255] * 8 + list(RNG.integers(1, 255, 32)))  # 48 of 64 entries: the rest opaque
    pal.save(f"{src}/p_trns.png", transparency=trns)
    rgb = colours(H, W, 3)
    rgb[::4, ::3] = (200, 10, 99)  # the tRNS colour: fully transparent there, opaque elsewhere
    Image.fromarray(rgb).save(f"{src}/rgb_trns.png", transparency=(200, 10, 99))
    gray = colours(H, W, 1)[..., 0]
    gray[1::3, 1::2] = 77
    Image.fromarray(gray).save(f"{src}/l_trns.png", transparency=77)
    Image.fromarray(colours(H, W, 3)).save(f"{src}/opaque.png")


def reference(path, mode, channels, size=None):
    """What the converter must store: PIL's convert (drop) or alpha_composite on black/white, then resize."""
    im = Image.open(path)
    if mode != "drop":
        bg = (0, 0, 0, 255) if mode == "black" else (255, 255, 255, 255)
        im = Image.alpha_composite(Image.new("RGBA", im.size, bg), im.convert("RGBA"))
    im = im.convert("RGB" if channels == 3 else "L")
    if size:
        im = im.resize((size[1], size[0]), Image.BILINEAR)
    return np.asarray(im).reshape(im.size[1], im.size[0], channels)


def run(*args, expect=0):
    p = subprocess.run([H5PACK, "-q", *args], capture_output=True, text=True)
    check(p.returncode == expect, f"h5pack {' '.join(args)}: exit {p.returncode} (expected {expect}) {p.stderr}",
          fatal=expect == 0 and p.returncode != 0)
    return p.stderr


def stored(path):
    """name -> (h, w, C) pixels, from a one-size NHWC file or a tiled one; and the alpha attribute."""
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["filenames"][:]]
        tiled = "tiles" in f
        images = {n: (f["tiles"][str(i)][:] if tiled else f["images"][i]) for i, n in enumerate(names)}
        return images, f.attrs.get("alpha", b"(none)").decode()


def check_file(out, src, mode, channels, what, size=None):
    images, attr = stored(out)
    check(attr == mode, f"{what}: alpha attribute {attr!r}, expected {mode!r}")
    check(sorted(images) == sorted(os.listdir(src)), f"{what}: every file packed ({sorted(images)})")
    for name, got in sorted(images.items()):
        want = reference(f"{src}/{name}", mode, channels, size)
        same = got.shape == want.shape and np.array_equal(got, want)
        diff = int(np.abs(got.astype(int) - want).max()) if got.shape == want.shape else f"shape {got.shape}"
        check(same, f"{what}: {name} equals PIL's ({'0' if same else diff} levels)")
    return images


def main():
    src = f"{WORK}/src"
    make_folder(src)
    got = {}
    for mode in (None, "drop", "black", "white"):
        for channels in (3, 1):
            name = mode or "default"
            opts = (["--alpha", mode] if mode else []) + ["--channels", str(channels), "--layout", "nhwc"]
            out = f"{WORK}/{name}_{channels}.h5"
            run(*opts, src, out)
            got[name, channels] = check_file(out, src, mode or "drop", channels, f"{name} channels={channels}")
            tiled = f"{WORK}/{name}_{channels}_tiles.h5"
            run(*opts[:-2], "--tiles", "--tile", "16", src, tiled)
            check_file(tiled, src, mode or "drop", channels, f"{name} channels={channels} --tiles")
    for name in sorted(got["drop", 3]):  # the pictures exercise what they should
        differs = not np.array_equal(got["drop", 3][name], got["black", 3][name])
        check(differs == (name != "opaque.png"), f"{name}: drop and black {'differ' if differs else 'agree'}")
        check(np.array_equal(got["default", 3][name], got["drop", 3][name]), f"{name}: the default is drop")
    for mode in ("drop", "white"):
        out = f"{WORK}/{mode}_resized.h5"
        run("--alpha", mode, "--size", "15x20", "--resize", "stretch", "--layout", "nhwc", src, out)
        check_file(out, src, mode, 3, f"{mode} --size 15x20 stretch", size=(15, 20))
    err = run("--alpha", "grey", src, f"{WORK}/bad.h5", expect=1)
    check("--alpha: expected drop, black or white, got 'grey'" in err, f"bad --alpha refused: {err.strip()}")
    check(not os.path.exists(f"{WORK}/bad.h5"), "nothing written for a bad --alpha")
    shutil.rmtree(WORK)
    h5test.finish("convert_alpha: PNG transparency dropped as PIL's convert('RGB') does, or composited on "
                  "black or white as Image.alpha_composite, whole and in tiles")


main()
