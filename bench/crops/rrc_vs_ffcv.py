#!/usr/bin/env python3
"""CPU RandomResizedCrop throughput: FFCV vs h5pack, side by side in one process.

Both sides read the same synthetic JPEG photos, stored as raw uint8 pixels (no JPEG decode at read time),
and deliver float32 (B,3,224,224) batches of 256, normalised with ImageNet's mean/std, with a random
resized crop (scale 0.08-1, ratio 3/4-4/3) and a random horizontal flip, on the CPU (no GPU transfer):

  FFCV    RGBImageField(write_mode='raw', max_resolution=256): longer side <= 256, aspect kept;
          RandomResizedCropRGBImageDecoder -> RandomHorizontalFlip -> NormalizeImage -> ToTensor
          -> ToTorchImage (channels-last strided NCHW), order RANDOM, os_cache=True, num_workers=T.
  h5pack  `h5pack --size 256x256` (default --resize crop: shorter side to 256, centre crop), or with
          --max-side `h5pack --max-side 256` (longer side <= 256, aspect kept: FFCV's storage);
          h5pack.Loader(order="random", crop="random_resized", output_size=224, flip=True, threads=T,
          device="cpu").

The sources are 300-500 pixels a side, so FFCV stores e.g. 256x171 images and h5pack 256x256 ones: the
crop + resize to 224x224 dominates either way. For each thread count T the two run one after the other
(FFCV, then h5pack), since a shared machine drifts; the first epoch of each is a warm-up (numba's JIT,
the page cache, h5pack's chunk cache) and is not counted. Each batch is touched only through x.shape.

Installing FFCV (Debian 12, as root; the system's torch 1.13 needs numpy 1.x):

  apt-get update && apt-get install -y libopencv-dev pkg-config
  /usr/bin/python3 -m venv --system-site-packages /opt/ffcv-venv
  /opt/ffcv-venv/bin/pip install --no-build-isolation ffcv
  /opt/ffcv-venv/bin/pip install "numpy==1.24.*" "numba==0.59.*" "llvmlite==0.42.*" "opencv-python==4.8.1.78"

Run (from the repository root, after building h5pack into BUILD):

  /opt/ffcv-venv/bin/python bench/crops/rrc_vs_ffcv.py --build build [--images 2000] [--threads 1,2]

Without FFCV (e.g. /usr/bin/python3) it prints "skipped: ..." and exits 0.
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
KEEP = []


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build", help="h5pack build dir (h5pack, h5pack-gen-images, reader/)")
    p.add_argument("--work", default=None, help="folder for the images and packed files (default: a temp dir)")
    p.add_argument("--images", type=int, default=2000, help="images in all (10 classes)")
    p.add_argument("--threads", default="1,2", help="comma separated thread counts")
    p.add_argument("--epochs", type=int, default=3, help="epochs per run; the first is a warm-up")
    p.add_argument("--max-side", action="store_true", help="pack with h5pack --max-side 256 (each image's aspect "
                   "kept, as FFCV's max_resolution=256 stores them) instead of --size 256x256")
    p.add_argument("--drop", action="store_true", help="del each batch in the loop body (default: keep the "
                   "names bound until the next batch, as a plain `for x, y in loader:` does)")
    a = p.parse_args()
    a.threads = [int(t) for t in a.threads.split(",")]
    if a.epochs < 2:
        p.error("--epochs must be at least 2 (the first is not counted)")
    return a


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def make_data(build, work, n, max_side=False):
    imgs = os.path.join(work, "imgs")
    h5 = os.path.join(work, "train_maxside.h5" if max_side else "train.h5")
    if not os.path.isdir(imgs):
        run([os.path.join(build, "h5pack-gen-images"), imgs, "--classes", "10", "--per-class", str(n // 10),
             "--min-size", "300", "--max-size", "500", "--png-fraction", "0"])
    if not os.path.exists(h5):
        size = ["--max-side", "256"] if max_side else ["--size", "256x256", "--resize", "crop"]
        run([os.path.join(build, "h5pack"), imgs, h5, *size, "-q"])
    return imgs, h5


def write_beton(imgs, beton):
    if os.path.exists(beton):
        return
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter
    from torchvision.datasets import ImageFolder
    print(f"writing {beton}", flush=True)
    DatasetWriter(beton, {"image": RGBImageField(write_mode="raw", max_resolution=256), "label": IntField()},
                  num_workers=2).from_indexed_dataset(ImageFolder(imgs))


def timed_epochs(loader, epochs, drop):
    """Runs EPOCHS epochs of LOADER; returns (images, seconds) of all but the first."""
    n_all, t_all = 0, 0.0
    for e in range(epochs):
        n, t0 = 0, time.perf_counter()
        for x, y in loader:
            n += x.shape[0]
            if drop:  # for comparison: h5pack holds (does not copy) the batch x still binds at the next one
                del x, y
        dt = time.perf_counter() - t0
        if e > 0:
            n_all, t_all = n_all + n, t_all + dt
    return n_all, t_all


def bench_ffcv(beton, threads, epochs, drop):
    import numpy as np
    from ffcv.fields.decoders import IntDecoder, RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import NormalizeImage, RandomHorizontalFlip, ToTensor, ToTorchImage
    mean, std = np.array(MEAN) * 255, np.array(STD) * 255
    # NormalizeImage before ToTensor: on the CPU it is a numba stage over (B,H,W,C) numpy arrays. After
    # ToTorchImage (the GPU recipe's place) it makes a jitted stage follow a non-jitted one, and ffcv 1.0.2's
    # Loader() then never returns (Graph.group_operations loops forever: libffcv/ffcv#396).
    image = [RandomResizedCropRGBImageDecoder((OUT, OUT)), RandomHorizontalFlip(),
             NormalizeImage(mean, std, np.float32), ToTensor(), ToTorchImage()]
    loader = Loader(beton, batch_size=BATCH, num_workers=threads, order=OrderOption.RANDOM, drop_last=False,
                    os_cache=True, pipelines={"image": image, "label": [IntDecoder(), ToTensor()]})
    n, t = timed_epochs(loader, epochs, drop)
    # kept alive until exit: freeing it makes numba print an ignored KeyError from a dispatcher finalizer
    KEEP.append(loader)
    return n / t


def bench_h5pack(h5, threads, epochs, drop):
    import h5pack
    # order="random" (a full permutation, FFCV's RANDOM); the default 1G cache holds the whole file, so
    # after the warm-up epoch both sides read from memory.
    loader = h5pack.Loader(h5, batch_size=BATCH, order="random", device="cpu", threads=threads,
                           crop="random_resized", output_size=OUT, flip=True, epochs=epochs)
    n, t = timed_epochs(loader, epochs, drop)
    hit = loader.stats().get("hit_rate")
    loader.close()
    return n / t, hit


def main():
    a = parse_args()
    try:
        import ffcv  # noqa: F401
    except ImportError:
        print("skipped: ffcv is not installed (see the header of this file)")
        return 0
    build = os.path.abspath(a.build)
    # set before the import: the binding would otherwise pick the newest build*/ tree next to python/
    os.environ["H5PACK_LIBRARY"] = os.path.join(build, "reader", "libh5pack.so")
    sys.path.insert(0, os.path.join(REPO, "python"))
    if a.work is None:  # a temp dir of ~750 MiB, removed at the end
        with tempfile.TemporaryDirectory(prefix="rrc_vs_ffcv_") as work:
            return bench(a, build, work)
    os.makedirs(a.work, exist_ok=True)
    return bench(a, build, a.work)


def bench(a, build, work):
    import h5pack
    imgs, h5 = make_data(build, work, a.images, a.max_side)
    beton = os.path.join(work, "train.beton")
    write_beton(imgs, beton)
    info = h5pack.info(h5)
    how = ("--max-side 256: each image's aspect kept, as FFCV stores them" if a.max_side
           else "--resize crop: shorter side 256, centre crop")
    print(f"h5pack {h5pack.version()} ({h5pack.lib().path_}): {os.path.getsize(h5) / 2**20:.0f} MiB, "
          f"{info['n_samples']} images up to {info['height']}x{info['width']} ({how})")
    print(f"ffcv: {os.path.getsize(beton) / 2**20:.0f} MiB, raw, max_resolution=256 (aspect kept)")
    print(f"RandomResizedCrop -> {OUT}x{OUT} + flip + normalise, float32, batch {BATCH}, CPU, "
          f"{a.epochs - 1} timed epochs after 1 warm-up, {os.cpu_count()} CPUs", flush=True)

    results = []
    for t in a.threads:
        f = bench_ffcv(beton, t, a.epochs, a.drop)
        print(f"  threads={t}  ffcv   {f:8.0f} img/s", flush=True)
        h, hit = bench_h5pack(h5, t, a.epochs, a.drop)
        print(f"  threads={t}  h5pack {h:8.0f} img/s  (cache hit rate {hit:.2f})", flush=True)
        floor = write_floor(build, t)
        if floor:
            print(f"  threads={t}  non-temporal write floor of the output bytes {floor:8.0f} img/s", flush=True)
        results.append((t, h, f, floor))
    for t, h, f, floor in results:
        versus_floor = f", {h / floor:.2f} of the write floor" if floor else ""
        print(f"rrc_vs_ffcv threads={t}: h5pack {h:.0f} img/s, ffcv {f:.0f} img/s, ratio {h / f:.2f}{versus_floor}")
    return 0


def write_floor(build, threads):
    """Images/s that THREADS threads write with streaming stores alone (bench/reader/write_floor: batches
    of 256 float32 3x224x224 outputs), measured right after the sides, or None without the program."""
    prog = os.path.join(build, "bench", "reader", "write_floor")
    if not os.path.exists(prog):
        return None
    out = subprocess.run([prog, "--image-bytes", str(3 * OUT * OUT * 4), "--samples", "20000", "--batch",
                          str(BATCH), "--threads", str(threads), "--stream", "1"],
                         check=True, capture_output=True, text=True).stdout
    # "write_floor stream N samples in T s = R samples/s (G GB/s)"
    return float(out.strip().splitlines()[-1].split("=")[1].split()[0])


if __name__ == "__main__":
    sys.exit(main())
