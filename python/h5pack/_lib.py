"""ctypes declarations of include/h5pack.h and the search for libh5pack.so.

No struct of the library is written here field by field: load() builds h5pack_config and the enum names
from the library's parameter table (h5pack_param_table, reader/api/params.c), and h5pack_info,
h5pack_batch, h5pack_stats, h5pack_file_desc and h5pack_crop_box from its field tables
(h5pack_struct_fields, reader/api/api_structs.c), checking each field's offset and size against ctypes'
layout; tests/python/test_abi.py compares them with what a C compiler says of the header. Every struct
starts with struct_size, set to its ctypes.sizeof when it is created: the library reads and writes only
that many bytes.
"""
import collections
import ctypes
import glob
import os

MAX_CHANNELS = 4

# Enum names -> values, filled by load() from the parameter table (the config field that carries each).
ORDERS, DEVICES, DTYPES, LAYOUTS, NORMS, CROPS, ECHO_MODES, PATCH_MODES = {}, {}, {}, {}, {}, {}, {}, {}
MASK_DTYPES = {}
_ENUM_FIELDS = {"order": ORDERS, "device": DEVICES, "dtype": DTYPES, "output_layout": LAYOUTS, "norm": NORMS,
                "crop": CROPS, "echo_mode": ECHO_MODES, "patch_mode": PATCH_MODES, "mask_dtype": MASK_DTYPES}
# bytes per element of each output dtype, by name (the table gives the names and values)
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "uint8": 1}


def dtype_name(value):
    """The name of the h5pack_dtype VALUE."""
    for name, v in DTYPES.items():
        if v == value:
            return name
    raise KeyError(value)


def dtype_bytes(value):
    """Bytes per element of the h5pack_dtype VALUE."""
    return _DTYPE_BYTES[dtype_name(value)]


OK, END, EINVAL, ECORRUPT, ENOTFOUND, ESTATE, EINTERNAL = 0, 1, -1, -6, -7, -10, -11

_c_size = ctypes.c_size_t
_u64, _u32 = ctypes.c_uint64, ctypes.c_uint32
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


# h5pack_param_type, in its order: the kind of a parameter, and the ctypes type of such a field
PARAM_KINDS = ("size", "u32", "u64", "int", "enum", "double", "floats", "string", "pointer")
_PARAM_CTYPES = (_c_size, _u32, _u64, ctypes.c_int, ctypes.c_int, ctypes.c_double, _floats, ctypes.c_char_p,
                 ctypes.c_void_p)
Config = None  # h5pack_config, built by load() from the library's table
# A row of the table as plain values: kind from PARAM_KINDS, enum_names a tuple (enums) or None.
ParamRow = collections.namedtuple("ParamRow", "name kind offset size min max enum_names doc")
PARAMS = {}  # parameter name -> ParamRow, filled by load()


def _read_params(lib):
    fn = lib.h5pack_param_table
    fn.restype, fn.argtypes = ctypes.POINTER(Param), [ctypes.POINTER(_c_size)]
    n = _c_size(0)
    table = fn(ctypes.byref(n))
    return [ParamRow(p.name.decode(), PARAM_KINDS[p.type], p.offset, p.size, p.min, p.max,
                     tuple(p.enum_names.decode().split(",")) if p.enum_names else None, p.doc.decode())
            for p in (table[i] for i in range(n.value))]


_CONFIG_TYPES = {}  # one class per layout: a second load() of the same library must not make another type


def _config_type(params):
    """The ctypes h5pack_config of this table; ImportError when ctypes would lay a field out elsewhere."""
    fields = [("struct_size", _c_size)] + [(p.name, _PARAM_CTYPES[PARAM_KINDS.index(p.kind)]) for p in params]
    key = tuple(params)
    if key in _CONFIG_TYPES:
        return _CONFIG_TYPES[key]
    cls = type("Config", (_Sized,), {"_fields_": fields})
    for p in params:
        f = getattr(cls, p.name)
        if f.offset != p.offset or f.size != p.size:
            raise ImportError(f"h5pack: config field {p.name} at {f.offset} ({f.size} bytes) here, "
                              f"{p.offset} ({p.size}) in the library")
    _CONFIG_TYPES[key] = cls
    return cls


def _publish(params, config):
    """Makes CONFIG, the table's rows and its enum names this module's."""
    global Config
    Config = STRUCTS["h5pack_config"] = config
    PARAMS.clear()
    PARAMS.update({p.name: p for p in params})
    for p in params:
        if p.name in _ENUM_FIELDS:
            _ENUM_FIELDS[p.name].clear()
            _ENUM_FIELDS[p.name].update({n: v for v, n in enumerate(p.enum_names)})


class StructField(ctypes.Structure):
    """h5pack_struct_field: one field of another public struct (h5pack_struct_fields)."""
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_char_p), ("offset", _c_size), ("size", _c_size)]


