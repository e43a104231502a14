"""h5pack --labels-sep / --labels-skip end to end: the same table written with every separator converts to
the same labels; a .tsv file is read tab-separated by default; CelebA's original list_attr_celeba.txt layout
(count line, a header naming the 40 attributes only, blank-aligned rows) becomes labels (N,40) int8 with
label_names; quoted names keep their separator in comma/semicolon/tab mode; rows of the wrong length are
errors naming FILE:LINE. Usage: test_sep_convert.py H5PACK"""
import os
import sys

import h5test
from h5test import check
from labels_util import fresh_workdir, make_folder, np, read_back, run_h5pack, write_text

H5PACK = sys.argv[1]
fresh_workdir("sep_convert")
NAMES = [f"{i:06d}.jpg" for i in range(1, 7)]
CELEBA_ATTRS = ("5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose "
                "Black_Hair Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee "
                "Gray_Hair Heavy_Makeup High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard "
                "Oval_Face Pale_Skin Pointy_Nose Receding_Hairline Rosy_Cheeks Sideburns Smiling Straight_Hair "
                "Wavy_Hair Wearing_Earrings Wearing_Hat Wearing_Lipstick Wearing_Necklace Wearing_Necktie "
                "Young").split()


def converts(tag, csv_name, src, *opts):
    out = tag + ".h5"
    rc, err = run_h5pack(H5PACK, "-q", "--labels", csv_name, *opts, src, out)
    check(rc == 0, f"{tag}: converts", fatal=True)
    return read_back(out)


def every_separator():
    src = make_folder("sep_src", NAMES)
    rng = np.random.default_rng(7)
    values = {n: rng.integers(-5, 6, size=3) for n in NAMES}
    header = ["file", "a", "b c", "d"]

    def table(sep, quote_names=False):
        rows = [sep.join(f'"{h}"' if quote_names else h for h in header)]
        rows += [sep.join([f'"{n}"' if quote_names else n] + [str(v) for v in values[n]]) for n in NAMES]
        return "\r\n".join(rows) + "\r\n"

    cases = [(",", "comma.csv", table(",", True)), ("comma", "comma2.csv", table(" , ", True)),
             (";", "semi.csv", table(";", True)), ("semicolon", "semi2.csv", table(" ;")),
             ("tab", "tab.txt", table("\t", True)), ("\t", "tab2.txt", table("\t")),
             ("\\t", "tab3.txt", table("\t"))]
    for sep, name, text in cases:
        write_text(name, text)
        rows, labels, dtype, label_names, _, _ = converts("sep_" + os.path.splitext(name)[0], name, src,
                                                         "--labels-sep", sep)
        check(label_names == header[1:] and labels.shape == (6, 3) and dtype == np.int8,
              f"--labels-sep {sep!r}: (6,3) int8 named {header[1:]} (got {labels.shape} {dtype} {label_names})")
        check(all((rows[n] == values[n]).all() for n in NAMES), f"--labels-sep {sep!r}: every row matches")
    # space: runs of spaces and tabs, leading and trailing blanks; 'b c' cannot be one name there
    text = "file a b_c d  \n" + "".join(f"  {n}\t {'  '.join(map(str, values[n]))} \t\n" for n in NAMES)
    write_text("space.txt", text)
    rows, labels, _, label_names, _, _ = converts("sep_space", "space.txt", src, "--labels-sep", "space")
    check(label_names == ["a", "b_c", "d"] and all((rows[n] == values[n]).all() for n in NAMES),
          "--labels-sep space: blank runs separate, blanks around a line are ignored")
    # .tsv: tab by default, any case; the same file forced to comma is one column
    write_text("table.TSV", table("\t"))
    rows, _, _, label_names, _, _ = converts("sep_tsv", "table.TSV", src)
    check(label_names == header[1:] and all((rows[n] == values[n]).all() for n in NAMES),
          ".tsv is read tab-separated without --labels-sep")
    rc, err = run_h5pack(H5PACK, "--labels", "table.TSV", "--labels-sep", ",", src, "sep_tsvcomma.h5")
    check(rc == 1 and "table.TSV:1: the header needs the image column and at least one label column "
          "(read comma-separated: --labels-sep sets the separator)" in err,
          "--labels-sep , overrides the .tsv default (and the error says which separator was used)")


