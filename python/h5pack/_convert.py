"""Python values -> h5pack_config fields (sizes with suffixes, names of enums, devices)."""
import numbers
import re

from . import _lib

# The size rule, mirrored line for line from common/sizes.c (docs/reader.md, "Sizes and counts"):
# K, M, G, T are powers of 1024, with or without B or iB, in any case; a plain number is bytes; a
# fraction needs a unit and is rounded down. tests/python/test_sizes.py runs tests/common/sizes.txt, the
# table the C parser's test runs, through this.
SIZE_MAX_DECIMALS = 9
_UNIT_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4}
_U64_MAX = (1 << 64) - 1


class SizeError(ValueError):
    """A size or count that breaks the rule; .kind is the C parser's word for it."""

    def __init__(self, value, kind, why):
        super().__init__(f"bad size {value!r}: {why}")
        self.kind = kind


def _unit_power(s):
    """sizes.c unit_power: "" or "B" 0, "K" "KB" "KiB" 1 ... "T..." 4 (any case); None unknown."""
    low = s.lower()
    if low in ("", "b"):
        return 0
    if low[0] in _UNIT_POWERS and low[1:] in ("", "b", "ib"):
        return _UNIT_POWERS[low[0]]
    return None


def _take_digits(s, i):
    j = i
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    return j


