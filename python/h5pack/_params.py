"""Python keywords -> h5pack_config parameters: the one alias map of h5pack.Loader, h5pack.Patches and
h5pack.info() (docs/python.md; docs/design.md, "A reader parameter").

Each keyword names the parameters it sets and the conversion that turns its value into theirs. Bounds and
enum names come from the library's parameter table only (h5pack_param_table, _lib.PARAMS): a value the
library would refuse as out of range is refused here, before anything is opened (ctypes would wrap
echo=-2 into 4294967294 repeats), in the words of the library's own check (h5pack_params_check) after
the keyword: "echo=0: invalid configuration: echo must be 1 .. 4294967295 (got 0): ...". Values in the
parameter's own unit (plain ints for byte counts, enum names as the table spells them) are accepted
wherever the table accepts them.
"""
import collections
import ctypes
import math
import numbers
import os
import re

from . import _lib, _norm
from ._convert import parse_size

KEEP = object()  # as an alias's `none`: None leaves the parameter at the library's default

# keyword: what the user writes; params: the h5pack_config fields it sets, in the order the conversion
# returns their values; convert: a name in _CONVERSIONS; none: what None stands for (in the keyword's own
# terms), KEEP, or None when None is a value its conversion judges.
Alias = collections.namedtuple("Alias", "keyword params convert none")
ALIASES = (
    Alias("images", ("images_dataset",), "name", None),
    Alias("labels", ("labels_dataset",), "name", ""),
    Alias("input_layout", ("input_layout",), "enum", KEEP),
    Alias("batch_size", ("batch_size",), "plain", KEEP),
    Alias("cache", ("cache_bytes",), "bytes", KEEP),
    Alias("order", ("order",), "enum", KEEP),
    Alias("window", ("window",), "plain", 0),
    Alias("seed", ("seed",), "plain", KEEP),
    Alias("rank", ("rank",), "plain", KEEP),
    Alias("world", ("world",), "plain", KEEP),
    Alias("drop_last", ("drop_last",), "flag", KEEP),
    Alias("echo", ("echo",), "plain", KEEP),
    Alias("epochs", ("epochs",), "plain", (1 << 64) - 1),  # None: H5PACK_EPOCHS_ENDLESS
    Alias("threads", ("threads",), "plain", 0),
    Alias("prefetch", ("prefetch",), "plain", KEEP),
    Alias("device", ("device", "gpu_id"), "device", KEEP),
    Alias("device_memory_limit", ("device_memory_limit",), "bytes", 0),
    Alias("dtype", ("dtype",), "dtype", KEEP),
    Alias("layout", ("output_layout",), "enum", KEEP),
    Alias("norm", ("norm", "mean", "std"), "norm", "imagenet"),
    Alias("flip", ("random_flip",), "flag", KEEP),
    Alias("crop_padding", ("random_crop_padding",), "plain", 0),
    Alias("crop", ("crop",), "enum", "none"),
    Alias("output_size", ("output_height", "output_width"), "size", 0),
    Alias("max_output_size", ("max_output_height", "max_output_width"), "size", 0),
    Alias("scale", ("scale_min", "scale_max"), "range", KEEP),
    Alias("ratio", ("ratio_min", "ratio_max"), "range", KEEP),
    Alias("center_ratio", ("center_ratio",), "real", KEEP),
    Alias("echo_mode", ("echo_mode",), "enum", KEEP),
    Alias("timeline", ("timeline_path",), "path", KEEP),  # None: $H5PACK_TIMELINE, if set
    Alias("timeline_interval", ("timeline_interval_s",), "real", 0),
    Alias("patch", ("patch_size",), "plain", 0),
    Alias("overlap", ("patch_overlap",), "plain", 0),
    Alias("patch_mode", ("patch_mode",), "enum", KEEP),
    Alias("patches_per_epoch", ("patches_per_epoch",), "plain", 0),
    Alias("masks", ("masks_dataset",), "masks", False),
    Alias("mask_dtype", ("mask_dtype",), "mask_dtype", KEEP),
)
BY_KEYWORD = {a.keyword: a for a in ALIASES}
# The keywords that set exactly one parameter: keyword -> parameter (the cross-interface test's map).
KEYWORDS = {a.keyword: a.params[0] for a in ALIASES if len(a.params) == 1}


# ---- bounds: the table's, within what the field can hold ------------------------------------------------

_INT_LIMITS = {"size": (0, (1 << 8 * ctypes.sizeof(ctypes.c_size_t)) - 1), "u32": (0, (1 << 32) - 1),
               "u64": (0, (1 << 64) - 1), "int": (-(1 << 31), (1 << 31) - 1)}


def int_bounds(param):
    """PARAM's inclusive integer bounds: the table's (doubles), clipped to its C type (the table's 2^64 for
    UINT64_MAX is a double's rounding)."""
    row = _lib.PARAMS[param]
    lo, hi = _INT_LIMITS[row.kind]
    return max(lo, math.ceil(row.min)), min(hi, math.floor(row.max))


