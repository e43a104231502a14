"""Sliding-window inference over huge images in tiles (docs/patches.md): h5pack.Patches streams every
window of every image, h5pack.Stitcher puts per-patch outputs back together into per-image maps."""
try:
    import torch
except ImportError as _e:  # the PyTorch front-end: the others need no torch (docs/frameworks.md)
    raise ImportError(f"h5pack.Patches and h5pack.Stitcher are PyTorch's and need torch ({_e}): pip install torch") from None

from .loader import Loader


def _is_window(pos, length, size, stride):
    """POS is one of _windows_along(length, size, stride), in constant time."""
    if length <= size:
        return pos == 0
    return pos == length - size or (0 <= pos < length - size and pos % stride == 0)


def _windows_along(length, size, stride):
    """Window positions along a side (the reader's rule, reader/patch/patch_windows.h): 0, s, 2s, ... and a
    last one shifted inward to length - size; one window at 0 when the side is not longer than size."""
    if length <= size:
        return [0]
    n = (length - size + stride - 1) // stride + 1
    return [k * stride for k in range(n - 1)] + [length - size]


class Patches(Loader):
    """Every S x S window of every image of a tiled file, image after image, row by row, with ``overlap``
    pixels shared between neighbours; edge windows are shifted inward so each lies inside its image (an
    image smaller than S gets one window at (0, 0), zero beyond its edge). Each ``for`` is one pass and
    yields ``(patches, where)``: (B, C, S, S) tensors (``layout="nhwc"``: (B, S, S, C)) of ``dtype`` on
    ``device``, normalised as by Loader, and ``where``, a (B, 3) int64 tensor of (image, y, x).

    The reader plans its tile cache from the known window order (Belady): one pass reads every tile once
    when ``cache`` holds a band of tiles (the tile rows one row of windows covers); ``stats()`` reports the
    read amplification. Device memory is the ring of ``prefetch`` batches of B x S x S, whatever the image
    size. Other keyword arguments as for Loader (threads, cache, prefetch, norm, rank/world to split the
    windows between ranks)."""

    def __init__(self, path, size, overlap=0, batch_size=64, device="auto", dtype="float32", layout="nchw",
                 **kwargs):
        for bad in ("patch", "patch_mode", "patches_per_epoch", "order", "crop", "echo", "flip", "drop_last"):
            if bad in kwargs:
                raise ValueError(f"h5pack.Patches does not take {bad}= (sliding windows in file order; "
                                 f"h5pack.Loader(path, patch=S) draws random training patches)")
        if not size:  # patch_size 0 is the table's "whole images": nothing to slide
            raise ValueError(f"size={size!r}: the side of the square patches, at least 1")
        super().__init__(path, batch_size=batch_size, device=device, dtype=dtype, layout=layout, patch=size,
                         overlap=overlap, patch_mode="sliding", order="sequential", **kwargs)
        self.patch_size, self.overlap = int(self._cfg.patch_size), int(self._cfg.patch_overlap)  # as checked
        self._names = None

    def _wrap(self, b):
        out, exporter = super()._wrap(b)
        return (out[0], self._last_where), exporter

    @property
    def image_count(self):
        return int(self._info.n_samples)

    @property
    def names(self):
        """The images' source file names (the file's "filenames" dataset; needs h5py)."""
        if self._names is None:
            try:
                import h5py  # only here: the reader itself needs no h5py
            except ImportError as e:
                raise ImportError(f"h5pack.Patches.names reads the file's 'filenames' with h5py, which is not "
                                  f"installed ({e}): apt-get install python3-h5py, or pip install h5py") from None
            with h5py.File(self.path, "r") as f:
                self._names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["filenames"][()]]
        return self._names

    def __repr__(self):
        i = self._info
        device = i.device_name.decode(errors="replace")
        return (f"h5pack.Patches({self.path!r}, images={i.n_samples}, size={self.patch_size}, "
                f"overlap={self.overlap}, batches_per_epoch={len(self)}, device={device!r})")

    def windows(self, i):
        """The number of windows of image I (rows x columns)."""
        h, w = self.image_shape(i)
        stride = self.patch_size - self.overlap
        return len(_windows_along(h, self.patch_size, stride)) * len(_windows_along(w, self.patch_size, stride))


