#!/usr/bin/env python3
"""Patches on the GPU (issue 24): device memory is the ring's, whatever the image size, and the CUDA
patches equal the CPU's.

For each SIDE (default 4000 and 16000), a SIDE x SIDE RGB PNG written in bands (bench/patches'
write_png) is packed with `h5pack --tiles --tile 256` and read in one sliding pass of 512 x 512 patches
(overlap 64, batch 64, float16 NCHW) by h5pack.Patches(device=DEVICE). torch.cuda.mem_get_info is read
before the open, after it and after the pass; the lines `key: value` are:
  patch_device_bytes_<SIDE>: the device memory the reader took (free before open - free after the pass)
  patch_info_device_bytes_<SIDE>: what h5pack_info says it allocated
  patch_gpu_patches_per_s_<SIDE>: patches/s of the pass
  patch_gpu_equals_cpu_<SIDE>: 1 when the first batch equals the CPU backend's bit for bit
With --device cpu (a dry run without a GPU) the memory lines say n/a.
  PYTHONPATH=python python3 bench/gpu/patches_device.py --build BUILD --work DIR [--sides 4000,16000]
"""
import argparse
import os
import subprocess
import sys
import time

import torch

import h5pack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "patches"))
from sliding_vs_h5py import write_png  # noqa: E402  (the band-by-band PNG writer)


def packed(build, work, side):
    h5 = os.path.join(work, f"p{side}.h5")
    if not os.path.exists(h5):
        png = os.path.join(work, f"src{side}", "a", "big.png")
        os.makedirs(os.path.dirname(png), exist_ok=True)
        write_png(png, side)
        subprocess.run([os.path.join(build, "h5pack"), "-q", "--tiles", "--tile", "256",
                        os.path.dirname(os.path.dirname(png)), h5], check=True)
    return h5


def free_bytes(device):
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0]


def one_side(h5, side, device, threads):
    before = free_bytes(device)
    p = h5pack.Patches(h5, size=512, overlap=64, batch_size=64, device=device, dtype="float16", threads=threads)
    after_open = free_bytes(device)
    t0, n, first = time.perf_counter(), 0, None
    for x, _where in p:
        first = x.cpu().clone() if first is None else first
        n += x.shape[0]
    if device == "cuda":
        torch.cuda.synchronize()
    rate = n / (time.perf_counter() - t0)
    after = free_bytes(device)
    info_bytes = p.info["device_bytes"]
    p.close()
    cpu = h5pack.Patches(h5, size=512, overlap=64, batch_size=64, device="cpu", dtype="float16", threads=threads)
    equal = torch.equal(next(iter(cpu))[0], first)
    cpu.close()
    took = "n/a" if before is None else before - after
    print(f"patch_device_bytes_{side}: {took}")
    print(f"patch_device_bytes_at_open_{side}: {'n/a' if before is None else before - after_open}")
    print(f"patch_info_device_bytes_{side}: {info_bytes}")
    print(f"patch_gpu_patches_per_s_{side}: {rate:.1f}")
    print(f"patch_gpu_equals_cpu_{side}: {int(equal)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sides", default="4000,16000")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    for side in (int(s) for s in a.sides.split(",")):
        one_side(packed(a.build, a.work, side), side, a.device, a.threads or None)


main()