def _refuse(keyword, shown, param, range_text, got):
    row = _lib.PARAMS[param]
    return ValueError(f"{keyword}={shown!r}: invalid configuration: {param} {range_text} (got {got}): {row.doc}")


def checked(param, value, keyword, shown=None):
    """VALUE (an int, or a float for a double) when PARAM's table row accepts it; else ValueError naming
    KEYWORD (written as SHOWN), PARAM and the range, as the library's check words it."""
    shown = value if shown is None else shown
    row = _lib.PARAMS[param]
    if row.kind == "double":
        if not row.min <= value <= row.max:  # NaN fails too
            raise _refuse(keyword, shown, param, f"must be in [{row.min:g}, {row.max:g}]", f"{value:g}")
        return value
    lo, hi = int_bounds(param)
    if not lo <= value <= hi:
        raise _refuse(keyword, shown, param, f"must be {lo} .. {hi}", value)
    return value


# ---- conversions: a keyword's value -> its parameters' values (KEEP: leave one as it is) ----------------

def _integer(alias, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{alias.keyword}={value!r}: expected an integer")
    return (checked(alias.params[0], int(value), alias.keyword),)


def _flag(alias, value):
    """True/False, or the table's 0/1."""
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "b":  # numpy's bool
        value = bool(value)
    if not isinstance(value, numbers.Integral):
        raise ValueError(f"{alias.keyword}={value!r}: expected True or False")
    return (checked(alias.params[0], int(value), alias.keyword, value),)


def _bytes(alias, value):
    """An int of bytes, or a size such as "512M" (the size rule of h5pack and h5pack-stats)."""
    try:
        n = parse_size(value)
    except ValueError as e:
        raise ValueError(f"{alias.keyword}={value!r}: {e}") from None
    return (checked(alias.params[0], n, alias.keyword, value),)


def _real(alias, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{alias.keyword}={value!r}: expected a number")
    return (checked(alias.params[0], float(value), alias.keyword, value),)


def enum_value(param, name, keyword):
    """NAME (any case) as the value of PARAM's enum, from the table's names."""
    names = _lib.PARAMS[param].enum_names
    key = name.lower() if isinstance(name, str) else None
    if key not in names:
        raise _refuse(keyword, name, param, "must be one of " + "/".join(names), repr(name))
    return names.index(key)


def _enum(alias, value):
    return (enum_value(alias.params[0], value, alias.keyword),)


def _dtype(alias, value):
    """A dtype name, or a framework's dtype of that name: torch.float16, numpy.float16 or np.dtype("float16"),
    jnp.bfloat16, tf.float16."""
    names = _lib.PARAMS["dtype"].enum_names
    text = str(value)
    if text.startswith("torch."):
        if text[6:] not in names:
            raise ValueError(f"dtype={value}: the reader writes torch.float32, float16, bfloat16 or uint8")
        value = text[6:]
    elif not isinstance(value, str):  # numpy / JAX scalar types (__name__), numpy and TF dtypes (.name)
        name = getattr(value, "name", None) or getattr(value, "__name__", None)
        if not isinstance(name, str) or name not in names:
            raise ValueError(f"dtype={value!r}: the reader writes {', '.join(names)}")
        value = name
    return _enum(alias, value)


def _masks(alias, value):
    """True: the dataset h5pack writes ("masks"); False: none; a str: that dataset."""
    if value is True or value is False:
        return (b"masks" if value else b"",)
    return _name(alias, value)


def _mask_dtype(alias, value):
    """"uint8" or "int64", or a framework's dtype of that name (torch.int64, numpy.int64, np.dtype("uint8"))."""
    text = str(value)
    if text.startswith("torch."):
        value = text[6:]
    elif not isinstance(value, str):
        value = getattr(value, "name", None) or getattr(value, "__name__", None) or value
    return _enum(alias, value)


def _name(alias, value):
    if not isinstance(value, str):
        raise ValueError(f"{alias.keyword}={value!r}: expected a dataset name (str)")
    return (value.encode(),)


def _path(alias, value):
    return (os.fsencode(value),)


def _size(alias, value):
    """224 -> (224, 224); (h, w) as they are; each within its parameter's bounds."""
    pair = (value, value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value
    try:
        h, w = pair
    except (TypeError, ValueError):
        raise ValueError(f"{alias.keyword} must be an int or an (height, width) pair, got {value!r}") from None
    for v in (h, w):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{alias.keyword} must be an int or an (height, width) pair, got {value!r}")
    return tuple(checked(p, int(v), alias.keyword, value) for p, v in zip(alias.params, (h, w)))


def output_size(value, keyword):
    """set_output_size's SIZE: as output_size=, but a size to deliver (0, the stored size, is no choice)."""
    h, w = _size(BY_KEYWORD["output_size"]._replace(keyword=keyword), value)
    if h < 1 or w < 1:
        raise ValueError(f"{keyword} must be positive, got {value!r}")
    return h, w


def _range(alias, value):
    """(min, max): each within its parameter's bounds, 0 < min <= max."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{alias.keyword} must be a (min, max) pair, got {value!r}") from None
    lo, hi = (checked(p, v, alias.keyword, value) for p, v in zip(alias.params, (lo, hi)))
    if not 0 < lo <= hi:
        raise ValueError(f"{alias.keyword} must satisfy 0 < min <= max, got {value!r}")
    return lo, hi


def _device(alias, value):
    """"auto", "cpu", "cuda", "cuda:N" (or a torch.device) -> (device, gpu_id)."""
    text = str(value).lower()
    m = re.fullmatch(r"cuda:(\d+)", text)
    if m:
        return enum_value("device", "cuda", alias.keyword), checked("gpu_id", int(m.group(1)), alias.keyword, value)
    return enum_value("device", text, alias.keyword), 0


def _norm_values(alias, value):
    """A name (imagenet, file, none), or the (mean, std) pair that makes the table's "custom": the name
    "custom" alone would normalise with the defaults 0 and 1, i.e. not at all."""
    if isinstance(value, str):
        if value.lower() == "custom":
            raise ValueError(f"{alias.keyword}='custom': give the values instead, norm=(mean, std) in [0, 1] units "
                             f"(e.g. norm=((0.5, 0.5, 0.5), (0.25, 0.25, 0.25)))")
        try:
            return enum_value("norm", value, alias.keyword), KEEP, KEEP
        except ValueError as e:  # the table's names include custom, which the Loader spells as the pair
            e.args = (str(e).replace("imagenet/file/custom/none", "imagenet/file/none or a (mean, std) pair"),)
            raise
    mean, std = _norm.custom(value, _lib.MAX_CHANNELS)
    return enum_value("norm", "custom", alias.keyword), mean, std


_CONVERSIONS = {"plain": _integer, "flag": _flag, "bytes": _bytes, "real": _real, "enum": _enum, "dtype": _dtype,
                "name": _name, "path": _path, "size": _size, "range": _range, "device": _device,
                "norm": _norm_values, "masks": _masks, "mask_dtype": _mask_dtype}


def values_of(keyword, value):
    """{parameter: value} that KEYWORD=VALUE sets (checked against the table); {} when None keeps them."""
    alias = BY_KEYWORD[keyword]
    if value is None and alias.none is not None:
        if alias.none is KEEP:
            return {}
        value = alias.none
    out = _CONVERSIONS[alias.convert](alias, value)
    return {p: v for p, v in zip(alias.params, out) if v is not KEEP}


def configure(cfg, given):
    """Sets CFG's parameters from GIVEN (keyword -> value as the caller wrote it; keywords left out keep
    CFG's values): every keyword checked against the table first, then the rules between keywords."""
    for keyword, value in given.items():
        for param, v in values_of(keyword, value).items():
            if isinstance(v, list):  # mean, std
                getattr(cfg, param)[:] = v
            else:
                setattr(cfg, param, v)
    _check_together(cfg, given)


def _check_together(cfg, given):
    """Rules between keywords, said in their terms (the library checks them too, in its own)."""
    if cfg.crop == _lib.CROPS["none"] and (cfg.output_height or cfg.output_width or cfg.max_output_height
                                           or cfg.max_output_width):
        raise ValueError("output_size / max_output_size need crop='random_resized' or crop='center'")
    if ((cfg.max_output_height and cfg.max_output_height < cfg.output_height)
            or (cfg.max_output_width and cfg.max_output_width < cfg.output_width)):
        raise ValueError(f"max_output_size={given['max_output_size']!r} is smaller than output_size="
                         f"{given['output_size']!r}: it is the largest size set_output_size() may choose "
                         f"later, at least output_size")
    if not cfg.patch_size:
        if cfg.patch_overlap or given.get("patch_mode") is not None or cfg.patches_per_epoch:
            raise ValueError("overlap / patch_mode / patches_per_epoch need patch=S (patches of S x S)")
        return
    if cfg.patch_overlap and cfg.patch_mode == _lib.PATCH_MODES["random"]:
        raise ValueError("overlap is for patch_mode='sliding' (random patches are drawn anywhere)")
    if cfg.patch_overlap >= cfg.patch_size:
        raise ValueError(f"overlap={cfg.patch_overlap}: at most patch - 1 = {cfg.patch_size - 1} (neighbouring "
                         f"windows must move)")


# The library's messages name h5pack_config fields; a Python user wrote the keywords (loader._error).
LIBRARY_NAMES = {param: keyword for keyword, param in KEYWORDS.items() if keyword != param}
