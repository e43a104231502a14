"""The ctypes structs of python/h5pack/_lib.py have the sizes and field offsets of include/h5pack.h, and its
enum tables and constants the header's values.
Usage: test_abi.py ABI_DUMP_PROGRAM (tests/python/abi_dump.c, built by ctest)."""
import ctypes
import subprocess
import sys

from h5pack import _lib


def c_layout(program):
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    return {key: int(value) for key, value in (line.rsplit(" ", 1) for line in out.splitlines())}


def py_layout():
    d = {}
    for sname, cls in _lib.STRUCTS.items():
        d[f"{sname} size"] = ctypes.sizeof(cls)
        for field, _ in cls._fields_:
            d[f"{sname}.{field}"] = getattr(cls, field).offset
    for ename, table in (("order", _lib.ORDERS), ("device", _lib.DEVICES), ("dtype", _lib.DTYPES),
                         ("layout", _lib.LAYOUTS), ("norm", _lib.NORMS), ("crop", _lib.CROPS),
                         ("echo_mode", _lib.ECHO_MODES)):
        for name, value in table.items():
            d[f"enum.{ename}.{name}"] = value
    for name in ("OK", "END", "ESTATE", "EINTERNAL", "MAX_CHANNELS"):
        d[f"const.{name}"] = getattr(_lib, name)
    return d


def main():
    c, py = c_layout(sys.argv[1]), py_layout()
    bad = [f"{k}: C {c.get(k)} vs ctypes {py.get(k)}" for k in sorted(set(c) | set(py)) if c.get(k) != py.get(k)]
    for line in bad:
        print("MISMATCH", line)
    print(f"{len(c)} sizes/offsets compared, {len(bad)} mismatches")
    return 1 if bad or len(c) < 60 else 0


if __name__ == "__main__":
    sys.exit(main())