def quoting():
    """A quoted name keeps the separator (comma, semicolon, tab modes); in space mode quotes are text."""
    odd = {",": "x,1.jpg", ";": "x;1.jpg", "tab": "x\t1.jpg"}
    for sep, name in odd.items():
        tag = {",": "comma", ";": "semi", "tab": "tab"}[sep]
        char = "\t" if sep == "tab" else sep
        src = make_folder("quote_" + tag, [name, "plain.jpg"])
        write_text(f"quote_{tag}.txt", f'"id"{char}"v"\n"{name}"{char}5\nplain.jpg{char}"6"\n')
        rows, labels, _, _, _, _ = converts("quote_" + tag, f"quote_{tag}.txt", src, "--labels-sep", sep)
        check(rows[name] == 5 and rows["plain.jpg"] == 6, f"--labels-sep {sep!r}: quoted {name!r} and \"6\" read")
    src = make_folder("quote_space", ['"q".jpg'])
    write_text("quote_space.txt", 'id v\n"q".jpg 3\n')
    rows, _, _, _, _, _ = converts("quote_space", "quote_space.txt", src, "--labels-sep", "space")
    check(rows['"q".jpg'] == 3, "--labels-sep space: quotes are part of the name")


def celeba_txt():
    """CelebA's list_attr_celeba.txt as distributed: count line, 40 names, blank-aligned 1/-1 rows."""
    names = [f"{i:06d}.jpg" for i in range(1, 11)]
    src = make_folder("celeba_src", names)
    rng = np.random.default_rng(40)
    values = {n: rng.choice([-1, 1], size=40) for n in names}
    lines = [str(len(names)), " ".join(CELEBA_ATTRS) + " "]
    lines += [n + " " + " ".join(f"{v:2d}" for v in values[n]) for n in names]  # "000001.jpg -1  1  1 -1"
    write_text("list_attr_celeba.txt", "\r\n".join(lines) + "\r\n")
    check(lines[2].startswith(names[0] + " ") and "  1" in lines[2] + lines[3], "the file has CelebA's alignment")
    rows, labels, dtype, label_names, skipped, _ = converts(
        "celeba", "list_attr_celeba.txt", src, "--labels-sep", "space", "--labels-skip", "1")
    check(labels.shape == (10, 40) and dtype == np.int8, f"labels (10,40) int8 (got {labels.shape} {dtype})")
    check(label_names == CELEBA_ATTRS, "label_names are the 40 attribute names in file order")
    check(all((rows[n] == values[n]).all() for n in names) and not skipped, "every image has exactly its row")
    rc, err = run_h5pack(H5PACK, "--labels", "list_attr_celeba.txt", "--labels-sep", "space", src, "celeba_noskip.h5")
    check(rc == 1 and "list_attr_celeba.txt:2: 40 fields, but the header has 1" in err and "--labels-skip 1" in err,
          "without --labels-skip the count line is the header: the error names line 2 and suggests --labels-skip 1")
    broken = lines[:5] + [" ".join(lines[5].split()[:-2])] + lines[6:]  # line 6 loses two values
    write_text("celeba_broken.txt", "\n".join(broken) + "\n")
    rc, err = run_h5pack(H5PACK, "--labels", "celeba_broken.txt", "--labels-sep", "space", "--labels-skip", "1",
                         src, "celeba_broken.h5")
    check(rc == 1 and "celeba_broken.txt:6: 39 fields, but rows have 41: the image name, then the 40 label columns "
          "that the header (line 2) names (separator: space)" in err and not os.path.exists("celeba_broken.h5"),
          "a short row is an error naming FILE:LINE and the expected count")


def mismatches():
    src = make_folder("mismatch_src", NAMES[:2])
    for sep, char, tag in ((",", ",", "comma"), (";", ";", "semi"), ("tab", "\t", "tab"), ("space", " ", "space")):
        name = f"mismatch_{tag}.txt"
        write_text(name, f"id{char}a{char}b\n{NAMES[0]}{char}1{char}2\n\n{NAMES[1]}{char}1{char}2{char}3\n")
        rc, err = run_h5pack(H5PACK, "--labels", name, "--labels-sep", sep, src, "mismatch.h5")
        check(rc == 1 and f"{name}:4: 4 fields, but the header has 3" in err, f"--labels-sep {sep!r}: FILE:LINE error")
    write_text("mismatch_first.csv", f"id,a,b\n{NAMES[0]},1,2,3,4\n")
    rc, err = run_h5pack(H5PACK, "--labels", "mismatch_first.csv", src, "mismatch.h5")
    check(rc == 1 and "mismatch_first.csv:2: 5 fields, but the header has 3 (a row has as many fields as the header, "
          "or one more when the header names the label columns only; separator: comma)" in err,
          "a first row neither as long as the header nor one longer is an error")
    write_text("skip_all.txt", "1\n2\n")
    rc, err = run_h5pack(H5PACK, "--labels", "skip_all.txt", "--labels-skip", "5", src, "mismatch.h5")
    check(rc == 1 and "skip_all.txt: --labels-skip 5, but the file has only 2 lines" in err, "skipping past the end")
    rc, err = run_h5pack(H5PACK, "--labels-sep", "tab", src, "mismatch.h5")
    check(rc == 1 and "--labels-sep needs --labels FILE" in err, "--labels-sep alone is a usage error")


every_separator()
quoting()
celeba_txt()
mismatches()
h5test.finish("all --labels-sep checks passed")
