#!/bin/sh
# slow_storage.sh - the reader on slow storage: every chunk read (pread >= 64 KiB) takes 50 ms longer
# (LD_PRELOAD shim libslow_pread.so, the mapping off so that chunks are read with pread), CelebA-sized
# images (3x218x178) in chunks of 16, batch 64, cache 64 MiB, 16 threads. 16 workers can have at most 16
# reads in flight, so "16 reads per 50 ms" is the bound; prints the fraction of it the reader reaches,
# and its hits against the Belady plan's (they must be the same). The window is 20 chunks: the 36 chunks
# the cache holds minus the 16 threads' (the default window, 144 chunks of 1.78 MiB, needs 285 MiB).
#
#   bench/reader/slow_storage.sh [BUILD_DIR] [extra bench_reader options, e.g. --window 20 --rounds 3]
#
# Run on demand (about 10 s per round: the reads sleep, so a busy 2-core machine measures it as well).
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/bench/reader/bench_reader"
shim="$build/bench/reader/libslow_pread.so"
for f in "$bench" "$shim"; do
    [ -e "$f" ] || { echo "slow_storage.sh: $f missing: build with -DH5PACK_BUILD_BENCH=ON first" >&2; exit 1; }
done
shim=$(cd "$(dirname "$shim")" && pwd)/$(basename "$shim")
dir=${TMPDIR:-/tmp}
LD_PRELOAD="$shim" SLOW_PREAD_US=50000 H5PACK_NO_MMAP=1 \
    "$bench" --only slow --dir "$dir" --n 4096 --k 16 --size 218x178 --batch 64 --cache-mib 64 --threads 16 \
    --window 20 --epochs 2 --rounds 2 "$@"