class Stitcher:
    """Puts per-patch outputs of a Patches pass back together: ``add(outputs, where)`` with outputs of
    (B, C, S, S) (any float dtype, on any device), ``result(i)`` gives image i's (C, H, W) float32 map, each
    pixel the mean of the patches that cover it (sums in float64: stitching the patches themselves gives
    the image back exactly). Memory: the map of the image being assembled (plus finished maps until
    ``result`` takes them), on the outputs' device. ``add`` returns the images it completed: those whose
    every window was added. An image left before all its windows came (a rank's share that starts inside
    it) is dropped; after the pass, ``incomplete`` lists those and the one still waiting for windows (a
    share or a pass that ends inside it). One Stitcher per pass: a window added twice, a ``where`` row that
    is no window of its image's pass, or a ``where`` of another length than the outputs is refused
    (ValueError) before anything of that call is added."""

    def __init__(self, patches, channels):
        self._p, self._channels = patches, int(channels)
        if self._channels < 1:
            raise ValueError(f"channels={channels!r}: the outputs' channel count, at least 1")
        self._S = patches.patch_size
        self._current = None  # (image, sum (C,H,W) float64, count (H,W) float64, windows left)
        self._done = {}
        self._completed = set()  # every image completed so far (one Stitcher per pass)
        self._dropped = []

    @property
    def incomplete(self):
        """Images some of whose windows were added but not all (see the class)."""
        return self._dropped + ([self._current[0]] if self._current is not None else [])

    def _start(self, i, device):
        h, w = self._p.image_shape(i)
        total = torch.zeros((self._channels, h, w), dtype=torch.float64, device=device)
        count = torch.zeros((h, w), dtype=torch.float64, device=device)
        self._current = [i, total, count, self._p.windows(i), set()]  # the last: its windows added

    def _finish(self):
        i, total, count = self._current[:3]
        self._done[i] = (total / count.clamp(min=1)).to(torch.float32)
        self._completed.add(i)
        self._current = None
        return i

    def add(self, outputs, where):
        if outputs.dim() != 4 or outputs.shape[1] != self._channels or outputs.shape[2:] != (self._S, self._S):
            raise ValueError(f"outputs of shape {tuple(outputs.shape)}: expected (B, {self._channels}, "
                             f"{self._S}, {self._S})")
        where = torch.as_tensor(where)  # a numpy array or a list of rows as well
        rows = where.tolist() if where.dim() == 2 and where.shape[1] == 3 else None
        if rows is None or len(rows) != outputs.shape[0]:
            raise ValueError(f"where of shape {tuple(where.shape)}: expected ({outputs.shape[0]}, 3), one "
                             f"(image, y, x) per output")
        self._check_windows(rows)
        completed = []
        for q, (i, y, x) in enumerate(rows):
            if self._current is not None and self._current[0] != i:  # left with windows missing
                self._dropped.append(self._current[0])
                self._current = None
            if self._current is None:
                self._start(i, outputs.device)
            total, count = self._current[1], self._current[2]
            h, w = min(self._S, total.shape[1] - y), min(self._S, total.shape[2] - x)
            total[:, y:y + h, x:x + w] += outputs[q, :, :h, :w].to(torch.float64)
            count[y:y + h, x:x + w] += 1
            self._current[3] -= 1
            self._current[4].add((y, x))
            if self._current[3] == 0:
                completed.append(self._finish())
        return completed

    def _check_windows(self, rows):
        """Refuses, before anything is added, a row that is not a window of its image's pass or a window
        added twice (either would leave a map silently wrong)."""
        image = self._current[0] if self._current is not None else None
        seen = set(self._current[4]) if self._current is not None else set()
        stride = self._S - self._p.overlap
        for i, y, x in rows:
            if not 0 <= i < self._p.image_count:
                raise ValueError(f"where names image {i}: the file has {self._p.image_count}")
            if i != image:
                image, seen = i, set()
            h, w = self._p.image_shape(i)
            if not (_is_window(y, h, self._S, stride) and _is_window(x, w, self._S, stride)):
                raise ValueError(f"({i}, {y}, {x}) is not a window of image {i} ({h} x {w}, size {self._S}, "
                                 f"overlap {self._p.overlap})")
            if (y, x) in seen or i in self._completed:
                raise ValueError(f"window ({i}, {y}, {x}) added twice" +
                                 (f" (image {i} was completed already)" if i in self._completed else ""))
            seen.add((y, x))

    def result(self, i):
        """Image I's (C, H, W) map (once all its windows were added), handed over: the Stitcher forgets it."""
        if i not in self._done:
            why = ("its map was handed over by an earlier result() already" if i in self._completed
                   else "it is not complete (its windows have not all been added)")
            raise KeyError(f"image {i}: {why}")
        return self._done.pop(i)
