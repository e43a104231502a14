#!/usr/bin/env bash
# Runs samples/demo.sh against an existing build (no install, no build step): first with its defaults, as
# the README's first command runs it (1,000 images of 224x224, its cache sizes), then on tiny data; checks
# what it promised: two epochs streamed through the training loop, h5pack-stats run reporting the hit
# rate for every sample twice, and the PyTorch sample training on the same file.
# Usage: run_demo.sh BUILD_DIR SOURCE_DIR   (ctest: samples_demo)
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
classes=3 per_class=6
n=$((classes * per_class))

fail() { echo "FAILED: $*"; exit 1; }

# The README's command at its default size: every step must run to the end.
out=$(H5PACK_DEMO_BUILD="$build" H5PACK_DEMO_SKIP_BUILD=1 H5PACK_DEMO_DIR="$work/default" \
      bash "$src/samples/demo.sh" 2>&1) || { echo "$out"; fail "demo.sh with its defaults exited with an error"; }
echo "$out"
for s in 1 2 3 4 5 6 7; do grep -q "==> \[$s/7\]" <<<"$out" || fail "default size: step $s/7 header missing"; done
grep -q "1000 files" <<<"$out" || fail "default size: not the 1,000-image set"
grep -q "^epoch 2/2: " <<<"$out" || fail "default size: the training loop did not report two epochs"
grep -q "demo done" <<<"$out" || fail "default size: demo did not finish"
rm -rf "$work/default"

out=$(H5PACK_DEMO_BUILD="$build" H5PACK_DEMO_SKIP_BUILD=1 H5PACK_DEMO_DIR="$work" H5PACK_DEMO_CLASSES=$classes \
      H5PACK_DEMO_PER_CLASS=$per_class H5PACK_DEMO_SIZE=32x40 H5PACK_DEMO_BATCH=4 \
      bash "$src/samples/demo.sh" 2>&1) || { echo "$out"; fail "demo.sh exited with an error"; }
echo "$out"
for s in 1 2 3 4 5 6 7; do grep -q "==> \[$s/7\]" <<<"$out" || fail "step $s/7 header missing"; done
grep -q "^epoch 1/2: " <<<"$out" && grep -q "^epoch 2/2: " <<<"$out" || fail "the training loop did not report two epochs"
grep -Eq "waiting for data [0-9.]+ s = [0-9.]+% of the loop" <<<"$out" || fail "no wait share in the training loop's report"
grep -q "hit_rate" <<<"$out" || fail "h5pack-stats run printed no hit rate"
grep -q "demo done" <<<"$out" || fail "demo did not finish"
[ -f "$work/demo.h5" ] || fail "no packed file"

stats=$(find "$build" -name h5pack-stats -type f -perm -u+x -not -path '*/CMakeFiles/*' | head -1)
"$stats" run "$work/demo.h5" --epochs 2 --batch 4 --cache 1M --json >"$work/run.json"
/usr/bin/python3 - "$work/run.json" "$n" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d["samples"] == 2 * n, f"h5pack-stats run: {d['samples']} samples, expected {2 * n}"
assert 0.0 <= d["hit_rate"] <= 1.0 and d["chunk_misses"] > 0, d
print(f"h5pack-stats run --json: {d['samples']} samples, hit rate {d['hit_rate']:.3f}")
PY

train=$(find "$build" -name h5pack-train-loop -type f -perm -u+x -not -path '*/CMakeFiles/*' | head -1)
if err=$("$train" "$work/missing.h5" 2>&1); then fail "h5pack-train-loop succeeded on a missing file"; fi
grep -q "missing.h5" <<<"$err" || fail "h5pack-train-loop's error does not name the file: $err"
if "$train" "$work/demo.h5" --epochs x >/dev/null 2>&1; then fail "h5pack-train-loop accepted --epochs x"; fi

echo "== samples/pytorch_train.py on the same file"
py=$(H5PACK_LIBRARY="$(find "$build/reader" -name 'libh5pack.so' | head -1)" \
     /usr/bin/python3 "$src/samples/pytorch_train.py" "$work/demo.h5" --epochs 2 --batch 4 --cache 1M 2>&1) ||
    { echo "$py"; fail "pytorch_train.py exited with an error"; }
echo "$py"
grep -Eq "^epoch 2/2: loss [0-9.]+, accuracy [0-9.]+%, .*input wait [0-9.]+ s = [0-9.]+% of the epoch" <<<"$py" ||
    fail "pytorch_train.py did not report loss and input wait for 2 epochs"
# Attribute tables (CelebA's 40 columns of 1/-1) are not class labels: both samples say so (the C one read
# out of bounds with label -1, the Python one ended in a traceback).
/usr/bin/python3 - "$work/attrs.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("images", data=np.zeros((16, 3, 8, 8), np.uint8), chunks=(4, 3, 8, 8))
    f.create_dataset("labels", data=np.where(np.arange(16 * 40).reshape(16, 40) % 3 == 0, 1, -1).astype(np.int8))
    f.create_dataset("label_names", data=np.array([b"a%d" % i for i in range(40)]))
PY
if err=$("$train" "$work/attrs.h5" --device cpu 2>&1); then fail "h5pack-train-loop trained on attribute columns"; fi
grep -q "several label columns" <<<"$err" || fail "h5pack-train-loop on attribute columns: $err"
if err=$(H5PACK_LIBRARY="$(find "$build/reader" -name 'libh5pack.so' | head -1)" \
         /usr/bin/python3 "$src/samples/pytorch_train.py" "$work/attrs.h5" --device cpu 2>&1); then
  fail "pytorch_train.py trained on attribute columns"
fi
grep -q "one class index per image" <<<"$err" && ! grep -q Traceback <<<"$err" || fail "pytorch_train.py: $err"
echo "samples: demo, training loop and PyTorch sample ran"
