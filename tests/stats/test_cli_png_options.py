"""h5pack-stats end to end on a file packed by the converter:

- `plot FILE.csv -o OUT.png` (any case of the extension) writes a PNG of the documented size that PIL
  decodes, with the series drawn in their colours; .svg still gives SVG; an unknown extension (or none)
  fails before writing, naming the file and the supported extensions; an unwritable PNG names the file;
- `run --crop/--output-size/--scale/--ratio/--center-ratio/--flip/--crop-padding/--echo-mode` show up in
  `run --json`'s config (one key per option) and change the order fingerprint; sample echo delivers
  every sample E times per epoch (batch counts fresh/echoed exact) from a pool that batch echo lacks;
- values outside the parameter table's bounds and bad combinations exit 1 naming the option, printing no
  figures; values the table accepts but the reader refuses at open (the output size limit, scale_min 0)
  exit 2 with the library's words; an output size of 0 is the table's "the stored size".

usage: test_cli_png_options.py H5PACK_STATS H5PACK_CONVERTER"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import h5test
from h5test import check

try:
    from PIL import Image
except ImportError as e:
    h5test.skip(f"needs PIL ({e})")

TOOL, CONVERTER = sys.argv[1], sys.argv[2]
N, BATCH, H, W = 40, 8, 16, 12
# plot.c's palette: samples/s, stall, delivered, read from storage, hit rate
SAMPLES, STALL, DELIVERED, READ, HIT = 0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e, 0x9467bd


def tool(*args, expect=0, timeout=120):
    p = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    check(p.returncode >= 0, f"{args}: killed by signal {-p.returncode}")
    if expect is not None:
        check(p.returncode == expect, f"{args}: exit {p.returncode}, expected {expect}\n{p.stderr}")
    return p


def run_json(path, *args):
    p = tool("run", path, "--batch", BATCH, "--device", "cpu", "--threads", 2, *args, "--json")
    return json.loads(p.stdout) if p.returncode == 0 else {"config": {}}


def make_file(tmp):
    src = os.path.join(tmp, "src")
    for k in range(N):
        d = os.path.join(src, f"class{k % 2}")
        os.makedirs(d, exist_ok=True)
        Image.new("RGB", (W, H), (k * 6 % 256, 255 - k * 5, (k * 37) % 256)).save(os.path.join(d, f"{k:03d}.png"))
    out = os.path.join(tmp, "f.h5")
    p = subprocess.run([CONVERTER, "--chunk", str(BATCH), "--batch", str(BATCH), "-j", "2", src, out],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print(f"converter failed: {p.stderr}")
        sys.exit(1)
    return out


def colour_count(img, rgb):
    want = ((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255)
    return sum(n for n, c in img.getcolors(1 << 20) if c == want)


def test_png(path, tmp):
    csv = os.path.join(tmp, "tl.csv")
    run = run_json(path, "--epochs", 3, "--step-ms", 3, "--timeline", csv, "--interval", 0.01)
    check(run.get("samples") == 3 * N, f"timeline run samples {run.get('samples')}")
    for name in ("t.png", "T.PNG", "t.Png"):
        png = os.path.join(tmp, name)
        p = tool("plot", csv, "-o", png)
        if p.returncode:
            continue
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name}: PNG signature")
        img = Image.open(png)
        img.load()  # decodes every row: a truncated or corrupt file raises here
        check(img.format == "PNG" and img.mode == "RGB", f"{name}: {img.format} {img.mode}")
        check(img.size == (1800, 1380), f"{name}: size {img.size}, documented 1800 x 1380")
        white = colour_count(img, 0xffffff)
        check(white < img.size[0] * img.size[1] * 0.98, f"{name}: {white} white pixels: nothing drawn?")
        for colour, what in ((SAMPLES, "samples/s"), (READ, "read"), (DELIVERED, "delivered"), (HIT, "hit rate")):
            check(colour_count(img, colour) > 100, f"{name}: the {what} line (#{colour:06x}) is not drawn")
        # the first panel (y 50..220 in SVG units, x 80..710) holds only the samples/s line's colour
        panel = img.crop((2 * 81, 2 * 51, 2 * 709, 2 * 219))
        check(colour_count(panel, SAMPLES) > 50 and colour_count(panel, DELIVERED) == 0,
              f"{name}: samples/s panel content")
        black = colour_count(img, 0x000000)
        check(black > 5000, f"{name}: axes and text ({black} black pixels)")
    svg = os.path.join(tmp, "t.SVG")
    tool("plot", csv, "-o", svg)
    root = ET.parse(svg).getroot()
    check(root.tag.endswith("svg") and root.get("width") == "900", "SVG root, 900 wide (the PNG is twice that)")
    check(len([e for e in root.iter() if e.tag.endswith("polyline")]) >= 4, "SVG: a line per series")
    for bad in ("t.jpg", "t", "t.png.txt", "t.svgz"):
        target = os.path.join(tmp, bad)
        p = tool("plot", csv, "-o", target, expect=1)
        check(target in p.stderr and ".svg" in p.stderr and ".png" in p.stderr,
              f"-o {bad}: message names the file and the formats: {p.stderr!r}")
        check(not os.path.exists(target), f"-o {bad}: a file was written anyway")
    nowhere = os.path.join(tmp, "no_such_dir", "t.png")
    p = tool("plot", csv, "-o", nowhere, expect=2)
    check(nowhere in p.stderr, f"unwritable PNG: {p.stderr!r}")


TIMELINE_HEADER = ("t_s,dt_s,epoch,batches,samples,samples_per_s,read_mb_per_s,delivered_mb_per_s,"
                   "stall_fraction,chunk_hits,chunk_misses,hit_rate,bytes_read,cache_bytes,"
                   "device_copy_fraction,device_idle_fraction")


def timeline_row(t, samples_per_s=100.0, read_mb=1.0, stall=0.1):
    return f"{t},1,0,1,1,{samples_per_s},{read_mb},1,{stall},1,1,0.5,1,1,nan,nan"


def test_extreme_timelines(tmp):
    """Hand-made CSVs with any finite values plot quickly (the axis loops and the rasteriser's line walk
    used to run for minutes on values near DBL_MAX or far-away points); a negative time is refused."""
    cases = {
        "huge": [timeline_row(0.5, 1.797e308, 1e308), timeline_row(1.79e308, -1e308, 1, 1e300)],
        "one_time": [timeline_row(0), timeline_row(0, 5)],
        "spread": [timeline_row(0, 1e-300), timeline_row(1e-9, 1e12), timeline_row(1e15, 3)],
        "subnormal": [timeline_row(0, "5e-324"), timeline_row(1, "-4e-320")],  # strtod's ERANGE, yet numbers
    }
    for name, rows in cases.items():
        csv = os.path.join(tmp, f"{name}.csv")
        with open(csv, "w") as f:
            f.write("\n".join([TIMELINE_HEADER, *rows]) + "\n")
        for ext in ("png", "svg"):
            out = os.path.join(tmp, f"{name}.{ext}")
            try:
                tool("plot", csv, "-o", out, timeout=30)
            except subprocess.TimeoutExpired:
                check(False, f"{name}.{ext}: plot still running after 30 s")
                continue
            if ext == "png":
                Image.open(out).load()
            else:
                ET.parse(out)
    csv = os.path.join(tmp, "negative.csv")
    with open(csv, "w") as f:
        f.write("\n".join([TIMELINE_HEADER, timeline_row(-1e12), timeline_row(1)]) + "\n")
    p = tool("plot", csv, "-o", os.path.join(tmp, "negative.png"), expect=2)
    check(f"{csv}:2: t_s must be a number >= 0" in p.stderr, f"negative t_s: {p.stderr!r}")
    with open(csv, "w") as f:  # beyond a double: refused, naming the column
        f.write("\n".join([TIMELINE_HEADER, timeline_row(0, "1e999")]) + "\n")
    p = tool("plot", csv, "-o", os.path.join(tmp, "overflow.png"), expect=2)
    check("column 'samples_per_s': '1e999' is not a number" in p.stderr, f"overflow: {p.stderr!r}")
    head, row = TIMELINE_HEADER.encode(), timeline_row(1).encode()
    for name, data, message in (
            ("cr_only", head + b"\r" + row + b"\r", ":1: a CR inside the line"),
            ("nul", head + b"\n" + row + b"\0garbage\n", ":2: a NUL byte"),
            ("long_line", head + b"\n" + row + b"0" * 4096 + b"\n", ":2: line longer than 4095 bytes")):
        bad = os.path.join(tmp, name + ".csv")
        with open(bad, "wb") as f:
            f.write(data)
        p = tool("plot", bad, "-o", os.path.join(tmp, name + ".svg"), expect=2)
        check(bad + message in p.stderr, f"{name}: {p.stderr!r}")
    p = tool("plot", tmp, "-o", os.path.join(tmp, "dir.svg"), expect=2)
    check(f"{tmp}: a directory" in p.stderr, f"a directory: {p.stderr!r}")


def test_long_timeline(tmp):
    """Days of rows: the SVG keeps each pixel column's extremes only (small, spikes kept)."""
    csv = os.path.join(tmp, "long.csv")
    with open(csv, "w") as f:
        f.write(TIMELINE_HEADER + "\n")
        for i in range(200000):
            f.write(timeline_row(i + 1, 5000 if i == 76543 else 1000 + (i * 7919) % 97) + "\n")
    svg = os.path.join(tmp, "long.svg")
    tool("plot", csv, "-o", svg)
    check(os.path.getsize(svg) < 1 << 20, f"200,000 rows: SVG of {os.path.getsize(svg)} bytes")
    line = [e for e in ET.parse(svg).getroot().iter() if e.tag.endswith("polyline")
            and e.get("stroke") == f"#{SAMPLES:06x}"][0]
    ys = [float(p.split(",")[1]) for p in line.get("points").split()]
    check(min(ys) < 51, f"the one-row spike to the panel's top is drawn (highest point at y {min(ys)})")


