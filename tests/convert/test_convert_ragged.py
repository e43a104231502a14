"""h5pack over images of several sizes (format version 2, docs/format.md "Images of several sizes").

Packs generated JPEG/PNG images of random sizes and aspects, without --size (each image as decoded) and
with --max-side, and checks with h5py and PIL: every stored image equals PIL's decode (and PIL's
resize(BILINEAR) to the --max-side size) exactly; offsets and shapes describe every image; mean/std are
the exact pixel statistics; the file is within 2% of the pixel bytes; the bytes do not depend on -j;
gzip stores the same pixels; an image that fails to decode after its header was read is skipped and
leaves zeros; h5pack.read_image gives the documented h5py slice (and the transposed row of an NCHW
file); the Loader without a crop refuses the file with a message that names the options; a folder of one size still
makes a version 1 file; --max-side with --size is refused; h5pack-stats info reports the size spread.
Usage: test_convert_ragged.py H5PACK H5PACK_GEN_IMAGES H5PACK_STATS"""
import json
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

import h5pack

H5PACK, GEN, STATS = sys.argv[1], sys.argv[2], sys.argv[3]
WORK = tempfile.mkdtemp(prefix="h5pack-ragged-")
h5test.verbose = True


def run(*args, expect=0):
    p = subprocess.run([H5PACK, *args], capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout + p.stderr)
    check(p.returncode == expect, f"h5pack {' '.join(args)}: exit {p.returncode}")
    return p


