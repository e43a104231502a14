"""A file's string datasets (classes, filenames, label_names) without h5py, through h5pack_read_strings."""
import collections.abc
import ctypes
import os

from . import _lib
from ._core import check_same_file, error_from, file_identity, lib


def read_strings(path, dataset, start=0, count=None, guess=64):
    """Rows [START, START + COUNT) (COUNT None: to the end) of the string dataset DATASET as a list of str;
    None when the file has no such dataset. One library call when GUESS bytes per row suffice, else two."""
    rows, needed = ctypes.c_uint64(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(1024)
    count = (1 << 64) - 1 if count is None else int(count)
    args = (os.fsencode(path), dataset.encode(), int(start), count)
    size = max(1, min(count, 1 << 16) * guess)
    for _ in range(2):
        out = ctypes.create_string_buffer(size)
        rc = lib().h5pack_read_strings(*args, out, len(out), ctypes.byref(rows), ctypes.byref(needed), err, len(err))
        if rc == _lib.ENOTFOUND and os.path.exists(path) and "no dataset" in err.value.decode(errors="replace"):
            return None
        if rc < 0:
            raise error_from(rc, err.value.decode(errors="replace"), f"h5pack.info: {dataset}")
        if needed.value <= size:
            raw = out.raw[:needed.value]
            return [s.decode("utf-8", errors="replace") for s in raw.split(b"\0")[:-1]]
        size = needed.value
    raise RuntimeError(f"{path}: {dataset}: its size changed while it was read")


def row_count(path, dataset):
    rows, needed = ctypes.c_uint64(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(1024)
    rc = lib().h5pack_read_strings(os.fsencode(path), dataset.encode(), 0, 0, None, 0, ctypes.byref(rows),
                                   ctypes.byref(needed), err, len(err))
    return int(rows.value) if rc == 0 else None


class Names(collections.abc.Sequence):
    """The rows of a string dataset, read on demand in blocks (1.28M file names need not all be in memory
    for a look at a few): len(), [i], slices, iteration."""

    _BLOCK = 4096

    def __init__(self, path, dataset, rows):
        self.path, self.dataset, self._rows = os.fspath(path), dataset, rows
        self._block, self._cached = None, []
        self._file = file_identity(self.path)  # rows read later must come from this very file

    def __len__(self):
        return self._rows

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._rows)
            if step == 1:
                check_same_file(self.path, self._file, f"h5pack.info: {self.dataset}")
                return read_strings(self.path, self.dataset, start, max(0, stop - start)) or []
            return [self[k] for k in range(start, stop, step)]
        i = int(i) + (self._rows if int(i) < 0 else 0)
        if not 0 <= i < self._rows:
            raise IndexError(f"{self.dataset}[{i}]: {self._rows} rows")
        block = i // self._BLOCK
        if block != self._block:
            check_same_file(self.path, self._file, f"h5pack.info: {self.dataset}")
            self._cached = read_strings(self.path, self.dataset, block * self._BLOCK,
                                        min(self._BLOCK, self._rows - block * self._BLOCK))
            self._block = block
        return self._cached[i - block * self._BLOCK]

    def __eq__(self, other):  # equal names, wherever they were read from (a file, mem://)
        if not isinstance(other, collections.abc.Sequence) or len(other) != len(self):
            return NotImplemented if not isinstance(other, collections.abc.Sequence) else False
        return list(self) == list(other)

    __hash__ = None

    def __repr__(self):
        return f"<{self.dataset} of {self.path}: {self._rows} names>"
