#!/usr/bin/env bash
# h5pack under mpirun writes the file the serial h5pack writes (docs/scale-out.md):
#   mpi_test.sh H5PACK GEN_IMAGES H5PACK_STATS MPIEXEC
# For 1, 2 and 3 ranks (oversubscribed: more ranks than cores is fine) and for each option set, h5diff
# finds no difference in any dataset or attribute, and the images' chunks are byte for byte the serial
# ones (uncompressed: at the same computed addresses, the reader's fast path). The folder mixes JPEG and
# PNG with corrupt files, so skips shift rows across ranks. Then: --strict stops every rank with exit
# status 2, a failed rank and a rank killed with -9 end the job non-zero with nothing under the final
# name, and the failed rank's message is printed.
set -u
H5PACK=$1 GEN=$2 STATS=$3 MPIEXEC=$4
PY=/usr/bin/python3
"$H5PACK" --version | grep -q "built with MPI" || { echo "FAIL (mpi): --version does not say MPI" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5pack-mpi-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL (mpi): $*" >&2; [ -f "$tmp/err" ] && sed 's/^/  stderr: /' "$tmp/err" >&2; exit 1; }
# as root (CI), Open MPI needs both of these
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { local n=$1; shift; "$MPIEXEC" --oversubscribe -n "$n" "$@"; }

"$GEN" "$tmp/src" --classes 3 --per-class 45 --seed 7 --min-size 40 --max-size 90 --png-fraction 0.25 >/dev/null ||
  fail "could not generate images"
echo "not an image" >"$tmp/src/class_01/bad.jpg"
first=$(ls "$tmp/src/class_00" | grep jpg | head -1)
head -c 200 "$tmp/src/class_00/$first" >"$tmp/src/class_02/truncated.jpg"
printf '\x89PNG\r\n\x1a\nxxxx' >"$tmp/src/class_00/broken.png"
# a label table for --labels: two columns per image
{ echo "path,a,b"; i=0; for f in $(cd "$tmp/src" && ls */*); do echo "$f,$i,$((i % 3 - 1))"; i=$((i + 1)); done; } \
  >"$tmp/labels.csv"

# same_chunks SERIAL OTHER: every chunk's stored bytes equal; for an unfiltered file also at computed addresses.
same_chunks() {
  "$PY" - "$1" "$2" <<'EOF' || fail "chunks of $2 differ from the serial file's"
import sys, h5py
a, b = (h5py.File(p, "r")["images"] for p in sys.argv[1:3])
n = a.id.get_num_chunks()
assert n == b.id.get_num_chunks(), (n, b.id.get_num_chunks())
for i in range(n):
    ia, ib = a.id.get_chunk_info(i), b.id.get_chunk_info(i)
    assert ia.chunk_offset == ib.chunk_offset and ia.size == ib.size, (i, ia, ib)
    fa, da = a.id.read_direct_chunk(ia.chunk_offset)
    fb, db = b.id.read_direct_chunk(ib.chunk_offset)
    assert fa == fb and da == db, ("chunk", i)
    if a.compression is None:  # the reader's fast path: chunk i at chunk 0's address + i * size
        assert ib.byte_offset == b.id.get_chunk_info(0).byte_offset + i * ib.size, ("address", i)
EOF
}

# compare NAME RANKS OPTIONS...: serial vs mpirun -n RANKS with the same options
compare() {
  local name=$1 n=$2; shift 2
  [ -f "$tmp/$name.serial.h5" ] || "$H5PACK" -q -j 2 "$@" "$tmp/src" "$tmp/$name.serial.h5" 2>"$tmp/err" ||
    fail "$name: serial run"
  mpi "$n" "$H5PACK" -j 1 "$@" "$tmp/src" "$tmp/$name.$n.h5" >"$tmp/out" 2>"$tmp/err" ||
    fail "$name: mpirun -n $n exited $?"
  h5diff "$tmp/$name.serial.h5" "$tmp/$name.$n.h5" >"$tmp/diff" 2>&1 ||
    { cat "$tmp/diff" >&2; fail "$name: h5diff finds differences with $n ranks"; }
  h5diff -c "$tmp/$name.serial.h5" "$tmp/$name.$n.h5" | grep -v "empty dataset" | grep -q "Not comparable" &&
    fail "$name: objects h5diff cannot compare"
  same_chunks "$tmp/$name.serial.h5" "$tmp/$name.$n.h5"
  if [ "$n" -gt 1 ]; then
    for r in $(seq 0 $((n - 1))); do
      grep -q "rank $r of $n: decoded [0-9]* images" "$tmp/err" || fail "$name: no report for rank $r"
    done
    [ "$(grep -c "rank . of $n: decoded" "$tmp/err")" -eq "$n" ] || fail "$name: one report per rank expected"
    grep -q "images/s, $n ranks x 1 thread)" "$tmp/err" || fail "$name: the summary does not name the ranks"
  fi
}

for n in 1 2 3; do compare plain "$n" --size 32x40; done
compare chunk5 2 --size 32x40 --chunk 5
compare chunk5 3 --size 32x40 --chunk 5
compare gzip 3 --size 32x40 --compress gzip --chunk 4
compare gzip_checksum 2 --size 24x24 --compress gzip:1 --checksum
compare nhwc 3 --size 30x20 --layout nhwc --chunk 7
compare labels 3 --size 32x32 --labels "$tmp/labels.csv"
compare gray 3 --size 28x28 --channels 1 --chunk 3
compare keep_order 2 --size 16x16 --keep-order --seed 3
# more ranks than chunks: whole chunks are rare, most rows go to rank 0
compare big_chunks 3 --size 16x16 --chunk 64

# fewer images than ranks; a folder where nothing decodes (exit 1 with rank 0's message, nothing written)
"$GEN" "$tmp/two" --classes 1 --per-class 2 --seed 3 >/dev/null
"$H5PACK" -q --size 16x16 "$tmp/two" "$tmp/two.serial.h5" || fail "two images: serial run"
mpi 3 "$H5PACK" -q --size 16x16 "$tmp/two" "$tmp/two.3.h5" 2>"$tmp/err" || fail "two images, three ranks: exit $?"
h5diff "$tmp/two.serial.h5" "$tmp/two.3.h5" >/dev/null || fail "two images, three ranks: differs from serial"
mkdir -p "$tmp/bad/c"; for i in 1 2 3; do echo junk >"$tmp/bad/c/x$i.jpg"; done
mpi 3 "$H5PACK" -q --size 16x16 "$tmp/bad" "$tmp/bad.h5" 2>"$tmp/err" && fail "nothing decodes: mpirun exited 0"
grep -q "rank 0 of 3: error: no image could be converted (3 skipped)" "$tmp/err" || fail "nothing decodes: message"
[ -e "$tmp/bad.h5" ] && fail "nothing decodes: a file was written"

# ranks that see different folders (MPMD: rank 1 gets another SRC): refused, rank 0 says why
"$MPIEXEC" --oversubscribe -n 1 "$H5PACK" -q --size 16x16 "$tmp/src" "$tmp/mixed.h5" : \
  -n 1 "$H5PACK" -q --size 16x16 "$tmp/two" "$tmp/mixed.h5" 2>"$tmp/err" && fail "different folders: accepted"
grep -q "rank 0 of 2: error: the ranks see different folders" "$tmp/err" || fail "different folders: message"
[ -e "$tmp/mixed.h5" ] && fail "different folders: a file was written"
# a rank that cannot read its folder (rank 0 can): that rank's own message
"$MPIEXEC" --oversubscribe -n 1 "$H5PACK" -q --size 16x16 "$tmp/two" "$tmp/own.h5" : \
  -n 1 "$H5PACK" -q --size 16x16 "$tmp/missing" "$tmp/own.h5" 2>"$tmp/err" && fail "a rank without its folder: exit 0"
grep -q "rank 1 of 2: error: .*missing" "$tmp/err" || fail "a rank without its folder: its message is missing"

# the fast path of the reader on the MPI-written file
"$STATS" info "$tmp/plain.3.h5" 2>&1 | grep -q "fast (pread) path\|mapped" || fail "plain.3.h5: not on the reader's fast path"

# --strict: exit status 2 on every rank, nothing written
mpi 3 "$H5PACK" -q --strict --size 32x40 "$tmp/src" "$tmp/strict.h5" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "--strict under mpirun: exit $rc, expected 2"
[ -e "$tmp/strict.h5" ] && fail "--strict under mpirun left a file"
ls -A "$tmp" | grep -q "h5pack-" && fail "--strict: a temporary file was left: $(ls -A "$tmp")"

# several sizes without --size: refused under mpirun with a clear message, nothing written
mpi 2 "$H5PACK" -q "$tmp/src" "$tmp/ragged.h5" 2>"$tmp/err" && fail "images of several sizes accepted under mpirun"
grep -q "images of several sizes" "$tmp/err" || fail "the refusal of several sizes does not say why"
[ "$(grep -c "images of several sizes" "$tmp/err")" -eq 1 ] || fail "the refusal is printed by more than rank 0"

# a rank that fails (a write error on rank 1, injected): non-zero, its message, nothing left behind
H5PACK_MPI_TEST_FAIL_RANK=1 mpi 3 "$H5PACK" -q --size 32x40 "$tmp/src" "$tmp/failed.h5" 2>"$tmp/err" &&
  fail "a failed rank: mpirun exited 0"
grep -q "rank 1 of 3: error: .*injected write failure" "$tmp/err" || fail "a failed rank: its message is missing"
[ -e "$tmp/failed.h5" ] && fail "a failed rank left the final file"
ls -A "$tmp" | grep -q "h5pack-" && fail "a failed rank left a temporary file: $(ls -A "$tmp")"

# a rank killed with -9 in the middle: mpirun ends the job non-zero; nothing under the final name
"$GEN" "$tmp/many" --classes 2 --per-class 400 --seed 1 --min-size 200 --max-size 300 >/dev/null
mpi 3 "$H5PACK" -q -j 1 --size 128x128 "$tmp/many" "$tmp/killed.h5" 2>"$tmp/err" &
job=$!
victim=""
for _ in $(seq 1 100); do # find rank 2 by its environment
  for p in $(pgrep -f "killed.h5" || true); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=2" && victim=$p
  done
  [ -n "$victim" ] && break
  sleep 0.05
done
[ -n "$victim" ] || fail "kill -9: rank 2 not found"
sleep 0.3
kill -9 "$victim"
wait "$job" && fail "kill -9 of a rank: mpirun exited 0"
[ -e "$tmp/killed.h5" ] && fail "kill -9 of a rank left the final file"
echo "mpi: serial == mpirun -n 1/2/3 for 10 option sets (h5diff, chunk bytes, addresses); strict, refusal, failed and killed ranks"
