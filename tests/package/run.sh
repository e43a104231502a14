#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds small external programs against it, the way
# users do: CMake find_package(h5pack) with the shared and the static library, and pkg-config (shared,
# and static with --static). Each program reads a tiny HDF5 file through the public API.
# Usage: run.sh BUILD_DIR SOURCE_DIR   (run by ctest: test "package_install")
set -euo pipefail
build=$1 src=$2
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libh5pack.so' | head -1)")
for f in include/h5pack.h include/h5pack_sim.h bin/h5pack "${libdir#$prefix/}/libh5pack.a" "${libdir#$prefix/}/libh5pack.so.0" \
         "${libdir#$prefix/}/cmake/h5pack/h5packConfig.cmake" "${libdir#$prefix/}/cmake/h5pack/h5packConfigVersion.cmake" \
         "${libdir#$prefix/}/pkgconfig/h5pack.pc"; do
    [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
if [ -n "$(find "$build" -name h5pack-stats -type f -perm -u+x -not -path '*/CMakeFiles/*' | head -1)" ]; then
    [ -x "$prefix/bin/h5pack-stats" ] || { echo "not installed: bin/h5pack-stats"; exit 1; }
    "$prefix/bin/h5pack-stats" --help >/dev/null || { echo "installed h5pack-stats does not run"; exit 1; }
fi
"$prefix/bin/h5pack" --version

step "tiny HDF5 file (h5py)"
/usr/bin/python3 - "$work/tiny.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("images", data=np.arange(10 * 3 * 4 * 5, dtype=np.uint8).reshape(10, 3, 4, 5),
                         chunks=(2, 3, 4, 5))
    d.attrs["layout"] = np.bytes_("NCHW")
    f.create_dataset("labels", data=np.arange(10, dtype=np.uint8) % 3)
PY

# build_cmake NAME EXTRA_ARGS...
build_cmake() {
    local name=$1; shift
    step "find_package(h5pack): $name"
    cmake -S "$src/tests/package/consumer" -B "$work/$name" -DCMAKE_PREFIX_PATH="$prefix" \
          -DCMAKE_BUILD_TYPE=Release "$@" >"$work/$name.log" 2>&1 &&
        cmake --build "$work/$name" >>"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
    "$work/$name/consumer" "$work/tiny.h5" 10
}
build_cmake shared
build_cmake static -DH5PACK_STATIC=ON
if ldd "$work/static/consumer" | grep -q libh5pack; then echo "static consumer loads libh5pack.so"; exit 1; fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
step "pkg-config h5pack: $(pkg-config --modversion h5pack)"
# shellcheck disable=SC2046
"$cc" "$src/tests/package/consumer/main.c" -o "$work/pc-shared" $(pkg-config --cflags --libs h5pack) \
      -Wl,-rpath,"$libdir"
"$work/pc-shared" "$work/tiny.h5" 10

step "pkg-config --static h5pack"
static_libs=$(pkg-config --static --libs h5pack | sed 's/-lh5pack\b//')
# shellcheck disable=SC2046,SC2086
"$cc" "$src/tests/package/consumer/main.c" -o "$work/pc-static" $(pkg-config --cflags h5pack) \
      "$libdir/libh5pack.a" $static_libs
if ldd "$work/pc-static" | grep -q libh5pack; then echo "static consumer loads libh5pack.so"; exit 1; fi
"$work/pc-static" "$work/tiny.h5" 10
step "installed Python binding (PYTHONPATH=<prefix>/lib/h5pack/python, no H5PACK_LIBRARY)"
env -u H5PACK_LIBRARY PYTHONPATH="$libdir/h5pack/python" /usr/bin/python3 - "$work/tiny.h5" "$libdir" <<'PY'
import os, sys
import h5pack
loaded = os.path.realpath(h5pack.lib().path_)
assert loaded.startswith(os.path.realpath(sys.argv[2])), f"loaded {loaded}, not the installed library"
n = sum(len(y) for _, y in h5pack.Loader(sys.argv[1], batch_size=4, device="cpu", epochs=1))
assert n == h5pack.info(sys.argv[1])["n_samples"] == 10, n
print(f"h5pack {h5pack.version()} from {loaded}: {n} samples")
PY
echo "package: all consumers built and ran"
