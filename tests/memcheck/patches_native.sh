#!/bin/sh
# Patches read natively (also under ASan/UBSan and ThreadSanitizer): a generated folder packed with --tiles,
# plain and gzip + checksum, then batch_defined's patch cases (sliding uint8 equal to H5Dread of each region,
# float32 with flip, random patches with a one-tile cache on rank 1 of 2).
#   patches_native.sh H5PACK GEN_IMAGES BATCH_DEFINED WORKDIR
set -eu
h5pack=$1 gen=$2 batch=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$gen" "$work/src" --classes 2 --per-class 6 --min-size 20 --max-size 140 >/dev/null
"$h5pack" -q -j 2 --tiles --tile 24 "$work/src" "$work/plain.h5"
"$h5pack" -q --tiles --tile 16 --compress gzip --checksum "$work/src" "$work/sums.h5"
"$batch" "$work/plain.h5"
"$batch" "$work/sums.h5"
rm -rf "$work"
