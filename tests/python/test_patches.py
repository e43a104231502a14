"""Patches of huge images in tiles (docs/patches.md): h5pack.Patches, h5pack.Stitcher, Loader(patch=S), and the
C reader under them (reader/patch).

A folder of RGB PNGs of several sizes (one smaller than a patch) is packed with h5pack --tiles three ways
(plain: the implicit pread path; gzip: H5Dread_chunk + libdeflate; gzip + checksum: HDF5's own read), and:
- sliding windows: every patch equals the region h5py reads from tiles/<i> (zero past a small image's
  edge), `where` lists exactly the windows of the documented rule in image-then-row order, labels and indices
  are the image's, for patches smaller than, equal to and larger than a tile, with 1 and 2 threads;
- the cache: a default cache reads every tile once (read amplification 1.0); a cache of one band of tiles
  stays <= 1.05; tiny caches miss exactly as often as a plain simulation of the documented plan; the mapped
  file's resident pages follow the cache, not the image;
- ranks split the windows into disjoint contiguous shares that together are the whole pass;
- random patches: inside their image, the same for the same seed, new each epoch, images drawn by area;
  state_dict / load_state_dict mid-epoch and set_epoch continue the uninterrupted run's patches; the
  default region order is order="random"'s draws reordered region by region;
  flips with normalisation equal the mirrored reference where the box says flip;
- Stitcher: the patches themselves stitched give every image back exactly (uint8) and to float32 rounding
  (normalised);
- refusals: a tiled file without patch_size, patches of a file of whole images, overlap >= size, echo;
- damage: a corrupt gzip tile, a tile failing its checksum and a file that is no HDF5 give errors that name
  the file (and the image), never a crash;
- on a GPU the CUDA backend's patches equal the CPU's ("skipped: no GPU" otherwise).
Usage: test_patches.py H5PACK"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

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
from h5pack.patches import _windows_along

H5PACK = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="h5pack-patches-")
RNG = np.random.default_rng(7)
SIZES = {"a/wide.png": (300, 1030), "a/tall.png": (700, 500), "b/small.png": (100, 90), "b/square.png": (512, 512)}
MEAN, STD = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)


def pack(name, *options, tile=128):
    out = f"{WORK}/{name}.h5"
    p = subprocess.run([H5PACK, "-q", "--tiles", "--tile", str(tile), *options, f"{WORK}/src", out],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack --tiles {' '.join(options)}: exit {p.returncode} {p.stderr}", fatal=True)
    return out


def expected_windows(f, size, overlap):
    out = []
    for i, (h, w) in enumerate(f["image_shapes"][()]):
        for y in _windows_along(int(h), size, size - overlap):
            out += [(i, y, x) for x in _windows_along(int(w), size, size - overlap)]
    return out


def region(f, i, y, x, size):
    ref = np.zeros((size, size, 3), np.uint8)
    r = f["tiles"][str(i)][y:y + size, x:x + size]
    ref[:r.shape[0], :r.shape[1]] = r
    return ref


def run_pass(path, size, overlap=0, **kwargs):
    """One sliding pass as uint8 NHWC: (where list, patches list, labels, indices, stats)."""
    p = h5pack.Patches(path, size=size, overlap=overlap, device="cpu", dtype="uint8", layout="nhwc", **kwargs)
    where, patches = [], []
    for x, w in p:
        where += [tuple(r) for r in w.tolist()]
        patches += list(x.numpy().copy())
    stats = p.stats()
    p.close()
    return where, patches, stats


def check_sliding(path, label, size, overlap, batch, threads):
    with h5py.File(path, "r") as f:
        want = expected_windows(f, size, overlap)
        where, patches, stats = run_pass(path, size, overlap, batch_size=batch, threads=threads)
        what = f"{label}: S {size} O {overlap} batch {batch} threads {threads}"
        check(where == want, f"{what}: where lists every window in image, row order ({len(where)} of {len(want)})")
        bad = sum(not np.array_equal(p, region(f, *w, size)) for p, w in zip(patches, where))
        check(bad == 0 and len(patches) == len(want), f"{what}: every patch equals h5py's region ({bad} differ)")
        check(abs(stats["read_amplification"] - 1.0) < 1e-9, f"{what}: each tile read once "
              f"(read amplification {stats['read_amplification']:.3f})")


def check_kept_ring(plain, gz):
    """A reader given the ring a closed one left (kept for the same sizes; h5pack.trim() frees it): its
    patches still equal h5py's regions, the zeros past a small image's edge included."""
    h5pack.trim()
    check_sliding(gz, "gzip, batches of 24 (a ring of 26 MB, kept at close)", 300, 20, 24, 2)
    check_sliding(plain, "unfiltered in the gzip pass's kept ring", 300, 20, 24, 2)
    h5pack.trim()


def check_labels(path):
    loader = h5pack.Loader(path, patch=200, patch_mode="sliding", overlap=20, batch_size=8, device="cpu",
                           with_indices=True)
    with h5py.File(path, "r") as f:
        labels = f["labels"][()]
        ok = True
        for _x, y, idx in loader:
            ok &= torch.equal(idx, loader.last_where[:, 0]) and torch.equal(y, torch.from_numpy(labels[idx.numpy()]))
        check(ok, "labels and indices are each patch's image's")
    loader.close()


def tiles_per_band(path, size, tile):
    with h5py.File(path, "r") as f:
        widest = max(int(w) for _h, w in f["image_shapes"][()])
    rows = (size + tile - 2) // tile + 1
    return rows * ((widest + tile - 1) // tile)


def belady_misses(path, size, overlap, batch, slots, tile):
    """The plan of reader/patch/patch_plan.h simulated plainly: furthest next use, never a tile of the
    current batch or the one before it, one more slot when all belong to them."""
    with h5py.File(path, "r") as f:
        shapes = [(int(h), int(w)) for h, w in f["image_shapes"][()]]
        windows = expected_windows(f, size, overlap)
    batches = []
    for b in range(0, len(windows), batch):
        seen = []
        for i, y, x in windows[b:b + batch]:
            h, w = shapes[i]
            for ty in range(y // tile, (min(y + size, h) - 1) // tile + 1):
                for tx in range(x // tile, (min(x + size, w) - 1) // tile + 1):
                    if (i, ty, tx) not in seen:
                        seen.append((i, ty, tx))
        batches.append(seen)
    seq = [(bi, t) for bi, ts in enumerate(batches) for t in ts]
    cache, misses = set(), 0
    for pos, (bi, t) in enumerate(seq):
        if t in cache:
            continue
        misses += 1
        if len(cache) >= slots:
            def next_use(c):
                return next((q for q in range(pos + 1, len(seq)) if seq[q][1] == c), len(seq) + 1)
            free = [c for c in cache if c not in batches[bi] and (bi == 0 or c not in batches[bi - 1])]
            if free:
                cache.remove(max(free, key=next_use))
            else:
                slots += 1
        cache.add(t)
    return misses


def check_cache(path):
    tile, size, overlap = 128, 200, 40
    band = tiles_per_band(path, size, tile) * tile * tile * 3
    _w, _p, stats = run_pass(path, size, overlap, batch_size=4, cache=band)
    check(stats["read_amplification"] <= 1.05, f"a cache of one band of tiles ({band} bytes): read amplification "
          f"{stats['read_amplification']:.3f} <= 1.05")
    for slots in (1, 3, 7):
        _w, _p, stats = run_pass(path, size, overlap, batch_size=3, cache=slots * tile * tile * 3)
        want = belady_misses(path, size, overlap, 3, slots, tile)
        check(stats["chunk_misses"] == want, f"cache of {slots} tiles: {stats['chunk_misses']} misses, the plan's "
              f"simulation says {want}")


def rss_file_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssFile:"))


def check_resident():
    """A pass over an image 5x larger than its cache: the mapped tiles it no longer holds leave the page
    tables (resident memory follows the cache, not the file)."""
    os.makedirs(f"{WORK}/big/a")
    Image.fromarray(RNG.integers(0, 256, (2048, 2048, 3), dtype=np.uint8)).save(f"{WORK}/big/a/big.png")
    path = f"{WORK}/big.h5"
    p = subprocess.run([H5PACK, "--tiles", "--tile", "128", "-q", f"{WORK}/big", path], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack --tiles (2048^2): exit {p.returncode} {p.stderr}", fatal=True)
    band = tiles_per_band(path, 256, 128) * 128 * 128 * 3
    run_pass(path, 256, batch_size=4, cache=band)  # warm-up: the code the pass runs is resident from here on
    loader = h5pack.Patches(path, size=256, device="cpu", dtype="uint8", layout="nhwc", batch_size=4, cache=band)
    before, most, n = rss_file_kb(), 0, 0
    for x, _w in loader:
        n += len(x)
        most = max(most, rss_file_kb() - before)
    loader.close()
    image_kb = 2048 * 2048 * 3 // 1024
    check(n == 64 and most * 1024 <= band + (3 << 20), f"resident file pages during a pass: at most {most} KiB more "
          f"(the cache: {band >> 10} KiB; the image: {image_kb} KiB)")


def check_ranks(path):
    full, _p, _s = run_pass(path, 160, 16, batch_size=5)
    shares = [run_pass(path, 160, 16, batch_size=5, rank=r, world=3)[0] for r in range(3)]
    sizes = [len(s) for s in shares]
    check(sum(shares, []) == full and max(sizes) - min(sizes) <= 1,
          f"3 ranks: balanced contiguous disjoint shares that make the pass ({sizes})")
    # a rank's Stitcher completes only the images wholly in its share, and says which it dropped
    completed = []
    for r in range(2):
        share = run_pass(path, 160, 16, batch_size=5, rank=r, world=2)[0]
        p = h5pack.Patches(path, size=160, overlap=16, batch_size=5, device="cpu", dtype="uint8", rank=r, world=2)
        st, done = h5pack.Stitcher(p, channels=3), []
        for x, w in p:
            done += st.add(x.float(), w)
        p.close()
        images = sorted({i for i, _y, _x in share})
        whole = [i for i in images if all(t in share for t in full if t[0] == i)]
        check(sorted(done) == whole and sorted(st.incomplete) == sorted(set(images) - set(whole)),
              f"rank {r} of 2: its Stitcher completed {sorted(done)} (wholly in its share: {whole}), "
              f"incomplete {st.incomplete}")
        completed += done
    check(len(completed) >= 2, f"ranks of 2: {len(completed)} images completed on some rank")


def check_random(path):
    def draws(seed, epochs=2):
        loader = h5pack.Loader(path, patch=150, batch_size=16, device="cpu", dtype="uint8", layout="nhwc",
                               patches_per_epoch=96, seed=seed, epochs=epochs)
        out = []
        with h5py.File(path, "r") as f:
            shapes = f["image_shapes"][()]
            for e in range(epochs):
                epoch, good = [], True
                for x, _y in loader:
                    for p, (i, y, xx) in zip(x.numpy(), loader.last_where.tolist()):
                        h, w = shapes[i]
                        good &= 0 <= y <= max(h - 150, 0) and 0 <= xx <= max(w - 150, 0)
                        good &= np.array_equal(p, region(f, i, y, xx, 150))
                        epoch.append((i, y, xx))
                check(good, f"random patches, seed {seed} epoch {e}: inside their image, pixels equal h5py's")
                out.append(epoch)
        loader.close()
        return out
    a, b, c = draws(1), draws(1), draws(2)
    check(a == b and a != c, "random patches: the same for a seed, others for another")
    check(a[0] != a[1] and len(a[0]) == 96, "random patches: 96 per epoch, new ones each epoch")
    loader = h5pack.Loader(path, patch=64, batch_size=500, device="cpu", dtype="uint8", patches_per_epoch=4000)
    counts = np.zeros(len(SIZES))
    for _x, _y in loader:
        np.add.at(counts, loader.last_where[:, 0].numpy(), 1)
    loader.close()
    with h5py.File(path, "r") as f:
        area = np.prod(f["image_shapes"][()].astype(np.float64), axis=1)
    want = 4000 * area / area.sum()
    check(np.all(np.abs(counts - want) <= 5 * np.sqrt(want) + 1), f"random patches: images drawn by area "
          f"({counts.astype(int).tolist()} for {np.round(want).astype(int).tolist()})")


def check_region_order(path):
    """order="chunk" (the default) only reorders an epoch's draws by region (patch_regions.h): the same patches
    as order="random" for a seed, in another order; each region's draws keep their relative order."""
    def epoch_draws(order):
        loader = h5pack.Loader(path, patch=64, batch_size=16, device="cpu", dtype="uint8", patches_per_epoch=200,
                               seed=9, order=order, epochs=1)
        out = [tuple(w) for _x, _y in loader for w in loader.last_where.tolist()]
        loader.close()
        return out
    plain, regional = epoch_draws("random"), epoch_draws("chunk")
    check(sorted(plain) == sorted(regional) and plain != regional,
          "region order: the same 200 draws as order='random', reordered")
    region = lambda w: (w[0], w[1] // (8 * 128), w[2] // (8 * 128))
    kept = all([w for w in regional if region(w) == r] == [w for w in plain if region(w) == r]
               for r in {region(w) for w in plain})
    check(kept, "region order: each region's draws in their drawn order")


def check_resume(path):
    """state_dict after 3 batches of epoch 1, loaded into a new Loader: the same patches as the run that went on;
    set_epoch(2) starts epoch 2 as the uninterrupted run has it."""
    def loader():
        return h5pack.Loader(path, patch=90, batch_size=8, device="cpu", dtype="uint8", patches_per_epoch=40, seed=3)
    full, a = [], loader()
    for e in range(3):
        full.append([w for _x, _y in a for w in [a.last_where.tolist()]])
    a.close()
    b = loader()
    for _x, _y in b:  # epoch 0
        pass
    it = iter(b)
    for _k in range(3):  # 3 batches of epoch 1
        next(it)
    state = b.state_dict()
    del it
    b.close()
    c = loader()
    c.load_state_dict(state)
    rest = [w for _x, _y in c for w in [c.last_where.tolist()]]
    check(rest == full[1][3:], f"resume mid-epoch: the {len(rest)} remaining batches of epoch 1 as the uninterrupted run's")
    c.set_epoch(2)
    check([w for _x, _y in c for w in [c.last_where.tolist()]] == full[2], "set_epoch(2): epoch 2 as uninterrupted")
    c.close()
    other = h5pack.Loader(path, patch=90, batch_size=8, device="cpu", dtype="uint8", patches_per_epoch=50, seed=3)
    expect_error("resume with another patches_per_epoch", lambda: other.load_state_dict(state),
                 "patches_per_epoch: saved 40, now 50")
    other.close()


def check_flip_norm(path):
    loader = h5pack.Loader(path, patch=128, batch_size=32, device="cpu", flip=True, patches_per_epoch=64, epochs=1)
    flips, good = 0, True
    with h5py.File(path, "r") as f:
        for x, _y in loader:
            for p, (i, y, xx), box in zip(x.numpy(), loader.last_where.tolist(), loader.last_boxes.tolist()):
                ref = (region(f, i, y, xx, 128).astype(np.float32) / 255 - MEAN) / STD
                ref = ref.transpose(2, 0, 1)
                if box[4]:
                    ref, flips = ref[:, :, ::-1], flips + 1
                good &= np.allclose(p, ref, atol=1e-5)
    check(good and 0 < flips < 64, f"flip + normalisation: each patch is the (mirrored where flipped: {flips}) "
          "normalised region")
    loader.close()


def check_stitcher(path):
    with h5py.File(path, "r") as f:
        images = [f["tiles"][str(i)][()] for i in range(len(SIZES))]
    for dtype in ("uint8", "float32"):
        p = h5pack.Patches(path, size=160, overlap=48, batch_size=6, device="cpu", dtype=dtype)
        st, done = h5pack.Stitcher(p, channels=3), {}
        for x, where in p:
            for i in st.add(x.float(), where):
                done[i] = st.result(i)
        ok = sorted(done) == list(range(len(images)))
        for i, img in enumerate(images):
            ref = torch.from_numpy(img).permute(2, 0, 1).float()
            if dtype == "float32":
                ref = (ref / 255 - torch.from_numpy(MEAN)[:, None, None]) / torch.from_numpy(STD)[:, None, None]
                ok &= i in done and torch.allclose(done[i], ref, atol=1e-5)
            else:
                ok &= i in done and torch.equal(done[i], ref)
        check(ok, f"Stitcher ({dtype}): the patches stitched give every image back "
              f"{'exactly' if dtype == 'uint8' else 'to float32 rounding'}")
        check(st.incomplete == [], f"Stitcher ({dtype}): no image left incomplete in a whole pass")
        try:
            st.result(0)
            check(False, "Stitcher: a second result(0) is refused")
        except KeyError as e:
            check("handed over" in str(e), f"Stitcher: a second result(0) says it was handed over already ({e})")
        try:
            st.add(torch.zeros(2, 4, 160, 160), torch.zeros(2, 3, dtype=torch.int64))
            check(False, "Stitcher refuses outputs of another channel count")
        except ValueError:
            pass
        p.close()
    check_stitcher_refusals(path)


def check_stitcher_refusals(path):
    """What would leave a map silently wrong is refused before anything is added: a window added twice,
    a where that does not match the outputs, a row that is no window of its image."""
    p = h5pack.Patches(path, size=160, overlap=48, batch_size=2, device="cpu")
    x, where = next(iter(p))
    st = h5pack.Stitcher(p, channels=3)
    st.add(x, where)
    expect_error("the same batch added twice", lambda: st.add(x, where), "added twice")
    expect_error("a where shorter than the outputs", lambda: h5pack.Stitcher(p, channels=3).add(x, where[:1]),
                 "one (image, y, x) per output")
    outside = torch.tensor([[0, 5000, 0]], dtype=torch.int64)
    expect_error("a row outside the image", lambda: h5pack.Stitcher(p, channels=3).add(x[:1], outside),
                 "not a window")
    off_grid = torch.tensor([[0, 1, 0]], dtype=torch.int64)
    expect_error("a row between windows", lambda: h5pack.Stitcher(p, channels=3).add(x[:1], off_grid), "not a window")
    expect_error("an image the file lacks", lambda: h5pack.Stitcher(p, channels=3).add(
        x[:1], torch.tensor([[99, 0, 0]], dtype=torch.int64)), "the file has")
    expect_error("channels=0", lambda: h5pack.Stitcher(p, channels=0), "channels")
    p.close()


def expect_error(what, fn, *words):
    try:
        fn()
        check(False, f"{what}: refused")
    except (h5pack.H5packError, ValueError, TypeError) as e:
        check(all(w in str(e) for w in words), f"{what}: refused, saying {words} ({e})")


def check_info(path):
    """h5pack.info() describes a tiled file too (it opens a probe reader of patches): its tile and image
    count, no single height and width."""
    d = h5pack.info(path)
    check(d["tile"] == 128 and d["n_samples"] == len(SIZES) and d["height"] is None and d["channels"] == 3,
          f"h5pack.info of a tiled file ({ {k: d[k] for k in ('tile', 'n_samples', 'height', 'channels')} })")
    with h5pack.Patches(path, size=64, overlap=8, device="cpu") as p:
        r = repr(p)
    check(f"images={len(SIZES)}, size=64, overlap=8" in r, f"repr(Patches) counts images and names the window ({r})")


def check_refusals(path):
    expect_error("a tiled file without patch", lambda: h5pack.Loader(path, device="cpu"), "tiles", "patch")
    expect_error("an unknown keyword", lambda: h5pack.Patches(path, size=64, bogus=1), "h5pack.Patches", "bogus")
    expect_error("a DataLoader keyword", lambda: h5pack.Patches(path, size=64, num_workers=2), "h5pack.Patches",
                 "threads=")
    expect_error("size=0", lambda: h5pack.Patches(path, size=0, device="cpu"), "size=0")
    expect_error("overlap >= size", lambda: h5pack.Patches(path, size=64, overlap=64, device="cpu"), "overlap")
    expect_error("echo with patches", lambda: h5pack.Loader(path, patch=64, echo=2, device="cpu"), "echo")
    expect_error("an epoch too large to plan (2^62 patches)", lambda: h5pack.Loader(
        path, patch=64, batch_size=1, patches_per_epoch=2**62, device="cpu"), "patches_per_epoch", "GiB")
    whole = f"{WORK}/whole.h5"
    p = subprocess.run([H5PACK, "-q", "--size", "64x64", f"{WORK}/src", whole], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack --size 64x64: exit {p.returncode}", fatal=True)
    expect_error("patches of whole images", lambda: h5pack.Patches(whole, size=32, device="cpu"),
                 whole, "not a file of images in tiles")
    fewer = f"{WORK}/fewer-shapes.h5"  # image_shapes of 2 rows for 4 images: refused, not read as 2 images
    shutil.copy(path, fewer)
    with h5py.File(fewer, "r+") as f:
        shapes = f["image_shapes"][:2]
        del f["image_shapes"]
        f["image_shapes"] = shapes
    expect_error("image_shapes shorter than tiles", lambda: h5pack.Patches(fewer, size=32, device="cpu"),
                 "image_shapes lists 2 images but tiles holds 4")


def corrupt_tile(src, name):
    """A copy of SRC with the stored bytes of the second tile of its largest image overwritten; the path
    and that image's number."""
    out = f"{WORK}/{name}.h5"
    shutil.copy(src, out)
    with h5py.File(out, "r") as f:
        image = int(np.argmax(np.prod(f["image_shapes"][()], axis=1)))
        info = f["tiles"][str(image)].id.get_chunk_info(1)
    with open(out, "r+b") as f:
        f.seek(info.byte_offset + info.size // 3)
        f.write(bytes(range(256)) * (info.size // 3 // 256 + 1))
    return out, image


def check_damage(gz, sums):
    """Damaged tiles are errors naming the file and the tile, never a crash; a file that is no HDF5 is refused."""
    def read_all(path):
        for _x, _w in h5pack.Patches(path, size=100, device="cpu"):
            pass
    for src, name, why in ((gz, "bad_gzip", "inflate"), (sums, "bad_sums", "cannot read the tile")):
        path, image = corrupt_tile(src, name)
        expect_error(f"a damaged tile ({name})", lambda: read_all(path), f"{name}.h5", f"image {image}", why)
    junk = f"{WORK}/junk.h5"
    with open(junk, "wb") as f:
        f.write(os.urandom(5000))
    expect_error("a file that is no HDF5", lambda: h5pack.Patches(junk, size=64, device="cpu"), junk)


def check_gpu(path):
    if not torch.cuda.is_available():
        print("skipped: no GPU (the CUDA backend's patches)")
        return
    for device in ("cpu", "cuda"):
        p = h5pack.Patches(path, size=200, overlap=24, batch_size=8, device=device, dtype="float32")
        got = torch.cat([x.cpu() for x, _w in p])
        p.close()
        if device == "cpu":
            cpu = got
    check(torch.equal(cpu, got), "CUDA patches equal the CPU's bit for bit")


def check_timeline(path):
    """Patches write the reader's timeline like whole images (one stream, one timeline): its samples
    and batches columns add up to what was delivered."""
    import csv as csv_module
    tl = f"{WORK}/patches_timeline.csv"
    loader = h5pack.Loader(path, patch=200, patch_mode="sliding", batch_size=8, device="cpu", epochs=1,
                           timeline=tl, timeline_interval=0.02)
    samples = batches = 0
    for images, labels in loader:
        samples, batches = samples + images.shape[0], batches + 1
        time.sleep(0.005)
    loader.close()
    with open(tl, newline="") as f:
        rows = list(csv_module.reader(f))
    col = {name: i for i, name in enumerate(rows[0])}
    got = [sum(float(r[col[name]]) for r in rows[1:]) for name in ("samples", "batches")]
    check(samples > 0 and got == [samples, batches], f"patches' timeline: samples and batches add up to "
          f"{samples} and {batches} (got {got} over {len(rows) - 1} rows)")


def main():
    for name, (h, w) in SIZES.items():
        os.makedirs(os.path.dirname(f"{WORK}/src/{name}"), exist_ok=True)
        Image.fromarray(RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(f"{WORK}/src/{name}")
    plain, gz, sums = pack("plain"), pack("gzip", "--compress", "gzip"), pack("sums", "--compress", "gzip", "--checksum")
    for size, overlap, batch, threads in ((200, 40, 4, 2), (128, 0, 7, 1), (300, 100, 5, 2), (100, 10, 64, 2)):
        check_sliding(plain, "implicit", size, overlap, batch, threads)
    check_sliding(gz, "gzip", 200, 40, 4, 2)
    check_sliding(sums, "gzip + checksum", 300, 100, 5, 2)
    check_kept_ring(plain, gz)
    check_labels(plain)
    check_timeline(plain)
    check_cache(plain)
    check_resident()
    check_ranks(plain)
    check_random(gz)
    check_resume(plain)
    check_region_order(plain)
    check_flip_norm(plain)
    check_stitcher(plain)
    check_info(plain)
    check_refusals(plain)
    check_damage(gz, sums)
    check_gpu(plain)
    shutil.rmtree(WORK)
    h5test.finish("patches: sliding windows, random patches, the tile plan, ranks and stitching read exactly what "
                  "h5py reads")


main()
