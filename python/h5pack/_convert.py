"""Python values -> h5pack_config fields (sizes with suffixes, names of enums, devices)."""
import re

from . import _lib

_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(value):
    """1073741824, "1G", "1GiB", "512M", "64k", "1.5G" -> bytes (binary units, as h5pack-stats)."""
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"size must not be negative: {value}")
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
    if not m:
        raise ValueError(f"bad size {value!r}: expected a number with an optional K/M/G/T suffix, e.g. '1G'")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def enum_value(table, name, what):
    key = str(name).lower()
    if key not in table:
        raise ValueError(f"bad {what} {name!r}: expected one of {', '.join(sorted(table))}")
    return table[key]


def parse_device(device):
    """"auto", "cpu", "cuda", "cuda:1" (or a torch.device) -> (h5pack_device value, gpu id)."""
    text = str(device).lower()
    m = re.fullmatch(r"cuda:(\d+)", text)
    if m:
        return _lib.DEVICES["cuda"], int(m.group(1))
    return enum_value(_lib.DEVICES, text, "device"), 0


def set_norm(cfg, norm, channels_hint=_lib.MAX_CHANNELS):
    """norm: "imagenet" (default), "file", "none", or (mean, std) sequences in [0,1] units."""
    if norm is None:
        norm = "imagenet"
    if isinstance(norm, str):
        cfg.norm = enum_value(_lib.NORMS, norm, "norm")
        return
    try:
        mean, std = norm
        mean, std = [float(x) for x in mean], [float(x) for x in std]
    except (TypeError, ValueError):
        raise ValueError("norm must be 'imagenet', 'file', 'none' or a (mean, std) pair of sequences") from None
    if not (1 <= len(mean) <= channels_hint and len(mean) == len(std)) or any(s <= 0 for s in std):
        raise ValueError(f"norm=(mean, std) needs 1..{channels_hint} values each, std > 0; got {norm!r}")
    cfg.norm = _lib.NORMS["custom"]
    for i in range(len(mean)):
        cfg.mean[i], cfg.std[i] = mean[i], std[i]


def _size_pair(value, what):
    """224 -> (224, 224); (h, w) -> (h, w); None -> (0, 0) (the library's default)."""
    if value is None:
        return 0, 0
    if isinstance(value, int):
        value = (value, value)
    try:
        h, w = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an int or an (height, width) pair, got {value!r}") from None
    if h < 1 or w < 1:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return h, w


def _range_pair(value, what):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a (min, max) pair, got {value!r}") from None
    if not 0 < lo <= hi:
        raise ValueError(f"{what} must satisfy 0 < min <= max, got {value!r}")
    return lo, hi


def set_crop(cfg, crop, output_size, max_output_size, scale, ratio, center_ratio):
    """crop: None / "none", "random_resized", "center"; output_size int or (h, w) (None: the stored size);
    max_output_size: the largest size set_output_size() may choose later (None: output_size)."""
    cfg.crop = enum_value(_lib.CROPS, "none" if crop is None else crop, "crop")
    if cfg.crop == _lib.CROPS["none"] and (output_size is not None or max_output_size is not None):
        raise ValueError("output_size / max_output_size need crop='random_resized' or crop='center'")
    cfg.output_height, cfg.output_width = _size_pair(output_size, "output_size")
    cfg.max_output_height, cfg.max_output_width = _size_pair(max_output_size, "max_output_size")
    cfg.scale_min, cfg.scale_max = _range_pair(scale, "scale")
    cfg.ratio_min, cfg.ratio_max = _range_pair(ratio, "ratio")
    if not 0 < float(center_ratio) <= 1:
        raise ValueError(f"center_ratio must be in (0, 1], got {center_ratio!r}")
    cfg.center_ratio = float(center_ratio)
