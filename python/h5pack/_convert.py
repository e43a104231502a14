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
