"""h5pack: stream shuffled, normalised batches from h5pack HDF5 files into PyTorch, without copies.

    import h5pack
    loader = h5pack.Loader("train.h5", batch_size=256, cache="2G", device="auto")
    for epoch in range(10):
        for images, labels in loader:      # float32 (B,C,H,W) and int64 (B,), on the reader's device
            train_step(images, labels)
    print(loader.stats()["hit_rate"])

A thin ctypes layer over libh5pack.so (include/h5pack.h): set PYTHONPATH to this folder's parent after a
build; the library is found in the build tree, the install prefix or through $H5PACK_LIBRARY.
See docs/python.md.
"""
from ._info import info
from .loader import H5packError, H5packValueError, Loader, lib, version
from ._convert import parse_size
from ._images import read_image
from .patches import Patches, Stitcher

__all__ = ["Loader", "Patches", "Stitcher", "H5packError", "H5packValueError", "info", "version", "parse_size", "read_image",
           "trim", "lib"]


def trim():
    """Frees the batch buffers kept from closed loaders (a CPU loader's ring of batches is kept for the next
    one of the same sizes, as torch's caching allocators keep freed blocks; docs/python.md, "Memory").
    H5PACK_NO_KEEP=1 turns keeping off."""
    lib().h5pack_trim()


def __getattr__(name):
    # h5pack.__version__ is the loaded library's version (include/h5pack.h is the one place it is written),
    # asked for on first use so that `import h5pack` works before the library is built.
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
