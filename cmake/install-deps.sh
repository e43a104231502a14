#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and the demo need, if any are missing.
# Usage: bash cmake/install-deps.sh [--with-python] [--with-mpi]
#   --with-python  python3-h5py/-torch/-pil for tests and samples, clang for the fuzzers, valgrind for the
#                  memcheck test
#   --with-mpi     Open MPI (compiler wrappers, mpirun): the build then makes h5pack convert under mpirun
#                  (docs/scale-out.md), and the MPI tests run
set -euo pipefail
# libcurl4-openssl-dev (with OpenSSL's libcrypto): the http(s):// and s3:// stores; optional to the build
pkgs=(build-essential cmake pkg-config libhdf5-dev hdf5-tools libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev
      libdeflate-dev zlib1g-dev libcurl4-openssl-dev)
for opt in "$@"; do
  case $opt in
  --with-python)
    pkgs+=(python3 python3-venv python3-numpy python3-h5py python3-pil python3-torch clang libclang-rt-14-dev
          valgrind) ;;
  --with-mpi) pkgs+=(libopenmpi-dev openmpi-bin) ;;
  *) echo "install-deps.sh: unknown option $opt (--with-python, --with-mpi)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
