#!/usr/bin/env bash
# Two trees of h5pack side by side, rounds alternating (base first in odd rounds, new first in even
# ones), so that a shared, noisy machine hurts both alike: the reader (bench_reader's uncompressed and
# gzip passes), the CPU crops (loader_scaling.py: RandomResizedCrop 224 + flip, float32, 2 threads), the
# patches (sliding_vs_h5py.py's h5pack side) and the converter (h5pack -j 2 on a folder of JPEGs and PNGs).
# Each line is one measurement; the summary gives each figure's median per tree and new / base.
#
#   bash bench/compare_builds.sh BASE_SRC BASE_BUILD NEW_SRC NEW_BUILD [ROUNDS=3]
#
# The builds need the benches (H5PACK_BUILD_BENCH, the default); the Python sides run each tree's own
# binding (PYTHONPATH=SRC/python) on its own library. Inputs are made once in $WORK (default
# /tmp/h5pack-compare) with the new tree's programs (2,000 photo-like JPEGs and PNGs packed at 224x224,
# plain and gzip, and at 256x256 for the crops; one 6000 x 6000 image in tiles), and reused.
set -euo pipefail
base_src=$(cd "$1" && pwd) base_build=$(cd "$2" && pwd) new_src=$(cd "$3" && pwd) new_build=$(cd "$4" && pwd)
rounds=${5:-3}
work=${WORK:-/tmp/h5pack-compare}
py=/usr/bin/python3
mkdir -p "$work"
log="$work/measurements.txt"
: >"$log"

make_inputs() {
  if [ ! -d "$work/photos" ]; then
    "$new_build/h5pack-gen-images" "$work/photos" --classes 8 --per-class 250 --min-size 200 --max-size 320 >/dev/null
  fi
  [ -f "$work/reader.h5" ] || "$new_build/h5pack" -q --size 224x224 "$work/photos" "$work/reader.h5"
  [ -f "$work/reader_gz.h5" ] || "$new_build/h5pack" -q --size 224x224 --compress gzip "$work/photos" "$work/reader_gz.h5"
  [ -f "$work/crops.h5" ] || "$new_build/h5pack" -q --size 256x256 "$work/photos" "$work/crops.h5"
  [ -f "$work/tiles.h5" ] || { "$py" - "$work" <<'EOF'
import sys, numpy as np
from PIL import Image
y, x = np.mgrid[0:6000, 0:6000]
img = np.stack([(x // 24) % 256, (y // 24) % 256, ((x + y) // 48) % 256], -1).astype(np.uint8)
import os
os.makedirs(f"{sys.argv[1]}/tiles_src/a", exist_ok=True)
Image.fromarray(img).save(f"{sys.argv[1]}/tiles_src/a/big.png")
EOF
    "$new_build/h5pack" -q --tiles "$work/tiles_src" "$work/tiles.h5"; }
}

# The number before "samples/s" on the first line starting with PREFIX.
rate_of() { awk -v p="$1" 'index($0, p) == 1 {for (i = 1; i < NF; i++) if ($(i+1) == "samples/s") {print $i; exit}}'; }

# record TREE FIGURE VALUE
record() { echo "$1 $2 $3" | tee -a "$log"; }

reader_pass() { # TREE BUILD
  local out
  out=$("$2/bench/reader/bench_reader" --file "$work/reader.h5" --gzip-file "$work/reader_gz.h5" --only plain \
        --rounds 1 --epochs 3 2>&1)
  record "$1" reader_uint8 "$(rate_of "h5pack uint8 (" <<<"$out")"
  record "$1" reader_float32 "$(rate_of "h5pack float32" <<<"$out")"
  out=$("$2/bench/reader/bench_reader" --file "$work/reader.h5" --gzip-file "$work/reader_gz.h5" --only gzip \
        --rounds 1 --epochs 3 2>&1)
  record "$1" reader_gzip_2t "$(rate_of "h5pack uint8, 2 threads" <<<"$out")"
}

crops_pass() { # TREE SRC BUILD
  local out
  out=$(PYTHONPATH="$2/python" H5PACK_LIBRARY="$3/reader/libh5pack.so" "$py" "$2/bench/crops/loader_scaling.py" \
        "$work/crops.h5" --threads 2 --epochs 4 --rounds 1 2>&1)
  record "$1" crops_2t "$(awk '/^loader_scaling threads=2: best epoch/ {print $5}' <<<"$out")"
}

patches_pass() { # TREE SRC BUILD
  local out
  out=$(PYTHONPATH="$2/python" H5PACK_LIBRARY="$3/reader/libh5pack.so" "$py" "$2/bench/patches/sliding_vs_h5py.py" \
        --build "$3" --h5 "$work/tiles.h5" --rounds 1 --h5py-limit 50 --page-cache as-is 2>&1)
  record "$1" patches "$(awk -F': ' '/^h5pack_patches_per_s/ {print $2}' <<<"$out")"
}

convert_pass() { # TREE BUILD
  local t0 t1
  rm -f "$work/convert_out.h5"
  t0=$(date +%s.%N)
  "$2/h5pack" -q -j 2 --size 224x224 "$work/photos" "$work/convert_out.h5"
  t1=$(date +%s.%N)
  record "$1" convert_images_per_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", 2000 / (b - a)}')"
}

one_tree() { # TREE SRC BUILD
  reader_pass "$1" "$3"
  crops_pass "$1" "$2" "$3"
  patches_pass "$1" "$2" "$3"
  convert_pass "$1" "$3"
}

make_inputs
for r in $(seq 1 "$rounds"); do
  echo "== round $r"
  if [ $((r % 2)) -eq 1 ]; then one_tree base "$base_src" "$base_build"; one_tree new "$new_src" "$new_build"
  else one_tree new "$new_src" "$new_build"; one_tree base "$base_src" "$base_build"; fi
done
echo "== medians (new / base)"
"$py" - "$log" <<'EOF'
import statistics, sys
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    tree, fig, val = line.split()
    try:
        v[(fig, tree)].append(float(val))
    except ValueError:
        pass
for fig in dict.fromkeys(f for f, _ in v):
    b, n = v.get((fig, "base"), []), v.get((fig, "new"), [])
    if b and n:
        mb, mn = statistics.median(b), statistics.median(n)
        print(f"{fig:22s} base {mb:10.1f}  new {mn:10.1f}  new/base {mn / mb:5.2f}  (base {b}, new {n})")
EOF