def parse_size_text(text):
    """h5pack_parse_size: "4096", "64K", "1.5GiB", "2t", "100B" -> int; SizeError otherwise."""
    if text == "":
        raise SizeError(text, "empty", "empty value")
    if text[0] == "-":
        raise SizeError(text, "negative", "a negative number")
    if not "0" <= text[0] <= "9":
        raise SizeError(text, "syntax", "not a number (no sign or space before the digits)")
    i = _take_digits(text, 0)
    whole, frac_digits = int(text[:i]), ""
    if whole > _U64_MAX:
        raise SizeError(text, "overflow", "too large (the limit is 2^64-1)")
    if i < len(text) and text[i] == ".":
        j = _take_digits(text, i + 1)
        if j == i + 1:
            raise SizeError(text, "syntax", "expected digits after the decimal point")
        frac_digits, i = text[i + 1:j], j
        if int(frac_digits) > _U64_MAX or len(frac_digits) > SIZE_MAX_DECIMALS:
            raise SizeError(text, "fraction", f"at most {SIZE_MAX_DECIMALS} digits after the decimal point")
    power = _unit_power(text[i:])
    if power is None:
        raise SizeError(text, "suffix",
                        f"unknown suffix {text[i:]!r} (use K, M, G or T, optionally followed by B or iB)")
    if frac_digits and power == 0:
        raise SizeError(text, "fraction", "a fraction needs a unit (K, M, G or T)")
    scale = 1 << (10 * power)
    value = whole * scale + (int(frac_digits) * scale // 10 ** len(frac_digits) if frac_digits else 0)
    if value > _U64_MAX:
        raise SizeError(text, "overflow", "too large (the limit is 2^64-1)")
    return value


def parse_size(value):
    """1073741824, "1G", "1GiB", "512M", "64k", "1.5G" -> bytes (the size rule above, as h5pack and
    h5pack-stats); an int (or a whole float) is taken as it is. ValueError (SizeError) otherwise."""
    if isinstance(value, bool):
        raise SizeError(value, "syntax", "a bool is not a size")
    if isinstance(value, float):
        if not value.is_integer():
            raise SizeError(value, "negative" if value < 0 else "fraction", "not a whole number of bytes")
        value = int(value)
    if isinstance(value, int):
        if value < 0:
            raise SizeError(value, "negative", "a negative number")
        if value > _U64_MAX:
            raise SizeError(value, "overflow", "too large (the limit is 2^64-1)")
        return value
    if not isinstance(value, str):
        raise SizeError(value, "syntax", "expected an int or a string such as '1G'")
    return parse_size_text(value)


def int_option(value, name, lo, hi):
    """VALUE as an int in LO .. HI (the C field's range: ctypes would wrap anything outside it silently),
    else ValueError naming the option. bool and non-integral numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}={value!r}: expected an integer")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value}: expected an integer in {lo} .. {hi}")
    return value


U32_MAX, I32_MAX = (1 << 32) - 1, (1 << 31) - 1


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


def _norm_values(v):
    """One side of norm=(mean, std) as floats: a number (numpy's, a 0-d array or tensor too) or a
    sequence of them; bool and text are no numbers."""
    if isinstance(v, (bool, str, bytes)):
        raise TypeError(v)
    if isinstance(v, numbers.Real) or getattr(v, "ndim", None) == 0:
        return [float(v)]
    values = list(v)
    if any(isinstance(x, (bool, str, bytes)) for x in values):
        raise TypeError(v)
    return [float(x) for x in values]


def set_norm(cfg, norm, channels_hint=_lib.MAX_CHANNELS):
    """norm: "imagenet" (default), "file", "none", or (mean, std) sequences in [0,1] units: one value each
    (for every channel, as torchvision's Normalize broadcasts it) or one per channel. Returns how many
    values the sequences had (None for a name): the caller checks them against the file's channels."""
    if norm is None:
        norm = "imagenet"
    if isinstance(norm, str):
        cfg.norm = enum_value(_lib.NORMS, norm, "norm")
        return None
    try:
        mean, std = (_norm_values(v) for v in norm)
    except (TypeError, ValueError):
        raise ValueError("norm must be 'imagenet', 'file', 'none' or a (mean, std) pair of numbers or "
                         "sequences") from None
    given = max(len(mean), len(std))  # a side of one value is every channel's, as Normalize broadcasts it
    mean, std = (v * given if len(v) == 1 else v for v in (mean, std))
    if not (1 <= len(mean) <= channels_hint and len(mean) == len(std)) or any(s <= 0 for s in std):
        raise ValueError(f"norm=(mean, std) needs 1..{channels_hint} values each, std > 0; got {norm!r}")
    if any(not 0 <= m <= 1 for m in mean) or any(s > 1 for s in std):
        in_01 = ([round(m / 255, 4) for m in mean], [round(s / 255, 4) for s in std])
        raise ValueError(f"norm=(mean, std) is in [0, 1] units (pixels / 255), as torchvision's Normalize after "
                         f"ToTensor; {norm!r} looks like 0-255 units: use {in_01!r}")
    cfg.norm = _lib.NORMS["custom"]
    for i in range(_lib.MAX_CHANNELS if given == 1 else given):
        cfg.mean[i], cfg.std[i] = mean[i % given], std[i % given]
    return given


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
    if max_output_size is not None and output_size is not None and (
            cfg.max_output_height < cfg.output_height or cfg.max_output_width < cfg.output_width):
        raise ValueError(f"max_output_size={max_output_size!r} is smaller than output_size={output_size!r}: "
                         f"it is the largest size set_output_size() may choose later, at least output_size")
    cfg.scale_min, cfg.scale_max = _range_pair(scale, "scale")
    cfg.ratio_min, cfg.ratio_max = _range_pair(ratio, "ratio")
    if not 0 < float(center_ratio) <= 1:
        raise ValueError(f"center_ratio must be in (0, 1], got {center_ratio!r}")
    cfg.center_ratio = float(center_ratio)


def set_patch(cfg, patch, overlap, patch_mode, patches_per_epoch):
    """patch: None (whole images) or S (patches of S x S from a file of images in tiles); overlap: pixels
    neighbouring sliding windows share; patch_mode "sliding" or "random"; patches_per_epoch: random
    patches per epoch (None: a grid's worth). docs/patches.md."""
    if patch is None:
        if overlap or patch_mode is not None or patches_per_epoch is not None:
            raise ValueError("overlap / patch_mode / patches_per_epoch need patch=S (patches of S x S)")
        return
    cfg.patch_size = int_option(patch, "patch", 1, 65535)
    cfg.patch_overlap = int_option(overlap, "overlap", 0, cfg.patch_size - 1)
    if overlap and (patch_mode or "random") == "random":
        raise ValueError("overlap is for patch_mode='sliding' (random patches are drawn anywhere)")
    cfg.patch_mode = enum_value(_lib.PATCH_MODES, patch_mode or "random", "patch_mode")
    cfg.patches_per_epoch = int_option(patches_per_epoch or 0, "patches_per_epoch", 0, _U64_MAX)