# The C types h5pack_struct_fields names -> ctypes (pointers are addresses, enums ints; "T[N]" an array).
_FIELD_CTYPES = {"size_t": _c_size, "uint64_t": _u64, "uint32_t": _u32, "int": ctypes.c_int,
                 "int32_t": ctypes.c_int32, "double": ctypes.c_double, "float": ctypes.c_float, "char": ctypes.c_char}


def _field_ctype(c_type):
    if c_type.endswith("*"):
        return ctypes.c_void_p
    if c_type.endswith("]"):
        element, count = c_type[:-1].split("[")
        return _field_ctype(element) * int(count)
    if c_type.startswith("h5pack_"):  # an h5pack enum
        return ctypes.c_int
    return _FIELD_CTYPES[c_type]


def _read_fields(lib, struct_name):
    fn = lib.h5pack_struct_fields
    fn.restype, fn.argtypes = ctypes.POINTER(StructField), [ctypes.c_char_p, ctypes.POINTER(_c_size)]
    n = _c_size(0)
    rows = fn(struct_name.encode(), ctypes.byref(n))
    if not n.value:
        raise ImportError(f"h5pack: the library describes no {struct_name}")
    return [(rows[i].name.decode(), rows[i].type.decode(), rows[i].offset, rows[i].size) for i in range(n.value)]


_STRUCT_TYPES = {}  # one class per layout, as for Config


def _struct_type(lib, struct_name, base):
    """The ctypes copy of STRUCT_NAME as the library lays it out; ImportError when ctypes would place a
    field elsewhere."""
    rows = _read_fields(lib, struct_name)
    key = (struct_name, tuple(rows))
    if key not in _STRUCT_TYPES:
        cls = type(struct_name, (base,), {"_fields_": [(name, _field_ctype(t)) for name, t, _, _ in rows]})
        for name, t, offset, size in rows:
            f = getattr(cls, name)
            if f.offset != offset or f.size != size:
                raise ImportError(f"h5pack: {struct_name}.{name} ({t}) at {f.offset} ({f.size} bytes) here, "
                                  f"{offset} ({size}) in the library")
        _STRUCT_TYPES[key] = cls
    return _STRUCT_TYPES[key]


# The public structs the binding uses, built by load() from the library's field tables (h5pack_struct_fields):
# name -> the base class (a struct starting with struct_size, or a plain array element).
_STRUCT_BASES = {"h5pack_info": _Sized, "h5pack_batch": _Sized, "h5pack_stats": _Sized, "h5pack_file_desc": _Sized,
                 "h5pack_crop_box": ctypes.Structure}
Info = Batch = Stats = FileDesc = CropBox = None
STRUCTS = {"h5pack_config": None, "h5pack_info": None, "h5pack_batch": None, "h5pack_stats": None,
           "h5pack_file_desc": None}
# Array elements the library writes (a batch's boxes): fixed layout, no struct_size; versioned through the
# struct that points at them.
ELEMENTS = {"h5pack_crop_box": None}


def _read_structs(lib):
    return {name: _struct_type(lib, name, base) for name, base in _STRUCT_BASES.items()}


def _publish_structs(structs):
    global Info, Batch, Stats, FileDesc, CropBox
    Info, Batch, Stats = structs["h5pack_info"], structs["h5pack_batch"], structs["h5pack_stats"]
    FileDesc, CropBox = structs["h5pack_file_desc"], structs["h5pack_crop_box"]
    for name, cls in structs.items():
        (ELEMENTS if name in ELEMENTS else STRUCTS)[name] = cls


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


def _declare(lib, config, structs):
    P = ctypes.POINTER
    Info, Batch, Stats = structs["h5pack_info"], structs["h5pack_batch"], structs["h5pack_stats"]
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
        "h5pack_describe": (ctypes.c_int, [ctypes.c_char_p, P(config), P(structs["h5pack_file_desc"]),
                                           ctypes.c_char_p, _c_size]),
        "h5pack_read_strings": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _u64, _u64, ctypes.c_char_p, _c_size,
                                               P(_u64), P(_c_size), ctypes.c_char_p, _c_size]),
        "h5pack_detach": (ctypes.c_int, [ctypes.c_void_p, P(Batch), P(ctypes.c_void_p), P(ctypes.c_int)]),
        "h5pack_detached_data": (ctypes.c_void_p, [ctypes.c_void_p]),
        "h5pack_detached_free": (None, [ctypes.c_void_p]),
        "h5pack_dlpack_mark_released": (None, [ctypes.c_void_p]),
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
            config, structs = _config_type(params), _read_structs(lib)
            _declare(lib, config, structs)
            _check_config_layout(lib, config)
        except (OSError, AttributeError, ImportError) as e:
            # AttributeError: a symbol missing; ImportError: another layout (a stale build tree): try the next.
            errors.append(f"{path}: {e}")
            continue
        lib.path_ = path
        _publish(params, config)
        _publish_structs(structs)
        return lib
    raise ImportError("h5pack: cannot load libh5pack.so (build the project, or set H5PACK_LIBRARY to the "
                      "library's path); tried:\n  " + "\n  ".join(errors or ["(no candidate found)"]))
