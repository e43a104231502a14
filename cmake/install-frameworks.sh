#!/usr/bin/env bash
# The venv the framework front-end tests run in (tests/python/test_frameworks.py): Debian's python3 with
# numpy, jax (CPU) and tensorflow-cpu from PyPI, pinned, and neither torch nor h5py (the tests check that
# h5pack needs neither). Made once; remade when the pins below change.
# Usage: install-frameworks.sh [VENV_DIR]   (default: build-venv-frameworks in the source tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$src/cmake/pinned-venv.sh" "frameworks venv" "${1:-$src/build-venv-frameworks}" \
    numpy==1.26.4 jax==0.4.38 jaxlib==0.4.38 tensorflow-cpu==2.18.0
