"""h5pack --labels FILE.csv end to end: the converted file read back with h5py holds, for every image, exactly
its CSV row, in the smallest integer type (or float32), with the column names; skips, orphan rows and
malformed CSVs are reported naming the file and line. Usage: test_csv_convert.py H5PACK H5PACK_STATS"""
import os
import subprocess
import sys

import h5test
from h5test import check
from labels_util import fresh_workdir, make_folder, np, read_back, run_h5pack, write_text

H5PACK, STATS = sys.argv[1], sys.argv[2]
fresh_workdir("csv_convert")
FLAT = [f"{i:06d}.jpg" for i in range(12)]


def celeba_like():
    """Flat folder, 1/-1 attributes; BOM, CRLF, quotes, blank lines, spaces, ./ prefix, a missing row,
    an orphan row."""
    src = make_folder("celeba", FLAT)
    rng = np.random.default_rng(1)
    values = {n: rng.choice([-1, 1], size=3) for n in FLAT}
    lines = ['image_id,"Smiling", Bald ,"Wavy, Hair"']
    for i, n in enumerate(FLAT[:-1]):  # the last image has no row
        key = f'"{n}"' if i % 3 == 0 else (f"./{n}" if i % 3 == 1 else f"  {n} ")
        lines.append(key + "," + ",".join(f" {v}" for v in values[n]))
        if i == 4:
            lines.append("")
    lines.append("ghost.jpg,1,1,1")
    write_text("celeba.csv", "\ufeff" + "\r\n".join(lines) + "\r\n")
    rc, err = run_h5pack(H5PACK, "--labels", "celeba.csv", src, "celeba.h5")
    check(rc == 0, "CelebA-like CSV converts", fatal=True)
    rows, labels, dtype, names, skipped, root = read_back("celeba.h5")
    check(labels.shape == (11, 3) and dtype == np.int8, f"1/-1 attributes stored (11,3) int8 (got {labels.shape} {dtype})")
    check(names == ["Smiling", "Bald", "Wavy, Hair"], "column names stored in label_names")
    check(all((rows[n] == values[n]).all() for n in FLAT[:-1]), "every image has exactly its CSV row")
    check(skipped == {FLAT[-1]: "no label row"}, "the image without a row is skipped as 'no label row'")
    check(f"skipped {FLAT[-1]}: no label row" in err, "the skip is printed like other skips")
    check("label row celeba.csv:14 names no image: ghost.jpg" in err, "the orphan row is reported with file:line")
    check("classes" not in root, "no classes dataset with --labels")
    info = subprocess.run([STATS, "info", "celeba.h5"], capture_output=True, text=True).stdout
    check("labels: (N,3) int64" in info, "h5pack-stats info shows the label shape")


def check_type(name, values, expect_dtype, expect_shape=None):
    src = make_folder(name, FLAT[:4])
    cols = len(values[0])
    header = "file," + ",".join(f"c{j}" for j in range(cols))
    write_text(name + ".csv", header + "\n" + "".join(f"{n},{','.join(map(str, v))}\n"
                                                     for n, v in zip(FLAT[:4], values)))
    rc, _ = run_h5pack(H5PACK, "-q", "--labels", name + ".csv", src, name + ".h5")
    check(rc == 0, f"{name}: converts", fatal=True)
    rows, labels, dtype, _, _, _ = read_back(name + ".h5")
    check(dtype == np.dtype(expect_dtype), f"{name}: stored as {expect_dtype} (got {dtype})")
    check(labels.shape == (expect_shape or (4, cols)), f"{name}: shape {labels.shape}")
    for n, v in zip(FLAT[:4], values):
        want = np.array([float(x) for x in v], dtype=dtype)
        check(np.array_equal(np.atleast_1d(rows[n]), want), f"{name}: {n} holds {v}")


