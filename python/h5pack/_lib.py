"""ctypes declarations of include/h5pack.h and the search for libh5pack.so.

The structures below mirror the C header field by field; tests/python/test_abi.py compares their sizes
and offsets with what a C compiler says, so a change in the header that is not repeated here fails a test.
Every struct starts with struct_size, set to this binding's ctypes.sizeof when it is created: the library
reads and writes only that many bytes, so the binding keeps working with a newer libh5pack.
"""
import ctypes
import glob
import os

MAX_CHANNELS = 4

# Enum values, as in include/h5pack.h.
ORDERS = {"sequential": 0, "random": 1, "chunk": 2}
DEVICES = {"auto": 0, "cpu": 1, "cuda": 2}
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2, "uint8": 3}
LAYOUTS = {"nchw": 0, "nhwc": 1, "auto": 2}
NORMS = {"imagenet": 0, "file": 1, "custom": 2, "none": 3}
CROPS = {"none": 0, "random_resized": 1, "center": 2}
ECHO_MODES = {"batch": 0, "sample": 1}
OK, END, EINVAL, ESTATE, EINTERNAL = 0, 1, -1, -10, -11

_c_size = ctypes.c_size_t
_u64, _u32, _i64 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int64
_floats = ctypes.c_float * MAX_CHANNELS


class _Sized(ctypes.Structure):
    """A public struct of h5pack.h: struct_size (its first field) is set on creation."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.struct_size = ctypes.sizeof(self)


class Config(_Sized):
    _fields_ = [
        ("struct_size", _c_size),
        ("images_dataset", ctypes.c_char_p),
        ("labels_dataset", ctypes.c_char_p),
        ("input_layout", ctypes.c_int),
        ("batch_size", _c_size),
        ("cache_bytes", _c_size),
        ("order", ctypes.c_int),
        ("window", _c_size),
        ("seed", _u64),
        ("rank", _u32),
        ("world", _u32),
        ("drop_last", ctypes.c_int),
        ("echo", _u32),
        ("epochs", _u64),
        ("threads", ctypes.c_int),
        ("prefetch", ctypes.c_int),
        ("device", ctypes.c_int),
        ("gpu_id", ctypes.c_int),
        ("device_memory_limit", _c_size),
        ("dtype", ctypes.c_int),
        ("output_layout", ctypes.c_int),
        ("norm", ctypes.c_int),
        ("mean", _floats),
        ("std", _floats),
        ("random_flip", ctypes.c_int),
        ("random_crop_padding", ctypes.c_int),
        ("cuda_stream", ctypes.c_void_p),
        ("crop", ctypes.c_int),
        ("output_height", _u32),
        ("output_width", _u32),
        ("max_output_height", _u32),
        ("max_output_width", _u32),
        ("scale_min", ctypes.c_double),
        ("scale_max", ctypes.c_double),
        ("ratio_min", ctypes.c_double),
        ("ratio_max", ctypes.c_double),
        ("center_ratio", ctypes.c_double),
        ("echo_mode", ctypes.c_int),
        ("start_epoch", _u64),
        ("start_batch", _u64),
        ("start_echo", _u32),
        ("timeline_path", ctypes.c_char_p),
        ("timeline_interval_s", ctypes.c_double),
        ("timeline_append", ctypes.c_int),
    ]


class Info(_Sized):
    _fields_ = [
        ("struct_size", _c_size),
        ("n_samples", _u64),
        ("channels", _u32),
        ("height", _u32),
        ("width", _u32),
        ("input_layout", ctypes.c_int),
        ("output_layout", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("has_labels", ctypes.c_int),
        ("n_classes", _u32),
        ("samples_per_chunk", _u64),
        ("n_chunks", _u64),
        ("chunk_bytes", _u64),
        ("compressed", ctypes.c_int),
        ("fast_path", ctypes.c_int),
        ("cache_chunks", _c_size),
        ("window", _c_size),
        ("threads", ctypes.c_int),
        ("samples_per_epoch", _u64),
        ("batches_per_epoch", _u64),
        ("device", ctypes.c_int),
        ("device_name", ctypes.c_char * 64),
        ("device_bytes", _u64),
        ("pinned_bytes", _u64),
        ("mean", _floats),
        ("std", _floats),
        ("crop", ctypes.c_int),
        ("output_height", _u32),
        ("output_width", _u32),
        ("max_output_height", _u32),
        ("max_output_width", _u32),
        ("echo_mode", ctypes.c_int),
        ("ring_slots", ctypes.c_int),
        ("echo_pool_bytes", _u64),
        ("order_fingerprint", _u64),
        ("label_columns", _u32),
        ("label_rank", ctypes.c_int),
        ("labels_are_float", ctypes.c_int),
    ]


class CropBox(ctypes.Structure):
    _fields_ = [("y", ctypes.c_int32), ("x", ctypes.c_int32), ("height", ctypes.c_int32),
                ("width", ctypes.c_int32), ("flip", ctypes.c_int32)]


class Batch(_Sized):
    _fields_ = [
        ("struct_size", _c_size),
        ("data", ctypes.c_void_p),
        ("labels", ctypes.c_void_p),
        ("labels_device", ctypes.c_void_p),
        ("indices", ctypes.c_void_p),
        ("count", _c_size),
        ("bytes", _c_size),
        ("epoch", _u64),
        ("index", _u64),
        ("echo", _u32),
        ("on_device", ctypes.c_int),
        ("cuda_event", ctypes.c_void_p),
        ("token", _u64),
        ("boxes", ctypes.POINTER(CropBox)),
        ("height", _u32),
        ("width", _u32),
        ("label_columns", _u32),
        ("labels_float", ctypes.c_void_p),
        ("labels_float_device", ctypes.c_void_p),
    ]


class Stats(_Sized):
    _fields_ = [("struct_size", _c_size)] + [(name, _u64) for name in (
        "samples", "batches", "batches_fresh", "batches_echoed", "epochs_completed", "chunk_hits",
        "chunk_misses", "bytes_read", "bytes_inflated", "bytes_needed")] + [(name, ctypes.c_double) for name in (
            "read_amplification", "hit_rate", "elapsed_s", "stall_s", "busy_read_s", "busy_inflate_s",
            "busy_assemble_s", "busy_convert_s", "busy_copy_s")] + [
        ("device_bytes", _u64),
        ("cache_bytes_used", _u64),
    ]


STRUCTS = {"h5pack_config": Config, "h5pack_info": Info, "h5pack_batch": Batch, "h5pack_stats": Stats}
# Array elements the library writes (a batch's boxes): fixed layout, no struct_size; versioned through the
# struct that points at them.
ELEMENTS = {"h5pack_crop_box": CropBox}


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _is_sanitizer_build(build_dir):
    """A library built with ASan/TSan cannot be loaded into a plain python3: skip those build trees."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("H5PACK_SANITIZE:"):
                    return line.split("=", 1)[1].strip() != ""
    except OSError:
        pass
    return False


