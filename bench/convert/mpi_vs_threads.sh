#!/usr/bin/env bash
# The MPI converter's overhead on one machine (docs/scale-out.md): `mpirun -n P h5pack -j 1` against
# `h5pack -j P` on the same folder, alternated ROUNDS times so a change in the machine's load hits both:
# wall time and CPU seconds (user + system of the whole process tree), the best round of each, and the
# ratios (goal: MPI's CPU seconds <= 1.10x the threads'). Both files are compared (h5diff) once.
# Also prints the per-rank inputs of the scaling model: each rank's decode rate and its wait for the
# others, from h5pack's own report.
# Usage: bash bench/convert/mpi_vs_threads.sh BUILD_DIR [P=2] [IMAGES=2000] [ROUNDS=3] [SIZE=224x224]
# Images: generated photos of 256-400 px (JPEG, 10% PNG) in $BENCH_DIR (default /tmp/h5pack-bench-mpi).
set -euo pipefail
build=$(cd "$1" && pwd)
P=${2:-2}
images=${3:-2000}
rounds=${4:-3}
size=${5:-224x224}
dir=${BENCH_DIR:-/tmp/h5pack-bench-mpi}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
command -v mpirun >/dev/null || { echo "skipped: no mpirun (bash cmake/install-deps.sh --with-mpi)"; exit 0; }
"$build/h5pack" --version | grep -q "built with MPI" || { echo "skipped: h5pack built without MPI"; exit 0; }
mkdir -p "$dir"
if [ ! -d "$dir/img" ]; then
  per=$((images / 4))
  "$build/h5pack-gen-images" "$dir/img" --classes 4 --per-class "$per" --seed 11 --min-size 256 --max-size 400 \
    --png-fraction 0.1 >/dev/null
fi
cat "$dir"/img/*/* >/dev/null # page cache warm

# run LABEL CMD...: prints "LABEL wall user sys" (seconds; the process tree's CPU from /usr/bin/time)
run() {
  local label=$1; shift
  /usr/bin/time -f "$label %e %U %S" -o "$dir/time" "$@" >"$dir/$label.out" 2>&1 || { cat "$dir/$label.out"; exit 1; }
  cat "$dir/time"
}
results=$dir/results
: >"$results"
# the fixed cost of starting P ranks (mpirun, MPI_Init and MPI_Finalize) on a folder of 2 images
mkdir -p "$dir/tiny"
[ -d "$dir/tiny/img" ] || "$build/h5pack-gen-images" "$dir/tiny/img" --classes 1 --per-class 2 >/dev/null
for r in 1 2 3; do
  run startup mpirun --bind-to none -n "$P" "$build/h5pack" -q -f -j 1 --size "$size" "$dir/tiny/img" "$dir/tiny.h5" \
    >>"$results"
done
for r in $(seq 1 "$rounds"); do
  run threads "$build/h5pack" -f -j "$P" --size "$size" "$dir/img" "$dir/threads.h5" | tee -a "$results"
  run mpi mpirun --bind-to none -n "$P" "$build/h5pack" -f -j 1 --size "$size" "$dir/img" "$dir/mpi.h5" | tee -a "$results"
done
h5diff "$dir/threads.h5" "$dir/mpi.h5" >/dev/null && echo "files: h5diff finds no difference" || echo "files: DIFFERENT"
grep "rank .* of $P: decoded" "$dir/mpi.out" | sed 's/^h5pack: /last mpi round: /'
awk -v P="$P" '
  { cpu = $3 + $4
    if (!($1 in wall) || $2 < wall[$1]) wall[$1] = $2
    if (!($1 in best_cpu) || cpu < best_cpu[$1]) best_cpu[$1] = cpu }
  END {
    printf "best of each: threads %.2f s wall, %.2f CPU s; mpi %.2f s wall, %.2f CPU s\n",
           wall["threads"], best_cpu["threads"], wall["mpi"], best_cpu["mpi"]
    printf "mpirun -n %d / h5pack -j %d: wall %.3fx, CPU seconds %.3fx (goal <= 1.10)\n", P, P,
           wall["mpi"] / wall["threads"], best_cpu["mpi"] / best_cpu["threads"]
    printf "starting %d ranks on 2 images: %.2f s wall, %.2f CPU s; without it: wall %.3fx, CPU seconds %.3fx\n", P,
           wall["startup"], best_cpu["startup"], (wall["mpi"] - wall["startup"]) / wall["threads"],
           (best_cpu["mpi"] - best_cpu["startup"]) / best_cpu["threads"]
  }' "$results"
