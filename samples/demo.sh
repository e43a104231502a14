#!/usr/bin/env bash
# h5pack end to end on a fresh Debian 12 machine: install what is missing, build (Release, in build/),
# generate a sample ImageFolder, pack it with `h5pack`, stream two epochs through libh5pack in the C
# training-loop sample, and print what `h5pack-stats` reports (hit rate, read amplification, stalls).
#
#   bash samples/demo.sh
#
# Knobs (environment), mostly for tests/samples which runs this script on tiny data:
#   H5PACK_DEMO_BUILD=build      build folder          H5PACK_DEMO_SKIP_BUILD=1  use it as it is
#   H5PACK_DEMO_DIR=BUILD/demo   where images and the .h5 go
#   H5PACK_DEMO_CLASSES=10  H5PACK_DEMO_PER_CLASS=100  H5PACK_DEMO_SIZE=224x224  H5PACK_DEMO_BATCH=64
set -euo pipefail
cd "$(dirname "$0")/.."

build=${H5PACK_DEMO_BUILD:-build}
data=${H5PACK_DEMO_DIR:-$build/demo}
classes=${H5PACK_DEMO_CLASSES:-10}
per_class=${H5PACK_DEMO_PER_CLASS:-100}
size=${H5PACK_DEMO_SIZE:-224x224}
batch=${H5PACK_DEMO_BATCH:-64}
steps=7 current=0 what="starting"

bold="" plain=""
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() {
    current=$((current + 1)) what=$1
    printf '\n%s==> [%d/%d] %s%s\n' "$bold" "$current" "$steps" "$what" "$plain"
}
trap 'echo >&2; echo "demo FAILED at step $current/$steps ($what), line $LINENO: see the messages above" >&2' ERR

# The build puts programs in different folders (build root, samples/...): find by name.
program() {
    local found
    found=$(find "$build" -name "$1" -type f -perm -u+x -not -path '*/CMakeFiles/*' 2>/dev/null | sort | head -1)
    if [ -z "$found" ]; then
        echo "demo: program '$1' was not built in $build (is its part of the project missing?)" >&2
        return 1
    fi
    echo "$found"
}

step "install missing Debian packages (cmake/install-deps.sh)"
if [ "${H5PACK_DEMO_SKIP_BUILD:-0}" = 1 ]; then echo "skipped (H5PACK_DEMO_SKIP_BUILD=1)"; else
    bash cmake/install-deps.sh
    echo "build dependencies present"
fi

step "configure and build (Release, $build/)"
if [ "${H5PACK_DEMO_SKIP_BUILD:-0}" = 1 ]; then echo "skipped (H5PACK_DEMO_SKIP_BUILD=1)"; else
    mkdir -p "$build"
    log="$build/demo-build.log"
    if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } >"$log" 2>&1
    then
        tail -40 "$log" >&2
        echo "demo: the build failed (full log: $log)" >&2
        false
    fi
    echo "built in $build ($(grep -c 'warning:' "$log" || true) compiler warnings; log: $log)"
fi
pack=$(program h5pack)
gen=$(program h5pack-gen-images)
stats=$(program h5pack-stats)
train=$(program h5pack-train-loop)

step "generate a sample image folder: $classes classes x $per_class images (JPEG and PNG, several sizes)"
rm -rf "$data/images"
mkdir -p "$data"
"$gen" "$data/images" --classes "$classes" --per-class "$per_class" --seed 1
echo "$(find "$data/images" -type f | wc -l) files, $(du -sh "$data/images" | cut -f1) in $data/images"

step "pack it: h5pack --size $size --batch $batch $data/images $data/demo.h5"
"$pack" --size "$size" --batch "$batch" --force "$data/images" "$data/demo.h5"
"$stats" info "$data/demo.h5"

step "stream two epochs through libh5pack in a training loop (samples/train_loop)"
"$train" "$data/demo.h5" --epochs 2 --batch "$batch" --cache 64M

step "measure the reader: h5pack-stats run (2 epochs, chunk order, 64 MiB cache)"
"$stats" run "$data/demo.h5" --epochs 2 --batch "$batch" --cache 64M --order chunk

step "what other cache sizes and orders would give: h5pack-stats simulate"
"$stats" simulate "$data/demo.h5" --batch "$batch" --cache 16M,64M,256M --order random,chunk \
    --policy belady,lru,hdf5

printf '\n%sdemo done.%s Next: pack your own folder with\n' "$bold" "$plain"
echo "    $pack --size $size YOUR_IMAGE_FOLDER train.h5"
echo "and read it from C (include/h5pack.h, docs/reader.md) or Python (PYTHONPATH=python, docs/python.md)."
