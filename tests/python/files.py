"""Small HDF5 files for the binding tests, written with h5py following docs/format.md (the file contract)."""
import os

import h5py
import numpy as np

N, C, H, W, K, CLASSES = 50, 3, 8, 6, 4, 5
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def pixels(seed=1):
    return np.random.default_rng(seed).integers(0, 256, size=(N, C, H, W), dtype=np.uint8)


def labels():
    return (np.arange(N) * 7 % CLASSES).astype(np.uint8)


def _root_attrs(f, layout, images):
    f.attrs["h5pack_format_version"] = np.int32(1)
    f.attrs["layout"] = np.bytes_(layout)
    f.attrs["height"], f.attrs["width"], f.attrs["channels"] = np.int32(H), np.int32(W), np.int32(C)
    x = images.astype(np.float64) / 255.0
    axes = (0, 2, 3) if layout == "NCHW" else (0, 1, 2)
    f.attrs["mean"], f.attrs["std"] = x.mean(axis=axes), x.std(axis=axes)
    f.attrs["chunk_images"] = np.int64(K)


def write(path, layout="NCHW", with_labels=True, dtype=np.uint8, compression=None):
    """images (N,C,H,W) or (N,H,W,C), K images per chunk, labels uint8, classes; returns path."""
    img = pixels()
    if layout == "NHWC":
        img = np.ascontiguousarray(img.transpose(0, 2, 3, 1))
    with h5py.File(path, "w") as f:
        d = f.create_dataset("images", data=img.astype(dtype), chunks=(K,) + img.shape[1:],
                             compression=compression)
        d.attrs["layout"] = np.bytes_(layout)
        if with_labels:
            f.create_dataset("labels", data=labels())
            f.create_dataset("classes", data=[f"class{i}" for i in range(CLASSES)],
                             dtype=h5py.string_dtype())
        _root_attrs(f, layout, img)
    return path


def make_all(tmp):
    return {
        "nchw": write(os.path.join(tmp, "nchw.h5")),
        "nhwc": write(os.path.join(tmp, "nhwc.h5"), layout="NHWC"),
        "gzip": write(os.path.join(tmp, "gzip.h5"), compression="gzip"),
        "nolabels": write(os.path.join(tmp, "nolabels.h5"), with_labels=False),
        "float": write(os.path.join(tmp, "float.h5"), dtype=np.float32),
    }


def normalised(img, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    """What the reader must deliver for uint8 NCHW pixels: (x/255 - mean[c]) / std[c] in float32."""
    x = img.astype(np.float32) / np.float32(255)
    return (x - mean.reshape(1, -1, 1, 1)) / std.reshape(1, -1, 1, 1)


def write_ragged(path, seed=2):
    """Images of several sizes (format version 2): N images of 3..12 x 3..10 pixels, HWC one after the
    other in a 1-D byte store (image 7 followed by a gap of zeros, as a skipped image leaves), labels;
    returns path."""
    rng = np.random.default_rng(seed)
    shapes = [(int(rng.integers(3, 13)), int(rng.integers(3, 11))) for _ in range(N)]
    offsets, pos = [], 0
    for i, (h, w) in enumerate(shapes):
        offsets.append(pos)
        pos += h * w * C + (17 if i == 7 else 0)
    store = np.zeros(pos, dtype=np.uint8)
    for off, (h, w) in zip(offsets, shapes):
        store[off:off + h * w * C] = rng.integers(0, 256, size=h * w * C, dtype=np.uint8)
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=store)
        f.create_dataset("image_offsets", data=np.array(offsets, dtype=np.int64))
        f.create_dataset("image_shapes", data=np.array(shapes, dtype=np.int64))
        f.create_dataset("labels", data=labels())
        f.attrs["h5pack_format_version"] = np.int32(2)
        f.attrs["storage"] = np.bytes_("ragged")
        f.attrs["channels"] = np.int32(C)
        f.attrs["chunk_bytes"] = np.int64(800)  # a few images per reader chunk
    return path
