#!/usr/bin/env bash
# The venv the s3:// store's test runs its S3-compatible server from (tests/remote/test_s3.py): Debian's
# python3 with moto (its S3 server mode, with boto3 to fill it) from PyPI, pinned. The test itself runs
# Debian's python3 (numpy, torch) and starts `VENV/bin/python -m moto.server` on 127.0.0.1 only. Made
# once; remade when the pins below change.
# Usage: install-s3-test.sh [VENV_DIR]   (default: build-venv-s3 in the source tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$src/cmake/pinned-venv.sh" "s3 test venv" "${1:-$src/build-venv-s3}" \
    "moto[s3]==5.1.22" flask==3.1.3 flask-cors==6.0.5
