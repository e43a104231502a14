"""The size rule (sizes typed by people: "512M", "1.5GiB"), as common/sizes.c has it, and whole numbers
for the binding's own options (keep, a state dict's position)."""
import numbers

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


I32_MAX = (1 << 31) - 1
