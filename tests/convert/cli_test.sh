#!/usr/bin/env bash
# The h5pack command as users run it.
#   cli_test.sh cli       H5PACK MAKE_IMAGES   help/version/usage, messages, exit codes, -q, --force, --strict, h5dump
#   cli_test.sh interrupt H5PACK MAKE_IMAGES   kill -9 at several moments, SIGINT/SIGTERM: nothing under the final
#                                              name, temp removed on signals, rerun byte-identical
#   cli_test.sh h5py      H5PACK MAKE_IMAGES   the file opened with h5py (/usr/bin/python3): shapes, dtypes, attributes
set -u
mode=$1 H5PACK=$2 MAKE=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5pack-cli-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($mode): $*" >&2; [ -f "$tmp/err" ] && sed 's/^/  stderr: /' "$tmp/err" >&2; exit 1; }

make_folder() { "$MAKE" "$@" >/dev/null || fail "could not generate images: $*"; }

cli_tests() {
  out=$("$H5PACK" --help 2>"$tmp/err") || fail "--help exited $?"
  [[ $out == *"Usage: h5pack [OPTIONS] SRC_DIR OUT.h5"* && $out == *"--size HxW"* ]] || fail "--help text: $out"
  [ -s "$tmp/err" ] && fail "--help wrote to stderr"
  "$H5PACK" --version | grep -qF "h5pack ${H5PACK_EXPECT_VERSION:?set by ctest} (file format" || fail "--version"

  "$H5PACK" --size 224 in out.h5 >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || fail "bad --size: exit $rc, expected 1"
  grep -q -- "--size: expected HxW" "$tmp/err" || fail "bad --size message"
  "$H5PACK" --size 100000x100000 in out.h5 2>"$tmp/err"; [ $? -eq 1 ] || fail "--size over 65535 accepted"
  grep -q -- "each side 1..65535" "$tmp/err" || fail "--size over 65535: the limit is not named"
  [ -s "$tmp/out" ] && fail "usage error wrote to stdout"
  "$H5PACK" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] || fail "no arguments: exit code"
  grep -q "missing SRC_DIR" "$tmp/err" || fail "no arguments: message"
  "$H5PACK" "$tmp/nonexistent" "$tmp/x.h5" 2>"$tmp/err"; [ $? -eq 1 ] || fail "missing SRC_DIR: exit code"
  grep -q "nonexistent: No such file or directory" "$tmp/err" || fail "missing SRC_DIR: message"

  make_folder "$tmp/src" 3 8 60x50 --vary
  echo "not an image" >"$tmp/src/class_01/readme.gif"
  "$H5PACK" --size 32x40 -j 2 "$tmp/src" "$tmp/out.h5" 2>"$tmp/err"; rc=$?
  [ $rc -eq 0 ] || fail "conversion exited $rc"
  grep -q "skipped class_01/readme.gif: unsupported format" "$tmp/err" || fail "skipped file not named"
  grep -q "chunk shape (24,3,32,40)" "$tmp/err" || fail "chunk shape not printed"
  grep -q "converted 24 of 24 images" "$tmp/err" || fail "summary"
  grep -q "skipped 1: 1 unsupported format" "$tmp/err" || fail "summary of skips"
  grep -q $'\r' "$tmp/err" && fail "progress bar drawn although stderr is not a terminal"

  # A wrong extension (found by the scan) and non-image content (found by the decoder) are one category
  # in the summary.
  make_folder "$tmp/mixed" 1 3 20x20
  echo "not an image" >"$tmp/mixed/class_00/notes.txt"
  echo "not an image" >"$tmp/mixed/class_00/fake.png"
  "$H5PACK" -j 1 "$tmp/mixed" "$tmp/mixed.h5" 2>"$tmp/err" || fail "run with two kinds of unsupported files"
  grep -q "skipped 2: 2 unsupported format$" "$tmp/err" || fail "summary of skips: two categories for one"

  "$H5PACK" -q --size 32x40 -j 1 "$tmp/src" "$tmp/q.h5" 2>"$tmp/err" || fail "-q run"
  [ -s "$tmp/err" ] && fail "-q printed something"
  cmp -s "$tmp/out.h5" "$tmp/q.h5" || fail "same inputs gave different bytes"

  "$H5PACK" -q --size 32x40 "$tmp/src" "$tmp/out.h5" 2>"$tmp/err"; [ $? -eq 1 ] || fail "existing OUT overwritten"
  grep -q -- "--force" "$tmp/err" || fail "existing OUT: message"
  "$H5PACK" -q --force --size 32x40 "$tmp/src" "$tmp/out.h5" || fail "--force"

  # Chunks of an unfiltered file are written by the workers at their computed addresses; filtered ones
  # (sizes known only after compression) by HDF5; the bytes are the same as with one thread (above).
  "$H5PACK" -q --size 32x40 --chunk 4 -j 1 "$tmp/src" "$tmp/j1.h5" || fail "--chunk 4 -j 1 run"
  "$H5PACK" -v --size 32x40 --chunk 4 -j 3 "$tmp/src" "$tmp/j3.h5" 2>"$tmp/err" || fail "-v -j 3 run"
  grep -q "6 chunks, .* (written by the workers with pwrite)" "$tmp/err" ||
    fail "-v: unfiltered chunks not written by the workers"
  cmp -s "$tmp/j1.h5" "$tmp/j3.h5" || fail "-j 3 (6 chunks written by the workers) gave other bytes than -j 1"
  "$H5PACK" -v -f --size 32x40 --compress gzip "$tmp/src" "$tmp/gzv.h5" 2>"$tmp/err" || fail "-v gzip run"
  grep -q "written with H5Dwrite_chunk" "$tmp/err" || fail "-v: gzip chunks not written by HDF5"

  # --tiles (band decoding, tiled datasets; under the sanitizers with the corrupt file of src): each image its
  # own dataset; the file says storage "tiled"; options that size images are refused.
  "$H5PACK" -q --tiles --tile 16 -j 1 "$tmp/src" "$tmp/tiles.h5" 2>"$tmp/err" || fail "--tiles run"
  h5dump -a storage "$tmp/tiles.h5" 2>/dev/null | grep -q '"tiled"' || fail "--tiles: storage attribute"
  h5dump -p -H -d /tiles/23 "$tmp/tiles.h5" 2>/dev/null | grep -q "CHUNKED ( 16, 16, 3 )" ||
    fail "--tiles: image 23 is not chunked in 16x16 tiles"
  "$H5PACK" -q --tiles --size 16x16 "$tmp/src" "$tmp/tiles2.h5" 2>"$tmp/err" && fail "--tiles with --size accepted"
  grep -q -- "--size does not apply" "$tmp/err" || fail "--tiles with --size: message"

  # A write that fails (file size limit: h5pack ignores SIGXFSZ, so write() returns EFBIG, as on a full disk):
  # exit status 1 (HDF5's exit-time clean-up crashed here), the file and the system's reason named,
  # nothing left behind.
  mkdir "$tmp/full"
  (ulimit -f 16; exec "$H5PACK" -q --size 32x40 "$tmp/src" "$tmp/full/out.h5") 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || fail "failed write: exit $rc, expected 1"
  grep -q "full/\.out\.h5\.h5pack-.*: cannot write chunks\{0,1\} 0[-0-9]* of the images (bytes [0-9]*-[0-9]* of the file): .*File too large" "$tmp/err" ||
    fail "failed write: message does not name the file and the reason"
  [ -z "$(ls -A "$tmp/full")" ] || fail "failed write left files: $(ls -A "$tmp/full")"

  "$H5PACK" -q --strict --size 32x40 "$tmp/src" "$tmp/strict.h5" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] || fail "--strict with a skipped file: exit $rc, expected 2"
  grep -q "readme.gif" "$tmp/err" || fail "--strict did not name the file"
  [ -e "$tmp/strict.h5" ] && fail "--strict left an output"

  # Images of several sizes without --size: each kept at its own size (format version 2, tests/ragged).
  "$H5PACK" -j 2 "$tmp/src" "$tmp/nosize.h5" 2>"$tmp/err" || fail "mixed sizes without --size: exit $?"
  grep -q "images of several sizes" "$tmp/err" || fail "mixed sizes: the plan does not say they keep their sizes"
  h5dump -a h5pack_format_version "$tmp/nosize.h5" 2>/dev/null | grep -q "(0): 2" ||
    fail "mixed sizes: not a format version 2 file"
  ls -A "$tmp" | grep -q h5pack- && fail "a temporary file was left behind: $(ls -A "$tmp")"

  if command -v script >/dev/null; then # a pseudo-terminal: the progress bar must be drawn
    script -qec "'$H5PACK' --force --size 32x40 -j 2 '$tmp/src' '$tmp/tty.h5'" "$tmp/typescript" >/dev/null 2>&1 ||
      fail "run under a pseudo-terminal"
    grep -aq $'\r\[#*\.*\] *[0-9]*% .* img/s ETA' "$tmp/typescript" || fail "no progress bar on a terminal"
    grep -aq "100% 24/24 images" "$tmp/typescript" || fail "progress bar did not reach 100%"
  fi

  h5dump -H "$tmp/out.h5" >"$tmp/dump" 2>&1 || fail "h5dump -H failed"
  grep -q 'DATASET "images"' "$tmp/dump" && grep -q 'H5T_STD_U8LE' "$tmp/dump" || fail "h5dump header"
  h5dump -H -p -d images "$tmp/out.h5" | grep -q "CHUNKED ( 24, 3, 32, 40 )" || fail "h5dump chunk layout"
  "$H5PACK" -q --compress gzip:5 --checksum --chunk 4 --size 32x40 "$tmp/src" "$tmp/gz.h5" || fail "gzip run"
  h5dump -H -p -d images "$tmp/gz.h5" | grep -q "COMPRESSION DEFLATE { LEVEL 5 }" || fail "h5dump: deflate"
  h5dump -H -p -d images "$tmp/gz.h5" | grep -q "CHECKSUM FLETCHER32" || fail "h5dump: fletcher32"
  h5dump -d images "$tmp/gz.h5" >/dev/null 2>&1 || fail "h5dump cannot read the gzip+fletcher32 data"
}

