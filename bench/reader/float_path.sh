#!/usr/bin/env bash
# float_path.sh - the CPU float32 path against what PyTorch users run and against the machine's floor, side
# by side in one run, on one generated CelebA-sized file (N images of 3x218x178, chunks of 16, NCHW):
#   one-pass   h5pack-stats run --device cpu --threads T (float32 NCHW, ImageNet normalisation, batch 256,
#              chunk order): workers convert straight from the mapped chunks into the float batch
#   two-pass   the same with H5PACK_TWO_PASS=1: the uint8 batch is assembled, then converted
#   old        (only with OLD_STATS=path to an h5pack-stats built before the one-pass path) the same command
#   dataloader torch DataLoader over h5py, T workers, batch 256, one H5Dread per sample, (x/255-mean)/std
#              per sample, default collation (dataloader_h5py.py, /usr/bin/python3)
#   memset     T threads memset-ing the same output bytes into a ring of 4 batches (write_floor)
#   stream     the same with non-temporal stores: the machine's write bandwidth (write_floor --stream 1)
# Every contender runs EPOCHS epochs (DataLoader with persistent workers); rates are samples/s over the
# whole run, h5pack's steady state (epochs after the first: chunks cached) is printed too. ROUNDS rounds
# interleave the contenders so that a change in machine load hits all of them alike; each round prints its
# own ratios. CPU seconds (user + system, the DataLoader's worker processes included) per sample are
# printed as well: on a machine shared with other work wall-clock rates move with the load, CPU per
# sample much less. Run on demand (about 30 s per round after the first run's image generation).
#
#   bash bench/reader/float_path.sh BUILD_DIR [THREADS=2] [N=4096] [EPOCHS=3] [ROUNDS=3] [MODE=nchw]
#
# MODE=layouts: every (file layout, output layout, flip) combination of the float32 one-pass path instead,
# through the Python binding (h5pack.Loader over $BUILD_DIR/reader/libh5pack.so, zero copy, batch 256,
# chunk order, T threads; the same images packed a second time with --layout nhwc). Per combination and
# round: steady samples/s (epochs after the first) and the reader's busy_convert_s per image (the
# workers' conversion time, the kernel's cost, much less sensitive to load than wall-clock rates), with
# OLD_LIB=path/to/an/older/libh5pack.so the same for that library in the same round; then the write floor
# (memset and non-temporal stores of the same bytes). Rounds interleave the contenders.
#
# Images come from bench/convert/make_images.py (written once to $BENCH_DIR, default
# /tmp/h5pack-bench-float, about a minute) and are packed once with build/h5pack --chunk 16.
set -euo pipefail
build=$(cd "$1" && pwd)
threads=${2:-2}
n=${3:-4096}
epochs=${4:-3}
rounds=${5:-3}
mode=${6:-nchw}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/h5pack-bench-float}
py=/usr/bin/python3
stats="$build/h5pack-stats"
floor="$build/bench/reader/write_floor"
for exe in "$stats" "$floor" "$build/h5pack"; do
  [ -x "$exe" ] || { echo "float_path.sh: missing $exe: build the project first (cmake --build $build)" >&2; exit 1; }
done
mkdir -p "$dir"
img="$dir/img-$n-218x178"
file="$dir/celeb-$n.h5"
if [ ! -d "$img" ]; then
  echo "writing $n images of 218x178 to $img (once)"
  "$py" "$here/../convert/make_images.py" "$img.tmp" "$n" 178x218 >/dev/null
  mv "$img.tmp" "$img"
fi
[ -f "$file" ] || "$build/h5pack" -q -f --chunk 16 "$img" "$file"
cat "$file" >/dev/null # page cache: every contender reads from memory
file_nhwc="$dir/celeb-$n-nhwc.h5"
if [ "$mode" = layouts ]; then
  [ -f "$file_nhwc" ] || "$build/h5pack" -q -f --chunk 16 --layout nhwc "$img" "$file_nhwc"
  cat "$file_nhwc" >/dev/null
elif [ "$mode" != nchw ]; then
  echo "float_path.sh: MODE must be nchw or layouts, got '$mode'" >&2
  exit 1
fi
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu_timed() { /usr/bin/time -f "%U %S" -o "$cpu_file" "$@"; }
cpu_of() { awk '{ printf "%.2f", $1 + $2 }' "$cpu_file"; }
image_bytes=$((3 * 218 * 178 * 4))
samples=$((n * epochs))

