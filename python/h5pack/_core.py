"""What every front-end (PyTorch, NumPy, JAX, TensorFlow) shares and none of them imports a framework for:
the loaded library, its errors as exceptions, opening a reader, the default config."""
import ctypes
import importlib
import os
import re

from . import _lib, _params

_LIB = None


def lib():
    """The loaded libh5pack (loaded on first use, so `import h5pack` works before a build)."""
    global _LIB
    if _LIB is None:
        _LIB = _lib.load()
    return _LIB


def loaded():
    """The library if it was loaded already, else None (for finalisers: they must not load it)."""
    return _LIB


class H5packError(RuntimeError):
    """A libh5pack failure: .code is the negative h5pack_error code, the message has the library's detail."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class H5packValueError(H5packError, ValueError):
    """H5PACK_EINVAL: a value the library refused (it names the field); a ValueError as well, so bad
    options raise ValueError whether Python or the library catches them."""


def reader_error(code, reader, what):
    """The exception for CODE, with the library's detail for READER (h5pack_last_error)."""
    return error_from(code, (lib().h5pack_last_error(reader) or b"").decode(errors="replace"), what)


def error_from(code, detail, what):
    """The exception for CODE: "WHAT: " then the library's DETAIL (its generic text when there is none);
    refused values (EINVAL) as H5packValueError, named by the keywords the user wrote."""
    generic = lib().h5pack_strerror(code).decode()
    text = detail or generic
    if code == _lib.EINVAL:
        for param, keyword in _params.LIBRARY_NAMES.items():
            text = re.sub(rf"\b{param}\b", keyword, text)
    cls = H5packValueError if code == _lib.EINVAL else H5packError
    return cls(code, f"{what}: {text}" if text.startswith(generic) else f"{what}: {generic}: {text}")


def file_identity(path):
    """What tells a local file from another put under its name (device, inode, size, modification time);
    None for a location that is not a local path (mem://, URLs) or that cannot be stat'ed."""
    path = os.fspath(path)
    if "://" in path:
        path = path[7:] if path.startswith("file://") else None
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_same_file(path, identity, what):
    """Raises H5packError when PATH is no longer the file IDENTITY (file_identity) described: a later open
    would read another file's bytes under the same name (replaced, rewritten, truncated)."""
    now = file_identity(path)
    if identity is None or now == identity:
        return
    how = ("replaced by another file" if now is None or now[:2] != identity[:2] else
           f"resized from {identity[2]} to {now[2]} bytes" if now[2] != identity[2] else "rewritten")
    raise H5packError(_lib.ECORRUPT, f"{what}: {os.fspath(path)}: the file changed since it was first opened "
                      f"({how}); open a new loader to read the new file")


def open_reader(path, cfg, caller="h5pack.Loader"):
    reader = ctypes.c_void_p()
    rc = lib().h5pack_open(os.fsencode(path), ctypes.byref(cfg), ctypes.byref(reader))
    if rc < 0:
        detail = (lib().h5pack_last_error(reader) or b"").decode(errors="replace")
        named = os.fspath(path) in detail  # the library's detail names the file: once is enough
        err = reader_error(rc, reader, caller if named else f"{caller}: {os.fspath(path)}")
        lib().h5pack_close(reader)
        raise err
    return reader


def default_config():
    """h5pack_config with the library's defaults (H5PACK_CONFIG_DEFAULTS)."""
    library = lib()  # builds _lib.Config from the library's parameter table
    cfg = _lib.Config()
    rc = library.h5pack_config_init(ctypes.byref(cfg))
    if rc < 0:
        raise reader_error(rc, None, "h5pack_config_init")
    return cfg


def version():
    return lib().h5pack_version_string().decode()


def framework(module, front_end, install):
    """MODULE imported for FRONT_END, or ImportError saying what to INSTALL (each front-end imports its
    framework only when it is used)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{front_end} needs {module} ({e}): {install}") from None