# Runs "$@" in the background and kills it with SIG after DELAY seconds; prints whether it was still running.
kill_after() {
  local sig=$1 delay=$2; shift 2
  "$@" 2>/dev/null &
  local pid=$!
  sleep "$delay"
  if kill -"$sig" "$pid" 2>/dev/null; then echo interrupted; else echo finished; fi
  wait "$pid" 2>/dev/null
}

interrupt_tests() {
  # Enough work (about a second at -j 1) that the kills land while it runs: a faster converter made the
  # old 240 small images finish before them.
  make_folder "$tmp/src" 4 250 320x240
  # One corrupt image: the run ends with the exact-size copy, which the kills may hit as well.
  head -c 2000 "$tmp/src/class_02/img_0007.jpg" >"$tmp/src/class_01/truncated.jpg"
  local args=(-q -j 1 --size 128x128 --compress gzip:6 --chunk 4 "$tmp/src")
  local t0 t1
  t0=$(date +%s.%N)
  "$H5PACK" "${args[@]}" "$tmp/ref.h5" || fail "reference run"
  h5dump -H -d images "$tmp/ref.h5" | grep -q "( 1000, 3, 128, 128 ) /" || fail "the corrupt image was not skipped (1000 of 1001 expected)"
  t1=$(date +%s.%N)
  local total; total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  local interrupted=0
  mkdir "$tmp/k"
  for frac in 0.05 0.3 0.55 0.8 0.95; do
    local delay; delay=$(awk -v t="$total" -v f="$frac" 'BEGIN { printf "%.3f", t * f }')
    r=$(kill_after KILL "$delay" "$H5PACK" "${args[@]}" "$tmp/k/out.h5")
    # Killed just after the rename, a complete file may exist: anything there must be the whole file.
    if [ -e "$tmp/k/out.h5" ] && ! cmp -s "$tmp/ref.h5" "$tmp/k/out.h5"; then
      fail "kill -9 after ${delay}s left an incomplete file under the final name"
    fi
    [ "$r" = interrupted ] && interrupted=$((interrupted + 1))
    rm -f "$tmp/k/out.h5"
  done
  [ $interrupted -ge 2 ] || { echo "skipped: the run ($total s) ended before the kills"; exit 77; }
  # The kills left temporary files beside OUT; the rerun removes them (once they are 10 s old: aged here)
  # and says so. A writer's own temp file, locked while it runs, is never taken (test_convert_safeout).
  local left; left=$(ls -A "$tmp/k" | grep -c '^\.out\.h5\.h5pack-')
  [ "$left" -ge 1 ] || fail "kill -9 left no temporary file (expected at least one): $(ls -A "$tmp/k")"
  touch -d '1 minute ago' "$tmp"/k/.out.h5.h5pack-*
  "$H5PACK" "${args[@]:1}" "$tmp/k/out.h5" 2>"$tmp/err" || fail "rerun after kill -9"
  [ "$(grep -c 'left by a conversion that was killed before it finished' "$tmp/err")" -eq "$left" ] ||
    fail "the rerun did not report the $left leftovers it removed"
  ls -A "$tmp/k" | grep -q h5pack- && fail "leftovers remain after the rerun: $(ls -A "$tmp/k")"
  cmp -s "$tmp/ref.h5" "$tmp/k/out.h5" || fail "rerun after kill -9 is not byte-identical to an uninterrupted run"

  # SIGINT/SIGTERM once the temporary file exists: it must be gone afterwards, nothing under the final name.
  for sig in INT TERM; do
    mkdir "$tmp/$sig"
    # A script's background job starts with SIGINT ignored (and h5pack keeps it so): restore the default.
    env --default-signal="$sig" "$H5PACK" "${args[@]}" "$tmp/$sig/out.h5" 2>/dev/null &
    local pid=$! tries=0
    until ls -A "$tmp/$sig" | grep -q h5pack-; do
      tries=$((tries + 1))
      [ $tries -lt 2000 ] && kill -0 "$pid" 2>/dev/null || fail "SIG$sig: no temporary file appeared"
      sleep 0.005
    done
    kill -"$sig" "$pid" 2>/dev/null || fail "SIG$sig: the run ended before the signal"
    wait "$pid" 2>/dev/null
    ls -A "$tmp/$sig" | grep -q h5pack- && fail "SIG$sig left the temporary file: $(ls -A "$tmp/$sig")"
    if [ -e "$tmp/$sig/out.h5" ] && ! cmp -s "$tmp/ref.h5" "$tmp/$sig/out.h5"; then
      fail "SIG$sig left an incomplete file under the final name"
    fi
  done
  echo "interrupt: $interrupted kill -9 interruptions of a ${total}s run"
}

