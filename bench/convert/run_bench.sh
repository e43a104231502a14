#!/usr/bin/env bash
# Converter benchmark, side by side on one folder and one thread count:
#   h5pack (-j T) vs a decode-only libjpeg-turbo pass (T threads)    goal >= 0.85
#   h5pack -j T vs h5pack -j 1                                       scaling
#   h5pack -j T vs a PIL + h5py script (one process)                 goal >= 20x
# Usage: bash bench/convert/run_bench.sh BUILD_DIR [N_IMAGES=2000] [THREADS=all cores] [SIZE=224]
# Images: N JPEGs of 500x375 with photo-like noise (tests/convert/convert_make_images --noisy), in 10
# classes, written once to $BENCH_DIR (default /tmp/h5pack-bench-convert) and reused. Each timed run is
# repeated 3 times; the best is reported (the page cache is warm for all of them).
set -euo pipefail
build=$(cd "$1" && pwd)
n=${2:-2000}
threads=${3:-$(nproc)}
size=${4:-224}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/h5pack-bench-convert}
src="$dir/src-$n"
h5pack="$build/h5pack"
make_images="$build/tests/convert/convert_make_images"
decode="$build/bench/convert/bench_convert_decode"
for exe in "$h5pack" "$make_images" "$decode"; do
  [ -x "$exe" ] || { echo "missing $exe: build the project first (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$dir"
if [ ! -d "$src" ]; then
  "$make_images" "$src" 10 $((n / 10)) 500x375 --jpeg-only --noisy >/dev/null
fi
cat "$src"/*/* >/dev/null # warm the page cache

best_of_3() { # prints the best images/s of three runs of "$@" (which prints "... = R images/s ...")
  local best=0 r
  for _ in 1 2 3; do
    r=$("$@" | sed -n 's/.*= \([0-9.]*\) images\/s.*/\1/p')
    best=$(awk -v a="$best" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
  done
  echo "$best"
}

h5pack_rate() { # THREADS
  local t0 t1
  t0=$(date +%s.%N)
  "$h5pack" -q --force -j "$1" --size "${size}x${size}" "$src" "$dir/out.h5"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "x = %.1f images/s\n", n / (b - a) }'
}

conv=$(best_of_3 h5pack_rate "$threads")
conv1=$(best_of_3 h5pack_rate 1)
dec=$(best_of_3 "$decode" "$src" "$threads")
pil=$(/usr/bin/python3 "$here/pil_h5py_baseline.py" "$src" "$dir/pil.h5" "$size" | sed -n 's/.*= \([0-9.]*\) images\/s.*/\1/p')
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
echo "folder: $n JPEG 500x375 (noisy), --size ${size}x${size} crop, NCHW, compress none; $threads threads; $cpu"
printf "%-44s %10s images/s\n" "h5pack -j $threads" "$conv"
printf "%-44s %10s images/s\n" "h5pack -j 1" "$conv1"
printf "%-44s %10s images/s\n" "decode-only libjpeg-turbo, $threads threads" "$dec"
printf "%-44s %10s images/s\n" "PIL + h5py script, 1 process" "$pil"
awk -v c="$conv" -v c1="$conv1" -v d="$dec" -v p="$pil" -v t="$threads" 'BEGIN {
  printf "h5pack / decode-only = %.2f (goal >= 0.85)\n", c / d
  printf "h5pack -j %d / -j 1  = %.2f (scaling)\n", t, c / c1
  printf "h5pack / PIL+h5py    = %.1fx (goal >= 20x)\n", c / p }'
