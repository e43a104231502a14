#!/usr/bin/env python3
"""Thread scaling of h5pack.Loader's CPU random resized crops, epoch by epoch, with the CPU it used.

For each thread count, one Loader over FILE (order random, RandomResizedCrop to 224 + flip, float32 or
--dtype, batch 256, CPU) runs EPOCHS epochs; each epoch prints its images/s and the process's CPU seconds per
wall second (os.times()), so a slow epoch can be told apart from a slow core: on a shared VM the same
CPU time can buy twice the images in one epoch as in another.

  PYTHONPATH=python H5PACK_LIBRARY=build/reader/libh5pack.so /usr/bin/python3 \\
      bench/crops/loader_scaling.py /tmp/rrc-work/train.h5 [--threads 1,2] [--epochs 12] [--rounds 2]

(rrc_vs_ffcv.py --work /tmp/rrc-work leaves a suitable train.h5 there.)
"""
import argparse
import os
import time


def run(path, threads, epochs, dtype):
    import h5pack
    loader = h5pack.Loader(path, batch_size=256, order="random", device="cpu", threads=threads,
                           crop="random_resized", output_size=224, flip=True, epochs=epochs, dtype=dtype)
    rows = []
    for e in range(epochs):
        n, t0, c0 = 0, time.perf_counter(), os.times()
        for x, _ in loader:
            n += x.shape[0]
        wall, c1 = time.perf_counter() - t0, os.times()
        rows.append((n / wall, (c1.user - c0.user + c1.system - c0.system) / wall))
    loader.close()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", help="a packed h5pack file")
    p.add_argument("--threads", default="1,2", help="comma separated thread counts")
    p.add_argument("--epochs", type=int, default=12, help="epochs per Loader (the first is a warm-up)")
    p.add_argument("--rounds", type=int, default=2, help="rounds, each running every thread count")
    p.add_argument("--dtype", default="float32", help="output dtype: float32 (default), float16, bfloat16 or "
                   "uint8 (a quarter of float32's bytes: how the crops scale where memory bandwidth does not bind)")
    a = p.parse_args()
    best = {}
    for r in range(a.rounds):
        for t in (int(v) for v in a.threads.split(",")):
            rows = run(a.file, t, a.epochs, a.dtype)[1:]
            print(f"round {r} threads={t}: " + "  ".join(f"{rate:.0f}/s@{cores:.2f}" for rate, cores in rows), flush=True)
            best[t] = max([best.get(t, 0.0)] + [rate for rate, _ in rows])
    for t, rate in sorted(best.items()):
        print(f"loader_scaling threads={t}: best epoch {rate:.0f} images/s"
              + (f", {rate / best[min(best)]:.2f}x threads={min(best)}" if t != min(best) else ""))


if __name__ == "__main__":
    main()
