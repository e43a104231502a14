#!/usr/bin/env python3
"""Segmentation batches (image + mask) from h5pack against h5pack's image-only batches and torchvision's
DataLoader, side by side in one process (issue 42's numbers).

Every run delivers float32 (B,3,224,224) ImageNet-normalised images of a random resized crop (scale
0.08-1, ratio 3/4-4/3) and a random horizontal flip, batch 256, on the CPU:

  h5pack image only   `h5pack --size 256x256 --masks MASKS`; Loader(crop="random_resized", output_size=224,
                      flip=True, threads=T)
  h5pack image + mask the same Loader with masks=True: (B,224,224) uint8 masks, the image's box, NEAREST
  torchvision         a Dataset over the JPEG + mask PNG pairs doing what torchvision's segmentation
                      reference does with PIL images: RandomResizedCrop.get_params on the image, resized_crop
                      of the image (bilinear) and of the mask (NEAREST), one flip for both, ToTensor +
                      Normalize for the image, PILToTensor for the mask; DataLoader(batch_size=256,
                      shuffle=True, num_workers=T) (decodes every JPEG and PNG each epoch)

Sources: generated photos of 300-500 pixels a side and blocky class masks (0..20) of the same size. Each
run's first epoch is a warm-up and is not counted; the h5pack runs alternate over ROUNDS rounds and the
median counts. Issue 42's goals: image + mask >= 0.8x image only, >= 10x torchvision.

  /usr/bin/python3 bench/masks/image_mask_vs_torchvision.py --build build [--images 2000] [--threads 2]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
BATCH, OUT = 256, 224


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build", help="h5pack build dir (h5pack, h5pack-gen-images, reader/)")
    p.add_argument("--work", default=None, help="folder for the images and the packed file (default: a temp dir)")
    p.add_argument("--images", type=int, default=2000, help="images in all (10 classes)")
    p.add_argument("--threads", type=int, default=2, help="h5pack threads = torchvision workers")
    p.add_argument("--epochs", type=int, default=3, help="epochs per run; the first is a warm-up")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of the two h5pack runs")
    a = p.parse_args()
    if a.epochs < 2:
        p.error("--epochs must be at least 2 (the first is not counted)")
    return a


def make_masks(imgs, masks):
    """A blocky class mask PNG (values 0..20) beside every image, by the same relative stem."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(0)
    for cls in sorted(os.listdir(imgs)):
        os.makedirs(os.path.join(masks, cls), exist_ok=True)
        for name in sorted(os.listdir(os.path.join(imgs, cls))):
            with Image.open(os.path.join(imgs, cls, name)) as im:
                w, h = im.size
            m = rng.integers(0, 21, (h // 16 + 1, w // 16 + 1), dtype=np.uint8).repeat(16, 0).repeat(16, 1)[:h, :w]
            Image.fromarray(m).save(os.path.join(masks, cls, os.path.splitext(name)[0] + ".png"))


def make_data(build, work, n):
    imgs, masks, packed = (os.path.join(work, x) for x in ("imgs", "masks", "packed.h5"))
    if not os.path.isdir(imgs):
        subprocess.run([os.path.join(build, "h5pack-gen-images"), imgs, "--classes", "10", "--per-class",
                        str(n // 10), "--min-size", "300", "--max-size", "500", "--png-fraction", "0"], check=True,
                       stdout=subprocess.DEVNULL)
    if not os.path.isdir(masks):
        make_masks(imgs, masks)
    if not os.path.exists(packed):
        subprocess.run([os.path.join(build, "h5pack"), "-q", "--size", "256x256", "--masks", masks, imgs, packed],
                       check=True)
    return imgs, masks, packed


def timed_epochs(loader, epochs):
    """Images per second of LOADER over all its epochs but the first."""
    n_all, t_all = 0, 0.0
    for e in range(epochs):
        n, t0 = 0, time.perf_counter()
        for batch in loader:
            n += batch[0].shape[0]
        if e > 0:
            n_all, t_all = n_all + n, t_all + time.perf_counter() - t0
    return n_all / t_all


class PairDataset:
    """(image, mask) files transformed jointly, as torchvision's segmentation reference does with PIL."""

    def __init__(self, imgs, masks):
        self.pairs = [(os.path.join(imgs, c, f), os.path.join(masks, c, os.path.splitext(f)[0] + ".png"))
                      for c in sorted(os.listdir(imgs)) for f in sorted(os.listdir(os.path.join(imgs, c)))]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        import random
        import torch
        from PIL import Image
        from torchvision import transforms
        from torchvision.transforms import functional as F
        image = Image.open(self.pairs[i][0]).convert("RGB")
        mask = Image.open(self.pairs[i][1])
        top, left, h, w = transforms.RandomResizedCrop.get_params(image, (0.08, 1.0), (3 / 4, 4 / 3))
        image = F.resized_crop(image, top, left, h, w, [OUT, OUT], transforms.InterpolationMode.BILINEAR)
        mask = F.resized_crop(mask, top, left, h, w, [OUT, OUT], transforms.InterpolationMode.NEAREST)
        if random.random() < 0.5:
            image, mask = F.hflip(image), F.hflip(mask)
        image = F.normalize(F.to_tensor(image), MEAN, STD)
        return image, torch.as_tensor(F.pil_to_tensor(mask)[0], dtype=torch.uint8)


def bench_torchvision(imgs, masks, threads, epochs):
    import torch
    loader = torch.utils.data.DataLoader(PairDataset(imgs, masks), batch_size=BATCH, shuffle=True,
                                         num_workers=threads, persistent_workers=True)
    return timed_epochs(loader, epochs)


def bench_h5pack(packed, threads, epochs, masks):
    import h5pack
    loader = h5pack.Loader(packed, batch_size=BATCH, device="cpu", threads=threads, crop="random_resized",
                           output_size=OUT, flip=True, epochs=epochs, masks=masks)
    rate = timed_epochs(loader, epochs)
    loader.close()
    return rate


def bench(a, build, work):
    imgs, masks, packed = make_data(build, work, a.images)
    print(f"RandomResizedCrop -> {OUT}x{OUT} + flip + normalise, float32 images, uint8 masks, batch {BATCH}, "
          f"CPU, {a.threads} threads/workers, {a.epochs - 1} timed epochs after 1 warm-up, {os.cpu_count()} CPUs",
          flush=True)
    alone, paired = [], []
    for r in range(a.rounds):
        runs = [(alone, False), (paired, True)]
        for rates, with_masks in (runs if r % 2 == 0 else runs[::-1]):
            rates.append(bench_h5pack(packed, a.threads, a.epochs, with_masks))
        print(f"  round {r + 1}: h5pack image only {alone[-1]:8.0f} img/s, image + mask {paired[-1]:8.0f} img/s",
              flush=True)
    tv = bench_torchvision(imgs, masks, a.threads, a.epochs)
    print(f"  torchvision DataLoader (joint crop + flip) {tv:8.0f} img/s", flush=True)
    alone_m, paired_m = statistics.median(alone), statistics.median(paired)
    print(f"image_mask_vs_torchvision threads={a.threads}: image + mask {paired_m:.0f} img/s, image only "
          f"{alone_m:.0f} img/s (ratio {paired_m / alone_m:.2f}), torchvision {tv:.0f} img/s (h5pack image + "
          f"mask / torchvision {paired_m / tv:.1f}x)")
    return 0


def main():
    a = parse_args()
    build = os.path.abspath(a.build)
    os.environ["H5PACK_LIBRARY"] = os.path.join(build, "reader", "libh5pack.so")
    sys.path.insert(0, os.path.join(REPO, "python"))
    try:
        import torchvision  # noqa: F401
    except ImportError:
        print("skipped: torchvision is not installed (Debian: apt-get install python3-torchvision)")
        return 0
    if a.work is None:
        with tempfile.TemporaryDirectory(prefix="image_mask_vs_tv_") as work:
            return bench(a, build, work)
    os.makedirs(a.work, exist_ok=True)
    return bench(a, build, a.work)


if __name__ == "__main__":
    sys.exit(main())
