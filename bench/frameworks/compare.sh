#!/usr/bin/env bash
# The front-ends side by side, rounds alternating, on one file and 2 threads: PyTorch (Debian's python3)
# and NumPy, JAX (one device, and sharded over 4 host devices) and TensorFlow (the frameworks venv of
# cmake/install-frameworks.sh); RandomResizedCrop 224 + flip + normalise, float32. Then the frameworks'
# own loaders over the same photos, for the "h5pack vs tf.data" figure: tf.data with
# image_dataset_from_directory + Keras preprocessing layers (AUTOTUNE). Prints each line and the medians.
#   bash bench/frameworks/compare.sh BUILD [ROUNDS=3]
set -euo pipefail
build=$(cd "$1" && pwd) rounds=${2:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-$src/build-venv-frameworks}/bin/python
work=${WORK:-/tmp/h5pack-frameworks}
mkdir -p "$work"
[ -d "$work/photos" ] || "$build/h5pack-gen-images" "$work/photos" --classes 8 --per-class 250 --min-size 200 \
    --max-size 320 >/dev/null
[ -f "$work/photos.h5" ] || "$build/h5pack" -q "$work/photos" "$work/photos.h5"  # every photo at its own size
export H5PACK_LIBRARY="$build/reader/libh5pack.so" TF_CPP_MIN_LOG_LEVEL=2
log="$work/rates.txt"
: >"$log"
for r in $(seq "$rounds"); do
  /usr/bin/python3 "$src/bench/frameworks/rate.py" torch "$work/photos.h5" | tee -a "$log"
  for fw in numpy jax tf; do "$venv" "$src/bench/frameworks/rate.py" "$fw" "$work/photos.h5" | tee -a "$log"; done
  XLA_FLAGS=--xla_force_host_platform_device_count=4 "$venv" "$src/bench/frameworks/rate.py" jax "$work/photos.h5" \
      --devices 4 | tee -a "$log"
  XLA_FLAGS=--xla_force_host_platform_device_count=4 "$venv" "$src/bench/frameworks/rate.py" jax "$work/photos.h5" \
      --devices 1 | tee -a "$log"
done
"$venv" "$src/bench/frameworks/tfdata_rate.py" "$work/photos" | tee -a "$log"
"$venv" - "$log" <<'PY'
import collections, statistics, sys
rates = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    rates[(f[0], f[1])].append(float(f[-1]))
med = {k: statistics.median(v) for k, v in rates.items()}
for k, v in sorted(med.items()):
    print(f"{k[0]:8} devices={k[1]}  median {v:9.1f} samples/s  ({len(rates[k])} rounds)")
torch = med.get(("torch", "1"))
for k in (("numpy", "1"), ("jax", "1"), ("tf", "1")):
    if torch and k in med:
        print(f"{k[0]} / torch = {med[k] / torch:.3f}")
if ("jax", "4") in med and ("jax", "1") in med:
    print(f"jax 4 devices / 1 device (same global batch) = {med[('jax', '4')] / med[('jax', '1')]:.3f}")
if ("tf.data", "1") in med and ("tf", "1") in med:
    print(f"h5pack.tf / tf.data = {med[('tf', '1')] / med[('tf.data', '1')]:.1f}")
PY
