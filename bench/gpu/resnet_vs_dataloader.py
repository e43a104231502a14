"""A real client on the GPU: torchvision ResNet-18 trained for a fixed number of steps (bf16 autocast,
channels_last, SGD, batch 256, RandomResizedCrop to 224 + horizontal flip, ImageNet normalisation), fed by

  h5pack:     h5pack.Loader(device="cuda", crop="random_resized", flip=True): the crop, flip and
              normalisation run on the GPU, batches arrive as device tensors;
  DataLoader: torch.utils.data.DataLoader(num_workers=W, pin_memory=True) over a Dataset that reads one
              image per __getitem__ with h5py and applies torchvision's RandomResizedCrop, flip and
              Normalize in the worker (the usual "HDF5 + DataLoader" pipeline).

Both read the same h5pack file (images stored at 256x256). A third run trains on one batch already on the
GPU: the model's own pace. Each side's GPU idle share is 1 - (steps x the model's step time) / wall time.

    python3 bench/gpu/resnet_vs_dataloader.py FILE.h5 [--steps 60] [--warmup 10] [--workers 16]
                                             [--threads 16] [--device cuda|cpu]

--device cpu is the dry run of the host side on a machine without a GPU (a few steps: figures meaningless).

Prints `key: value` lines; the last, `torch_resnet18_vs_dataloader: R`, is h5pack's samples/s over the
DataLoader's.
"""
import argparse
import time

import h5py
import torch
import torch.nn.functional as F
import torchvision
from torchvision import transforms as T

import h5pack

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class H5Images(torch.utils.data.Dataset):
    """Per-sample h5py reads (opened lazily in each worker) and torchvision's augmentation on uint8 CHW."""

    def __init__(self, path, size):
        self.path, self.file = path, None
        with h5py.File(path, "r") as f:
            self.n = f["images"].shape[0]
        self.crop = T.Compose([T.RandomResizedCrop(size, antialias=True), T.RandomHorizontalFlip()])
        self.norm = T.Normalize(MEAN, STD)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        img = torch.from_numpy(self.file["images"][i])
        return self.norm(self.crop(img).float().div_(255)), int(self.file["labels"][i])


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def make_model(classes, device):
    model = torchvision.models.resnet18(num_classes=classes).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
    return model, opt


def train_step(model, opt, x, y):
    with torch.autocast(x.device.type, dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def timed_loop(batches, model, opt, steps, warmup, device):
    """Trains on BATCHES (an iterator of (x, y) on DEVICE): warmup steps, then STEPS timed ones."""
    t0 = None
    for k, (x, y) in enumerate(batches):
        if k == warmup:
            sync(device)
            t0 = time.perf_counter()
        if k == warmup + steps:
            break
        train_step(model, opt, x, y)
    sync(device)
    return time.perf_counter() - t0


def endless(loader):
    while True:
        yield from loader


def h5pack_batches(path, batch, threads, device):
    loader = h5pack.Loader(path, batch_size=batch, device=device, crop="random_resized", output_size=224,
                           flip=True, layout="nhwc", threads=threads, drop_last=True)
    try:
        for images, labels in endless(loader):
            # NHWC storage seen as NCHW: channels_last without a copy
            yield images.permute(0, 3, 1, 2), labels
    finally:
        loader.close()


def dataloader_batches(path, batch, workers, device):
    dl = torch.utils.data.DataLoader(H5Images(path, 224), batch_size=batch, shuffle=True, num_workers=workers,
                                     pin_memory=device == "cuda", drop_last=True, persistent_workers=True,
                                     prefetch_factor=4)
    for x, y in endless(dl):
        yield (x.to(device, non_blocking=True).contiguous(memory_format=torch.channels_last),
               y.to(device, non_blocking=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    a = ap.parse_args()
    dev = a.device
    torch.backends.cudnn.benchmark = True
    with h5py.File(a.file, "r") as f:
        classes = int(f["labels"][:].max()) + 1
    model, opt = make_model(classes, dev)
    x = torch.randn(a.batch, 3, 224, 224, device=dev).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, classes, (a.batch,), device=dev)
    step_s = timed_loop(iter(lambda: (x, y), None), model, opt, a.steps, a.warmup, dev) / a.steps
    print(f"model_samples_per_s: {a.batch / step_s:.0f}")
    results = {}
    for name, batches in (("h5pack", h5pack_batches(a.file, a.batch, a.threads, dev)),
                          ("dataloader", dataloader_batches(a.file, a.batch, a.workers, dev))):
        model, opt = make_model(classes, dev)
        wall = timed_loop(batches, model, opt, a.steps, a.warmup, dev)
        batches.close()
        rate = a.steps * a.batch / wall
        idle = max(0.0, 1.0 - a.steps * step_s / wall)
        results[name] = rate
        print(f"{name}_samples_per_s: {rate:.0f}")
        print(f"{name}_gpu_idle_share: {idle:.3f}")
    print(f"torch_resnet18_vs_dataloader: {results['h5pack'] / results['dataloader']:.3f}")


if __name__ == "__main__":
    main()
