"""norm=(mean, std): the Loader's own normalisation values, in [0, 1] units as torchvision's Normalize
after ToTensor takes them (the table's mean and std fields have no bounds of their own)."""
import numbers


def _numbers(v):
    """One side of the pair as floats: a number (numpy's, a 0-d array or tensor too) or a sequence of
    them; bool and text are no numbers."""
    if isinstance(v, (bool, str, bytes)):
        raise TypeError(v)
    if isinstance(v, numbers.Real) or getattr(v, "ndim", None) == 0:
        return [float(v)]
    values = list(v)
    if any(isinstance(x, (bool, str, bytes)) for x in values):
        raise TypeError(v)
    return [float(x) for x in values]


def count(norm):
    """How many values each side of norm=(mean, std) has (one stands for every channel); None for a name."""
    if norm is None or isinstance(norm, str):
        return None
    return max(len(_numbers(v)) for v in norm)


def custom(norm, max_channels):
    """(mean, std) as MAX_CHANNELS values each: one value each is every channel's (as Normalize
    broadcasts it), else one per channel. ValueError for anything else, or for 0-255 units (with the
    [0, 1] values to use)."""
    try:
        mean, std = (_numbers(v) for v in norm)
    except (TypeError, ValueError):
        raise ValueError("norm must be 'imagenet', 'file', 'none' or a (mean, std) pair of numbers or "
                         "sequences") from None
    given = max(len(mean), len(std))
    mean, std = (v * given if len(v) == 1 else v for v in (mean, std))
    if not (1 <= len(mean) <= max_channels and len(mean) == len(std)) or any(s <= 0 for s in std):
        raise ValueError(f"norm=(mean, std) needs 1..{max_channels} values each, std > 0; got {norm!r}")
    if any(not 0 <= m <= 1 for m in mean) or any(s > 1 for s in std):
        in_01 = ([round(m / 255, 4) for m in mean], [round(s / 255, 4) for s in std])
        raise ValueError(f"norm=(mean, std) is in [0, 1] units (pixels / 255), as torchvision's Normalize after "
                         f"ToTensor; {norm!r} looks like 0-255 units: use {in_01!r}")
    fill = max_channels if given == 1 else given  # channels past the given ones keep the defaults 0 and 1
    pad = max_channels - fill
    return [mean[i % given] for i in range(fill)] + [0.0] * pad, [std[i % given] for i in range(fill)] + [1.0] * pad