def test_simulate_any_cache(path):
    """Every cache opens: simulate's chunk-order rows at 1K (one chunk) read each chunk once (amplification
    1) with the window the cache leaves (1), the run agrees, and the table shows each row's window."""
    rows = json.loads(tool("simulate", path, "--cache", "1K,1G", "--batch", BATCH, "--order", "chunk,random",
                           "--json").stdout)
    check(all("refused_by_open" not in r for r in rows), "no row is refused any more")
    for r in rows:
        if r["order"] == "chunk" and r["policy"] == "belady":
            check(r["read_amplification"] <= 1.0, f"chunk order, cache {r['cache_bytes']}: amplification "
                  f"{r['read_amplification']}")
            check(r["window"] == (1 if r["cache_bytes"] == 1024 else 5), f"window at {r['cache_bytes']}: {r}")
    run = json.loads(tool("run", path, "--cache", "1K", "--batch", BATCH, "--device", "cpu", "--order", "chunk",
                          "--json").stdout)
    check(run["read_amplification"] <= 1.0 and run["config"]["window"] == 1, f"run at 1K: {run['config']}")
    text = tool("run", path, "--batch", BATCH, "--device", "cpu", "--order", "random").stdout
    check("order random" in text and "window" not in text.split("order random")[1].split("\n")[0],
          "run --order random prints no chunk-order window")
    table = tool("simulate", path, "--cache", "1K", "--batch", BATCH).stdout
    header = next(line for line in table.splitlines() if line.startswith("cache "))
    check(header.rstrip().endswith("window"), f"the table has a window column: {header}")
    check("window: the chunk order's active chunks" in table, f"table note on the window: {table}")
    # HDF5's slot advice only where collisions can happen: 5 chunks in 521 slots never collide, 5 in 2 do
    advice = tool("simulate", path, "--cache", "1G", "--batch", BATCH, "--policy", "hdf5").stdout
    check("rdcc_nslots=" not in advice.replace("rdcc_nslots=521,", ""), f"slot advice for 5 chunks: {advice}")
    advice = tool("simulate", path, "--cache", "1G", "--batch", BATCH, "--policy", "hdf5", "--nslots", 2).stdout
    check("try it here with --nslots" in advice, f"no slot advice with 2 slots for 5 chunks: {advice}")
    p = tool("simulate", path, "--nslots", 99999999999, expect=1)  # the model keeps a table entry per slot
    check("--nslots (expected an integer 1 .. 16777216)" in p.stderr, f"--nslots limit: {p.stderr!r}")
    explicit = json.loads(tool("simulate", path, "--cache", "1K", "--batch", BATCH, "--window", 2, "--json").stdout)
    check(all(r["window"] == 2 for r in explicit if r["order"] == "chunk"), "an explicit window is used as given")