def types():
    check_type("binary", [[0, 1], [1, 1], [0, 0], [1, 0]], "uint8")
    check_type("bytes", [[255, -1], [0, 1], [3, 3], [4, 4]], "int16")
    check_type("u16", [[65535, 0], [1, 2], [3, 4], [5, 6]], "uint16")
    check_type("i32", [[-40000, 0], [1, 2], [3, 4], [70000, 6]], "int32")
    check_type("i64", [[5000000000, 0], [1, 2], [-3, 4], [5, 6]], "int64")
    check_type("floats", [["0.25", 1], [1, "-2.5"], ["1e-3", 0], [3, 4]], "float32")
    # float32's extremes as numpy prints them (3.4028235e+38 is a hair above FLT_MAX, and rounds to it)
    check_type("f32max", [["3.4028235e+38", 1], ["-3.4028235e+38", 0], ["1.4e-45", 0], [3, 4]], "float32")
    check_type("single", [[3], [-1], [7], [0]], "int8", (4,))


def class_folders():
    """Class subfolders, CSV by bare name and by relative path; one bare name ambiguous."""
    src = make_folder("classed", ["cat/a.jpg", "cat/b.jpg", "dog/c.jpg", "dog/d.png"])
    write_text("classed.csv", "name,x,y\na.jpg,1,2\ncat/b.jpg,3,4\nc.jpg,5,6\ndog/d.png,7,8\n")
    rc, err = run_h5pack(H5PACK, "--labels", "classed.csv", src, "classed.h5")
    check(rc == 0, "class folders with --labels convert", fatal=True)
    rows, labels, dtype, _, skipped, root = read_back("classed.h5")
    check(rows["cat/a.jpg"].tolist() == [1, 2] and rows["cat/b.jpg"].tolist() == [3, 4] and
          rows["dog/c.jpg"].tolist() == [5, 6] and rows["dog/d.png"].tolist() == [7, 8],
          "bare names and relative paths find their images")
    check("classes" not in root and dtype == np.uint8, "no classes dataset; labels uint8")
    make_folder("ambiguous", ["cat/x.jpg", "dog/x.jpg"])
    write_text("ambiguous.csv", "name,v\nx.jpg,1\n")
    rc, err = run_h5pack(H5PACK, "--labels", "ambiguous.csv", "ambiguous", "ambiguous.h5")
    check(rc == 1 and "ambiguous.csv:2:1: bare name 'x.jpg' fits several images" in err,
          "an ambiguous bare name is an error naming the line")
    write_text("pathed.csv", "name,v\ncat/x.jpg,1\ndog/x.jpg,2\n")
    rc, _ = run_h5pack(H5PACK, "--labels", "pathed.csv", "ambiguous", "pathed.h5")
    rows = read_back("pathed.h5")[0]
    check(rc == 0 and rows["cat/x.jpg"] == 1 and rows["dog/x.jpg"] == 2, "relative paths resolve the same names")
    make_folder("toplevel", ["a.jpg", "cls/a.jpg", "cls/b.jpg"])  # a.jpg beside a class folder: skipped
    write_text("toplevel.csv", "name,v\na.jpg,5\ncls/a.jpg,7\nb.jpg,9\n")
    rc, err = run_h5pack(H5PACK, "--labels", "toplevel.csv", "toplevel", "toplevel.h5")
    rows = read_back("toplevel.h5")[0] if rc == 0 else {}
    check(rc == 0 and rows.get("cls/a.jpg") == 7 and rows.get("cls/b.jpg") == 9 and "1 CSV rows name no image" in err,
          f"a row naming a skipped file's path is not taken as another image's bare name ({rc}, {rows}, {err[-300:]})")
    write_text("toplevel2.csv", "name,v\na.jpg,5\nb.jpg,9\n")  # cls/a.jpg has no row of its own: either is meant
    rc, err = run_h5pack(H5PACK, "--labels", "toplevel2.csv", "toplevel", "toplevel2.h5")
    check(rc == 1 and "toplevel2.csv:2:1: 'a.jpg' is the path of a file that is not packed" in err and "cls/a.jpg" in err,
          f"a skipped file's path that is also an image's bare name is the ambiguity error ({rc}, {err[-300:]})")
    make_folder("toplevel3", ["a.jpg", "cat/a.jpg", "dog/a.jpg"])  # every image of the bare name counts
    for rows_csv, unrowed in (("cat/a.jpg,7", "dog/a.jpg"), ("dog/a.jpg,7", "cat/a.jpg")):
        write_text("toplevel3.csv", f"name,v\na.jpg,5\n{rows_csv}\n")
        rc, err = run_h5pack(H5PACK, "--labels", "toplevel3.csv", "toplevel3", "toplevel3.h5")
        check(rc == 1 and "is the path of a file that is not packed" in err and unrowed in err,
              f"whichever image of the bare name lacks a row, the ambiguity is an error ({rc}, {err[-300:]})")
    make_folder("unnamed", [f"i{k:02d}.jpg" for k in range(25)])  # a failed run points at no output
    write_text("unnamed.csv", "name,v\nnot_there.jpg,1\n")
    rc, err = run_h5pack(H5PACK, "--labels", "unnamed.csv", "unnamed", "unnamed.h5")
    check(rc == 1 and "more skipped files (-v prints them)" in err and "of the output" not in err,
          f"a failed run's skip list points at no output file ({err[-400:]})")


