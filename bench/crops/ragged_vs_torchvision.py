#!/usr/bin/env python3
"""Training crops from images of several sizes: h5pack vs torchvision's DataLoader, and vs h5pack's own
fixed-size path, side by side in one process.

All three deliver float32 (B,3,224,224) batches of 256 with a random resized crop (scale 0.08-1, ratio
3/4-4/3) drawn from each image, a random horizontal flip and ImageNet normalisation, on the CPU:

  torchvision  ImageFolder over the JPEGs + RandomResizedCrop(224) + RandomHorizontalFlip + ToTensor +
               Normalize, DataLoader(batch_size=256, shuffle=True, num_workers=T) (decodes every JPEG)
  h5pack ragged  `h5pack --max-side 256`: every image at its own aspect, longer side <= 256 (format
               version 2); Loader(crop="random_resized", output_size=224, flip=True, threads=T)
  h5pack fixed `h5pack --size 256x256` (shorter side to 256, centre crop); the same Loader

The sources are generated photos of 300-500 pixels a side with independent width and height. Each run's
first epoch is a warm-up (page cache, chunk cache, worker start) and is not counted. Issue 23's goals:
ragged >= 10x torchvision, ragged >= 0.8x fixed.

Run (from the repository root, after building into BUILD), with Debian's python3-torchvision:

  /usr/bin/python3 bench/crops/ragged_vs_torchvision.py --build build [--images 2000] [--threads 2]
"""
import argparse
import os
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
    p.add_argument("--work", default=None, help="folder for the images and packed files (default: a temp dir)")
    p.add_argument("--images", type=int, default=2000, help="images in all (10 classes)")
    p.add_argument("--threads", type=int, default=2, help="h5pack threads = torchvision workers")
    p.add_argument("--epochs", type=int, default=3, help="epochs per run; the first is a warm-up")
    a = p.parse_args()
    if a.epochs < 2:
        p.error("--epochs must be at least 2 (the first is not counted)")
    return a


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def make_data(build, work, n):
    imgs = os.path.join(work, "imgs")
    ragged, fixed = os.path.join(work, "ragged.h5"), os.path.join(work, "fixed.h5")
    if not os.path.isdir(imgs):
        run([os.path.join(build, "h5pack-gen-images"), imgs, "--classes", "10", "--per-class", str(n // 10),
             "--min-size", "300", "--max-size", "500", "--png-fraction", "0"])
    if not os.path.exists(ragged):
        run([os.path.join(build, "h5pack"), imgs, ragged, "--max-side", "256", "-q"])
    if not os.path.exists(fixed):
        run([os.path.join(build, "h5pack"), imgs, fixed, "--size", "256x256", "-q"])
    return imgs, ragged, fixed


def timed_epochs(loader, epochs):
    """Runs EPOCHS epochs of LOADER; returns images per second over all but the first."""
    n_all, t_all = 0, 0.0
    for e in range(epochs):
        n, t0 = 0, time.perf_counter()
        for batch in loader:
            n += batch[0].shape[0]
        if e > 0:
            n_all, t_all = n_all + n, t_all + time.perf_counter() - t0
    return n_all / t_all


def bench_torchvision(imgs, threads, epochs):
    import torch
    from torchvision import datasets, transforms
    tf = transforms.Compose([transforms.RandomResizedCrop(OUT), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(imgs, tf), batch_size=BATCH, shuffle=True,
                                         num_workers=threads, persistent_workers=True)
    return timed_epochs(loader, epochs)


def bench_h5pack(h5, threads, epochs):
    import h5pack
    loader = h5pack.Loader(h5, batch_size=BATCH, device="cpu", threads=threads, crop="random_resized",
                           output_size=OUT, flip=True, epochs=epochs)
    rate = timed_epochs(loader, epochs)
    loader.close()
    return rate


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
        with tempfile.TemporaryDirectory(prefix="ragged_vs_tv_") as work:
            return bench(a, build, work)
    os.makedirs(a.work, exist_ok=True)
    return bench(a, build, a.work)


def bench(a, build, work):
    imgs, ragged, fixed = make_data(build, work, a.images)
    print(f"RandomResizedCrop -> {OUT}x{OUT} + flip + normalise, float32, batch {BATCH}, CPU, {a.threads} "
          f"threads/workers, {a.epochs - 1} timed epochs after 1 warm-up, {os.cpu_count()} CPUs", flush=True)
    tv = bench_torchvision(imgs, a.threads, a.epochs)
    print(f"  torchvision DataLoader  {tv:8.0f} img/s", flush=True)
    rg = bench_h5pack(ragged, a.threads, a.epochs)
    print(f"  h5pack --max-side 256   {rg:8.0f} img/s", flush=True)
    fx = bench_h5pack(fixed, a.threads, a.epochs)
    print(f"  h5pack --size 256x256   {fx:8.0f} img/s", flush=True)
    print(f"ragged_vs_torchvision threads={a.threads}: ragged {rg:.0f} img/s, torchvision {tv:.0f} img/s, "
          f"ratio {rg / tv:.1f}; ragged / fixed {rg / fx:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
