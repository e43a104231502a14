"""The Python Loader over files converted with --labels: labels come as (B, K) tensors (int64, or float32
for float labels), (B,) for a single column, equal to the CSV's rows for the batch's indices, with batch
and sample echo and for both ranks of world 2. Usage: test_loader_labels.py H5PACK"""
import sys

import h5test
from h5test import check
from labels_util import fresh_workdir, make_folder, np, run_h5pack, write_text

try:
    import torch

    import h5pack
except ImportError as e:
    h5test.skip(e)

H5PACK = sys.argv[1]
fresh_workdir("loader")
NAMES = [f"img{i:03d}.png" for i in range(37)]


def convert(name, columns, value):
    """A file whose CSV row for image i holds value(i, j) in each of COLUMNS; returns {file row: values}."""
    make_folder(name, NAMES, size=4)
    text = "image," + ",".join(columns) + "\n"
    text += "".join(n + "," + ",".join(str(value(i, j)) for j in range(len(columns))) + "\n"
                    for i, n in enumerate(NAMES))
    write_text(name + ".csv", text)
    rc, _ = run_h5pack(H5PACK, "-q", "--labels", name + ".csv", name, name + ".h5")
    check(rc == 0, f"{name}: converted", fatal=True)
    import h5py
    with h5py.File(name + ".h5", "r") as f:
        order = [NAMES.index(n.decode()) for n in f["filenames"][()]]
    return {row: [value(i, j) for j in range(len(columns))] for row, i in enumerate(order)}


def check_loader(name, expected, shape_k, dtype, **kw):
    seen = 0
    for rank in (0, 1):
        loader = h5pack.Loader(name + ".h5", batch_size=8, device="cpu", rank=rank, world=2, dtype="uint8",
                               return_indices=True, seed=3, **kw)
        check(loader.info["label_columns"] == (shape_k or 1) and loader.info["label_rank"] == (2 if shape_k else 1),
              f"{name}: info label_columns and label_rank")
        for images, labels, indices in loader:
            b = images.shape[0]
            want_shape = (b, shape_k) if shape_k else (b,)
            if tuple(labels.shape) != want_shape or labels.dtype != dtype:
                check(False, f"{name}: labels {tuple(labels.shape)} {labels.dtype}, expected {want_shape} {dtype}")
            want = torch.tensor([expected[int(i)] for i in indices], dtype=dtype).view(want_shape)
            if not torch.equal(labels, want):
                check(False, f"{name}: labels differ from the CSV for indices {indices.tolist()}")
            seen += b
        loader.close()
    check(seen > 0, f"{name}: {seen} samples checked against the CSV ({kw or 'no echo'})")


attrs = convert("attrs", ["Smiling", "Bald", "Young", "Male"], lambda i, j: 1 if (i * 5 + j) % 3 else -1)
check_loader("attrs", attrs, 4, torch.int64)
check_loader("attrs", attrs, 4, torch.int64, echo=2)
check_loader("attrs", attrs, 4, torch.int64, echo=2, echo_mode="sample")
floats = convert("floats", ["x", "y"], lambda i, j: i * 0.25 - j)
check_loader("floats", floats, 2, torch.float32)
check_loader("floats", floats, 2, torch.float32, echo=3, echo_mode="sample")
single = convert("single", ["age"], lambda i, j: 20 + i)
check_loader("single", {k: v[0] for k, v in single.items()}, 0, torch.int64)
h5test.finish("all Loader label checks passed")