h5py_tests() {
  /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null || { echo "skipped: /usr/bin/python3 has no h5py"; exit 77; }
  make_folder "$tmp/src" 3 7 48x40 --vary
  echo "x" >"$tmp/src/class_02/notes.txt"
  "$H5PACK" -q --size 30x20 -j 2 "$tmp/src" "$tmp/nchw.h5" || fail "nchw run"
  "$H5PACK" -q --size 30x20 --layout nhwc --channels 1 --compress gzip --checksum "$tmp/src" "$tmp/nhwc.h5" || fail "nhwc run"
  /usr/bin/python3 - "$tmp/nchw.h5" "$tmp/nhwc.h5" <<'EOF' || fail "h5py checks"
import os
import sys
import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
x = f["images"]
assert x.shape == (21, 3, 30, 20) and x.dtype == np.uint8, (x.shape, x.dtype)
assert x.chunks == (21, 3, 30, 20), x.chunks
assert x.attrs["layout"] == b"NCHW" and f.attrs["layout"] == b"NCHW"
labels, names = f["labels"][:], [n.decode() for n in f["filenames"][:]]
assert f["labels"].dtype == np.uint8 and labels.shape == (21,)
classes = [c.decode() for c in f["classes"][:]]
assert classes == ["class_00", "class_01", "class_02"], classes
assert all(classes[l] == n.split("/")[0] for l, n in zip(labels, names))
assert sorted(names) != names, "expected a shuffled order"
assert [s.decode() for s in f["skipped/files"][:]] == ["class_02/notes.txt"]
assert f["skipped/reasons"][0].decode().startswith("unsupported format")
a = f.attrs
assert a["h5pack_format_version"] == 1 and a["h5pack_version"] == os.environb[b"H5PACK_EXPECT_VERSION"]
assert (a["height"], a["width"], a["channels"]) == (30, 20, 3)
assert a["resize_mode"] == b"crop" and a["compression"] == b"none" and a["checksum"] == 0
assert a["shuffled"] == 1 and a["seed"] == 0 and a["batch_size"] == 256 and a["chunk_images"] == 21
assert a["chunk_reason"].startswith(b"auto:") and a["chunk_target_bytes"] == 2 << 20
px = x[:].astype(np.float64) / 255
assert np.allclose(a["mean"], px.mean(axis=(0, 2, 3)), atol=1e-9), (a["mean"], px.mean(axis=(0, 2, 3)))
assert np.allclose(a["std"], px.std(axis=(0, 2, 3)), atol=1e-7)

g = h5py.File(sys.argv[2], "r")
y = g["images"]
assert y.shape == (21, 30, 20, 1) and y.compression == "gzip" and y.fletcher32
assert g.attrs["layout"] == b"NHWC" and g.attrs["compression"] == b"gzip:4" and g.attrs["checksum"] == 1
assert g["labels"][:].tolist() == labels.tolist()
assert len(g.attrs["mean"]) == 1
print("h5py: ok")
EOF
}

case $mode in
  cli) cli_tests ;;
  interrupt) interrupt_tests ;;
  h5py) h5py_tests ;;
  *) fail "unknown mode" ;;
esac
echo "$mode: ok"
