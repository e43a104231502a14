#!/usr/bin/env python3
"""Sliding-window inference over a huge image, end to end (docs/patches.md):

  1. writes a SIDE x SIDE RGB PNG band by band (never whole in memory) into WORK/src/scenes/,
  2. packs it with `h5pack --tiles` (256 x 256 tiles, decoded band by band),
  3. streams every 512 x 512 window (overlap 64) through h5pack.Patches into a stand-in "model" (a 2-channel
     map: brightness and a smoothed red channel, made on the patch itself),
  4. stitches the outputs back with h5pack.Stitcher and checks the brightness map against the image,
  5. prints the reader's stats: each tile read once (read amplification 1.0).

  PYTHONPATH=python python3 samples/patches_demo.py --h5pack BUILD/h5pack [--side 6000] [--work DIR]

Without --work the files go into a temporary folder that is removed at the end; --work DIR keeps them.
"""
import argparse
import os
import struct
import subprocess
import tempfile
import time
import zlib

import numpy as np
import torch

import h5pack


def write_png(path, side, rows=256):
    """A gradient with some texture, written as a PNG one band of ROWS rows at a time."""
    chunk = lambda tag, data: struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    z, x = zlib.compressobj(1), np.arange(side, dtype=np.uint32)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)))
        for y0 in range(0, side, rows):
            y = np.arange(y0, min(y0 + rows, side), dtype=np.uint32)[:, None]
            band = np.zeros((len(y), 1 + 3 * side), np.uint8)  # column 0: PNG filter "none"
            px = band[:, 1:].reshape(len(y), side, 3)
            px[..., 0], px[..., 1] = x * 255 // side, y * 255 // side
            px[..., 2] = ((x // 64 + y // 64) % 2) * 200
            f.write(chunk(b"IDAT", z.compress(band.tobytes())))
        f.write(chunk(b"IDAT", z.flush()) + chunk(b"IEND", b""))


def model(x):
    """Stand-in for a segmentation network: (B, 3, S, S) -> (B, 2, S, S)."""
    brightness = x.mean(1, keepdim=True)
    red = torch.nn.functional.avg_pool2d(x[:, :1], 5, stride=1, padding=2, count_include_pad=False)
    return torch.cat([brightness, red], 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--h5pack", required=True, help="the h5pack converter (BUILD/h5pack)")
    ap.add_argument("--side", type=int, default=6000)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if a.work is None:  # a temporary folder (the PNG and the packed file, ~110 MB at 6000), removed at the end
        with tempfile.TemporaryDirectory(prefix="h5pack-patches-demo-") as work:
            return run(a, work)
    return run(a, a.work)


def run(a, work):
    os.makedirs(f"{work}/src/scenes", exist_ok=True)
    write_png(f"{work}/src/scenes/scene.png", a.side)
    subprocess.run([a.h5pack, "-q", "-f", "--tiles", f"{work}/src", f"{work}/scenes.h5"], check=True)
    print(f"packed a {a.side} x {a.side} image into {work}/scenes.h5")

    patches = h5pack.Patches(f"{work}/scenes.h5", size=512, overlap=64, batch_size=16, device="cpu",
                             dtype="float32", norm="none")
    stitch, t0 = h5pack.Stitcher(patches, channels=2), time.perf_counter()
    with torch.no_grad():
        for x, where in patches:
            for i in stitch.add(model(x), where):
                out = stitch.result(i)
                print(f"image {i} ({patches.names[i]}): map of {tuple(out.shape)}")
    seconds, stats = time.perf_counter() - t0, patches.stats()
    print(f"{stats['samples']} patches in {seconds:.2f} s ({stats['samples'] / seconds:.0f}/s); tiles read "
          f"{stats['chunk_misses']}, read amplification {stats['read_amplification']:.3f}")
    # the brightness map is the image's own mean over channels: patches and stitching lose nothing
    h, w = patches.image_shape(0)
    y = np.arange(h)[:, None]
    x = np.arange(w)[None, :]
    want = (x * 255 // w + y * 255 // h + ((x // 64 + y // 64) % 2) * 200) / 3 / 255
    err = float((out[0].double() - torch.from_numpy(want)).abs().max())
    print(f"stitched brightness vs the image: max difference {err:.2e}")
    if err > 1e-5 or stats["read_amplification"] > 1.0001:
        raise SystemExit("the stitched map or the reads are not what they should be")
    patches.close()


main()
