#!/usr/bin/env bash
# Size suffixes mean the same in h5pack and h5pack-stats (docs/reader.md, "Sizes and counts"): 1K is 1024.
#   sizes_cli.sh H5PACK H5PACK_STATS MAKE_IMAGES
# h5pack --max-pixels 1K keeps a 32x32 image (1024 pixels; 1K = 1000 would skip it) and skips a 32x33 one;
# h5pack-stats run and simulate report --cache 1K, 1KiB, 1kb as 1024 bytes; both reject a bad suffix with
# the same words.
set -u
H5PACK=$1 STATS=$2 MAKE=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5pack-sizes-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/err" ] && sed 's/^/  stderr: /' "$tmp/err" >&2; exit 1; }

"$MAKE" "$tmp/fits" 1 3 32x32 --jpeg-only >/dev/null || fail "could not generate 32x32 images"
"$MAKE" "$tmp/over" 1 3 32x33 --jpeg-only >/dev/null || fail "could not generate 32x33 images"

for v in 1K 1KiB 1kb 1024; do
  "$H5PACK" -q --force --max-pixels "$v" "$tmp/fits" "$tmp/fits.h5" 2>"$tmp/err" ||
    fail "h5pack --max-pixels $v skipped 32x32 = 1024-pixel images (exit $?)"
done
"$H5PACK" --force --max-pixels 1K "$tmp/over" "$tmp/over.h5" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "h5pack --max-pixels 1K converted 32x33 = 1056-pixel images (exit $rc)"
grep -q "1056 pixels, above the limit of 1024 (--max-pixels)" "$tmp/err" ||
  fail "h5pack --max-pixels 1K: the 32x33 images were not refused for their size"

json_field() { # FILE KEY: the first number after "KEY":
  sed -n "s/.*\"$2\": *\([0-9][0-9]*\).*/\1/p" "$1" | head -n 1
}
for v in 1K 1KiB 1kb 1024 1.0K; do
  "$STATS" run "$tmp/fits.h5" --cache "$v" --threads 1 --json >"$tmp/run.json" 2>"$tmp/err" ||
    fail "h5pack-stats run --cache $v (exit $?)"
  [ "$(json_field "$tmp/run.json" cache_bytes)" = 1024 ] ||
    fail "h5pack-stats run --cache $v: cache_bytes $(json_field "$tmp/run.json" cache_bytes), expected 1024"
done
"$STATS" simulate "$tmp/fits.h5" --cache 1K,1KiB,2k --policy lru --json >"$tmp/sim.json" 2>"$tmp/err" ||
  fail "h5pack-stats simulate --cache 1K,1KiB,2k (exit $?)"
caches=$(grep -o '"cache_bytes": *[0-9]*' "$tmp/sim.json" | grep -o '[0-9]*$' | sort -un | tr '\n' ' ')
[ "$caches" = "1024 2048 " ] || fail "h5pack-stats simulate --cache 1K,1KiB,2k: cache sizes '$caches'"

# The same words for the same mistake.
"$H5PACK" --max-pixels 1X "$tmp/fits" "$tmp/x.h5" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "h5pack --max-pixels 1X: exit $rc"
grep -q "unknown suffix 'X' (use K, M, G or T" "$tmp/err" || fail "h5pack --max-pixels 1X: message"
"$STATS" run "$tmp/fits.h5" --cache 1X 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "h5pack-stats run --cache 1X: exit $rc"
grep -q "unknown suffix 'X' (use K, M, G or T" "$tmp/err" || fail "h5pack-stats --cache 1X: message"
"$STATS" run "$tmp/fits.h5" --cache -1K 2>"$tmp/err"; [ $? -eq 1 ] || fail "h5pack-stats --cache -1K accepted"
grep -q "negative" "$tmp/err" || fail "h5pack-stats --cache -1K: message"
echo "sizes: 1K = 1024 in h5pack and h5pack-stats"
