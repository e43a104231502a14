#!/usr/bin/env bash
# Converter benchmark: h5pack against its floor and against a PIL + h5py script, side by side in one run,
# on two folders:
#   small: N_SMALL JPEGs of 218x178 (CelebA-like), packed at their own size (no resize)
#   large: N_LARGE JPEGs of 500x375 (ImageNet-like), packed to 224x224 (shorter side + centre crop)
# For each folder:
#   floor   = the slower of (a) a bare libjpeg-turbo decode of the same files on THREADS threads
#             (bench_convert_decode: read + tjDecompress2 to RGB at full size; its own clock, listing the
#             folder excluded) and (b) a durable write of as many bytes as h5pack's output
#             (bench_convert_write: write() + fdatasync)
#   h5pack  = h5pack -q -j THREADS, end to end (process start, scan, decode, write, fsync, rename); JPEGs
#             are decoded at full size (--jpeg-scale exact, the default); the large folder also shows
#             h5pack --jpeg-scale dct and a bare decode at that DCT scale, for reference
#   script  = pil_h5py_baseline.py with 2 processes, its file flushed with os.fsync
# and prints h5pack/floor (goal >= 0.85) and h5pack/script (goal >= 5x) as speed ratios. CPU seconds
# (user + system) are printed too: on a machine shared with other work the wall-clock ratio moves with
# the load, while decode CPU / h5pack CPU says how much of h5pack's work is the decoding itself.
# Usage: bash bench/convert/run_bench.sh BUILD_DIR [THREADS=2] [N_SMALL=3000] [N_LARGE=1000] [ROUNDS=3]
# Images are written once by make_images.py (photo-like 1/f content, see there) to $BENCH_DIR (default
# /tmp/h5pack-bench-convert) and reused; the page cache is warmed first. Rounds interleave h5pack, decode
# and write so that a change in machine load hits all of them alike; the best of each is kept, and each
# round's own h5pack/floor is printed too. Outputs go to $BENCH_DIR (the disk that is measured).
set -euo pipefail
build=$(cd "$1" && pwd)
threads=${2:-2}
n_small=${3:-3000}
n_large=${4:-1000}
rounds=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/h5pack-bench-convert}
h5pack=${H5PACK:-$build/h5pack}
decode="$build/bench/convert/bench_convert_decode"
write="$build/bench/convert/bench_convert_write"
py=/usr/bin/python3
for exe in "$h5pack" "$decode" "$write"; do
  [ -x "$exe" ] || { echo "missing $exe: build the project first (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$dir"
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT

min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
seconds_of() { sed -n 's/.* in \([0-9.]*\) s .*/\1/p'; }
# COMMAND...: runs it (stdout goes through) and leaves its CPU seconds (user + system) in $cpu_file.
cpu_timed() { /usr/bin/time -f "%U %S" -o "$cpu_file" "$@"; }
cpu_of() { awk '{ printf "%.2f", $1 + $2 }' "$cpu_file"; }

h5pack_run() { # SRC OUT [OPTIONS]: prints "WALL_SECONDS CPU_SECONDS"
  local src=$1 out=$2 t0 t1
  shift 2
  rm -f "$out"
  sync
  t0=$(date +%s.%N)
  cpu_timed "$h5pack" -q -j "$threads" "$@" "$src" "$out"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$(cpu_of)" 'BEGIN { printf "%.3f %s", b - a, c }'
}

bench_set() { # NAME N WxH QUALITY SCRIPT_SIZE [H5PACK OPTIONS]
  local name=$1 n=$2 geom=$3 quality=$4 script_size=$5
  shift 5
  local src="$dir/$name-$n-$geom" out="$dir/out-$name.h5"
  [ -d "$src" ] || "$py" "$here/make_images.py" "$src" "$n" "$geom" "$quality" >/dev/null
  cat "$src"/*/* >/dev/null # warm the page cache
  local src_mb best_h5="" best_dec="" best_wr="" h5_cpu="" dec_cpu="" dcts="" dcts_cpu="" bytes=0 per_round=""
  local best_dct="" dct_cpu=""
  src_mb=$(du -sm "$src" | cut -f1)
  for ((r = 1; r <= rounds; r++)); do
    local h5 dec wr
    h5=$(h5pack_run "$src" "$out" "$@")
    bytes=$(stat -c %s "$out")
    dec=$(cpu_timed "$decode" "$src" "$threads" | seconds_of)
    dec_cpu=$(min "$dec_cpu" "$(cpu_of)")
    sync
    wr=$("$write" "$dir/write-floor.tmp" "$bytes" | seconds_of)
    per_round+=$(awk -v h="${h5% *}" -v d="$dec" -v w="$wr" 'BEGIN { f = d > w ? d : w; printf " %.2f", f / h }')
    best_h5=$(min "$best_h5" "${h5% *}")
    if [ "$script_size" != none ]; then # h5pack with JPEG DCT scaling (--jpeg-scale dct), for reference
      local hd
      hd=$(h5pack_run "$src" "$out" "$@" --jpeg-scale dct)
      best_dct=$(min "$best_dct" "${hd% *}")
      dct_cpu=$(min "$dct_cpu" "${hd#* }")
    fi
    h5_cpu=$(min "$h5_cpu" "${h5#* }")
    best_dec=$(min "$best_dec" "$dec")
    best_wr=$(min "$best_wr" "$wr")
  done
  if [ "$script_size" != none ]; then # the decode of --jpeg-scale dct (DCT-scaled to the target), for reference
    dcts=$(cpu_timed "$decode" "$src" "$threads" --scaled "$script_size" | seconds_of)
    dcts_cpu=$(cpu_of)
  fi
  rm -f "$dir/pil.h5"
  sync
  local pil pil_cpu
  pil=$(cpu_timed "$py" "$here/pil_h5py_baseline.py" "$src" "$dir/pil.h5" "$script_size" 2 | seconds_of)
  pil_cpu=$(cpu_of)
  rm -f "$dir/pil.h5"
  echo
  echo "== $name: $n JPEG $geom (${src_mb} MB), h5pack ${*:-(no options)}, output $((bytes / 1048576)) MiB, $threads threads, best of $rounds"
  awk -v n="$n" -v h="$best_h5" -v hc="$h5_cpu" -v d="$best_dec" -v dc="$dec_cpu" -v w="$best_wr" \
      -v s="$dcts" -v sc="$dcts_cpu" -v hd="$best_dct" -v hdc="$dct_cpu" -v p="$pil" -v pc="$pil_cpu" -v b="$bytes" -v t="$threads" \
      -v rounds="$per_round" 'BEGIN {
    f = d > w ? d : w
    printf "%-50s %7s %10s %8s\n", "", "wall", "rate", "CPU"
    printf "%-50s %6.3fs %7.0f/s %7.2fs\n", "h5pack -j " t " (end to end, fsync included)", h, n / h, hc
    printf "%-50s %6.3fs %7.0f/s %7.2fs\n", "bare libjpeg-turbo decode, " t " threads", d, n / d, dc
    if (hd != "")
      printf "%-50s %6.3fs %7.0f/s %7.2fs\n", "  h5pack --jpeg-scale dct (M/8 decode), for reference", hd, n / hd, hdc
    if (s != "")
      printf "%-50s %6.3fs %7.0f/s %7.2fs\n", "  bare decode at that DCT scale, for reference", s, n / s, sc
    printf "%-50s %6.3fs %5.0f MB/s\n", "durable write of the output bytes (fdatasync)", w, b / w / 1e6
    printf "%-50s %6.3fs %7.0f/s\n", "floor = slower of decode and write", f, n / f
    printf "%-50s %6.3fs %7.0f/s %7.2fs\n", "PIL + h5py script, 2 processes, fsync", p, n / p, pc
    printf "h5pack / floor  = %.2f (goal >= 0.85; each round: %s)\n", f / h, substr(rounds, 2)
    printf "h5pack / script = %.1fx (goal >= 5x)\n", p / h
    printf "CPU: decode / h5pack = %.2f, script / h5pack = %.1fx\n", dc / hc, pc / hc }'
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_set small "$n_small" 218x178 75 none
bench_set large "$n_large" 500x375 95 224 --size 224x224
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
