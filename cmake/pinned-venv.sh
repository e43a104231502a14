#!/usr/bin/env bash
# A venv of Debian's python3 with pinned packages from PyPI, made once and remade when the pins change
# (a stamp file in the venv holds them). The test venvs' scripts call it: install-frameworks.sh,
# install-s3-test.sh.
# Usage: pinned-venv.sh LABEL VENV_DIR PIN...
set -euo pipefail
label=$1 venv=$2
shift 2
pins=("$@")
stamp="$venv/.h5pack-pins"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${pins[*]}" ]; then
    echo "$label: $venv (${pins[*]})"
    exit 0
fi
python3=/usr/bin/python3
"$python3" -m venv --help >/dev/null 2>&1 || { echo "python3 -m venv needs python3-venv" >&2; exit 1; }
rm -rf "$venv"
"$python3" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"$venv/bin/pip" install -q "${pins[@]}"
echo "${pins[*]}" >"$stamp"
echo "$label: $venv (${pins[*]})"
