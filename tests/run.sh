#!/usr/bin/env bash
# Builds h5pack and runs every test, then the same suite under AddressSanitizer+UBSan and the threaded
# reader tests under ThreadSanitizer, and the one-HDF5-lock test built with clang. Installs missing Debian
# packages first. Prints ctest's summary of
# each build and a total line at the end.
#   bash tests/run.sh            everything (what CI runs)
#   H5PACK_QUICK=1 bash tests/run.sh   the plain build only
set -uo pipefail
cd "$(dirname "$0")/.."
bash cmake/install-deps.sh --with-python --with-mpi || { echo "could not install the dependencies" >&2; exit 1; }
# numpy, jax (CPU) and tensorflow-cpu in a venv without torch: the framework front-ends' test must run here.
bash cmake/install-frameworks.sh || echo "could not make the frameworks venv (PyPI): python_frameworks will fail" >&2
export H5PACK_REQUIRE_FRAMEWORKS=1
# moto (an S3-compatible server on 127.0.0.1) in a venv: the s3:// store's test (tests/remote/test_s3.py) must run here.
bash cmake/install-s3-test.sh || echo "could not make the s3 test venv (PyPI): remote_s3 will fail" >&2
export H5PACK_REQUIRE_S3_TEST=1
jobs=$(nproc)
# The memcheck test (valgrind over a generated corpus, label "memcheck", in the plain build) fails
# instead of skipping when valgrind or PIL is missing: here it must run.
export H5PACK_REQUIRE_MEMCHECK=1
passed=0 failed=0 skipped=0 status=0

# run_suite NAME BUILD_DIR "CMAKE ARGS" "CTEST ARGS" ["BUILD TARGETS" (default: all)]
run_suite() {
  local name=$1 dir=$2 cmake_args=$3 ctest_args=$4 targets=${5:-} log
  echo "== $name: configure and build ($dir)"
  # shellcheck disable=SC2086
  if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo $cmake_args >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"; echo "$name: configure failed"; status=1; failed=$((failed + 1)); return
  fi
  # shellcheck disable=SC2086
  if ! cmake --build "$dir" -j "$jobs" ${targets:+--target $targets} >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "$name: build failed"; status=1; failed=$((failed + 1)); return
  fi
  grep -E "warning:" "$dir.build.log" | sort -u | head -20 || true
  echo "== $name: ctest"
  log=$(mktemp)
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 $ctest_args 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  local total nfail nskip
  total=$(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\2/p' "$log" | tail -1)
  nfail=$(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  # ctest counts a skipped test (exit 77, e.g. "skipped: no GPU") among the passed ones: not us.
  nskip=$(grep -c '\*\*\*Skipped' "$log" || true)
  if [ -z "$total" ]; then echo "$name: ctest printed no summary"; status=1; failed=$((failed + 1));
  else passed=$((passed + total - nfail - nskip)); failed=$((failed + nfail)); skipped=$((skipped + nskip)); fi
  rm -f "$log"
}

run_suite "plain" build-test "" ""
if [ "${H5PACK_QUICK:-0}" != 1 ]; then
  run_suite "asan+ubsan" build-asan \
    "-DH5PACK_SANITIZE=address,undefined -DH5PACK_WITH_CUDA=OFF -DH5PACK_BUILD_BENCH=OFF -DH5PACK_BUILD_SAMPLES=OFF" \
    "-LE slow|nosan"
  run_suite "tsan" build-tsan \
    "-DH5PACK_SANITIZE=thread -DH5PACK_WITH_CUDA=OFF -DH5PACK_BUILD_BENCH=OFF -DH5PACK_BUILD_SAMPLES=OFF" \
    "-L threads"
  # clang inlines exported functions inside the library: the one-lock test must hold there too
  run_suite "clang one lock" build-clang \
    "-DCMAKE_C_COMPILER=clang -DH5PACK_WITH_CUDA=OFF -DH5PACK_BUILD_BENCH=OFF -DH5PACK_BUILD_SAMPLES=OFF" \
    "-R ^common_one_lock$" "test_common_one_lock"
fi
echo "total: $passed passed, $failed failed, $skipped skipped"
exit $status
