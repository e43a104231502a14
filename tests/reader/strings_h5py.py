"""h5pack_read_strings against h5py on files of the converter: classes and filenames of a folder whose names
hold UTF-8 and bytes that are not UTF-8 (written as \\xNN escapes), label_names of a --labels file, windows
of rows, and h5py's own files (variable-length UTF-8 and ASCII, fixed-length NUL- and space-padded). The
library is called through ctypes directly (no binding), as a program without HDF5 of its own would.

    strings_h5py.py H5PACK MAKE_IMAGES        (H5PACK_LIBRARY: libh5pack.so, set by ctest)
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
except ImportError:
    h5test.skip("/usr/bin/python3 has no h5py")

H5PACK, MAKE_IMAGES = sys.argv[1], sys.argv[2]
LIB = os.environ.get("H5PACK_LIBRARY")
if not LIB:
    h5test.skip("H5PACK_LIBRARY is not set (no shared libh5pack)")
lib = ctypes.CDLL(LIB)
U64 = ctypes.c_uint64
lib.h5pack_read_strings.restype = ctypes.c_int
lib.h5pack_read_strings.argtypes = [ctypes.c_char_p, ctypes.c_char_p, U64, U64, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.POINTER(U64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                                    ctypes.c_size_t]
ALL = (1 << 64) - 1
OK, ENOTFOUND, EFORMAT, EINVAL = 0, -7, -5, -1


def read_strings(path, dataset, start=0, count=ALL):
    """(rc, rows, [bytes per row], err) through the two-call protocol."""
    rows, needed, again = U64(), ctypes.c_size_t(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(1024)
    args = (os.fsencode(path), dataset.encode(), start, count)
    rc = lib.h5pack_read_strings(*args, None, 0, ctypes.byref(rows), ctypes.byref(needed), err, len(err))
    if rc != OK:
        return rc, rows.value, None, err.value.decode(errors="replace")
    out = ctypes.create_string_buffer(needed.value + 8)
    rc = lib.h5pack_read_strings(*args, out, needed.value, ctypes.byref(rows), ctypes.byref(again), err, len(err))
    check(rc == OK and again.value == needed.value, f"{dataset}: second call rc {rc}, {again.value} vs {needed.value}")
    raw = out.raw[:needed.value]
    check(out.raw[needed.value:] == b"\0" * 8, f"{dataset}: bytes written past OUT_LEN")
    return rc, rows.value, raw.split(b"\0")[:-1], err.value.decode(errors="replace")


def h5py_rows(path, dataset):
    """What h5py reads, as bytes per row (fixed-length padding stripped as h5py's .asstr() would not)."""
    with h5py.File(path, "r") as f:
        d = f[dataset]
        out = []
        for v in d[()]:
            b = v if isinstance(v, bytes) else v.encode() if isinstance(v, str) else bytes(v)
            if d.dtype.kind == "S" and h5py.check_string_dtype(d.dtype).encoding:  # fixed-length: NUL padding
                b = b.rstrip(b"\0")
            out.append(b)
        return out


def same_as_h5py(path, dataset, expect_rows=None):
    rc, rows, got, err = read_strings(path, dataset)
    check(rc == OK, f"{path} {dataset}: rc {rc}: {err}", fatal=True)
    want = h5py_rows(path, dataset)
    check(rows == len(want), f"{dataset}: {rows} rows, h5py has {len(want)}")
    check(got == want, f"{dataset}: rows differ from h5py's, first: "
                       f"{next(((i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w), None)}")
    if expect_rows is not None:
        check(rows == expect_rows, f"{dataset}: {rows} rows, expected {expect_rows}")
    for start, count in [(0, 1), (1, 3), (len(want) - 1, ALL), (len(want), 0), (len(want), ALL), (2, 10 ** 9)]:
        if start > len(want):
            continue
        rc, _, part, err = read_strings(path, dataset, start, count)
        end = len(want) if count == ALL else min(len(want), start + count)
        check(rc == OK and part == want[start:end], f"{dataset}[{start}, +{count}): {rc} {err}")
    return got


def converted(tmp):
    src = os.path.join(tmp, "src")
    subprocess.run([MAKE_IMAGES, src, "3", "5", "20x16"], check=True, stdout=subprocess.DEVNULL)
    classes = sorted(os.listdir(src))
    first = os.path.join(src, classes[0]).encode()
    files = sorted(os.listdir(first))
    ext0, ext1 = os.path.splitext(files[0])[1], os.path.splitext(files[1])[1]
    os.rename(os.path.join(first, files[0]), os.path.join(first, "café_日".encode() + ext0))
    os.rename(os.path.join(first, files[1]), os.path.join(first, b"bad_\xff\xfe" + ext1))  # not UTF-8
    os.rename(os.path.join(src, classes[2]).encode(), os.path.join(src.encode(), b"cl\xe0ss"))  # Latin-1 folder
    out = os.path.join(tmp, "folder.h5")
    subprocess.run([H5PACK, "-q", "--size", "16x16", "--keep-order", src, out], check=True)

    names = same_as_h5py(out, "filenames", 15)
    check(any(b"bad_\\xFF\\xFE." in n for n in names), f"the converter's \\xNN escapes: {names}")
    check(any("café_日".encode() in n for n in names), f"UTF-8 names kept: {names}")
    for n in names:
        n.decode("utf-8")  # every row is UTF-8
    got_classes = same_as_h5py(out, "classes", 3)
    check(b"cl\\xE0ss" in got_classes, f"a class folder that is not UTF-8: {got_classes}")

    rc, rows, _, err = read_strings(out, "images")
    check(rc == EFORMAT and out in err and "images" in err, f"images: rc {rc}: {err}")
    rc, rows, _, err = read_strings(out, "label_names")
    check(rc == ENOTFOUND and "no dataset" in err and "label_names" in err, f"label_names: rc {rc}: {err}")
    rc, rows, _, err = read_strings(out, "skipped/files")
    check(rc == OK and rows == 0, f"skipped/files: rc {rc}, {rows} rows: {err}")
    rc, rows, _, err = read_strings(out, "filenames", 16, 0)
    check(rc == EINVAL and rows == 15 and "filenames" in err, f"start past the end: rc {rc}, {rows} rows: {err}")

    # --labels: label_names (K,)
    csv = os.path.join(tmp, "labels.csv")
    with open(csv, "w") as f:
        f.write("image,Smiling,Young,Größe\n")
        for c in classes[:2]:
            for name in sorted(os.listdir(os.path.join(src, c))):
                if name.isascii() and name.isprintable():
                    f.write(f"{c}/{name},1,-1,0\n")
    out2 = os.path.join(tmp, "labels.h5")
    run = subprocess.run([H5PACK, "-q", "--size", "16x16", "--labels", csv, src, out2], capture_output=True)
    check(run.returncode == 0, f"--labels run: {run.stderr.decode(errors='replace')}", fatal=True)
    got = same_as_h5py(out2, "label_names", 3)
    check(got == [b"Smiling", b"Young", "Größe".encode()], f"label_names: {got}")


def h5py_files(tmp):
    path = os.path.join(tmp, "h5py.h5")
    words = ["cat", "", "naïve", "日本語", "a much longer name than the others " * 3]
    with h5py.File(path, "w") as f:  # HDF5's default (old) file format, as h5py writes
        f["vlen_utf8"] = np.array(words, dtype=h5py.string_dtype("utf-8"))
        f["vlen_ascii"] = np.array([w.encode("ascii", "replace") for w in words], dtype=h5py.string_dtype("ascii"))
        f["fixed"] = np.array([b"ab", b"", b"abcdefgh", b"xyz"], dtype="S8")
        f.create_dataset("chunked", data=np.array([f"row {i}" for i in range(9000)], dtype=h5py.string_dtype()),
                         chunks=(1000,), maxshape=(None,), compression="gzip")
        f["numbers"] = np.arange(4)
        f["grid"] = np.array([["a", "b"], ["c", "d"]], dtype=h5py.string_dtype())
        t = h5py.h5t.C_S1.copy()  # fixed-length, space-padded (Fortran's strings)
        t.set_size(6)
        t.set_strpad(h5py.h5t.STR_SPACEPAD)
        sid = h5py.h5s.create_simple((3,))
        d = h5py.h5d.create(f.id, b"spaces", t, sid)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([b"ab    ", b"      ", b" x y  "], dtype="S6"), mtype=t)
    same_as_h5py(path, "vlen_utf8", len(words))
    same_as_h5py(path, "vlen_ascii", len(words))
    got = same_as_h5py(path, "fixed", 4)
    check(got == [b"ab", b"", b"abcdefgh", b"xyz"], f"fixed: {got}")
    same_as_h5py(path, "chunked", 9000)
    rc, rows, got, err = read_strings(path, "spaces")
    check(rc == OK and got == [b"ab", b"", b" x y"], f"spaces: rc {rc} {got}: {err}")
    for name in ("numbers", "grid"):
        rc, rows, _, err = read_strings(path, name)
        check(rc == EFORMAT and path in err and name in err, f"{name}: rc {rc}: {err}")


with tempfile.TemporaryDirectory(prefix="h5pack-strings-") as tmp:
    converted(tmp)
    h5py_files(tmp)
h5test.finish("read_strings against h5py")
