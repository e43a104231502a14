#!/bin/sh
# The C soak (soak_c.c) over every read path: a folder of PNGs of several sizes (written by python3's zlib
# alone, so builds without the samples need nothing more) packed by the converter as images of several sizes
# (--max-side) and as images in tiles (--tiles), then soak_c natively or under valgrind memcheck (leaks:
# nothing definitely lost; any memcheck error fails). Under memcheck the converter runs natively.
#   soak_c.sh native|memcheck PYTHON H5PACK SOAK_C WORKDIR [soak_c options...]
# memcheck without valgrind: skipped (77), a failure with H5PACK_REQUIRE_MEMCHECK=1 (tests/run.sh, CI).
set -eu
mode=$1 python=$2 h5pack=$3 soak=$4 work=$5
shift 5
if [ "$mode" = memcheck ] && ! command -v valgrind >/dev/null 2>&1; then
  if [ "${H5PACK_REQUIRE_MEMCHECK:-0}" = 1 ]; then
    echo "FAIL: no valgrind (H5PACK_REQUIRE_MEMCHECK=1: the memory check must run; apt-get install valgrind)"
    exit 1
  fi
  echo "skipped: no valgrind (apt-get install valgrind)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/src/a" "$work/src/b" "$work/big/a"
"$python" - "$work" <<'PY'
import random, struct, sys, zlib
def png(path, h, w, seed):
    r = random.Random(seed)
    raw = b"".join(b"\0" + bytes(r.randrange(256) for _ in range(3 * w)) for _ in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))
for k, (h, w) in enumerate([(30, 21), (17, 40), (44, 44), (25, 33), (50, 19), (36, 28), (22, 22), (41, 30)]):
    png(f"{sys.argv[1]}/src/{'ab'[k % 2]}/img{k}.png", h, w, k)
for k, (h, w) in enumerate([(70, 53), (40, 90), (64, 64)]):
    png(f"{sys.argv[1]}/big/a/img{k}.png", h, w, 100 + k)
PY
"$h5pack" -q -f --max-side 32 --chunk 3 "$work/src" "$work/sizes.h5"
"$h5pack" -q -f --tiles --tile 16 "$work/big" "$work/tiles.h5"
if [ "$mode" = memcheck ]; then
  # JSIMD_FORCENONE: libjpeg-turbo is not on these paths, but as tests/memcheck/memcheck.py runs it
  JSIMD_FORCENONE=1 valgrind --tool=memcheck -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=30 \
    "$soak" --sizes "$work/sizes.h5" --tiles "$work/tiles.h5" "$@"
else
  "$soak" --sizes "$work/sizes.h5" --tiles "$work/tiles.h5" "$@"
fi
rm -rf "$work"