BAD = [
    ("nonnumeric", "id,a,b\n000000.jpg,1,1\n000001.jpg,1,yes\n", "nonnumeric.csv:3:3: column 'b': not a number: 'yes'"),
    ("ragged", "id,a,b\n000000.jpg,1,1\n000001.jpg,1\n", "ragged.csv:3: 2 fields, but the header has 3"),
    ("duplicate", "id,a\n000000.jpg,1\n000001.jpg,1\n./000000.jpg,2\n",
     "duplicate.csv:4: duplicate row for '000000.jpg' (first on line 2)"),
    ("unterminated", 'id,a\n000000.jpg,1\n"000001.jpg,1\n', "unterminated.csv:3: unterminated quoted field"),
    ("afterquote", 'id,a\n"000000.jpg"x,1\n', "afterquote.csv:2: text after a closing quote"),
    ("empty", "\n\n", "empty.csv: empty file"),
    ("headeronly", "id,a\n", "headeronly.csv: no rows under the header"),
    ("onecolumn", "id\n000000.jpg\n", "onecolumn.csv:1: the header needs the image column and at least one label column"),
    ("emptyvalue", "id,a\n000000.jpg,\n", "emptyvalue.csv:2:2: column 'a': empty value"),
    ("overflow", "id,a\n000000.jpg,99999999999999999999\n", "overflow.csv:2:2: column 'a': integer out of the int64 range"),
    ("dupcolumn", "id,a,a\n000000.jpg,1,1\n", "dupcolumn.csv:1:3: column name 'a' appears twice"),
    ("countline", "5\n000000.jpg,1\n", "countline.csv:1: the header is the number '5' (a label column with that "
     "name?): is it a row count? --labels-skip 1 skips it"),
    ("f32range", "id,a\n000000.jpg,3.41e+38\n", "f32range.csv:2:2: column 'a': out of the float32 range"),
]


def malformed():
    src = make_folder("bad", FLAT[:2])
    for name, text, message in BAD:
        rc, err = run_h5pack(H5PACK, "--labels", write_text(name + ".csv", text), src, name + ".h5")
        check(rc == 1 and message in err and not os.path.exists(name + ".h5"), f"{name}: error '{message}'")
    rc, err = run_h5pack(H5PACK, "--labels", "missing.csv", src, "missing.h5")
    check(rc == 1 and "missing.csv: No such file" in err, "a missing CSV is named")
    rc, err = run_h5pack(H5PACK, "--labels", src, src, "dir.h5")
    check(rc == 1 and f"{src}: a directory, not a CSV file" in err, f"a directory as the CSV is named: {err}")
    write_text("partial.csv", "id,a\n000000.jpg,1\n")
    rc, err = run_h5pack(H5PACK, "--strict", "--labels", "partial.csv", src, "strict.h5")
    check(rc == 2 and "000001.jpg: no label row" in err, "--strict stops at an image without a row")
    write_text("none.csv", "id,a\nzzz.jpg,1\n")
    rc, err = run_h5pack(H5PACK, "--labels", "none.csv", src, "none.h5")
    check(rc == 1 and "that have a row in none.csv" in err, "no image with a row is an error")


celeba_like()
types()
class_folders()
malformed()
h5test.finish("all --labels conversion checks passed")
