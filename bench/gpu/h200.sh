#!/usr/bin/env bash
# The GPU checks of the CUDA backend in one device call (see docs/gpu.md and ../shared/device/README.md).
#   here:            bash bench/gpu/h200.sh prepare   (builds for sm_90 into build-backend-h200, bundles the programs)
#   device command:  . .devbundle/env.sh; bash bench/gpu/h200.sh run     (carry: [".devbundle"])
# "run" writes gpu-tests.log, gpu-bench.log and e2e.log under $OUT (or the current directory).
# e2e: 5,000 generated images packed at 224x224, then h5pack-stats run on the GPU with all cores, batch
# 256: the reader alone (consumer does nothing: top speed), and a consumer spending 20 ms per batch
# (more than the load time: the stall fraction must fall below 1%).
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
# End to end on the device: generate, pack, stream on the GPU with every core.
e2e() {
  local data=/tmp/h5pack-e2e cores
  cores=$(nproc)
  rm -rf "$data"; mkdir -p "$data"
  h5pack-gen-images "$data/images" --classes 20 --per-class 250 --seed 1 --min-size 256 --max-size 400
  h5pack -q --size 224x224 --batch 256 "$data/images" "$data/e2e.h5"
  cat "$data/e2e.h5" > /dev/null   # into the page cache
  echo "== reader alone: h5pack-stats run --device cuda --threads $cores --batch 256 --epochs 5"
  h5pack-stats run "$data/e2e.h5" --device cuda --threads "$cores" --batch 256 --epochs 5 --cache 2G
  echo "== consumer spending 20 ms per batch"
  h5pack-stats run "$data/e2e.h5" --device cuda --threads "$cores" --batch 256 --epochs 3 --cache 2G --step-ms 20
}

case "${1:-}" in
prepare)
  cmake -S . -B build-backend-h200 -DCMAKE_BUILD_TYPE=Release -DH5PACK_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build build-backend-h200 -j2 --target backend_gpu backend_cuda_setup backend_kernel_emulated \
    backend_resample_emulated bench_gpu \
    h5pack_cli h5pack_gen_images h5pack_stats
  mkdir -p .git/info  # bundle.sh records .devbundle in .git/info/exclude
  ../shared/device/bundle.sh build-backend-h200/tests/backend/backend_gpu build-backend-h200/tests/backend/backend_cuda_setup \
    build-backend-h200/tests/backend/backend_kernel_emulated build-backend-h200/tests/backend/backend_resample_emulated \
    build-backend-h200/bench/gpu/bench_gpu \
    build-backend-h200/h5pack build-backend-h200/h5pack-gen-images build-backend-h200/h5pack-stats
  ;;
run)
  out=${OUT:-.}
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu-tests.log"
  for t in backend_cuda_setup backend_kernel_emulated backend_resample_emulated backend_gpu; do
    echo "== $t" | tee -a "$out/gpu-tests.log"
    "$t" 2>&1 | tee -a "$out/gpu-tests.log" || echo "$t: exit status $?" | tee -a "$out/gpu-tests.log"
  done
  echo "== bench_gpu --batch 256 --size 224x224 --iters 100" | tee "$out/gpu-bench.log"
  bench_gpu --batch 256 --size 224x224 --iters 100 2>&1 | tee -a "$out/gpu-bench.log" || echo "bench_gpu: exit status $?" | tee -a "$out/gpu-bench.log"
  e2e "$out" 2>&1 | tee "$out/e2e.log" || echo "e2e: exit status $?" | tee -a "$out/e2e.log"
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
