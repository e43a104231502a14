"""Shared by the tests of --labels: tiny image folders, the h5pack command, reading the file back. Checks
come from h5test (tests/pyhelp/), which prints every passed check for these tests."""
import os
import shutil
import subprocess

import h5test

try:
    import h5py
    import numpy as np
    from PIL import Image
except ImportError as e:  # the tests need Debian's python3 packages
    h5test.skip(e)

h5test.verbose = True


def fresh_workdir(tag):
    """Makes ./TAG (emptied first) the working directory: the tests of tests/labels share one build folder
    and ctest -j runs them at once, so each writes its folders, CSVs and files in its own."""
    shutil.rmtree(tag, ignore_errors=True)
    os.makedirs(tag)
    os.chdir(tag)


def make_folder(root, names, size=8):
    """Writes a small JPEG (or PNG) for each relative path in NAMES under ROOT (recreated)."""
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(len(names))
    for rel in names:
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)
    return root


def write_text(path, text, mode="w"):
    with open(path, mode, newline="" if mode == "w" else None) as f:
        f.write(text)
    return path


def run_h5pack(h5pack, *args):
    """(exit status, stderr) of h5pack ARGS."""
    p = subprocess.run([h5pack, "--force", *args], capture_output=True, text=True)
    print(f"$ h5pack {' '.join(args)} -> {p.returncode}\n{p.stderr.rstrip()}")
    return p.returncode, p.stderr


def read_back(path):
    """{filename: label row (numpy)}, the labels dataset, label_names, and the root's names."""
    with h5py.File(path, "r") as f:
        labels = f["labels"][()]
        names = [n.decode() for n in f["filenames"][()]]
        label_names = [n.decode() for n in f["label_names"][()]]
        skipped = {a.decode(): b.decode() for a, b in zip(f["skipped/files"][()], f["skipped/reasons"][()])}
        root = sorted(f.keys())
        dtype = f["labels"].dtype
    return {n: labels[i] for i, n in enumerate(names)}, labels, dtype, label_names, skipped, root