def test_run_bottleneck_advice(path):
    """run's advice on a consumer that waits: measured after the first epoch (the warm-up left out), and it
    names what the workers spent their time on; echo is suggested only when getting images dominates."""
    for epochs in (1, 3):
        p = tool("run", path, "--batch", BATCH, "--device", "cpu", "--threads", 1, "--epochs", epochs,
                 "--step-ms", 0.01, "--cache", "1G")
        line = next((ln for ln in p.stdout.splitlines() if "waited for data" in ln), "")
        check(("after the first epoch" in line) == (epochs > 1), f"{epochs} epochs, warm-up: {line!r}")
        if "is the bottleneck" in line:
            check("The workers spent" in line, f"advice names no work: {line!r}")
            check(("--echo 2" in line) == ("getting them is the bottleneck" in line),
                  f"echo suggested against the measured work: {line!r}")


def test_run_options(path):
    base = run_json(path)
    c = base["config"]
    defaults = {"crop": "none", "echo_mode": "batch", "flip": False, "crop_padding": 0, "echo_pool_bytes": 0,
                "output_height": H, "output_width": W, "scale_min": 0.08, "scale_max": 1, "ratio_min": 0.75,
                "center_ratio": 0.875}
    for key, value in defaults.items():
        check(c.get(key) == value, f"default config {key} = {c.get(key)!r}, expected {value!r}")
    rrc = run_json(path, "--crop", "random_resized", "--output-size", "8x6", "--scale", "0.25,0.9", "--ratio",
                   "0.5,2", "--flip")
    c = rrc["config"]
    for key, value in {"crop": "random_resized", "output_height": 8, "output_width": 6, "scale_min": 0.25,
                       "scale_max": 0.9, "ratio_min": 0.5, "ratio_max": 2, "flip": True}.items():
        check(c.get(key) == value, f"--crop random_resized: {key} = {c.get(key)!r}, expected {value!r}")
    check(rrc.get("samples") == N, "cropped run delivers every sample")
    check(c.get("order_fingerprint") != base["config"]["order_fingerprint"], "crop and flip change the fingerprint")
    c = run_json(path, "--crop", "center", "--output-size", "10", "--center-ratio", "0.5")["config"]
    check((c.get("crop"), c.get("output_height"), c.get("output_width"), c.get("center_ratio")) ==
          ("center", 10, 10, 0.5), f"--crop center: {c}")
    c = run_json(path, "--crop-padding", "3")["config"]
    check(c.get("crop_padding") == 3 and c.get("crop") == "none", f"--crop-padding: {c}")
    text = tool("run", path, "--batch", BATCH, "--device", "cpu", "--crop", "random-resized", "--output-size", "8",
                "--flip").stdout
    check("crop random_resized to 8x8" in text and "flip on" in text, f"text output:\n{text}")


