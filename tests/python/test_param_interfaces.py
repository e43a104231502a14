"""Every reader parameter's bounds and enum names are refused and accepted identically by the C API
(h5pack_open), h5pack-stats (`run FILE --flag value`) and the Python Loader (keyword=value), all three
generated from the library's parameter table (h5pack_param_table).

For each numeric parameter: min - 1 (when its C type holds it), min, max, max + 1 (likewise); for each
enum every name and a wrong one (-1 and one past the last for the C API). Each interface's answer is one
of: accepted; refused as out of range (its message names the parameter and the table's range: "echo must
be 1 .. 4294967295", enums "order must be one of"); refused for another reason (a rule between fields,
the file, memory). The C API must give "out of range" exactly for the values outside the table, and the
two others the C API's answer. Settings a value needs to mean something come along in all three (a crop
for the output size, a file of images in tiles and a patch size for the patch parameters), as does a
small base (CPU, 1 thread, batches of 2). h5pack-stats' options come from `h5pack-stats options` (FLAG,
PARAM[,PARAM], CONVERSION per line), the Loader's keywords from h5pack._params (KEYWORDS, and the
aliases that set a pair or an enum with more). A parameter an interface has no way to set is listed, not
checked. A run that is still streaming after a few seconds (echo or epochs at their maximum) was accepted.
Usage: test_param_interfaces.py H5PACK_STATS H5PACK"""
import ctypes
import math
import os
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    from PIL import Image
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py, python3-numpy and python3-pil)")

import h5pack
from h5pack import _lib, _params

STATS, H5PACK = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="h5pack-param-interfaces-")
BASE = {"device": "cpu", "threads": 1, "batch_size": 2}
# What a parameter's values need around them to be judged by the parameter alone, in all three interfaces.
PATCHES = {"patch_size": 64, "patch_mode": "sliding"}
CONTEXT = {
    "output_height": {"crop": "center", "output_width": 4}, "output_width": {"crop": "center", "output_height": 4},
    "max_output_height": {"crop": "center", "max_output_width": 4},
    "max_output_width": {"crop": "center", "max_output_height": 4},
    "scale_min": {"crop": "random_resized", "scale_max": 1.0},
    "scale_max": {"crop": "random_resized", "scale_min": 0.08},
    "ratio_min": {"crop": "random_resized", "ratio_max": 4 / 3},
    "ratio_max": {"crop": "random_resized", "ratio_min": 0.75},
    "center_ratio": {"crop": "center"},
    "patch_size": {"patch_mode": "sliding"}, "patch_overlap": PATCHES, "patch_mode": {"patch_size": 64},
    "patches_per_epoch": {"patch_size": 64, "patch_mode": "random"},
}
TILED = {"patch_size", "patch_overlap", "patch_mode", "patches_per_epoch"}
WRONG_NAME = "bogus"
RUN_SECONDS = 4  # a refusal comes at once; a run still going after this long was accepted
STATS_OPTIONS = []  # the lines of `h5pack-stats options`


# ---- the table, read here on its own terms --------------------------------------------------------

_TYPE_LIMITS = {"size": (0, (1 << 8 * ctypes.sizeof(ctypes.c_size_t)) - 1), "u32": (0, (1 << 32) - 1),
                "u64": (0, (1 << 64) - 1), "int": (-(1 << 31), (1 << 31) - 1), "enum": (-(1 << 31), (1 << 31) - 1)}


def int_range(row):
    """The table's bounds as integers within what the field's C type holds."""
    lo, hi = _TYPE_LIMITS[row.kind]
    return max(lo, math.ceil(row.min)), min(hi, math.floor(row.max))


def cases(row):
    """[(value, out of range)] to try, in the parameter's own unit (enum: names)."""
    if row.kind == "enum":
        return [(n, False) for n in row.enum_names] + [(WRONG_NAME, True)]
    if row.kind == "double":
        return [(row.min - 1, True), (row.min, False), (row.max, False), (row.max + 1, True)]
    lo, hi = int_range(row)
    type_lo, type_hi = _TYPE_LIMITS[row.kind]
    out = [(lo - 1, True)] if lo > type_lo else []
    out += [(lo, False), (hi, False)]
    return out + ([(hi + 1, True)] if hi < type_hi else [])


