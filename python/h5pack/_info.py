"""h5pack.info: what libh5pack finds in a file, as a dict."""
import ctypes
import os

from . import _convert, _lib
from ._structs import _info_dict
from .loader import H5packError, _default_config, _error, _open, lib


def _open_probe(path, cfg):
    """Images of several sizes are only read with a crop that fixes the output size: a centre crop to 224
    (or less) then; huge images in tiles only as patches: sliding 64 x 64 ones then (nothing is delivered
    here, and the file's figures do not depend on them)."""
    try:
        return _open(path, cfg, "h5pack.info")
    except H5packError as e:
        if "several sizes" in str(e):
            cfg.crop, cfg.output_height, cfg.output_width = _lib.CROPS["center"], 224, 224
        elif "in tiles" in str(e):
            cfg.patch_size, cfg.patch_mode = 64, _lib.PATCH_MODES["sliding"]
        else:
            raise
    return _open(path, cfg, "h5pack.info")


def info(path, images="images", labels="labels", input_layout="auto"):
    """What libh5pack finds in PATH (shape, chunks, labels, classes count, ...) as a dict. Opens a small
    CPU reader (1 thread, 1-image batches) and closes it again. ``mean``/``std`` are the file's stored
    per-channel values (None for a file without them), not a normalisation default. A file of huge images
    in tiles gives its ``tile`` and image count, with ``height``/``width`` None (each image has its own).
    ``input_layout`` ("nchw" or "nhwc") as for Loader: for a file whose layout its shape leaves open."""
    cfg = _default_config()
    cfg.images_dataset, cfg.labels_dataset = images.encode(), (labels or "").encode()
    cfg.input_layout = _convert.enum_value(_lib.LAYOUTS, input_layout, "input_layout")
    cfg.device, cfg.threads, cfg.batch_size, cfg.prefetch, cfg.epochs = _lib.DEVICES["cpu"], 1, 1, 2, 1
    cfg.cache_bytes = 1  # the reader keeps at least one chunk
    cfg.order = _lib.ORDERS["sequential"]  # the chunk order's default window would want a larger cache
    # norm=file makes the reader report the file's mean/std; a file without them is refused: open again
    # without normalisation (a real failure then raises from that second open).
    cfg.norm, stored = _lib.NORMS["file"], True
    try:
        reader = _open_probe(path, cfg)
    except H5packError:
        cfg.norm, stored = _lib.NORMS["none"], False
        reader = _open_probe(path, cfg)
    try:
        out = _lib.Info()
        rc = lib().h5pack_info_get(reader, ctypes.byref(out))
        if rc < 0:
            raise _error(rc, reader, f"{os.fspath(path)}: info")
        d = _info_dict(out)
        if not stored:
            d["mean"] = d["std"] = None
        for k in ("threads", "cache_chunks", "window", "samples_per_epoch", "batches_per_epoch", "device",
                  "device_name", "device_bytes", "pinned_bytes", "output_layout", "dtype", "crop", "output_height",
                  "output_width", "max_output_height", "max_output_width", "echo_mode", "ring_slots",
                  "echo_pool_bytes", "order_fingerprint", "patch_size"):
            d.pop(k)  # describe the reader opened here, not the file
        if d["tile"]:  # images in tiles, each its own size (Patches.image_shape(i)): not the probe's patches
            d["height"] = d["width"] = None
        return d
    finally:
        lib().h5pack_close(reader)
