"""h5pack-gen-images: deterministic for a seed, the requested layout, sizes and formats, decodable,
and classes that differ in colour.   check_gen_images.py GEN_BINARY WORK_DIR"""
import filecmp
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    from PIL import Image
except ImportError as e:
    print(f"skipped: {e} (install python3-numpy and python3-pil)")
    sys.exit(77)

gen, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
args = ["--classes", "3", "--per-class", "8", "--png-fraction", "0.5", "--min-size", "40", "--max-size", "90"]
for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
    subprocess.run([gen, os.path.join(work, name), *args, "--seed", seed], check=True, stdout=subprocess.DEVNULL)

def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)

fa = files(os.path.join(work, "a"))
assert fa == files(os.path.join(work, "b")), "same seed, different file list"
same = [f for f in fa if filecmp.cmp(os.path.join(work, "a", f), os.path.join(work, "b", f), shallow=False)]
assert len(same) == len(fa) == 24, f"same seed: {len(same)} of {len(fa)} files identical, 24 expected"
fc = files(os.path.join(work, "c"))
differ = sum(1 for f in fc if f not in fa or not filecmp.cmp(os.path.join(work, "a", f), os.path.join(work, "c", f),
                                                              shallow=False))
assert differ > 0, "another seed gave the same images"

exts, means = set(), {}
for f in fa:
    cls, name = f.split(os.sep)
    assert cls.startswith("class_0") and name.startswith("img_"), f
    im = Image.open(os.path.join(work, "a", f))
    exts.add((os.path.splitext(name)[1], im.format))
    assert 40 <= im.width <= 90 and 40 <= im.height <= 90, (f, im.size)
    means.setdefault(cls, []).append(np.asarray(im.convert("RGB")).reshape(-1, 3).mean(0))
assert exts == {(".jpg", "JPEG"), (".png", "PNG")}, exts
centres = {c: np.mean(v, 0) for c, v in means.items()}
gaps = [np.abs(centres[a] - centres[b]).max() for a in centres for b in centres if a < b]
print(f"24 images, JPEG and PNG, deterministic; class mean colour gaps {[round(float(g), 1) for g in gaps]}")
assert min(gaps) > 10, "classes too similar in colour"
