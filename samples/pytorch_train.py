#!/usr/bin/python3
"""Train a small CNN on an h5pack file with the Python binding, and print per epoch the loss, the accuracy
and the share of the time the loop waited for its input.

    PYTHONPATH=python /usr/bin/python3 samples/pytorch_train.py train.h5 --epochs 2 --batch 64

The model runs where the loader delivers: on the GPU when libh5pack and torch both have one (the batches
arrive there already converted and normalised), else on the CPU.
"""
import argparse
import os
import sys
import time

import torch
from torch import nn


def import_h5pack():
    """This project's binding: installed (pip install .) or on PYTHONPATH, else the one beside this sample
    (another package named h5pack, or a broken install, does not count)."""
    try:
        import h5pack
        if hasattr(h5pack, "Loader"):
            return h5pack
    except ImportError:
        pass
    for name in [m for m in sys.modules if m == "h5pack" or m.startswith("h5pack.")]:
        del sys.modules[name]  # what a broken install loaded must not mix with the checkout's modules
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import h5pack
    return h5pack


h5pack = import_h5pack()


def small_cnn(channels, classes):
    return nn.Sequential(
        nn.Conv2d(channels, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: expected an integer >= 1")
    return value


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="an h5pack file (h5pack --size HxW IMAGES OUT.h5)")
    p.add_argument("--epochs", type=positive_int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--cache", default="1G", help="chunk cache size (K/M/G suffixes); any size works, a larger "
                   "one shuffles across more chunks")
    p.add_argument("--order", default="chunk", choices=["sequential", "random", "chunk"])
    p.add_argument("--echo", type=int, default=1, help="batch echoing factor")
    p.add_argument("--threads", type=int, default=None, help="reader threads (default: all cores)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--flip", action="store_true", help="random horizontal flips (done by the reader)")
    p.add_argument("--crop", choices=["random_resized", "center"], default=None,
                   help="resizing crop done by the reader (needed for files of images of several sizes, as "
                   "h5pack --max-side packs them)")
    p.add_argument("--output-size", type=positive_int, default=None, help="the crop's output side (default: "
                   "the stored size; with images of several sizes required)")
    args = p.parse_args(argv)
    if args.output_size and not args.crop:
        p.error("--output-size needs --crop")
    return args


def run_epoch(loader, model, optimiser, device):
    """One pass over the loader; returns (samples, correct, loss sum, seconds waiting, seconds total)."""
    loss_fn = nn.CrossEntropyLoss()
    samples = correct = 0
    loss_sum = wait = 0.0
    start = time.perf_counter()
    it = iter(loader)
    while True:
        t0 = time.perf_counter()
        try:
            images, labels = next(it)
        except StopIteration:
            break
        wait += time.perf_counter() - t0
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimiser.zero_grad(set_to_none=True)
        logits = model(images)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimiser.step()
        loss_sum += loss.item() * images.shape[0]  # .item() waits for the step, as most loops do
        correct += int((logits.argmax(1) == labels).sum())
        samples += images.shape[0]
    return samples, correct, loss_sum, wait, time.perf_counter() - start


def main(argv=None):
    args = parse_args(argv)
    try:  # bad settings and unreadable files: one line naming the reason, not a traceback
        loader = h5pack.Loader(args.file, batch_size=args.batch, cache=args.cache, order=args.order,
                               echo=args.echo, threads=args.threads, device=args.device, flip=args.flip,
                               crop=args.crop, output_size=args.output_size)
    except (ValueError, h5pack.H5packError) as e:
        sys.exit(f"pytorch_train.py: {e}")
    info = loader.info
    if not info["has_labels"]:
        sys.exit(f"{args.file}: no labels in the file, nothing to train on")
    if info["n_classes"] == 0 or info["label_columns"] > 1 or info["labels_are_float"]:
        # the sample's model is a classifier: CSV attribute tables (1/-1, several columns) or float targets
        # are another task (the Loader delivers them as (B,K) tensors; change the loss to train on them)
        sys.exit(f"{args.file}: this sample trains a classifier on one class index per image; the file's labels "
                 f"are {'float' if info['labels_are_float'] else 'int'} with {info['label_columns']} column(s) "
                 f"and no class count")
    device = torch.device(f"cuda:{torch.cuda.current_device()}" if info["device"] == "cuda" else "cpu")
    print(f"{args.file}: {info['n_samples']} images {info['channels']}x{info['height']}x{info['width']}, "
          f"{info['n_classes']} classes; reader on {info['device_name']}, {info['threads']} threads, "
          f"{len(loader)} batches of {args.batch} per epoch; model on {device}")
    model = small_cnn(info["channels"], max(1, info["n_classes"])).to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    before = loader.stats()
    for epoch in range(args.epochs):
        samples, correct, loss_sum, wait, total = run_epoch(loader, model, optimiser, device)
        after = loader.stats()
        stall = after["stall_s"] - before["stall_s"]
        hits, misses = (after[k] - before[k] for k in ("chunk_hits", "chunk_misses"))
        print(f"epoch {epoch + 1}/{args.epochs}: loss {loss_sum / max(1, samples):.4f}, accuracy "
              f"{100.0 * correct / max(1, samples):.1f}%, {samples / total:.0f} samples/s, input wait "
              f"{wait:.2f} s = {100.0 * wait / total:.1f}% of the epoch (reader's stall counter {stall:.2f} s), "
              f"chunk hit rate {100.0 * hits / max(1, hits + misses):.1f}%")
        before = after
    loader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
