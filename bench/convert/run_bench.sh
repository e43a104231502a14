#!/usr/bin/env bash
# Converter benchmark, side by side on one folder and one thread count:
#   h5pack (-j T) vs a decode-only libjpeg-turbo pass (T threads)    goal >= 0.85
#   h5pack -j T vs h5pack -j 1                                       scaling
#   h5pack -j T vs a PIL + h5py script (one process)                 goal >= 20x
# Usage: bash bench/convert/run_bench.sh BUILD_DIR [N_IMAGES=2000] [THREADS=all cores] [SIZE=224]
# Images: N JPEGs of 500x375 with photo-like noise (tests/convert/convert_make_images --noisy), in 10
# classes, written once to $BENCH_DIR (default /tmp/h5pack-bench-convert) and reused. Three interleaved
# rounds; the best of each measurement is reported (the page cache is warm for all of them).
set -euo pipefail
build=$(cd "$1" && pwd)
n=${2:-2000}
threads=${3:-$(nproc)}
size=${4:-224}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/h5pack-bench-convert}
src="$dir/src-$n"
h5pack=${H5PACK:-$build/h5pack}
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
load0=$(cut -d' ' -f1-3 /proc/loadavg)

rate_of() { sed -n 's/.*= \([0-9.]*\) images\/s.*/\1/p'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a) ? b : a }'; }

h5pack_rate() { # THREADS [MORE OPTIONS]
  local t0 t1 j=$1
  shift
  t0=$(date +%s.%N)
  "$h5pack" -q --force -j "$j" --size "${size}x${size}" "$@" "$src" "$dir/out.h5"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "x = %.1f images/s\n", n / (b - a) }'
}

# Rounds interleave the three measurements, so that a change in machine load hits all of them alike;
# the best of each is kept.
conv=0 conv1=0 dec=0 dec1=0 decs=0
for _ in 1 2 3; do
  conv=$(max "$conv" "$(h5pack_rate "$threads" | rate_of)")
  dec=$(max "$dec" "$("$decode" "$src" "$threads" | rate_of)")
  decs=$(max "$decs" "$("$decode" "$src" "$threads" --scaled "$size" | rate_of)")
  conv1=$(max "$conv1" "$(h5pack_rate 1 | rate_of)")
  dec1=$(max "$dec1" "$("$decode" "$src" 1 | rate_of)")
done
gz=$(h5pack_rate "$threads" --compress gzip:4 | rate_of)
gz1=$(h5pack_rate 1 --compress gzip:4 | rate_of)
gzsize=$(stat -c %s "$dir/out.h5")
pil=$(/usr/bin/python3 "$here/pil_h5py_baseline.py" "$src" "$dir/pil.h5" "$size" | rate_of)
rss=$( { /usr/bin/time -f "%M" "$h5pack" -q --force -j "$threads" --size "${size}x${size}" "$src" "$dir/out.h5"; } 2>&1 | tail -1) || rss="?"
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "folder: $n JPEG 500x375 (noisy), --size ${size}x${size} crop, NCHW, compress none; $threads threads; $cpu"
printf "%-44s %10s images/s\n" "h5pack -j $threads" "$conv"
printf "%-44s %10s images/s\n" "h5pack -j 1" "$conv1"
printf "%-44s %10s images/s\n" "decode-only libjpeg-turbo, $threads threads" "$dec"
printf "%-44s %10s images/s\n" "decode-only libjpeg-turbo, 1 thread" "$dec1"
printf "%-44s %10s images/s\n" "decode-only DCT-scaled as h5pack, $threads thr." "$decs"
printf "%-44s %10s images/s\n" "PIL + h5py script, 1 process" "$pil"
printf "%-44s %10s images/s\n" "h5pack -j $threads --compress gzip:4" "$gz"
printf "%-44s %10s images/s (file: %d MiB)\n" "h5pack -j 1 --compress gzip:4" "$gz1" $((gzsize / 1048576))
printf "%-44s %10s KiB (images dataset: %d MiB)\n" "h5pack -j $threads peak resident memory" "$rss" $((n * 3 * size * size / 1048576))
awk -v g="$gz" -v g1="$gz1" -v c="$conv" -v c1="$conv1" -v d="$dec" -v d1="$dec1" -v ds="$decs" -v p="$pil" -v t="$threads" 'BEGIN {
  printf "h5pack / decode-only = %.2f (goal >= 0.85)\n", c / d
  printf "h5pack / decode-only DCT-scaled = %.2f\n", c / ds
  printf "h5pack -j %d / -j 1  = %.2f (scaling; decode-only scales %.2f on the same machine)\n", t, c / c1, d / d1
  printf "h5pack / PIL+h5py    = %.1fx (goal >= 20x)\n", c / p
  printf "gzip:4 -j %d / -j 1  = %.2f (compression runs in the workers)\n", t, g / g1 }'
