"""h5pack-stats end to end: run vs simulate (belady) give the same chunk hits, the JSON of every command
parses and has the contract keys, plots are valid SVG/PNG, info reads foreign h5py files and its reader
view agrees with what run reports, simulate --chunk adds what-if rows (K = the file's chunk gives the
file's numbers), bad files and bad options give clear errors (never a crash), `options` lists the
option map and bounds are the parameter table's, and the timeline CSV covers the run.

usage: /usr/bin/python3 test_cli.py PATH/TO/h5pack-stats
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    h5test.skip(f"needs h5py and numpy ({e})")

TOOL = sys.argv[1]


def tool(*args, expect=0):
    p = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=300)
    check(p.returncode >= 0, f"{args}: killed by signal {-p.returncode}")
    if expect is not None:
        check(p.returncode == expect, f"{args}: exit {p.returncode}, expected {expect}\n{p.stderr}")
    return p


def make_h5pack_like(path, n=300, k=7, gzip=False):
    """images (N,3,12,10) chunked by whole images; uncompressed ones with early allocation (implicit index)."""
    rng = np.random.default_rng(3)
    data = rng.integers(0, 255, (n, 3, 12, 10), dtype=np.uint8)
    with h5py.File(path, "w", libver="latest") as f:
        if gzip:
            f.create_dataset("images", data=data, chunks=(k, 3, 12, 10), compression="gzip")
        else:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((k, 3, 12, 10))
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            space = h5py.h5s.create_simple(data.shape)
            dsid = h5py.h5d.create(f.id, b"images", h5py.h5t.NATIVE_UINT8, space, dcpl=dcpl)
            h5py.Dataset(dsid)[...] = data
        f.create_dataset("labels", data=(np.arange(n) % 4).astype(np.uint8))
        f.create_dataset("classes", data=["a", "b", "c", "d"], dtype=h5py.string_dtype())
        f.attrs["h5pack_format_version"] = np.int32(1)
        f.attrs["mean"] = np.array([0.5, 0.5, 0.5])
        f.attrs["layout"] = "NCHW"


def test_run_matches_simulate(path):
    for order in ("sequential", "random", "chunk"):
        for cache in ("1k", "6k", "20k"):
            common = ["--batch", 16, "--order", order, "--seed", 5, "--threads", 2, "--epochs", 2]
            if order == "chunk":  # these caches are smaller than the default window (the whole file)
                common += ["--window", 3]
            run = json.loads(tool("run", path, "--cache", cache, "--device", "cpu", *common, "--json").stdout)
            for key in ("samples", "batches", "chunk_hits", "chunk_misses", "hit_rate", "bytes_read",
                        "read_amplification", "samples_per_s", "stall_fraction"):
                check(key in run, f"run --json lacks {key}")
            check(run["samples"] == 600, f"run samples {run['samples']} != 600")
            check(len(run["epochs"]) == 2, "run --json has 2 epochs")
            check(sum(e["chunk_hits"] for e in run["epochs"]) == run["chunk_hits"], "epoch hits add up")
            sim = json.loads(tool("simulate", path, "--cache", cache, "--policy", "belady,lru,hdf5", *common,
                                  "--json").stdout)
            check(len(sim) == 3, "one row per policy")
            rows = {r["policy"]: r for r in sim}
            b = rows["belady"]
            for key in ("cache_bytes", "order", "policy", "hits", "misses", "hit_rate"):
                check(key in b, f"simulate row lacks {key}")
            check((b["hits"], b["misses"]) == (run["chunk_hits"], run["chunk_misses"]),
                  f"{order} {cache}: simulate belady {b['hits']}/{b['misses']} vs run "
                  f"{run['chunk_hits']}/{run['chunk_misses']}")
            check(b["bytes_read"] == run["bytes_read"], f"{order} {cache}: bytes_read differ")
            check(rows["lru"]["misses"] >= b["misses"], f"{order} {cache}: lru below belady")
            check(rows["hdf5"]["misses"] >= b["misses"], f"{order} {cache}: hdf5 below belady")


def test_sizes_and_plots(path, tmp):
    sim = json.loads(tool("simulate", path, "--cache", "4k,0.5M,1MiB", "--order", "random,chunk", "--policy",
                          "belady", "--json").stdout)
    check(sorted({r["cache_bytes"] for r in sim}) == [4096, 524288, 1048576], "size suffixes")
    svg = os.path.join(tmp, "p.svg")
    png = os.path.join(tmp, "p.png")
    tool("simulate", path, "--cache", "2k,8k,32k", "--order", "random,chunk", "--plot", svg)
    root = ET.parse(svg).getroot()
    check(root.tag.endswith("svg"), "SVG root element")
    check(len([e for e in root.iter() if e.tag.endswith("polyline")]) == 6, "one line per order x policy")
    tool("simulate", path, "--cache", "2k,8k,32k", "--plot", png)
    with open(png, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature")
    check(head[12:16] == b"IHDR" and struct.unpack(">II", head[16:24])[0] > 100, "PNG IHDR")
    # a wrong extension is refused before anything is replayed (a usage error), naming the file
    bad = tool("simulate", path, "--cache", "8k", "--plot", os.path.join(tmp, "p.gif"), expect=1)
    check("p.gif" in bad.stderr and ".svg" in bad.stderr, f"bad plot name message: {bad.stderr}")


def test_repeated_and_bytes_plots(path, tmp):
    """Every --plot / --plot-bytes file is written; the bytes plot's y ticks run from 0 B to the largest
    'read' of the rows, and each line's points are the JSON rows' bytes_read."""
    files = [os.path.join(tmp, n) for n in ("h1.svg", "b1.svg", "h2.png", "b2.png")]
    out = tool("simulate", path, "--cache", "2k,8k,32k", "--order", "random,chunk", "--policy", "belady,lru",
               "--plot", files[0], "--plot-bytes", files[1], "--plot", files[2], "--plot-bytes", files[3]).stdout
    for f in files:
        check(os.path.getsize(f) > 500 and f"plot written to {f}" in out, f"{f} written and announced")
    rows = json.loads(tool("simulate", path, "--cache", "2k,8k,32k", "--order", "random,chunk", "--policy",
                           "belady,lru", "--json").stdout)
    root = ET.parse(files[1]).getroot()
    texts = ["".join(e.itertext()) for e in root.iter() if e.tag.endswith("text")]
    check(any(t == "bytes read" for t in texts), f"bytes plot's y title: {texts}")
    check("0 B" in texts, f"bytes plot starts at 0 B: {texts}")
    check(not any(t.endswith("%") for t in texts), "no percent ticks on the bytes plot")
    titles = sorted(float(e.text.split(": ")[1].split()[0]) for e in root.iter()
                    if e.tag.endswith("title") and e.text and "bytes" in e.text)
    want = sorted(float(r["bytes_read"]) for r in rows)
    check(titles == want, f"bytes plot points {titles} != JSON bytes_read {want}")
    rate = ET.parse(files[0]).getroot()
    rtexts = ["".join(e.itertext()) for e in rate.iter() if e.tag.endswith("text")]
    check("chunk hit rate" in rtexts and "100%" in rtexts, "hit-rate plot keeps its percent axis")
    too_many = ["--plot", os.path.join(tmp, "x.svg")] * 9
    tool("simulate", path, "--cache", "8k", *too_many, expect=1)


def test_info(path, tmp):
    info = json.loads(tool("info", path, "--json").stdout)
    check(info["chunk_shape"] == [7, 3, 12, 10], f"info chunk_shape {info['chunk_shape']}")
    check(info["h5pack_file"] is True and info["format_version"] == 1, "h5pack file detected")
    img = [d for d in info["datasets"] if d["name"] == "images"][0]
    check(img["addresses_computable"] is True, "implicit index detected")
    check(info["classes"] == ["a", "b", "c", "d"], "class names")
    foreign = os.path.join(tmp, "foreign.h5")
    with h5py.File(foreign, "w") as f:  # what an h5py script writes: resizable, auto chunks, gzip, NHWC
        d = f.create_dataset("x/train", data=np.zeros((50, 16, 16, 3), np.uint8), maxshape=(None, 16, 16, 3),
                             chunks=True, compression="gzip")
        chunks = list(d.chunks)
        f.attrs["source"] = "somebody's script"
    info = json.loads(tool("info", foreign, "--json", "--images", "x/train").stdout)
    check(info["chunk_shape"] == chunks, f"foreign chunk_shape {info['chunk_shape']} vs {chunks}")
    check(info["h5pack_file"] is False, "foreign file is not an h5pack file")
    ds = [d for d in info["datasets"] if d["name"] == "x/train"][0]
    check(ds["filters"].startswith("deflate") and not ds["addresses_computable"], "foreign gzip facts")
    text = tool("info", foreign).stdout
    check("foreign HDF5 file" in text and "x/train" in text, "info text on a foreign file")
    with h5py.File(foreign, "a") as f:  # a dataset whose name is Latin-1 bytes, not UTF-8
        f.create_dataset(b"caf\xe9", data=np.zeros((2,), np.uint8))
    raw = subprocess.run([TOOL, "info", foreign, "--json", "--images", "x/train"], capture_output=True,
                         timeout=300).stdout
    try:
        names = [d["name"] for d in json.loads(raw.decode("utf-8"))["datasets"]]
        check("caf\ufffd" in names, f"non-UTF-8 dataset name as a replacement character: {names}")
    except (UnicodeDecodeError, ValueError) as e:
        check(False, f"info --json with a non-UTF-8 dataset name is not valid UTF-8 JSON: {e}")


def test_what_if_chunks(path, tmp, gz):
    common = ["--batch", 16, "--seed", 5, "--threads", 2, "--epochs", 2, "--order", "sequential,random,chunk"]
    sim = json.loads(tool("simulate", path, "--cache", "6k,20k", "--chunk", "7,3,28", *common, "--json").stdout)
    check(len(sim) == 2 * 3 * 3 * 4, f"one row per cache x order x policy x chunk: {len(sim)}")
    for key in ("chunk_samples", "chunk_bytes", "n_chunks", "cache_chunks", "window", "file_chunks",
                "hypothetical", "stored_estimated", "bytes_needed"):
        check(all(key in r for r in sim), f"simulate --chunk rows have {key}")
    for i in range(0, len(sim), 4):
        own, same, small, big = sim[i:i + 4]
        check(own["file_chunks"] and not own["hypothetical"] and own["chunk_samples"] == 7, "own row first")
        check(not same["file_chunks"] and not same["hypothetical"], "K = 7 is the file's chunk")
        check(all(own[k] == same[k] for k in ("accesses", "hits", "misses", "bytes_read", "read_amplification")),
              f"K = the file's chunk gives the file's numbers: {own} vs {same}")
        check(small["hypothetical"] and small["chunk_samples"] == 3 and small["n_chunks"] == 100, "K = 3 row")
        check(big["chunk_bytes"] == 28 * 360 and big["stored_estimated"] == gz, "K = 28 row")
        if own["order"] == "sequential" and own["policy"] == "belady":  # at most once per chunk and epoch
            check(100 <= small["misses"] <= 2 * 100 and 11 <= big["misses"] <= 2 * 11, f"sequential misses {big}")
    text = tool("simulate", path, "--cache", "6k", "--chunk", "3,28", "--policy", "belady").stdout
    check("chunk" in text.split("\n")[3] and "7 file" in text and "what-if" in text, f"--chunk table:\n{text}")
    check(("~" in text) == gz, "estimated sizes marked for gzip only")
    svg = os.path.join(tmp, "chunks.svg")
    tool("simulate", path, "--cache", "2k,8k,32k", "--chunk", "3,28", "--policy", "belady,hdf5", "--plot", svg)
    lines = [e for e in ET.parse(svg).getroot().iter() if e.tag.endswith("polyline")]
    check(len(lines) == 2 * 3, f"one line per policy x chunk size: {len(lines)}")
    tool("simulate", path, "--cache", "8k", "--chunk", "0", expect=1)
    tool("simulate", path, "--cache", "8k", "--chunk", "4,x", expect=1)
    tool("simulate", path, "--cache", "8k", "--order", "sequential,random,chunk", "--chunk", "1,2,3,4,5,6,7",
         "--plot", svg, expect=1)  # 3 x 3 x 8 lines: too many for one plot


def test_info_matches_run(path, extra=()):
    """info's reader view (h5pack_describe) is what the opened reader reports (run --json config)."""
    info = json.loads(tool("info", path, "--json", *extra[:2]).stdout)
    run = json.loads(tool("run", path, "--device", "cpu", "--threads", 2, "--cache", "8k", "--window", 2, "--json",
                          *extra).stdout)
    rd, cfg = info["reader"], run["config"]
    check(rd is not None and info["reader_error"] is None, f"{path}: info has a reader view: {info['reader_error']}")
    for key in ("samples_per_chunk", "n_chunks", "chunk_bytes", "fast_path", "compressed"):
        check(rd[key] == cfg[key], f"{path}: info reader.{key} {rd[key]} vs run {cfg[key]}")
    check(rd["n_samples"] == run["samples"], f"{path}: n_samples")
    img = [d for d in info["datasets"] if d["name"] == info["images"]][0]
    check(img["addresses_computable"] == (rd["read_path"] in ("implicit", "contiguous")), "addresses from reader")
    check(all(d["addresses_computable"] is None for d in info["datasets"] if d is not img), "others: null")
    return rd


