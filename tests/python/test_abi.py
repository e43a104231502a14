"""The ctypes structs python/h5pack/_lib.py builds from the library's tables (h5pack_param_table,
h5pack_struct_fields; the simulator's structs too, which the binding does not use) have the sizes and
field offsets of include/h5pack.h, and its enum tables and constants the header's values; every struct a
binding creates carries its own size in struct_size; h5pack.__version__ (the library's) is the header's H5PACK_VERSION_MAJOR.MINOR.PATCH.
Usage: test_abi.py ABI_DUMP_PROGRAM (tests/python/abi_dump.c, built by ctest)."""
import ctypes
import subprocess
import sys

import h5pack
from h5pack import _lib


def c_layout(program):
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    return {key: int(value) for key, value in (line.rsplit(" ", 1) for line in out.splitlines())}


# Public structs the binding does not use: built here from the library's field table all the same.
UNUSED_STRUCTS = ("h5pack_sim_params", "h5pack_sim_result")


def py_layout():
    d = {}
    unused = [(name, _lib._struct_type(h5pack.lib(), name, _lib._Sized)) for name in UNUSED_STRUCTS]
    for sname, cls in list(_lib.STRUCTS.items()) + list(_lib.ELEMENTS.items()) + unused:
        d[f"{sname} size"] = ctypes.sizeof(cls)
        for field, _ in cls._fields_:
            d[f"{sname}.{field}"] = getattr(cls, field).offset
    for ename, table in (("order", _lib.ORDERS), ("device", _lib.DEVICES), ("dtype", _lib.DTYPES),
                         ("layout", _lib.LAYOUTS), ("norm", _lib.NORMS), ("crop", _lib.CROPS),
                         ("echo_mode", _lib.ECHO_MODES), ("patch_mode", _lib.PATCH_MODES),
                         ("mask_dtype", _lib.MASK_DTYPES)):
        for name, value in table.items():
            d[f"enum.{ename}.{name}"] = value
    for name in ("OK", "END", "EINVAL", "ECORRUPT", "ENOTFOUND", "ESTATE", "EINTERNAL", "MAX_CHANNELS"):
        d[f"const.{name}"] = getattr(_lib, name)
    return d


def struct_problems():
    """Each struct starts with struct_size, which a fresh instance holds as its own size."""
    bad = []
    for sname, cls in _lib.STRUCTS.items():
        if cls._fields_[0][0] != "struct_size":
            bad.append(f"{sname}: first field is {cls._fields_[0][0]}, not struct_size")
        elif cls().struct_size != ctypes.sizeof(cls):
            bad.append(f"{sname}: a new instance has struct_size {cls().struct_size}, not {ctypes.sizeof(cls)}")
    return bad


def version_problems(c):
    header = f"{c.pop('version.major')}.{c.pop('version.minor')}.{c.pop('version.patch')}"
    if h5pack.__version__ != header:
        return [f"h5pack.__version__ {h5pack.__version__!r} vs the header's {header!r}"]
    return []


def main():
    h5pack.lib()  # h5pack_config and the enum names come from the library's parameter table at load
    c, py = c_layout(sys.argv[1]), py_layout()
    bad = version_problems(c) + struct_problems()
    bad += [f"{k}: C {c.get(k)} vs ctypes {py.get(k)}" for k in sorted(set(c) | set(py)) if c.get(k) != py.get(k)]
    for line in bad:
        print("MISMATCH", line)
    print(f"{len(c)} sizes/offsets compared, {len(bad)} mismatches; version {h5pack.__version__}")
    return 1 if bad or len(c) < 65 else 0


if __name__ == "__main__":
    sys.exit(main())