def range_words(row):
    """What every interface says of the range after "NAME must be"."""
    if row.kind == "enum":
        return "one of"
    if row.kind == "double":
        return f"in [{row.min:g}, {row.max:g}]"
    lo, hi = int_range(row)
    return f"{lo} .. {hi}"


def verdict(accepted, message, row):
    if accepted:
        return "accepted"
    return "out of range" if f"{row.name} must be {range_words(row)}" in message else "refused"


# ---- the three interfaces: settings are {parameter: value in its own unit} --------------------------

def c_api(path, settings):
    """h5pack_open with the fields set (enum names as their index; a wrong name as -1 and one past the
    last, both of which must be judged alike): (accepted, message)."""
    lib, answers = h5pack.lib(), []
    for wrong in (-1, None):
        cfg = _lib.Config()
        lib.h5pack_config_init(ctypes.byref(cfg))
        for name, value in settings.items():
            names = _lib.PARAMS[name].enum_names
            if names and isinstance(value, str):
                value = names.index(value) if value in names else (wrong if wrong is not None else len(names))
            setattr(cfg, name, value)
        reader = ctypes.c_void_p()
        rc = lib.h5pack_open(os.fsencode(path), ctypes.byref(cfg), ctypes.byref(reader))
        answers.append((rc >= 0, (lib.h5pack_last_error(reader) or b"").decode(errors="replace")))
        lib.h5pack_close(reader)
        if WRONG_NAME not in settings.values():
            break
    if len(answers) == 2 and answers[0][0] != answers[1][0]:
        return False, f"-1 and one past the last name judged apart: {answers}"
    return answers[0]


def _alias_of(param):
    return next((a for a in _params.ALIASES if param in a.params), None)


def loader_keywords(settings):
    """The Loader's keywords for SETTINGS, or None when one of them has no keyword of its own."""
    kwargs = {}
    for param, value in settings.items():
        alias = _alias_of(param)
        if alias is None:
            return None
        if len(alias.params) == 1:
            kwargs[alias.keyword] = value
        elif alias.convert in ("size", "range") and all(p in settings for p in alias.params):
            kwargs[alias.keyword] = tuple(settings[p] for p in alias.params)
        elif param == "norm" and value == "custom":  # the Loader's custom norm is the (mean, std) pair
            return None
        elif param == alias.params[0] and isinstance(value, str):  # device, norm: by name
            kwargs[alias.keyword] = value
        else:
            return None
    return kwargs


def python_loader(path, settings):
    kwargs = loader_keywords(settings)
    if kwargs is None:
        return None
    try:
        with h5pack.Loader(path, **kwargs):
            return True, ""
    except h5pack.H5packError as e:  # the library's refusal: a value out of range never gets this far
        return False, f"{type(e).__name__} (from the library): {e}"
    except Exception as e:  # noqa: BLE001 - any refusal is an answer; its words decide which
        return False, f"{type(e).__name__}: {e}"


