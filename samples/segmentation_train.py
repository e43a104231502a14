#!/usr/bin/env python3
"""Semantic segmentation on the CPU, end to end (issue 42; docs/python.md, "Segmentation masks"):

  1. generates scenes of discs, squares and bars (each class its own tint) on noisy backgrounds, with their class masks
     (0 background, 1 disc, 2 square, 3 bar) as PNGs mirroring the images (WORK/{train,val}/{images,masks}),
  2. packs each split with `h5pack --size 48x48 --masks MASKS` (the masks fitted as the images, NEAREST),
  3. trains a small fully convolutional network with h5pack.Loader(masks=True, mask_dtype="int64"):
     random resized crops and flips applied to image and mask alike, CrossEntropyLoss on the class indices,
  4. prints the validation set's per-class IoU and mean IoU after every epoch (crop none: the stored pixels).

  PYTHONPATH=python python3 samples/segmentation_train.py --h5pack BUILD/h5pack [--epochs 5] [--work DIR]
      [--min-miou 0.5]   # exit 1 below it (the test's check)

Without --work the files go into a temporary folder that is removed at the end.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from PIL import Image, ImageDraw

import h5pack

CLASSES = ("background", "disc", "square", "bar")
SIDE = 56  # drawn at 56x56, packed at 48x48 (a resize, as real data has)
HUES = {1: np.array([220, 60, 60]), 2: np.array([60, 200, 60]), 3: np.array([60, 80, 230])}  # each class its tint


def draw_scene(rng):
    """One RGB scene and its class mask: 1-3 shapes of random colour, position and size."""
    base = rng.integers(40, 200, 3)
    noise = rng.integers(-30, 31, (SIDE, SIDE, 3))
    image = Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8))
    mask = Image.new("L", (SIDE, SIDE), 0)
    paint, label = ImageDraw.Draw(image), ImageDraw.Draw(mask)
    for _ in range(rng.integers(1, 4)):
        cls = int(rng.integers(1, 4))
        colour = tuple(int(c) for c in np.clip(HUES[cls] + rng.integers(-40, 41, 3), 0, 255))
        x, y, r = (int(v) for v in (rng.integers(8, SIDE - 8), rng.integers(8, SIDE - 8), rng.integers(6, 14)))
        if cls == 1:
            box = [x - r, y - r, x + r, y + r]
            paint.ellipse(box, fill=colour), label.ellipse(box, fill=cls)
        elif cls == 2:
            box = [x - r, y - r, x + r, y + r]
            paint.rectangle(box, fill=colour), label.rectangle(box, fill=cls)
        else:
            box = [x - 2 * r, y - 3, x + 2 * r, y + 3]
            paint.rectangle(box, fill=colour), label.rectangle(box, fill=cls)
    return image, mask


def make_split(root, name, n, rng, h5pack_bin):
    images, masks = os.path.join(root, name, "images", "scenes"), os.path.join(root, name, "masks", "scenes")
    os.makedirs(images, exist_ok=True), os.makedirs(masks, exist_ok=True)
    for i in range(n):
        image, mask = draw_scene(rng)
        image.save(os.path.join(images, f"{i:05d}.png"))
        mask.save(os.path.join(masks, f"{i:05d}.png"))
    packed = os.path.join(root, f"{name}.h5")
    subprocess.run([h5pack_bin, "-q", "-f", "--size", "48x48", "--masks", os.path.dirname(masks),
                    os.path.dirname(images), packed], check=True)
    return packed


def network():
    """A small fully convolutional network: two stride-2 steps down, two up, a class score per pixel."""
    c = torch.nn
    return c.Sequential(c.Conv2d(3, 16, 3, padding=1), c.ReLU(), c.Conv2d(16, 24, 3, stride=2, padding=1), c.ReLU(),
                        c.Conv2d(24, 32, 3, stride=2, padding=1), c.ReLU(),
                        c.ConvTranspose2d(32, 24, 2, stride=2), c.ReLU(),
                        c.ConvTranspose2d(24, 16, 2, stride=2), c.ReLU(), c.Conv2d(16, len(CLASSES), 1))


def mean_iou(model, val):
    """Per-class IoU over the validation set (every pixel of every image once) and their mean."""
    inter, union = np.zeros(len(CLASSES)), np.zeros(len(CLASSES))
    model.eval()
    with torch.no_grad():
        for images, labels, masks in val:
            pred = model(images).argmax(1)
            for k in range(len(CLASSES)):
                p, t = pred == k, masks == k
                inter[k] += (p & t).sum().item()
                union[k] += (p | t).sum().item()
    model.train()
    iou = inter / np.maximum(union, 1)
    return iou, float(iou.mean())


def run(a, work):
    rng = np.random.default_rng(a.seed)
    train_h5 = make_split(work, "train", a.train, rng, a.h5pack)
    val_h5 = make_split(work, "val", a.val, rng, a.h5pack)
    torch.manual_seed(a.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    train = h5pack.Loader(train_h5, batch_size=32, device="cpu", masks=True, mask_dtype="int64",
                          crop="random_resized", output_size=48, scale=(0.4, 1.0), flip=True, seed=a.seed,
                          norm="file", drop_last=True, cache="64M")
    val = h5pack.Loader(val_h5, batch_size=64, device="cpu", masks=True, mask_dtype="int64", norm="file",
                        order="sequential", cache="64M")
    model = network()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = torch.nn.CrossEntropyLoss()
    miou = 0.0
    for epoch in range(a.epochs):
        total, batches = 0.0, 0
        for images, labels, masks in train:  # masks (B, 48, 48) int64, cropped and flipped with the images
            opt.zero_grad()
            loss = loss_fn(model(images), masks)
            loss.backward()
            opt.step()
            total, batches = total + loss.item(), batches + 1
        iou, miou = mean_iou(model, val)
        per_class = ", ".join(f"{c} {v:.2f}" for c, v in zip(CLASSES, iou))
        print(f"epoch {epoch + 1}/{a.epochs}: loss {total / batches:.3f}, val mean IoU {miou:.3f} ({per_class})",
              flush=True)
    print(train.stats())
    train.close(), val.close()
    if miou < a.min_miou:
        print(f"mean IoU {miou:.3f} is below {a.min_miou}", file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--h5pack", required=True, help="the h5pack converter (BUILD/h5pack)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--train", type=int, default=800, help="training scenes")
    ap.add_argument("--val", type=int, default=200, help="validation scenes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-miou", type=float, default=0.0, help="exit 1 when the last mean IoU is below it")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if a.work is None:
        with tempfile.TemporaryDirectory(prefix="h5pack-segmentation-") as work:
            return run(a, work)
    os.makedirs(a.work, exist_ok=True)
    return run(a, a.work)


if __name__ == "__main__":
    sys.exit(main())
