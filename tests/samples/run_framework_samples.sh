#!/usr/bin/env bash
# samples/jax_train.py (sharded over 2 host devices) and samples/keras_train.py (MirroredStrategy over 2
# logical CPUs) on a small generated folder, in the frameworks venv (cmake/install-frameworks.sh): each must
# train (its last epoch's loss below its first) and name every device it used.
# Usage: run_framework_samples.sh BUILD_DIR SOURCE_DIR PYTHON   (exit 77 without the venv, unless
# H5PACK_REQUIRE_FRAMEWORKS=1)
set -euo pipefail
build=$1 src=$2 py=$3
if [ ! -x "$py" ]; then
    [ "${H5PACK_REQUIRE_FRAMEWORKS:-0}" = 1 ] && { echo "FAILED: no frameworks venv at $py"; exit 1; }
    echo "skipped: jax and tensorflow not installed (cmake/install-frameworks.sh)"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/h5pack-gen-images" "$work/images" --classes 4 --per-class 40 --seed 5 --min-size 40 --max-size 64 >/dev/null
"$build/h5pack" -q --size 40x40 "$work/images" "$work/train.h5"
export PYTHONPATH="$src/python" H5PACK_LIBRARY="$build/reader/libh5pack.so" TF_CPP_MIN_LOG_LEVEL=2
first_last() { grep -o "$1 [0-9.]*" "$2" | awk 'NR==1{f=$2} {l=$2} END{print f, l}'; }

XLA_FLAGS=--xla_force_host_platform_device_count=2 "$py" "$src/samples/jax_train.py" "$work/train.h5" \
    --epochs 6 --batch 32 | tee "$work/jax.log"
grep -q "2 devices" "$work/jax.log" || { echo "FAILED: jax_train.py did not shard over 2 devices"; exit 1; }
read -r f l < <(first_last "loss" "$work/jax.log")
awk -v f="$f" -v l="$l" 'BEGIN{exit !(l < f)}' || { echo "FAILED: jax_train.py loss $f -> $l"; exit 1; }

"$py" "$src/samples/keras_train.py" "$work/train.h5" --epochs 4 --batch 32 --replicas 2 2>&1 | tee "$work/keras.log"
grep -q "2 replicas" "$work/keras.log" || { echo "FAILED: keras_train.py did not run 2 replicas"; exit 1; }
read -r f l < <(first_last "loss:" "$work/keras.log")
awk -v f="$f" -v l="$l" 'BEGIN{exit !(l < f)}' || { echo "FAILED: keras_train.py loss $f -> $l"; exit 1; }
echo "samples: jax_train.py and keras_train.py train on sharded / mirrored h5pack batches"
