#!/usr/bin/env bash
# The venv the framework front-end tests run in (tests/python/test_frameworks.py): Debian's python3 with
# numpy, jax (CPU) and tensorflow-cpu from PyPI, pinned, and neither torch nor h5py (the tests check that
# h5pack needs neither). Made once; remade when the pins below change.
# Usage: install-frameworks.sh [VENV_DIR]   (default: build-venv-frameworks in the source tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$src/build-venv-frameworks}
pins=(numpy==1.26.4 jax==0.4.38 jaxlib==0.4.38 tensorflow-cpu==2.18.0)
stamp="$venv/.h5pack-pins"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${pins[*]}" ]; then
    echo "frameworks venv: $venv (${pins[*]})"
    exit 0
fi
python3=/usr/bin/python3
"$python3" -m venv --help >/dev/null 2>&1 || { echo "python3 -m venv needs python3-venv" >&2; exit 1; }
rm -rf "$venv"
"$python3" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"$venv/bin/pip" install -q "${pins[@]}"
echo "${pins[*]}" >"$stamp"
echo "frameworks venv: $venv (${pins[*]})"
