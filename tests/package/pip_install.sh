#!/usr/bin/env bash
# pip as users run it, from the source tree (docs/python.md, "Install"):
#   1. python3 -m venv --system-site-packages A && A/bin/pip install SRC   (scikit-build-core from the
#      package registry; numpy, h5py and torch from the system)
#   2. A/bin/pip wheel SRC, installed into a second venv B: no source tree needed
#   3. the wheel in a venv C without the system's packages, numpy from PyPI: no torch, no h5py
# and in each venv, from a folder outside the tree with PYTHONPATH and H5PACK_LIBRARY unset: h5pack and
# h5pack-stats on the venv's PATH convert and describe a generated folder, and `import h5pack` finds the
# package's own libh5pack and streams the file. The CUDA backend is left out of these builds (time: the
# build is the same code as the project's own).
# Usage: pip_install.sh BUILD_DIR SOURCE_DIR   (ctest: package_pip; exit 77 without the package registry)
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
step() { echo "== $*"; }
fail() { echo "FAILED: $*"; exit 1; }
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
unset PYTHONPATH H5PACK_LIBRARY
cfg=(--config-settings=cmake.define.H5PACK_WITH_CUDA=OFF --config-settings=build-dir="$work/pipbuild")

"$py" -m venv --system-site-packages "$work/A" || fail "python3 -m venv (Debian: python3-venv)"
if ! "$work/A/bin/pip" download --no-deps -q -d "$work/probe" "scikit-build-core>=0.10" >/dev/null 2>&1; then
    echo "skipped: the package registry (PyPI) cannot be reached for the build backend"
    exit 77
fi

step "pip install $src (venv A)"
"$work/A/bin/pip" install -q "${cfg[@]}" "$src" || fail "pip install"

step "pip wheel $src, installed into venv B"
"$work/A/bin/pip" wheel -q --no-deps "${cfg[@]}" -w "$work/wheels" "$src" || fail "pip wheel"
wheel=$(ls "$work"/wheels/h5pack-*.whl)
"$py" -m venv --system-site-packages "$work/B"
"$work/B/bin/pip" install -q --no-index "$wheel" || fail "installing the wheel"

"$build/h5pack-gen-images" "$work/images" --classes 3 --per-class 10 --seed 2 >/dev/null
mkdir "$work/elsewhere"
for v in A B; do
    step "venv $v: the programs and the package, outside the source tree"
    bin=$work/$v/bin
    [ "$(command -v "$bin/h5pack")" = "$bin/h5pack" ] && [ -x "$bin/h5pack-stats" ] || fail "$v: programs not in bin/"
    (cd "$work/elsewhere" && PATH="$bin:$PATH" h5pack -q --size 32x32 --batch 8 "$work/images" "$v.h5") ||
        fail "$v: h5pack on the PATH"
    (cd "$work/elsewhere" && PATH="$bin:$PATH" h5pack-stats info "$v.h5" >/dev/null) || fail "$v: h5pack-stats"
    (cd "$work/elsewhere" && "$bin/python" - "$v.h5" "$work/$v" <<'PY') || fail "$v: import h5pack"
import os, sys
import h5pack
from h5pack import _lib
venv = os.path.realpath(sys.argv[2])
assert os.path.realpath(h5pack.__file__).startswith(venv), f"h5pack imported from {h5pack.__file__}"
own = _lib.library_candidates()[0]
assert os.path.realpath(own).startswith(venv) and own.endswith("libh5pack.so"), f"library {own}"
n = 0
with h5pack.Loader(sys.argv[1], batch_size=8, device="cpu") as loader:
    for images, labels in loader:
        n += len(labels)
assert n == 30, n
print(f"{h5pack.__file__}: {n} images through its own {own}")
PY
done
step "venv C: the wheel with numpy alone (no system packages: no torch, no h5py)"
"$py" -m venv "$work/C"
"$work/C/bin/pip" install -q numpy || fail "numpy into venv C"
"$work/C/bin/pip" install -q --no-index "$wheel" || fail "installing the wheel into venv C"
(cd "$work/elsewhere" && "$work/C/bin/python" - A.h5 <<'PY') || fail "C: import h5pack without torch"
import sys
import h5pack
import h5pack.numpy
info = h5pack.info(sys.argv[1])
n = sum(len(labels) for _, labels in h5pack.numpy.Loader(sys.argv[1], batch_size=8))
others = [m for m in ("torch", "h5py", "jax", "tensorflow") if m in sys.modules]
assert n == 30 and not others, (n, others)
assert len(info["classes"]) == 3 and len(info["filenames"]) == 30, info
print(f"numpy alone: {n} images through h5pack.numpy.Loader, classes {info['classes']}")
try:
    h5pack.Loader(sys.argv[1])
except ImportError as e:
    print(f"h5pack.Loader without torch: ImportError ({e})")
else:
    raise SystemExit("h5pack.Loader worked without torch?")
PY
echo "pip: install from the tree and from a wheel, programs and package work without the tree; numpy alone suffices"