def test_echo_modes(path):
    echo, epochs, batches = 3, 2, N // BATCH
    runs = {mode: run_json(path, "--echo", echo, "--echo-mode", mode, "--epochs", epochs) for mode in
            ("batch", "sample")}
    for mode, r in runs.items():
        c = r["config"]
        check(c.get("echo_mode") == mode and c.get("echo") == echo, f"{mode}: config {c}")
        check(r.get("samples") == N * echo * epochs, f"{mode}: samples {r.get('samples')}")
        check(r.get("batches_fresh") == batches * epochs, f"{mode}: fresh {r.get('batches_fresh')}")
        check(r.get("batches_echoed") == batches * (echo - 1) * epochs, f"{mode}: echoed {r.get('batches_echoed')}")
        for e in r.get("epochs", []):
            check(e["samples"] == N * echo and e["batches_fresh"] == batches, f"{mode}: epoch {e}")
    s, b = runs["sample"]["config"], runs["batch"]["config"]
    image_bytes = 3 * H * W
    check(s.get("echo_pool_bytes") == (echo - 1) * BATCH * image_bytes,
          f"sample echo pool {s.get('echo_pool_bytes')}, expected {echo - 1} batches of uint8 images")
    check(b.get("echo_pool_bytes") == 0, "batch echo has no pool")
    check(s.get("ring_slots", 0) >= echo + 1, f"sample echo ring slots {s.get('ring_slots')}")
    check(s.get("order_fingerprint") != b.get("order_fingerprint"), "the echo mode changes the fingerprint")


