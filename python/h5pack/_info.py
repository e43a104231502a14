"""h5pack.info: what libh5pack finds in a file, as a dict, from h5pack_describe: the reader's own open of
the file (the same checks, read path and geometry as h5pack_open) with nothing started."""
import ctypes
import os

from . import _lib, _params
from ._core import default_config as _default_config, error_from, lib

# What info() reports, in this order: the file's facts (h5pack_file_desc's names, layout as input_layout).
_FACTS = ("n_samples", "channels", "height", "width", "input_layout", "has_labels", "n_classes", "samples_per_chunk",
          "n_chunks", "chunk_bytes", "compressed", "fast_path", "mean", "std", "label_columns", "label_rank",
          "labels_are_float", "several_sizes", "tile")


def _describe(path, cfg):
    desc, err = _lib.FileDesc(), ctypes.create_string_buffer(1024)
    rc = lib().h5pack_describe(os.fsencode(path), ctypes.byref(cfg), ctypes.byref(desc), err, len(err))
    return rc, desc, err.value.decode(errors="replace")


def _facts(desc):
    d = {k: getattr(desc, k, 0) for k in _FACTS}
    d["input_layout"] = {v: k for k, v in _lib.LAYOUTS.items()}[desc.layout]
    stored = bool(desc.has_pixel_stats)  # the file's own mean/std, not a normalisation default
    d["mean"] = list(desc.mean[:desc.channels]) if stored else None
    d["std"] = list(desc.std[:desc.channels]) if stored else None
    return d


def info(path, images="images", labels="labels", input_layout="auto"):
    """What libh5pack finds in PATH (shape, chunks, labels, classes count, ...) as a dict, without
    starting a reader; ``classes`` the class names (None without them), ``filenames`` the source file
    names, a sequence read on demand (None without them); no h5py needed. ``mean``/``std`` are the file's stored per-channel values (None for a file without
    them), not a normalisation default. A file of huge images in tiles gives its ``tile`` and image
    count, with ``height``/``width`` None (each image has its own). ``input_layout`` ("nchw" or "nhwc")
    as for Loader: for a file whose layout its shape leaves open."""
    cfg = _default_config()
    _params.configure(cfg, {"images": images, "labels": labels, "input_layout": input_layout})
    rc, desc, detail = _describe(path, cfg)
    if rc < 0:
        raise error_from(rc, detail, "h5pack.info")
    d = _facts(desc)
    # the names, without h5py: classes as a list, file names read on demand (1.28M need not be loaded)
    from ._names import Names, read_strings, row_count

    d["classes"] = read_strings(path, "classes")
    rows = row_count(path, "filenames")
    d["filenames"] = Names(path, "filenames", rows) if rows is not None else None
    if d["tile"]:  # images in tiles, each its own size (Patches.image_shape(i))
        d["height"] = d["width"] = None
    return d
