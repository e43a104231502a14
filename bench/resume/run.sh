#!/usr/bin/env bash
# The resume bench (docs/performance.md, "Resume"): a file of 1,281,167 tiny images (ImageNet's count,
# 1 x 4 x 4, chunks of 8: ImageNet's 160,146 chunks for 224 x 224 images packed 8 per chunk) written with
# h5py, then the time from a resume to the first batch at positions across an epoch: the C API
# (bench_resume: h5pack_open with start_batch or start_sample -> h5pack_next) and Python
# (loader_resume.py: load_state_dict -> the first batch). Usage: bench/resume/run.sh BUILD_DIR [FILE]
# $PYTHON (default python3) must have h5py and numpy: Debian's /usr/bin/python3 with python3-h5py.
set -euo pipefail
python=${PYTHON:-python3}
build=${1:?usage: run.sh BUILD_DIR [FILE]}
file=${2:-/tmp/h5pack_resume_bench.h5}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$file" ] || "$python" "$here/make_file.py" "$file"
bench="$build/bench/resume/bench_resume"
# ImageNet's shape: the default window of 222 chunks, a cache of 856 chunks (1 GiB of 1.2 MiB chunks)
imagenet=(--window 222 --cache 110000)
echo "== C, one rank, its own batch (start_batch)"
"$bench" "$file" "${imagenet[@]}"
echo "== C, rank 0 of 8 x 32, a state saved by 4 x 32 (start_sample: another global batch)"
"$bench" "$file" "${imagenet[@]}" --batch 32 --world 8 --saved-world 4
echo "== C, one rank, the default window: every chunk of the file open (the order's worst case)"
"$bench" "$file" --cache 110000000
echo "== C, one rank, RANDOM order (a full permutation)"
"$bench" "$file" --order random --cache 110000
echo "== Python, h5pack.numpy.Loader: load_state_dict -> first batch, a state of 4 x 64 loaded by 2 x 64"
PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}" "$python" "$here/loader_resume.py" "$file" \
    --batch 64 --world 2 --saved-world 4 --window 222 --cache 110000
