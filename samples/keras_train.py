#!/usr/bin/env python3
"""Train a small Keras CNN on an h5pack file with model.fit, one replica per device under
MirroredStrategy (on a CPU: --replicas N makes N logical CPU devices), and print what fit reports and the
reader's counters.

    PYTHONPATH=python venv/bin/python samples/keras_train.py train.h5 --epochs 2 --batch 64 --replicas 2

Needs tensorflow (pip install tensorflow-cpu) and numpy; no torch. Batches reach TensorFlow without a
copy (docs/frameworks.md).
"""
import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import h5pack  # noqa: E402
import h5pack.tf  # noqa: E402

import tensorflow as tf  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64, help="global batch, shared by the replicas")
    ap.add_argument("--replicas", type=int, default=2, help="logical CPU devices when there is no GPU")
    args = ap.parse_args()
    if not tf.config.list_physical_devices("GPU") and args.replicas > 1:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * args.replicas)
    strategy = tf.distribute.MirroredStrategy()
    info = h5pack.info(args.path)
    classes = max(1, info["n_classes"])
    datasets = []

    def make(ctx):
        ds = h5pack.tf.dataset(args.path, batch_size=ctx.get_per_replica_batch_size(args.batch), input_context=ctx,
                               layout="nhwc", crop="random_resized", output_size=32, flip=True, drop_last=True)
        datasets.append(ds)
        return ds

    train = strategy.distribute_datasets_from_function(make)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((32, 32, info["channels"])),
            tf.keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            tf.keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
            tf.keras.layers.GlobalAveragePooling2D(),
            tf.keras.layers.Dense(classes)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    print(f"{args.path}: {info['n_samples']} images, {classes} classes, {strategy.num_replicas_in_sync} replicas, "
          f"global batch {args.batch}")
    history = model.fit(train, epochs=args.epochs, verbose=2)
    stats = h5pack.tf.stream_of(datasets[0]).stats()
    print(f"final loss {history.history['loss'][-1]:.4f}; reader: {stats['samples']} samples, hit rate "
          f"{stats['hit_rate']:.3f}, waited {stats['stall_fraction'] * 100:.1f}% of its time")


if __name__ == "__main__":
    main()