def stats_options():
    """`h5pack-stats options`: parameter -> (flag, its parameters, conversion)."""
    p = subprocess.run([STATS, "options"], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack-stats options: exit {p.returncode} {p.stderr}", fatal=True)
    STATS_OPTIONS[:] = p.stdout.splitlines()
    out = {}
    for line in STATS_OPTIONS:
        flag, params, conversion = line.split("\t")
        for param in params.split(","):
            out[param] = (flag, params.split(","), conversion)
    check(len(out) > 10, f"h5pack-stats options lists {len(out)} parameters", fatal=True)
    return out


def _number_text(value):
    return repr(float(value)) if isinstance(value, float) else str(value)


def stats_arguments(settings, options):
    """h5pack-stats run's arguments for SETTINGS, or None when one cannot be said on its command line."""
    args, done = [], set()
    for param, value in settings.items():
        if param in done:
            continue
        if param not in options:
            return None
        flag, params, conversion = options[param]
        done.update(params)
        if conversion == "flag":
            if value not in (0, 1):
                return None
            args += [flag] if value else []
        elif conversion == "pair":
            if not all(p in settings for p in params):
                return None
            args += [flag, ",".join(_number_text(settings[p]) for p in params)]
        elif conversion == "text":
            return None
        else:
            args += [flag, _number_text(value)]
    return args


def stats_run(path, settings, options):
    args = stats_arguments(settings, options)
    if args is None:
        return None
    try:
        p = subprocess.run([STATS, "run", path, *args], capture_output=True, text=True, timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        return True, "still streaming"
    return p.returncode == 0, p.stderr


def _names_itself(interface, message, settings, param):
    """An out-of-range refusal says what the user wrote: the Loader's before the library is called, naming
    the keyword (`echo=0: ...`), h5pack-stats' naming the flag."""
    if interface == "Loader":
        keyword = _alias_of(param).keyword
        return "from the library" not in message and f" {keyword}=" in f" {message.split(': ', 1)[1]}"
    flag = next(line.split("\t")[0] for line in STATS_OPTIONS if param in line.split("\t")[1].split(","))
    return flag in message


# ---- files and the comparison --------------------------------------------------------------------------

def make_files():
    plain = os.path.join(WORK, "plain.h5")
    with h5py.File(plain, "w") as f:
        f.create_dataset("images", data=np.arange(8 * 3 * 4 * 5, dtype=np.uint8).reshape(8, 3, 4, 5),
                         chunks=(2, 3, 4, 5))
        f.create_dataset("labels", data=np.arange(8, dtype=np.int64))
    src, tiled = os.path.join(WORK, "src", "a"), os.path.join(WORK, "tiled.h5")
    os.makedirs(src)
    rng = np.random.default_rng(5)
    for name, (h, w) in (("wide.png", (90, 150)), ("small.png", (40, 50))):
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(os.path.join(src, name))
    p = subprocess.run([H5PACK, "-q", "--tiles", "--tile", "32", os.path.dirname(src), tiled],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack --tiles: exit {p.returncode} {p.stderr}", fatal=True)
    return plain, tiled


def compare(row, files, options, covered):
    path = files[1] if row.name in TILED else files[0]
    for value, outside in cases(row):
        settings = dict(BASE, **CONTEXT.get(row.name, {}))
        settings[row.name] = value
        c = verdict(*c_api(path, settings), row)
        what = f"{row.name}={value!r}"
        check((c == "out of range") == outside, f"{what}: the C API answers '{c}', the table says "
              f"{'outside' if outside else 'within'} {range_words(row)}")
        for interface, answer in (("Loader", python_loader(path, settings)),
                                  ("h5pack-stats", stats_run(path, settings, options))):
            if answer is None:
                continue
            covered[interface].add(row.name)
            got = verdict(*answer, row)
            check(got == c, f"{what}: {interface} answers '{got}', the C API '{c}' ({answer[1].strip()[:300]})")
            if got == "out of range":
                check(_names_itself(interface, answer[1], settings, row.name),
                      f"{what}: {interface} refuses it in its own terms first ({answer[1].strip()[:300]})")


def main():
    h5pack.lib()
    files, options = make_files(), stats_options()
    rows = [r for r in _lib.PARAMS.values() if r.kind in ("size", "u32", "u64", "int", "enum", "double")]
    for keyword, param in _params.KEYWORDS.items():
        check(param in _lib.PARAMS, f"h5pack._params.KEYWORDS: {keyword} -> {param}, a parameter the table has")
    for param in options:
        check(param in _lib.PARAMS, f"h5pack-stats options: {param}, a parameter the table has")
    covered = {"Loader": set(), "h5pack-stats": set()}
    for row in rows:
        compare(row, files, options, covered)
    names = [r.name for r in rows]
    for interface, seen in covered.items():
        print(f"{interface}: {len(seen)} of {len(names)} bounded parameters compared with the C API; no way to "
              f"set: {', '.join(n for n in names if n not in seen) or '-'}")
    h5test.finish(f"{len(names)} bounded parameters, {sum(len(cases(r)) for r in rows)} values")


if __name__ == "__main__":
    try:
        main()
    finally:
        subprocess.run(["rm", "-rf", WORK])
