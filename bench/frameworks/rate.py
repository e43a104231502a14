"""Samples/s of one h5pack front-end over an h5pack file, the loop doing nothing with the batch but keeping a
reference to it until the next (as a training step does): what each front-end adds to the reader.

    python rate.py FRONTEND PATH [--epochs E] [--batch B] [--threads T] [--devices D]
FRONTEND: torch | numpy | jax | tf. jax with --devices D shards the batch over D host devices (set
XLA_FLAGS=--xla_force_host_platform_device_count=D). Prints one line: FRONTEND DEVICES SAMPLES SECONDS RATE."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def loader(frontend, path, devices, **kw):
    if frontend == "torch":
        import h5pack
        return h5pack.Loader(path, device="cpu", **kw)
    if frontend == "numpy":
        import h5pack.numpy
        return h5pack.numpy.Loader(path, **kw)
    if frontend == "jax":
        import jax

        import h5pack.jax
        if devices > 1:
            return h5pack.jax.Loader(path, devices=jax.devices()[:devices], **kw)
        return h5pack.jax.Loader(path, device="cpu", **kw)
    if frontend == "tf":
        import h5pack.tf
        return h5pack.tf.dataset(path, **kw)
    raise SystemExit(f"unknown front-end {frontend}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("frontend")
    ap.add_argument("path")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--devices", type=int, default=1)
    a = ap.parse_args()
    kw = dict(batch_size=a.batch, threads=a.threads, crop="random_resized", output_size=224, flip=True,
              cache="512M")
    it = loader(a.frontend, a.path, a.devices, **kw)
    for _ in it:  # a warm-up epoch: pages, rings, the framework's first-call costs
        pass
    samples, t0 = 0, time.perf_counter()
    for _ in range(a.epochs):
        for batch in it:
            samples += int(batch[0].shape[0])
    seconds = time.perf_counter() - t0
    print(f"{a.frontend} {a.devices} {samples} {seconds:.3f} {samples / seconds:.1f}", flush=True)


if __name__ == "__main__":
    main()