h5pack_rate() { # [ENV=VALUE...] STATS_BINARY: prints "TOTAL_RATE STEADY_RATE CPU_SECONDS"
  local json
  json=$(cpu_timed env "$@" run "$file" --device cpu --threads "$threads" --epochs "$epochs" --batch 256 --json)
  echo "$json" | "$py" -c 'import json, sys
d = json.load(sys.stdin)
rest = d["epochs"][1:]
steady = sum(e["samples"] for e in rest) / sum(e["seconds"] for e in rest) if rest else d["samples_per_s"]
print("%.1f %.1f" % (d["samples_per_s"], steady), sys.argv[1])' "$(cpu_of)"
}
rate_of() { sed -n 's/.* = \([0-9.]*\) samples\/s.*/\1/p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

layout_rate() { # LIBRARY FILE OUT_LAYOUT FLIP: prints "STEADY_RATE CONVERT_US_PER_IMAGE"
  H5PACK_LIBRARY="$1" PYTHONPATH="$here/../../python" "$py" - "$2" "$3" "$4" "$threads" "$epochs" <<'PYEOF'
import sys, time
import h5pack
path, layout, flip, threads, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ld = h5pack.Loader(path, batch_size=256, order="chunk", device="cpu", threads=threads, epochs=epochs,
                   dtype="float32", layout=layout, flip=bool(flip))
times = []
for e in range(epochs):
    t0, count = time.perf_counter(), 0
    for images, _ in ld:
        count += images.shape[0]
    times.append((count, time.perf_counter() - t0))
rest = times[1:] or times
st = ld.stats()
print("%.1f %.1f" % (sum(c for c, _ in rest) / sum(s for _, s in rest), 1e6 * st["busy_convert_s"] / max(1, st["samples"])))
ld.close()
PYEOF
}

if [ "$mode" = layouts ]; then
  echo "float32 one-pass layouts, $n images 3x218x178 in chunks of 16, batch 256, $threads threads," \
    "$epochs epochs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "per combination: steady samples/s and convert us/image${OLD_LIB:+ (old library: $OLD_LIB, then this build)}"
  for r in $(seq 1 "$rounds"); do
    echo "round $r (load $(cut -d' ' -f1 /proc/loadavg)):"
    for in_layout in nchw nhwc; do
      f=$file; [ "$in_layout" = nhwc ] && f=$file_nhwc
      for out_layout in nchw nhwc; do
        for flip in 0 1; do
          new=$(layout_rate "$build/reader/libh5pack.so" "$f" "$out_layout" "$flip")
          old=""; [ -z "${OLD_LIB:-}" ] || old=$(layout_rate "$OLD_LIB" "$f" "$out_layout" "$flip")
          read -r new_rate new_us <<<"$new"
          if [ -n "$old" ]; then
            read -r old_rate old_us <<<"$old"
            printf '  %s->%s flip %s: old %8.0f/s %6.1f us  new %8.0f/s %6.1f us  new/old %.2fx\n' \
              "$in_layout" "$out_layout" "$flip" "$old_rate" "$old_us" "$new_rate" "$new_us" \
              "$(awk -v a="$new_rate" -v b="$old_rate" 'BEGIN { print a / b }')"
          else
            printf '  %s->%s flip %s: %8.0f/s %6.1f us\n' "$in_layout" "$out_layout" "$flip" "$new_rate" "$new_us"
          fi
        done
      done
    done
    ms=$("$floor" --image-bytes "$image_bytes" --samples "$samples" --threads "$threads" --stream 0 | rate_of)
    st=$("$floor" --image-bytes "$image_bytes" --samples "$samples" --threads "$threads" --stream 1 | rate_of)
    echo "  write floor: memset $ms/s, non-temporal stores $st/s"
  done
  exit 0
fi

echo "float32 NCHW, $n images 3x218x178 in chunks of 16, batch 256, $threads threads, $epochs epochs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  # The first reader process after the other contenders pays about 0.5 s more kernel time (measured:
  # whichever path ran first in a round, the other ran with 0.5 s less CPU): its 476 MB output ring is
  # memory the kernel must first free up and zero. An untimed run takes that cost (WARMUP=0 skips it:
  # then it lands on the round's first path); odd rounds run one-pass first, even rounds two-pass first.
  [ "${WARMUP:-1}" = 0 ] || "$stats" run "$file" --device cpu --threads "$threads" --epochs 1 >/dev/null
  if [ $((r % 2)) -eq 1 ]; then
    read -r one one_steady one_cpu < <(h5pack_rate H5PACK_TWO_PASS=0 "$stats")
    read -r two two_steady two_cpu < <(h5pack_rate H5PACK_TWO_PASS=1 "$stats")
  else
    read -r two two_steady two_cpu < <(h5pack_rate H5PACK_TWO_PASS=1 "$stats")
    read -r one one_steady one_cpu < <(h5pack_rate H5PACK_TWO_PASS=0 "$stats")
  fi
  old=""
  if [ -n "${OLD_STATS:-}" ]; then read -r old old_steady old_cpu < <(h5pack_rate H5PACK_UNUSED=0 "$OLD_STATS"); fi
  dl=$(cpu_timed "$py" "$here/dataloader_h5py.py" "$file" "$threads" 256 "$epochs" | rate_of)
  dl_cpu=$(cpu_of)
  ms=$("$floor" --image-bytes "$image_bytes" --samples "$samples" --threads "$threads" --stream 0 | rate_of)
  st=$("$floor" --image-bytes "$image_bytes" --samples "$samples" --threads "$threads" --stream 1 | rate_of)
  echo "round $r (load $(cut -d' ' -f1 /proc/loadavg)): samples/s: one-pass $one (steady $one_steady)," \
    "two-pass $two (steady $two_steady)${old:+, old $old (steady $old_steady)}, dataloader $dl, memset $ms, stream $st"
  echo "  one-pass / dataloader $(ratio "$one" "$dl")x   two-pass / dataloader $(ratio "$two" "$dl")x" \
    "${old:+  old / dataloader $(ratio "$old" "$dl")x}"
  echo "  one-pass / two-pass $(ratio "$one" "$two")x (steady $(ratio "$one_steady" "$two_steady")x)" \
    "${old:+  one-pass / old $(ratio "$one" "$old")x (steady $(ratio "$one_steady" "$old_steady")x)}"
  echo "  CPU seconds: one-pass $one_cpu, two-pass $two_cpu${old:+, old $old_cpu}, dataloader $dl_cpu;" \
    "samples per CPU second one-pass / dataloader $(ratio "$dl_cpu" "$one_cpu")x," \
    "two-pass / dataloader $(ratio "$dl_cpu" "$two_cpu")x${old:+, old / dataloader $(ratio "$dl_cpu" "$old_cpu")x}"
  echo "  one-pass / memset write $(ratio "$one" "$ms")   one-pass / streaming write $(ratio "$one" "$st")" \
    "  (steady: $(ratio "$one_steady" "$ms") / $(ratio "$one_steady" "$st"))"
done