def test_info_foreign_readable(tmp):
    """An h5py script's file that the reader can read: resizable, whole-image chunks, gzip, NHWC, old format."""
    path = os.path.join(tmp, "h5py_nhwc.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x/train", data=np.random.default_rng(1).integers(0, 9, (60, 16, 16, 3), np.uint8),
                         maxshape=(None, 16, 16, 3), chunks=(5, 16, 16, 3), compression="gzip", shuffle=True)
    rd = test_info_matches_run(path, ("--images", "x/train", "--labels", ""))
    check(rd["read_path"] == "raw deflate" and rd["layout"] == "NHWC" and rd["filters"] == "shuffle, deflate(4)",
          f"h5py file read path {rd}")
    check(not rd["has_labels"], "no labels")
    text = tool("info", path, "--images", "x/train").stdout
    check("read path: raw deflate" in text and "foreign HDF5 file" in text, f"info text:\n{text}")
    check("chunk shape (5,16,16,3): 5 images = 3.75 KiB per chunk, 12 chunks" in text, f"chunk line:\n{text}")
    # one compression figure for the image dataset (the reader's), none repeated in its listing
    check(text.count("compression") == 1 and text.count(":1") == 1, f"one compression figure:\n{text}")
    # the same file unfiltered: located chunks, nothing to inflate (not "raw deflate")
    plain = os.path.join(tmp, "h5py_plain.h5")
    with h5py.File(plain, "w") as f:
        f.create_dataset("images", data=np.zeros((40, 3, 8, 8), np.uint8), maxshape=(None, 3, 8, 8), chunks=(4, 3, 8, 8))
    rd = test_info_matches_run(plain, ("--images", "images", "--labels", ""))
    check(rd["read_path"] == "located" and rd["filters"] == "" and rd["fast_path"], f"unfiltered h5py file {rd}")
    text = tool("info", plain).stdout
    check("read path: located" in text and "deflate" not in text and "; fast path" in text, f"info text:\n{text}")


