"""The first batch after load_state_dict, in Python (h5pack.numpy.Loader: the Stream every front-end
shares): the state of a job of SAVED_WORLD ranks (batch B each) at positions across an epoch, loaded by
rank 0 of a job of WORLD ranks; the time from load_state_dict to the first batch in hand, min / median /
max of REPEATS. Each repeat makes a new loader (as a restarted job does; not timed, its open is printed
apart) whose load_state_dict reopens the reader (the file opened again).
Usage: loader_resume.py FILE [--batch B] [--world W] [--saved-world W0] [--window W] [--cache C]
                                [--threads T] [--repeats N] [--epoch E]"""
import argparse
import statistics
import time

import h5pack.numpy as hn


def main():
    a = argparse.ArgumentParser()
    a.add_argument("path")
    a.add_argument("--batch", type=int, default=256)
    a.add_argument("--world", type=int, default=1)
    a.add_argument("--saved-world", type=int, default=None)
    a.add_argument("--window", type=int, default=None)
    a.add_argument("--cache", default="1G")
    a.add_argument("--threads", type=int, default=2)
    a.add_argument("--repeats", type=int, default=5)
    a.add_argument("--epoch", type=int, default=1)
    o = a.parse_args()
    kw = dict(device="cpu", dtype="uint8", threads=o.threads, cache=o.cache, seed=1, window=o.window)
    saved_world = o.saved_world or o.world
    saver = hn.Loader(o.path, batch_size=o.batch, rank=0, world=saved_world, **kw)
    bpe = len(saver)
    probe = hn.Loader(o.path, batch_size=o.batch, rank=0, world=o.world, **kw)
    print(f"{o.path}: {probe.info['n_samples']} samples, window {probe.info['window']}, a state of {saved_world} "
          f"x {o.batch} loaded by rank 0 of {o.world} x {o.batch}, epoch {o.epoch}")
    probe.close()
    print(f"{'position':>9} {'first ms (min)':>15} {'(median)':>9} {'(max)':>7} {'new loader ms (median)':>23}")
    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        saver.set_epoch(o.epoch)
        at = int(fraction * (bpe - 1))
        it = iter(saver)
        for _ in range(at):  # a state mid-epoch, as a checkpoint would hold it
            next(it)
        del it
        state = saver.state_dict()
        times, made = [], []
        for _ in range(o.repeats):
            t0 = time.perf_counter()
            loader = hn.Loader(o.path, batch_size=o.batch, rank=0, world=o.world, **kw)
            t1 = time.perf_counter()
            loader.load_state_dict(state)
            batch = next(iter(loader))
            times.append(1e3 * (time.perf_counter() - t1))
            made.append(1e3 * (t1 - t0))
            del batch
            loader.close()
        print(f"{100 * fraction:8.0f}% {min(times):15.1f} {statistics.median(times):9.1f} {max(times):7.1f} "
              f"{statistics.median(made):23.1f}")


if __name__ == "__main__":
    main()
