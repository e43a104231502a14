#!/usr/bin/env python3
"""Train a small linear classifier on an h5pack file with JAX, the global batch sharded over every local
device (on a CPU: XLA_FLAGS=--xla_force_host_platform_device_count=N makes N of them), and print per
epoch the loss, the accuracy and the share of the time the loop waited for its input.

    XLA_FLAGS=--xla_force_host_platform_device_count=2 PYTHONPATH=python \\
        venv/bin/python samples/jax_train.py train.h5 --epochs 2 --batch 64

Needs jax (pip install jax) and numpy; no torch. Each device's shard is filled by its own reader and
handed to JAX without a copy (docs/frameworks.md).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import h5pack  # noqa: E402
import h5pack.jax  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def features(images):
    """Per-channel means and a coarse 4 x 4 average: a small, fast input for a linear model."""
    b, c, h, w = images.shape
    pooled = images.reshape(b, c, 4, h // 4, 4, w // 4).mean(axis=(3, 5))
    return pooled.reshape(b, -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64, help="global batch (a multiple of the device count)")
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()
    devices = jax.local_devices()
    info = h5pack.info(args.path)
    classes = max(1, info["n_classes"])
    loader = h5pack.jax.Loader(args.path, batch_size=args.batch, devices=devices, crop="random_resized",
                               output_size=32, flip=True, drop_last=True)
    dim = info["channels"] * 16
    params = {"w": jnp.zeros((dim, classes)), "b": jnp.zeros((classes,))}

    @jax.jit
    def step(params, images, labels):
        def loss_fn(p):
            logits = features(images) @ p["w"] + p["b"]
            loss = -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(labels.shape[0]), labels])
            return loss, jnp.mean(jnp.argmax(logits, axis=1) == labels)
        (loss, acc), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        return jax.tree_util.tree_map(lambda p, g: p - args.lr * g, params, grads), loss, acc

    print(f"{args.path}: {info['n_samples']} images, {classes} classes (first: {(info['classes'] or ['-'])[0]}), "
          f"{len(devices)} devices, global batch {args.batch}")
    for epoch in range(args.epochs):
        t0, waited, losses, accs = time.perf_counter(), 0.0, [], []
        it = iter(loader)
        while True:
            w0 = time.perf_counter()
            try:
                images, labels = next(it)
            except StopIteration:
                break
            waited += time.perf_counter() - w0
            params, loss, acc = step(params, images, labels)
            losses.append(loss)
            accs.append(acc)
        elapsed = time.perf_counter() - t0
        print(f"epoch {epoch}: loss {float(jnp.mean(jnp.stack(losses))):.4f} accuracy "
              f"{float(jnp.mean(jnp.stack(accs))):.3f}  waited for data {100 * waited / elapsed:.1f}% of "
              f"{elapsed:.2f} s, hit rate {loader.stats()['hit_rate']:.3f}")
    loader.close()


if __name__ == "__main__":
    main()
