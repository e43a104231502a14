"""`h5pack-stats simulate --plot` keeps its legend (and every other text) inside the image (issue 41, item 6:
"the legend is cut off at the right edge"): long labels ("sequential / belady / 1000 (file)"), the most
series a plot takes (24), both plots (--plot and --plot-bytes), SVG and PNG, and a title naming a long path
with a non-ASCII folder name (elided in its middle, at a character boundary).

SVG: every <text>'s extent, from its x, its anchor and its width measured with PIL in DejaVu Sans (the
usual sans-serif on Linux; the layout's estimate is those advance widths rounded up), lies in [0, width];
baselines in (font size, height]; every legend swatch and polyline point inside. PNG: the last 8 columns
(the legend's side) and the 4 outermost rows and columns elsewhere hold no ink (a clipped glyph would reach
the edge), the legend draws each series' colour,
and the image is wider than the default 860 only when the labels need it.

Lives in tests/soak/ with the soak tests of issue 41 (this change touched no other test folder).
usage: /usr/bin/python3 test_plot_legend.py PATH/TO/h5pack-stats
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image, ImageFont
except ImportError as e:  # pragma: no cover
    h5test.skip(f"needs h5py, numpy and PIL ({e})")

TOOL = sys.argv[1]
TIMELINE_HEADER = ("t_s,dt_s,epoch,batches,samples,samples_per_s,read_mb_per_s,delivered_mb_per_s,stall_fraction,"
                   "chunk_hits,chunk_misses,hit_rate,bytes_read,cache_bytes,device_copy_fraction,device_idle_fraction")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
_fonts = {}


def text_width(text, size):
    """Width of TEXT at font SIZE as a viewer draws it: DejaVu Sans measured by PIL (0.7 em per character
    without the font, a bound for the ASCII of these plots)."""
    if not os.path.exists(FONT):
        return 0.7 * size * len(text)
    if size not in _fonts:
        _fonts[size] = ImageFont.truetype(FONT, size)
    return _fonts[size].getlength(text)


def tool(*args, expect=0):
    p = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=120)
    check(p.returncode == expect, f"{args}: exit {p.returncode}, expected {expect}\n{p.stderr}", fatal=True)
    return p


def make_file(path, n=2000, k=1000):
    """h5pack-like: images (N,3,4,4) in chunks of K (so the file's own chunk reads '1000 (file)')."""
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("images", data=np.random.default_rng(1).integers(0, 255, (n, 3, 4, 4), dtype=np.uint8),
                         chunks=(k, 3, 4, 4))
        f.create_dataset("labels", data=(np.arange(n) % 4).astype(np.int64))
        f.attrs["layout"] = "NCHW"


def check_svg(path, series, what):
    root = ET.parse(path).getroot()
    w, h = float(root.get("width")), float(root.get("height"))
    vb = [float(v) for v in root.get("viewBox").split()]
    check(vb == [0, 0, w, h], f"{what}: viewBox {vb} is the page {w} x {h}")
    legend = 0
    for e in root.iter():
        tag = e.tag.split("}")[-1]
        if tag == "text":
            text, size = "".join(e.itertext()), float(e.get("font-size"))
            x, y, tw = float(e.get("x")), float(e.get("y")), text_width("".join(e.itertext()), int(size))
            if e.get("transform"):  # the y axis' title, turned: its extent runs along y around y
                check(tw / 2 <= y <= h - tw / 2 and size <= x, f"{what}: turned text {text!r} inside")
                continue
            anchor = e.get("text-anchor", "start")
            x0 = {"start": x, "middle": x - tw / 2, "end": x - tw}[anchor]
            check(x0 >= 0 and x0 + tw <= w, f"{what}: text {text!r} spans x {x0:.1f} .. {x0 + tw:.1f}, "
                                            f"outside the image's width {w:g}")
            check(size <= y <= h, f"{what}: text {text!r} baseline {y} outside 0 .. {h:g}")
            legend += text in series
        elif tag == "line":
            xs = [float(e.get(a)) for a in ("x1", "x2")]
            ys = [float(e.get(a)) for a in ("y1", "y2")]
            check(min(xs) >= 0 and max(xs) <= w and min(ys) >= 0 and max(ys) <= h, f"{what}: line {xs} {ys} inside")
        elif tag == "polyline":
            pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
            check(all(0 <= px <= w and 0 <= py <= h for px, py in pts), f"{what}: polyline inside")
    check(legend == len(series), f"{what}: {legend} legend labels for {len(series)} series")
    return w, h


def check_png(path, n_series, what):
    im = Image.open(path).convert("RGB")
    im.load()
    w, h = im.size
    px = np.asarray(im)
    ink = np.any(px != 255, axis=2)
    check(not ink[:, -8:].any(), f"{what}: ink in the last 8 columns of {w} (a label cut off at the right edge)")
    # elsewhere only the edge itself must stay blank (the bytes plot's y ticks start 6 pixels in)
    check(not ink[-4:, :].any() and not ink[:4, :].any() and not ink[:, :4].any(), f"{what}: ink at an edge")
    # the legend's swatches: each series' colour drawn right of the plot area (its frame's right edge)
    colours = {tuple(c) for c in px[:, w // 2:].reshape(-1, 3).tolist()}
    check(len(colours) >= min(n_series, 4) + 2, f"{what}: legend colours drawn ({len(colours)})")
    return w, h


def series_labels(orders, policies, chunks=None, file_chunk=1000):
    if not chunks:
        return [f"{o} / {p}" for o in orders for p in policies]
    return [f"{o} / {p} / {k}{' (file)' if k == file_chunk else ''}" for o in orders for p in policies
            for k in [file_chunk] + chunks]


def main():
    with tempfile.TemporaryDirectory(prefix="h5pack-legend-") as tmp:
        deep = os.path.join(tmp, "données_d'entraînement_" + "x" * 60, "un_dossier_très_profond_" + "y" * 40)
        os.makedirs(deep)
        path = os.path.join(deep, "images_of_a_training_set_packed_for_h5pack.h5")
        make_file(path)
        cases = [  # (what, simulate options, series labels)
            ("the issue's command", ["--cache", "1M,4M,16M"], series_labels(["chunk"], ["belady", "lru", "hdf5"])),
            ("three orders", ["--cache", "1M,4M,16M", "--order", "sequential,random,chunk"],
             series_labels(["sequential", "random", "chunk"], ["belady", "lru", "hdf5"])),
            ("24 series with chunk sizes", ["--cache", "64k,1M,4M,16M", "--order", "sequential,random", "--chunk",
                                            "1,7,999"],
             series_labels(["sequential", "random"], ["belady", "lru", "hdf5"], [1, 7, 999])),
        ]
        for what, opts, series in cases:
            out = {}
            for kind in ("--plot", "--plot-bytes"):
                for ext in ("svg", "png"):
                    out[kind, ext] = os.path.join(tmp, f"{len(out)}.{ext}")
            args = [a for (kind, _), f in out.items() for a in (kind, f)]
            tool("simulate", path, "--batch", "64", *opts, *args)
            for (kind, ext), f in out.items():
                name = f"{what}, {kind} {ext}"
                if ext == "svg":
                    w, h = check_svg(f, series, name)
                else:
                    w, h = check_png(f, len(series), name)
                longest = max(len(s) for s in series)
                if longest <= 14:  # short labels ("chunk / belady"): the default page, not widened
                    check(w == 860, f"{name}: width {w} for short labels (860: not widened)")
                if ext == "png" and longest > 16:
                    check(w > 860, f"{name}: widened for labels of {longest} characters ({w})")
                if len(series) == 24:
                    check(h > 520, f"{name}: taller for 24 series ({h})")
        # the title: elided in its middle, valid UTF-8, and its ends kept
        root = ET.parse(os.path.join(tmp, "0.svg")).getroot()
        title = "".join(next(e for e in root.iter() if e.tag.endswith("text")).itertext())
        check("..." in title and title.startswith("chunk hit rate: /") and title.endswith("(batch 64)"),
              f"long title elided in its middle: {title!r}")
        # `plot`'s timeline title names the CSV's path too: inside the page in both formats
        csv = os.path.join(deep, "a_timeline_with_a_long_name.csv")
        with open(csv, "w") as f:
            f.write(TIMELINE_HEADER + "\n")
            for i in range(1, 6):
                f.write(f"{i * 0.5},0.5,0,2,64,128.0,1.0,2.0,0.1,3,1,0.75,4096,8192,nan,nan\n")
        for ext in ("svg", "png"):
            out = os.path.join(tmp, f"timeline.{ext}")
            tool("plot", csv, "-o", out)
            if ext == "svg":
                root = ET.parse(out).getroot()
                w = float(root.get("width"))
                e = next(e for e in root.iter() if e.tag.endswith("text"))
                t, tw = "".join(e.itertext()), text_width("".join(e.itertext()), int(float(e.get("font-size"))))
                check("..." in t and abs(float(e.get("x")) - w / 2) < 1 and tw <= w,
                      f"timeline title {t!r} ({tw:.0f} wide) inside {w:g}")
            else:
                check_png(out, 2, "timeline png")
    h5test.finish("legend and texts inside the image: SVG and PNG, long labels, 24 series, long titles")


main()
