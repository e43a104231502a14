#!/bin/sh
# h5pack_detach on patches: a folder of PNGs of several sizes (written by python3's zlib alone, so the
# sanitizer builds need nothing more) packed with --tiles, then test_reader_detach's patch cases on it.
#   detach_patches.sh H5PACK TEST_READER_DETACH WORKDIR
set -eu
h5pack=$1 test=$2 work=$3
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
for k, (h, w) in enumerate([(140, 97), (64, 130), (99, 99), (75, 40)]):
    png(f"{sys.argv[1]}/{'ab'[k % 2]}/img{k}.png", h, w, k)
PY
"$h5pack" -q -j 2 --tiles --tile 24 "$work/src" "$work/tiles.h5"
"$test" "$work/tiles.h5"
rm -rf "$work"