def max_side_size(h, w, n):
    """docs/format.md: the longer side becomes N, the shorter keeps the aspect, rounded half up, >= 1."""
    if not n or max(h, w) <= n:
        return h, w
    if h >= w:
        return n, max(1, (2 * w * n + h) // (2 * h))
    return max(1, (2 * h * n + w) // (2 * w)), n


def stored(f, i):
    off, (h, w), c = f["image_offsets"][i], f["image_shapes"][i], f.attrs["channels"]
    return f["images"][off:off + h * w * c].reshape(h, w, c)  # the documented lines


def check_file(path, src, max_side):
    name = os.path.basename(path)
    with h5py.File(path, "r") as f:
        check(f.attrs["h5pack_format_version"] == 2 and f.attrs["storage"] == b"ragged", f"{name}: version 2, ragged")
        check(f.attrs["max_side"] == max_side and f.attrs["layout"] == b"NHWC", f"{name}: max_side, layout")
        offs, shapes = f["image_offsets"][:], f["image_shapes"][:]
        names = f["filenames"].asstr()[:]
        c = int(f.attrs["channels"])
        check(offs.dtype == np.int64 and shapes.dtype == np.int64 and shapes.shape == (len(names), 2),
              f"{name}: image_offsets (N,) and image_shapes (N,2) int64")
        total = int(f["images"].shape[0])
        ends = offs + shapes[:, 0] * shapes[:, 1] * c
        check(bool((offs[1:] >= ends[:-1]).all()) and int(ends[-1]) <= total, f"{name}: images do not overlap")
        exact, sums, sq, pixels = True, np.zeros(c), np.zeros(c), 0
        for i, rel in enumerate(names):
            im = Image.open(os.path.join(src, rel)).convert("RGB")
            h, w = max_side_size(im.height, im.width, max_side)
            if (h, w) != (im.height, im.width):
                im = im.resize((w, h), Image.BILINEAR)
            got = stored(f, i)
            exact &= got.shape == (h, w, c) and bool((np.asarray(im) == got).all())
            x = got.reshape(-1, c).astype(np.float64)
            sums, sq, pixels = sums + x.sum(0), sq + (x * x).sum(0), pixels + x.shape[0]
        check(exact, f"{name}: every image equals PIL's decode{' + resize' if max_side else ''} exactly")
        mean = sums / pixels / 255
        std = np.sqrt(np.maximum(sq / pixels - (sums / pixels) ** 2, 0)) / 255
        check(np.allclose(f.attrs["mean"], mean, rtol=0, atol=1e-9) and
              np.allclose(f.attrs["std"], std, rtol=0, atol=1e-9), f"{name}: mean/std over every pixel")
        ratio = os.path.getsize(path) / float(pixels * c)
        check(ratio <= 1.02, f"{name}: file / pixel bytes = {ratio:.4f} <= 1.02")
        chunk = int(f.attrs["chunk_bytes"])
        chunks = -(-total // chunk)
        check(chunks * chunk - total < chunks, f"{name}: chunks of {chunk} B hold the {total} B evenly")
        for i in (0, len(names) // 2, len(names) - 1):
            got = h5pack.read_image(path, i)
            check(got.dtype == np.uint8 and bool((got == stored(f, i)).all()), f"{name}: read_image({i})")
    return names


def check_info(path):
    p = subprocess.run([STATS, "info", "--json", path], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack-stats info --json {os.path.basename(path)}: exit {p.returncode}")
    z = json.loads(p.stdout)["image_sizes"] if p.returncode == 0 else None
    with h5py.File(path, "r") as f:
        hw = f["image_shapes"][:]
    med = lambda v: sorted(v)[len(v) // 2]
    want = {"n": len(hw), "pixels": int((hw[:, 0] * hw[:, 1]).sum()),
            "height_min_median_max": [int(hw[:, 0].min()), int(med(hw[:, 0])), int(hw[:, 0].max())],
            "width_min_median_max": [int(hw[:, 1].min()), int(med(hw[:, 1])), int(hw[:, 1].max())]}
    check(z is not None and all(z[k] == v for k, v in want.items()), f"info's image_sizes {z} == {want}")
    reader = json.loads(p.stdout)["reader"] if p.returncode == 0 else {}
    check(reader.get("several_sizes") is True, "info's reader view: several_sizes")
    check(h5pack.info(path)["several_sizes"] == 1, "h5pack.info: several_sizes")
    with h5pack.Loader(path, crop="center", output_size=64, batch_size=16, device="cpu") as ld:
        seen = sum(x.shape[0] for x, _ in ld)
    check(seen == len(hw), f"the Loader streams the converter's file: {seen} of {len(hw)} images")
    text = subprocess.run([STATS, "info", path], capture_output=True, text=True).stdout
    check(f"image sizes ({len(hw)} images of several sizes" in text, "info's text names the size spread")


def make_sources():
    src = os.path.join(WORK, "src")
    subprocess.run([GEN, src, "--classes", "3", "--per-class", "40", "--min-size", "90", "--max-size", "420",
                    "--seed", "11", "--png-fraction", "0.3"], check=True, capture_output=True)
    return src


def check_own_sizes(src):
    out = os.path.join(WORK, "own.h5")
    p = run(src, out, "-j", "2")
    check("images of several sizes" in p.stderr, "the plan says the images keep their sizes")
    check_file(out, src, 0)
    check_info(out)
    one = os.path.join(WORK, "own_j1.h5")
    run(src, one, "-j", "1", "-q")
    check(open(out, "rb").read() == open(one, "rb").read(), "-j 1 and -j 2 write the same bytes")


def check_max_side(src):
    out = os.path.join(WORK, "ms.h5")
    run(src, out, "--max-side", "160", "-q")
    names = check_file(out, src, 160)
    gz = os.path.join(WORK, "ms_gz.h5")
    run(src, gz, "--max-side", "160", "--compress", "gzip", "-j", "3", "-q")
    with h5py.File(out, "r") as a, h5py.File(gz, "r") as b:
        same = np.array_equal(a["images"][:], b["images"][:]) and \
            np.array_equal(a["image_offsets"][:], b["image_offsets"][:])
        check(same and b["images"].compression == "gzip", "gzip stores the same bytes")
        check(list(b["filenames"].asstr()[:]) == list(names), "gzip: same packed order")
    check(os.path.getsize(gz) < os.path.getsize(out), "gzip: a smaller file")


def check_skips(src):
    bad = os.path.join(WORK, "bad")
    shutil.copytree(src, bad)
    victim = sorted(n for n in os.listdir(os.path.join(bad, "class_01")) if n.endswith(".jpg"))[0]
    data = open(os.path.join(bad, "class_01", victim), "rb").read()
    with open(os.path.join(bad, "class_01", "half.jpg"), "wb") as f:
        f.write(data[: len(data) * 6 // 10])  # its header is whole: a place is reserved, the decode fails
    with open(os.path.join(bad, "class_02", "junk.png"), "wb") as f:
        f.write(b"not an image")
    out = os.path.join(WORK, "bad.h5")
    run(bad, out, "--max-side", "200", "-q")
    with h5py.File(out, "r") as f:
        skipped = dict(zip(f["skipped/files"].asstr()[:], f["skipped/reasons"].asstr()[:]))
        check(set(skipped) == {"class_01/half.jpg", "class_02/junk.png"}, f"two files skipped: {skipped}")
        check(skipped.get("class_01/half.jpg", "").startswith("corrupt image: truncated JPEG"),
              "the truncated JPEG says why")
        offs, shapes = f["image_offsets"][:], f["image_shapes"][:]
        ends = offs + shapes[:, 0] * shapes[:, 1] * 3
        gaps = [(int(e), int(o)) for e, o in zip(ends[:-1], offs[1:]) if o != e]
        check(len(gaps) == 1 and not f["images"][gaps[0][0]:gaps[0][1]].any(), "the skipped image leaves zeros")
        check("class_01/half.jpg" not in set(f["filenames"].asstr()[:]), "and no row")
    check_file(out, bad, 200)
    # a header that promises a huge image over a few bytes: its place would dwarf the others; the
    # converter copies the images together, and the attributes give the largest converted image
    with open(os.path.join(bad, "class_00", "liar.jpg"), "wb") as f:
        big = Image.fromarray(np.random.default_rng(3).integers(0, 256, (2400, 2400, 3), dtype=np.uint8))
        tmp = os.path.join(WORK, "liar.jpg")
        big.save(tmp, quality=90)
        f.write(open(tmp, "rb").read()[:4000])
    with open(os.path.join(bad, "class_01", "long.png"), "wb") as f:
        Image.fromarray(np.zeros((2, 70000, 3), np.uint8)).save(f, format="PNG")
    out = os.path.join(WORK, "bad2.h5")
    p = run(bad, out, "-j", "2")
    check("copying the images together" in p.stderr, "a large gap: the images are copied together")
    with h5py.File(out, "r") as f:
        skipped = dict(zip(f["skipped/files"].asstr()[:], f["skipped/reasons"].asstr()[:]))
        check(skipped.get("class_01/long.png", "").startswith("too large: 2x70000"), f"a side over 65535: {skipped}")
        check(skipped.get("class_00/liar.jpg", "").startswith("corrupt image"), "the lying JPEG is skipped")
        hw = f["image_shapes"][:]
        check((f.attrs["height"], f.attrs["width"]) == (hw[:, 0].max(), hw[:, 1].max()),
              "height/width attributes: the largest converted image")
    check_file(out, bad, 0)


def check_csv_labels(src):
    """--labels with images of several sizes: every row's values follow its image."""
    rels = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs)
    csv = os.path.join(WORK, "labels.csv")
    with open(csv, "w") as f:
        f.write("file,a,b\n" + "".join(f"{r},{i},{-2 * i}\n" for i, r in enumerate(rels)))
    out = os.path.join(WORK, "csv.h5")
    run(src, out, "--labels", csv, "--max-side", "128", "-q")
    want = {r: (i, -2 * i) for i, r in enumerate(rels)}
    with h5py.File(out, "r") as f:
        labels, names = f["labels"][:], f["filenames"].asstr()[:]
        check(labels.shape == (len(rels), 2) and all(tuple(labels[i]) == want[n] for i, n in enumerate(names)),
              "--labels: each image's row of the CSV")
        check(f.attrs["h5pack_format_version"] == 2, "--labels with --max-side: a version 2 file")


def check_one_size_and_refusals(src):
    same = os.path.join(WORK, "same", "a")
    os.makedirs(same)
    for i in range(5):
        Image.new("RGB", (40, 30), (10 * i, 20, 30)).save(os.path.join(same, f"{i}.png"))
    out = os.path.join(WORK, "same.h5")
    run(os.path.dirname(same), out, "-q")
    with h5py.File(out, "r") as f:
        check(f.attrs["h5pack_format_version"] == 1 and f["images"].shape == (5, 3, 30, 40),
              "images of one size: a version 1 file (N,C,H,W)")
        check(bool((h5pack.read_image(out, 3) == f["images"][3].transpose(1, 2, 0)).all()),
              "read_image of an NCHW file is its row as (H,W,C)")
    check(h5pack.info(out)["several_sizes"] == 0, "h5pack.info of a one-size file: several_sizes 0")
    p = run(src, os.path.join(WORK, "x.h5"), "--max-side", "100", "--size", "64x64", expect=1)
    check("--max-side and --size" in p.stderr, "--max-side with --size is refused")
    try:
        h5pack.Loader(os.path.join(WORK, "own.h5"))
        check(False, "the Loader refuses images of several sizes without a crop")
    except ValueError as e:
        check("several sizes" in str(e) and "output_size" in str(e), f"the Loader says which options to set: {e}")
    try:
        h5pack.read_image(os.path.join(WORK, "own.h5"), 10**6)
        check(False, "read_image refuses an index past the end")
    except ValueError as e:
        check("the file holds 120" in str(e), f"read_image names the count: {e}")


def main():
    try:
        src = make_sources()
        check_own_sizes(src)
        check_max_side(src)
        check_skips(src)
        check_csv_labels(src)
        check_one_size_and_refusals(src)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    h5test.finish("images of several sizes: every check passed")


if __name__ == "__main__":
    main()
