"""ctypes declarations of include/h5pack.h and the search for libh5pack.so.

h5pack_config and the enum names are not written here: load() builds them from the library's parameter
table (h5pack_param_table, reader/api/params.c), checking each field's offset and size against ctypes'
layout. The output structures below mirror the C header field by field; tests/python/test_abi.py
compares all of them with what a C compiler says. Every struct starts with struct_size, set to this
binding's ctypes.sizeof when it is created: the library reads and writes only that many bytes, so the
binding keeps working with a newer libh5pack.
"""
import ctypes
import glob
import os

MAX_CHANNELS = 4

# Enum names -> values, filled by load() from the parameter table (the config field that carries each).
ORDERS, DEVICES, DTYPES, LAYOUTS, NORMS, CROPS, ECHO_MODES, PATCH_MODES = {}, {}, {}, {}, {}, {}, {}, {}
_ENUM_FIELDS = {"order": ORDERS, "device": DEVICES, "dtype": DTYPES, "output_layout": LAYOUTS, "norm": NORMS,
                "crop": CROPS, "echo_mode": ECHO_MODES, "patch_mode": PATCH_MODES}
OK, END, EINVAL, ESTATE, EINTERNAL = 0, 1, -1, -10, -11

_c_size = ctypes.c_size_t
_u64, _u32, _i64 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int64
_floats = ctypes.c_float * MAX_CHANNELS


class _Sized(ctypes.Structure):
    """A public struct of h5pack.h: struct_size (its first field) is set on creation."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.struct_size = ctypes.sizeof(self)


class Param(ctypes.Structure):
    """h5pack_param: one row of the library's parameter table."""
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("offset", _c_size), ("size", _c_size),
                ("min", ctypes.c_double), ("max", ctypes.c_double), ("enum_names", ctypes.c_char_p),
                ("doc", ctypes.c_char_p)]


# h5pack_param_type -> the ctypes type of such a field
_PARAM_CTYPES = (_c_size, _u32, _u64, ctypes.c_int, ctypes.c_int, ctypes.c_double, _floats, ctypes.c_char_p,
                 ctypes.c_void_p)
Config = None  # h5pack_config, built by load() from the library's table


def _read_params(lib):
    fn = lib.h5pack_param_table
    fn.restype, fn.argtypes = ctypes.POINTER(Param), [ctypes.POINTER(_c_size)]
    n = _c_size(0)
    table = fn(ctypes.byref(n))
    return [table[i] for i in range(n.value)]


_CONFIG_TYPES = {}  # one class per layout: a second load() of the same library must not make another type


def _config_type(params):
    """The ctypes h5pack_config of this table; ImportError when ctypes would lay a field out elsewhere."""
    fields = [("struct_size", _c_size)] + [(p.name.decode(), _PARAM_CTYPES[p.type]) for p in params]
    key = tuple((p.name, p.type, p.offset, p.size) for p in params)
    if key in _CONFIG_TYPES:
        return _CONFIG_TYPES[key]
    cls = type("Config", (_Sized,), {"_fields_": fields})
    for p in params:
        f = getattr(cls, p.name.decode())
        if f.offset != p.offset or f.size != p.size:
            raise ImportError(f"h5pack: config field {p.name.decode()} at {f.offset} ({f.size} bytes) here, "
                              f"{p.offset} ({p.size}) in the library")
    _CONFIG_TYPES[key] = cls
    return cls


def _publish(params, config):
    """Makes CONFIG and the table's enum names this module's."""
    global Config
    Config = STRUCTS["h5pack_config"] = config
    for p in params:
        name = p.name.decode()
        if name in _ENUM_FIELDS:
            _ENUM_FIELDS[name].clear()
            _ENUM_FIELDS[name].update({n: v for v, n in enumerate(p.enum_names.decode().split(","))})


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
        ("several_sizes", ctypes.c_int),
        ("patch_size", _u32),
        ("tile", _u32),
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
        ("where", ctypes.c_void_p),
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


STRUCTS = {"h5pack_config": None, "h5pack_info": Info, "h5pack_batch": Batch, "h5pack_stats": Stats}
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


def _declare(lib, config):
    P = ctypes.POINTER
    sigs = {
        "h5pack_version_string": (ctypes.c_char_p, []),
        "h5pack_strerror": (ctypes.c_char_p, [ctypes.c_int]),
        "h5pack_config_init": (ctypes.c_int, [P(config)]),
        "h5pack_open": (ctypes.c_int, [ctypes.c_char_p, P(config), P(ctypes.c_void_p)]),
        "h5pack_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
        "h5pack_timeline_path": (ctypes.c_char_p, [ctypes.c_void_p]),
        "h5pack_info_get": (ctypes.c_int, [ctypes.c_void_p, P(Info)]),
        "h5pack_next": (ctypes.c_int, [ctypes.c_void_p, P(Batch)]),
        "h5pack_release": (ctypes.c_int, [ctypes.c_void_p, P(Batch)]),
        "h5pack_set_output_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
        "h5pack_stats_get": (ctypes.c_int, [ctypes.c_void_p, P(Stats)]),
        "h5pack_image_shape": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint64, P(ctypes.c_uint32),
                                              P(ctypes.c_uint32)]),
        "h5pack_close": (None, [ctypes.c_void_p]),
        "h5pack_trim": (None, []),
        "h5pack_read_image": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_uint64, P(ctypes.c_uint8), _c_size,
                                             P(ctypes.c_uint64), ctypes.c_char_p, _c_size]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _check_config_layout(lib, config):
    """Cheap guard against a header/binding mismatch: the library's defaults must land where expected."""
    cfg = config()
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
            lib = ctypes.CDLL(path)
            params = _read_params(lib)
            config = _config_type(params)
            _declare(lib, config)
            _check_config_layout(lib, config)
        except (OSError, AttributeError, ImportError) as e:
            # AttributeError: a symbol missing; ImportError: another layout (a stale build tree): try the next.
            errors.append(f"{path}: {e}")
            continue
        lib.path_ = path
        _publish(params, config)
        return lib
    raise ImportError("h5pack: cannot load libh5pack.so (build the project, or set H5PACK_LIBRARY to the "
                      "library's path); tried:\n  " + "\n  ".join(errors or ["(no candidate found)"]))
