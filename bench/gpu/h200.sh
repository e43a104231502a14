#!/usr/bin/env bash
# The GPU checks of the CUDA backend in one device call (see docs/gpu.md and ../shared/device/README.md).
#   here:            bash bench/gpu/h200.sh prepare   (builds for sm_90 into build-backend-h200, bundles the programs)
#   device command:  . .devbundle/env.sh; bash bench/gpu/h200.sh run     (carry: [".devbundle"])
# "run" writes gpu-tests.log and gpu-bench.log under $OUT (or the current directory).
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
case "${1:-}" in
prepare)
  cmake -S . -B build-backend-h200 -DCMAKE_BUILD_TYPE=Release -DH5PACK_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build build-backend-h200 -j2 --target backend_gpu backend_cuda_setup backend_kernel_emulated bench_gpu
  ../shared/device/bundle.sh build-backend-h200/tests/backend/backend_gpu build-backend-h200/tests/backend/backend_cuda_setup \
    build-backend-h200/tests/backend/backend_kernel_emulated build-backend-h200/bench/gpu/bench_gpu
  ;;
run)
  out=${OUT:-.}
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu-tests.log"
  for t in backend_cuda_setup backend_kernel_emulated backend_gpu; do
    echo "== $t" | tee -a "$out/gpu-tests.log"
    "$t" 2>&1 | tee -a "$out/gpu-tests.log" || echo "$t: exit status $?" | tee -a "$out/gpu-tests.log"
  done
  echo "== bench_gpu --batch 256 --size 224x224 --iters 100" | tee "$out/gpu-bench.log"
  bench_gpu --batch 256 --size 224x224 --iters 100 2>&1 | tee -a "$out/gpu-bench.log" || echo "bench_gpu: exit status $?" | tee -a "$out/gpu-bench.log"
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