def test_bad_values(path):
    cases = [
        (["--crop", "random"], "--crop"),
        (["--crop", "center", "--output-size", "8x"], "--output-size"),
        (["--output-size", "8"], "--output-size"),  # no crop
        (["--crop", "random_resized", "--scale", "0.5,2e9"], "--scale: scale_max must be in [0, 1e+09]"),
        (["--crop", "random_resized", "--scale", "0.5"], "--scale"),
        (["--scale", "0.2,0.9"], "--scale"),  # not a random resized crop
        (["--crop", "random_resized", "--ratio", "a,b"], "--ratio"),
        (["--crop", "center", "--center-ratio", "1.5"], "--center-ratio"),
        (["--crop", "random_resized", "--center-ratio", "0.5"], "--center-ratio"),
        (["--crop-padding", "-1"], "--crop-padding"),
        (["--crop", "center", "--crop-padding", "2"], "--crop-padding"),
        (["--echo-mode", "both"], "--echo-mode"),
        (["--echo-mode"], "--echo-mode"),
        (["--echo", "65", "--echo-mode", "sample"], "--echo-mode"),
        (["--interval", "1e5"], "--interval: timeline_interval_s must be in [0, 86400]"),
        (["--crop", "center", "--output-size", "70000"], "--output-size: output_height must be 0 .. 65536"),
        (["--crop-padding", "65536"], "--crop-padding: random_crop_padding must be 0 .. 65535"),
        (["--step-ms", "-1"], "--step-ms (expected milliseconds, 0 .. 3600000)"),
    ]
    for args, option in cases:
        p = tool("run", path, "--device", "cpu", *args, expect=1)
        check(option in p.stderr and "h5pack-stats run" in p.stderr, f"{args}: message {p.stderr!r}")
        check(p.stdout == "", f"{args}: printed figures {p.stdout!r}")
    refused_at_open = [
        (["--crop", "random_resized", "--scale", "0.9,0.2"], "scale must satisfy 0 < scale_min <= scale_max"),
        (["--crop", "random_resized", "--scale", "0,1"], "scale must satisfy 0 < scale_min <= scale_max"),
    ]
    for args, words in refused_at_open:
        p = tool("run", path, "--device", "cpu", *args, expect=2)
        check(words in p.stderr and "h5pack-stats run" in p.stderr, f"{args}: message {p.stderr!r}")
        check(p.stdout == "", f"{args}: printed figures {p.stdout!r}")
    c = run_json(path, "--crop", "random_resized", "--output-size", "0").get("config", {})
    check((c.get("output_height"), c.get("output_width")) == (H, W), f"--output-size 0: the stored size, got {c}")
    helptext = tool("run", "--help").stdout
    for option in ("--crop", "--output-size", "--scale", "--ratio", "--center-ratio", "--flip", "--crop-padding",
                   "--echo-mode"):
        check(option in helptext, f"run --help lacks {option}")
    check(".png" in tool("plot", "--help").stdout, "plot --help mentions PNG")


def main():
    with tempfile.TemporaryDirectory(prefix="h5pack_stats_png_options_") as tmp:
        path = make_file(tmp)
        test_png(path, tmp)
        test_extreme_timelines(tmp)
        test_long_timeline(tmp)
        test_simulate_any_cache(path)
        test_run_options(path)
        test_run_bottleneck_advice(path)
        test_echo_modes(path)
        test_bad_values(path)
    h5test.finish("h5pack-stats PNG and run option checks passed")


if __name__ == "__main__":
    main()