def _build_tree_candidates():
    """python/h5pack/ -> the source root; build/ first, then other build*/ folders, newest first."""
    root = os.path.dirname(os.path.dirname(_package_dir()))
    found = []
    for build in glob.glob(os.path.join(root, "build*")):
        lib = os.path.join(build, "reader", "libh5pack.so")
        if os.path.isfile(lib) and not _is_sanitizer_build(build):
            found.append(lib)
    found.sort(key=lambda p: (os.path.basename(os.path.dirname(os.path.dirname(p))) != "build",
                              -os.path.getmtime(p)))
    return found


def _install_candidates():
    """Installed layout: <libdir>/h5pack/python/h5pack/ (see cmake/install.cmake): look a few levels up."""
    out, d = [], _package_dir()
    for _ in range(4):
        d = os.path.dirname(d)
        out += [os.path.join(d, "libh5pack.so.0"), os.path.join(d, "libh5pack.so")]
    return [p for p in out if os.path.isfile(p)]


def _package_candidates():
    """pip install . puts the package's own libh5pack.so beside its modules (cmake/wheel.cmake)."""
    own = os.path.join(_package_dir(), "libh5pack.so")
    return [own] if os.path.isfile(own) else []


def library_candidates():
    env = os.environ.get("H5PACK_LIBRARY")
    if env:
        return [env]
    return _package_candidates() + _build_tree_candidates() + _install_candidates() + ["libh5pack.so.0"]


def _declare(lib):
    P = ctypes.POINTER
    sigs = {
        "h5pack_version_string": (ctypes.c_char_p, []),
        "h5pack_strerror": (ctypes.c_char_p, [ctypes.c_int]),
        "h5pack_config_init": (ctypes.c_int, [P(Config)]),
        "h5pack_open": (ctypes.c_int, [ctypes.c_char_p, P(Config), P(ctypes.c_void_p)]),
        "h5pack_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
        "h5pack_timeline_path": (ctypes.c_char_p, [ctypes.c_void_p]),
        "h5pack_info_get": (ctypes.c_int, [ctypes.c_void_p, P(Info)]),
        "h5pack_next": (ctypes.c_int, [ctypes.c_void_p, P(Batch)]),
        "h5pack_release": (ctypes.c_int, [ctypes.c_void_p, P(Batch)]),
        "h5pack_set_output_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
        "h5pack_stats_get": (ctypes.c_int, [ctypes.c_void_p, P(Stats)]),
        "h5pack_close": (None, [ctypes.c_void_p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _check_config_layout(lib):
    """Cheap guard against a header/binding mismatch: the library's defaults must land where expected."""
    cfg = Config()
    if lib.h5pack_config_init(ctypes.byref(cfg)) != OK:
        raise ImportError("h5pack: h5pack_config_init refused this binding's h5pack_config: "
                          + (lib.h5pack_last_error(None) or b"").decode(errors="replace"))
    expected = (cfg.batch_size == 256 and cfg.cache_bytes == 1 << 30 and cfg.world == 1 and cfg.echo == 1
                and cfg.prefetch == 4 and list(cfg.std) == [1.0] * MAX_CHANNELS and not cfg.cuda_stream)
    if not expected:
        raise ImportError("h5pack: the loaded libh5pack does not match this binding's h5pack_config layout")


def load():
    """Loads libh5pack: $H5PACK_LIBRARY, else the package's own (pip install), the build tree, the install
    prefix, the system loader."""
    errors = []
    for path in library_candidates():
        try:
            lib = _declare(ctypes.CDLL(path))
            _check_config_layout(lib)
        except (OSError, AttributeError, ImportError) as e:
            # AttributeError: a symbol missing; ImportError: another layout (a stale build tree): try the next.
            errors.append(f"{path}: {e}")
            continue
        lib.path_ = path
        return lib
    raise ImportError("h5pack: cannot load libh5pack.so (build the project, or set H5PACK_LIBRARY to the "
                      "library's path); tried:\n  " + "\n  ".join(errors or ["(no candidate found)"]))
