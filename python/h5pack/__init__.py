"""h5pack: stream shuffled, normalised batches from h5pack HDF5 files into PyTorch, NumPy, JAX and
TensorFlow, without copies.

    import h5pack
    loader = h5pack.Loader("train.h5", batch_size=256, cache="2G", device="auto")   # PyTorch
    for epoch in range(10):
        for images, labels in loader:      # float32 (B,C,H,W) and int64 (B,), on the reader's device
            train_step(images, labels)
    print(loader.stats()["hit_rate"])

    h5pack.numpy.Loader(...)   numpy arrays          h5pack.jax.Loader(...)   jax.Arrays (sharded too)
    h5pack.tf.dataset(...)     a tf.data.Dataset for model.fit (MirroredStrategy too)

`import h5pack` needs numpy alone: torch, jax and tensorflow are imported when their front-end is first
used. A thin ctypes layer over libh5pack.so (include/h5pack.h): set PYTHONPATH to this folder's parent after
a build; the library is found in the build tree, the install prefix or through $H5PACK_LIBRARY.
See docs/python.md and docs/frameworks.md.
"""
import importlib

from ._core import H5packError, H5packValueError, lib, version
from ._convert import parse_size
from ._images import read_image
from ._info import info
from ._shuffle import ShuffleWarning

__all__ = ["Loader", "Patches", "Stitcher", "H5packError", "H5packValueError", "info", "version", "parse_size",
           "read_image", "trim", "lib", "numpy", "jax", "tf", "ShuffleWarning"]

# name -> (module, attribute or None for the module itself): imported on first use, so that a framework
# is imported only by the user who asks for its front-end
_LAZY = {"Loader": (".loader", "Loader"), "Patches": (".patches", "Patches"), "Stitcher": (".patches", "Stitcher"),
         "numpy": (".numpy", None), "jax": (".jax", None), "tf": (".tf", None)}


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
    if name in _LAZY:
        module_name, attribute = _LAZY[name]
        module = importlib.import_module(module_name, __name__)
        value = module if attribute is None else getattr(module, attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
