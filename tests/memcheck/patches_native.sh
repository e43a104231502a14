#!/bin/sh
# Patches read natively (also under ASan/UBSan and ThreadSanitizer): a folder of PNGs of several sizes
# (written by python3's zlib alone, so sanitizer builds without the samples need nothing more) packed with
# --tiles, plain and gzip + checksum, then batch_defined's patch cases (sliding uint8 equal to H5Dread of each
# region, float32 with flip, random patches with a one-tile cache on rank 1 of 2).
#   patches_native.sh H5PACK BATCH_DEFINED WORKDIR
set -eu
h5pack=$1 batch=$2 work=$3
rm -rf "$work" && mkdir -p "$work/src/a" "$work/src/b"
python3 - "$work/src" <<'PY'
import random, struct, sys, zlib
def png(path, h, w, seed):
    r = random.Random(seed)
    raw = b"".join(b"\0" + bytes(r.randrange(256) for _ in range(3 * w)) for _ in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))
sizes = [(140, 97), (23, 31), (64, 130), (99, 99), (20, 140), (75, 40)]
for k, (h, w) in enumerate(sizes):
    png(f"{sys.argv[1]}/{'ab'[k % 2]}/img{k}.png", h, w, k)
PY
"$h5pack" -q -j 2 --tiles --tile 24 "$work/src" "$work/plain.h5"
"$h5pack" -q --tiles --tile 16 --compress gzip --checksum "$work/src" "$work/sums.h5"
"$h5pack" -q --tiles --tile 32 --compress gzip "$work/src" "$work/gzip.h5"
"$batch" "$work/plain.h5"
"$batch" "$work/sums.h5"
"$batch" "$work/gzip.h5"
rm -rf "$work"
