"""The baseline of bench/reader/float_path.sh: what a PyTorch user writes without h5pack.

A map-style Dataset over h5py reads one sample per __getitem__ (its own h5py.File per worker process,
opened lazily; h5py's default 1 MiB chunk cache, or RDCC_MIB MiB: a CelebA chunk of 16 images is 1.78 MiB,
so with the default every sample read reads its whole chunk again), converts it to float32 and normalises it
((x / 255 - mean) / std, per channel, the ImageNet constants h5pack uses by default); a
torch.utils.data.DataLoader with W worker processes, batch B, default collation, drains E epochs in the
reader's chunk-friendly order (shuffle=False: the friendliest order for h5py's cache).
Prints one line: "dataloader SAMPLES samples in SECONDS s = RATE samples/s".
Usage: /usr/bin/python3 dataloader_h5py.py FILE.h5 [WORKERS=2] [BATCH=256] [EPOCHS=1] [RDCC_MIB=0 (default)]"""
import sys
import time

import h5py
import torch
from torch.utils.data import DataLoader, Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


class H5Images(Dataset):
    def __init__(self, path, rdcc_mib):
        self.path = path
        self.rdcc = {"rdcc_nbytes": rdcc_mib << 20, "rdcc_nslots": 10007} if rdcc_mib else {}
        self.file = None
        with h5py.File(path, "r") as f:
            self.n = f["images"].shape[0]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.file is None:  # one handle per worker process (h5py handles do not survive fork)
            self.file = h5py.File(self.path, "r", **self.rdcc)
        x = torch.from_numpy(self.file["images"][i])  # (C, H, W) uint8
        x = (x.float() / 255.0 - MEAN) / STD
        return x, int(self.file["labels"][i])


def main():
    path = sys.argv[1]
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rdcc_mib = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    torch.set_num_threads(1)
    ds = H5Images(path, rdcc_mib)
    loader = DataLoader(ds, batch_size=batch, num_workers=workers, shuffle=False,
                        persistent_workers=workers > 0)
    samples = 0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for images, _labels in loader:
            samples += images.shape[0]
    dt = time.perf_counter() - t0
    print(f"dataloader {samples} samples in {dt:.3f} s = {samples / dt:.1f} samples/s")


if __name__ == "__main__":
    main()