def test_bad_inputs(tmp):
    missing = os.path.join(tmp, "missing.h5")
    for cmd in (["info", missing], ["run", missing], ["simulate", missing, "--cache", "1M"]):
        p = tool(*cmd, expect=2)
        check("missing.h5" in p.stderr, f"{cmd[0]}: error names the file: {p.stderr!r}")
    junk = os.path.join(tmp, "junk.h5")
    with open(junk, "wb") as f:
        f.write(b"\x89HDF\r\n\x1a\n" + os.urandom(3000))  # HDF5 signature, garbage after it
    for cmd in (["info", junk], ["run", junk], ["simulate", junk, "--cache", "1M"]):
        p = tool(*cmd, expect=2)
        check("junk.h5" in p.stderr, f"{cmd[0]} on a damaged file names it: {p.stderr!r}")
    good = os.path.join(tmp, "good.h5")
    make_h5pack_like(good)
    truncated = os.path.join(tmp, "truncated.h5")
    with open(good, "rb") as src, open(truncated, "wb") as dst:
        dst.write(src.read(os.path.getsize(good) // 3))
    for cmd in (["info", truncated], ["run", truncated, "--threads", 2], ["simulate", truncated, "--cache", "8k"]):
        p = tool(*cmd, expect=None)
        check(p.returncode in (0, 2), f"{cmd[0]} on a truncated file: exit {p.returncode}")
        if p.returncode:
            check("truncated.h5" in p.stderr, f"{cmd[0]} truncated: error names the file: {p.stderr!r}")
    tool("simulate", good, expect=1)  # --cache is required
    tool("simulate", good, "--cache", "64X", expect=1)
    tool("simulate", good, "--cache", "1M", "--policy", "fifo", expect=1)
    tool("simulate", good, "--cache", "1M", "--w0", "2", expect=1)
    tool("run", good, "--order", "shuffled", expect=1)
    tool("run", good, "--bogus", expect=1)
    check("--rank must be below --world" in tool("run", good, "--rank", "2", "--world", "2", expect=1).stderr,
          "run --rank 2 --world 2: bad usage naming the option")
    check("--rank must be below --world" in tool("simulate", good, "--cache", "1M", "--rank", "2", "--world", "2",
                                                 expect=1).stderr, "simulate --rank 2 --world 2: the same")
    tool("frobnicate", expect=1)
    check("usage" in tool("--help").stdout, "--help")
    for cmd in ("info", "run", "simulate"):
        check("usage" in tool(cmd, "--help").stdout, f"{cmd} --help")
    check(tool("--version").stdout.startswith("h5pack-stats "), "--version")


def test_options_from_table(tmp):
    """`options` lists FLAG, PARAM, CONVERSION; a value outside the parameter table's bounds is bad usage
    (exit 1, naming the flag, the parameter and the range) and one inside passes the option check (here the
    missing file is what fails: exit 2)."""
    lines = tool("options").stdout.splitlines()
    rows = [line.split("\t") for line in lines]
    check(rows and all(len(r) == 3 for r in rows), f"options: three tab-separated fields per line: {lines}")
    check(all(r[2] in ("flag", "plain", "count", "bytes", "name", "text", "pair") for r in rows), f"conversions {rows}")
    for line in ("--echo\techo\tcount", "--cache\tcache_bytes\tbytes", "--scale\tscale_min,scale_max\tpair",
                 "--crop\tcrop\tname"):
        check(line in lines, f"options lacks {line!r}")
    tool("options", "--bogus", expect=1)
    missing = os.path.join(tmp, "missing.h5")
    for value in ("0", "4294967296"):
        err = tool("run", missing, "--echo", value, expect=1).stderr
        check("--echo" in err and "echo must be 1 .. 4294967295" in err, f"--echo {value}: {err!r}")
    for cmd in (["run", missing], ["simulate", missing, "--cache", "1M"]):
        err = tool(*cmd, "--echo", "4294967295", expect=2).stderr
        check("bad value" not in err and "missing.h5" in err, f"{cmd[0]} --echo 4294967295: {err!r}")
    err = tool("run", missing, "--order", "shuffled", expect=1).stderr
    check("order must be one of sequential, random or chunk" in err, f"--order shuffled: {err!r}")


def test_timeline_and_text(path, tmp):
    csv = os.path.join(tmp, "t.csv")
    p = tool("run", path, "--batch", 8, "--cache", "6k", "--window", 2, "--epochs", 3, "--threads", 2, "--device",
             "cpu", "--timeline", csv, "--interval", "0.001", "--step-ms", "1")
    check("advice:" in p.stdout and "total" in p.stdout, "run text output has totals and advice")
    check(f"timeline: {csv}" in p.stdout, "run names the timeline file it writes")
    ranked = os.path.join(tmp, "r.csv")  # with --world > 1 the rank is in the name: both outputs give it
    out = json.loads(tool("run", path, "--batch", 8, "--device", "cpu", "--rank", 1, "--world", 2, "--timeline",
                          ranked, "--json").stdout)
    check(out.get("timeline") == os.path.join(tmp, "r.rank1.csv") and os.path.exists(out["timeline"]),
          f"run --json names the ranked timeline file ({out.get('timeline')})")
    with open(csv) as f:
        lines = f.read().strip().split("\n")
    header = lines[0].split(",")
    check(header[:3] == ["t_s", "dt_s", "epoch"] and "stall_fraction" in header, f"timeline header {header}")
    rows = [list(map(float, line.split(","))) for line in lines[1:]]
    check(len(rows) >= 2, "timeline has rows")
    check(sum(r[header.index("samples")] for r in rows) == 900, "timeline samples add up to the run's")
    check(all(0.0 <= r[header.index("stall_fraction")] <= 1.0 + 1e-6 for r in rows), "stall fractions in [0,1]")
    check(all(b[0] >= a[0] for a, b in zip(rows, rows[1:])), "timeline in time order")
    text = tool("simulate", path, "--cache", "2k,64k", "--order", "random,chunk").stdout
    check("advice:" in text and "belady" in text and "hdf5" in text, "simulate text output")


def main():
    with tempfile.TemporaryDirectory(prefix="h5pack_stats_cli_") as tmp:
        for gzip in (False, True):
            path = os.path.join(tmp, "gz.h5" if gzip else "plain.h5")
            make_h5pack_like(path, gzip=gzip)
            test_run_matches_simulate(path)
            test_what_if_chunks(path, tmp, gzip)
            check(test_info_matches_run(path)["read_path"] == ("raw deflate" if gzip else "implicit"), "read path")
        plain = os.path.join(tmp, "plain.h5")
        test_sizes_and_plots(plain, tmp)
        test_repeated_and_bytes_plots(plain, tmp)
        test_info(plain, tmp)
        test_info_foreign_readable(tmp)
        test_bad_inputs(tmp)
        test_options_from_table(tmp)
        test_timeline_and_text(plain, tmp)
    h5test.finish("all h5pack-stats CLI checks passed")


if __name__ == "__main__":
    main()
