#!/usr/bin/env bash
# The GPU issue's whole device check in one call (docs/gpu.md, "On a GPU machine"; ../shared/device/README.md):
#   here:    bash bench/gpu/device_run.sh prepare     build for sm_90 (build-gpu/), bundle into .devbundle/
#   here:    bash bench/gpu/device_run.sh dry         the host parts on a small data set, no GPU needed
#   device:  . .devbundle/env.sh; bash bench/gpu/device_run.sh run      (carry: [".devbundle"])
# "run" writes one log, $OUT/<date>-<gpu>.log (commit it under bench/gpu/results/). Its result lines are
# `key: value`, one per line, a contract that checks read (bench/gpu/results/README.md lists the keys).
# Each stage has its own time limit; a failing stage says so and the rest still run.
set -uo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
root=$PWD
build=${H5PACK_GPU_BUILD:-build-gpu}
data=${H5PACK_GPU_DATA:-/tmp/h5pack-device}
cores=$(nproc)
cuda_tests="backend_cuda_setup backend_kernel_emulated backend_resample_emulated backend_gpu reader_life"

# seconds CMD...: runs CMD (its output to stderr) and prints its wall time in seconds
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >&2 || { echo "FAILED($?)"; return 0; }
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
# py SECONDS ARGS: python3 (limited to SECONDS) with only the bundled libraries the system lacks (libh5pack, HDF5's) on its library path:
# the bundle's libstdc++, libssl or libz must not shadow the newer ones that torch was built against.
py() {
  local pylib=$data/pylib f n
  if [ ! -d "$pylib" ]; then
    mkdir -p "$pylib"
    for f in "$root"/.devbundle/lib/*; do
      n=$(basename "$f")
      ldconfig -p | grep -q "^[[:space:]]*$n (" || ln -sf "$f" "$pylib/$n"
    done
  fi
  local limit=$1; shift
  timeout "$limit" env LD_LIBRARY_PATH="$pylib" "${H5PACK_PYTHON:-python3}" "$@"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "n/a" }'; }
# value KEY FILE: the last "KEY: value" of FILE
value() { sed -n "s/^$1: //p" "$2" | tail -1; }

# The GPU tests: each prints Passed, or Failed with its status; a skip on the device is a failure.
gpu_tests() {
  local t rc dir
  for t in $cuda_tests; do
    dir=$(mktemp -d)
    (cd "$dir" && timeout 90 "test_$t") >"$dir.log" 2>&1
    rc=$?
    tail -3 "$dir.log" | sed "s/^/  $t| /"
    case $rc in 0) echo "test $t: Passed" ;; 77) echo "test $t: Failed (skipped on the device)" ;;
                *) echo "test $t: Failed (exit status $rc)" ;; esac
  done
  (cd tests/python && PYTHONPATH="$root/python:$root/tests/python" py 150 test_loader_gpu.py) \
    >"$data/py.log" 2>&1
  rc=$?
  tail -5 "$data/py.log" | sed "s/^/  python_loader_gpu| /"
  case $rc in 0) echo "test python_loader_gpu: Passed" ;; 77) echo "test python_loader_gpu: Failed (skipped on the device)" ;;
              *) echo "test python_loader_gpu: Failed (exit status $rc)" ;; esac
  # patches (issue 24): CUDA patches equal the CPU's (its GPU part prints "skipped: no GPU" without one)
  (cd "$(mktemp -d)" && PYTHONPATH="$root/python:$root/tests/pyhelp" py 150 "$root/tests/python/test_patches.py" \
    "$(command -v h5pack)") >"$data/patches.log" 2>&1
  rc=$?
  tail -3 "$data/patches.log" | sed "s/^/  python_patches| /"
  if [ $rc = 0 ] && ! grep -q "skipped: no GPU" "$data/patches.log"; then echo "test python_patches: Passed"
  else echo "test python_patches: Failed (exit status $rc$(grep -q 'skipped: no GPU' "$data/patches.log" && echo ', GPU part skipped'))"; fi
}

# Patches (issue 24): device memory of a sliding pass over a 4000^2 and a 16000^2 image (the same ring).
patch_figures() {
  PYTHONPATH="$root/python" py 240 bench/gpu/patches_device.py --build "$(dirname "$(command -v h5pack)")" \
    --work "$data/patches" --threads "$cores" || echo "patches_device: exit status $?"
}

# Synthetic photos (256..400 px, JPEG and some PNG) made by 16 generators at once: PER x 2 classes each.
make_images() {
  local per=$1 k
  rm -rf "$data/img" "$data/gen" "$data/sub"; mkdir -p "$data/img" "$data/gen"
  for k in $(seq 0 15); do
    h5pack-gen-images "$data/gen/$k" --classes 2 --per-class "$per" --seed "$k" --min-size 256 --max-size 400 \
      --png-fraction 0.1 >/dev/null &
  done
  wait
  for k in $(seq 0 15); do
    mv "$data/gen/$k/class_00" "$data/img/c${k}a"; mv "$data/gen/$k/class_01" "$data/img/c${k}b"
  done
  mkdir -p "$data/sub"; for k in 0 1 2 3; do cp -al "$data/img/c${k}a" "$data/img/c${k}b" "$data/sub/"; done
  echo "images: $(find "$data/img" -type f | wc -l) in $data/img, $(find "$data/sub" -type f | wc -l) in the subset"
}

# The GPU idle share behind a consumer whose step is sized below the reader's capacity under load.
idle_figures() {
  local f=$data/e2e.h5 e2e work
  e2e=$(value samples_per_s "$data/speed.log" 2>/dev/null)
  if [ -z "$e2e" ]; then
    cat "$f" >/dev/null
    timeout 60 gpu_feed "$f" --threads "$cores" --epochs 3 --cache 1G >"$data/speed.log"
    e2e=$(value samples_per_s "$data/speed.log")
    echo "e2e_samples_per_s: ${e2e:-n/a}"
  fi
  # the consumer's step is sized below the reader's capacity: 1.25 x the time the reader needs per batch
  # while a consumer keeps every SM busy (its speed under load, measured with a step of its top-speed time)
  local top_work load
  top_work=$(awk -v r="${e2e:-0}" 'BEGIN { printf "%.0f", (r > 0 ? 256 / r * 1e6 : 8000) }')
  timeout 60 gpu_feed "$f" --threads "$cores" --epochs 1 --cache 1G --work-us "$top_work" >"$data/load.log"
  load=$(value samples_per_s "$data/load.log")
  echo "reader_under_load_samples_per_s: ${load:-n/a}"
  work=$(awk -v r="${load:-0}" 'BEGIN { printf "%.0f", (r > 0 ? 1.25 * 256 / r * 1e6 : 10000) }')
  echo "consumer_work_us_per_batch: $work"
  for e in 1 2; do
    echo "== gpu_feed: consumer GPU work ${work} us per batch, echo $e"
    timeout 60 gpu_feed "$f" --threads "$cores" --epochs 2 --cache 1G --echo "$e" --work-us "$work" \
      | tee "$data/idle$e.log"
    echo "gpu_idle_fraction_echo$e: $(value gpu_idle_fraction "$data/idle$e.log")"
  done
  echo "gpu_idle_fraction: $(printf '%s\n%s\n' "$(value gpu_idle_fraction "$data/idle1.log")" \
    "$(value gpu_idle_fraction "$data/idle2.log")" | sort -g | tail -1)"
  # the same consumer over 8 epochs: a share that the warm-up dominates shrinks as the run grows
  timeout 60 gpu_feed "$f" --threads "$cores" --epochs 8 --cache 1G --work-us "$work" >"$data/idle8.log"
  grep -E "^gpu_idle" "$data/idle8.log" | sed 's/^gpu_idle\([a-z_]*\):/gpu_idle\1_8_epochs:/'
  # what the idle share depends on: the ring's depth (prefetch) and the consumer's margin
  local pf
  for pf in 8 16; do
    timeout 60 gpu_feed "$f" --threads "$cores" --epochs 2 --cache 1G --prefetch "$pf" --work-us "$work" >"$data/pf$pf.log"
    echo "gpu_idle_fraction_prefetch$pf: $(value gpu_idle_fraction "$data/pf$pf.log")"
  done
  timeout 60 gpu_feed "$f" --threads "$cores" --epochs 2 --cache 1G --work-us "$((work * 2))" >"$data/slow.log"
  echo "gpu_idle_fraction_work_x2: $(value gpu_idle_fraction "$data/slow.log")"
}

# The reader on the GPU: top speed, memory over 20 epochs, GPU idle share with a consumer's work per batch.
reader_figures() {
  local f=$data/e2e.h5 e2e work
  cat "$f" >/dev/null  # page cache warm
  echo "== gpu_feed: top speed, 3 epochs, 16 threads, chunk order, 1 GiB cache"
  timeout 60 gpu_feed "$f" --threads "$cores" --epochs 3 --cache 1G | tee "$data/speed.log"
  e2e=$(value samples_per_s "$data/speed.log")
  echo "e2e_samples_per_s: ${e2e:-n/a}"
  echo "== gpu_feed: 20 epochs (memory growth)"
  timeout 90 gpu_feed "$f" --threads "$cores" --epochs 20 --cache 1G | tee "$data/mem.log"
  echo "device_mem_growth_bytes: $(value device_mem_growth_bytes "$data/mem.log")"
  echo "host_rss_growth_bytes: $(value host_rss_growth_bytes "$data/mem.log")"
  # RSS = the process's own memory (anon) + mapped file pages (the zero-copy path keeps the cached chunks mapped)
  echo "host_rss_anon_growth_bytes: $(value host_rss_anon_growth_bytes "$data/mem.log")"
  idle_figures
  echo "== h5pack-stats run on the GPU (the stats tool's view of the same stream)"
  timeout 60 h5pack-stats run "$f" --device cuda --threads "$cores" --batch 256 --epochs 2 --cache 1G
  echo "== random resized crop 256 -> 224 + flip on the GPU, through the reader"
  timeout 60 gpu_feed "$data/rrc.h5" --threads "$cores" --epochs 2 --cache 1G --crop random_resized \
    --output-size 224 --flip | tee "$data/rrc.log"
  echo "e2e_rrc_samples_per_s: $(value samples_per_s "$data/rrc.log")"
  echo "== random resized crop on the GPU from images of several sizes (--max-side 256: stored at their own aspect)"
  echo "pack_max_side_256_s: $(seconds h5pack -q -f --max-side 256 -j "$cores" "$data/img" "$data/ragged.h5")"
  timeout 60 gpu_feed "$data/ragged.h5" --threads "$cores" --epochs 2 --cache 1G --crop random_resized \
    --output-size 224 --flip | tee "$data/ragged.log"
  echo "e2e_ragged_rrc_samples_per_s: $(value samples_per_s "$data/ragged.log")"
}

# CPU crops (issue 27): random resized crop 256 -> 224 + flip, float32 normalised, CPU backend, 1 and 16 threads;
# the best of epochs 2 and 3 (on 16 threads one epoch of 20,160 images takes 0.2 s, and the first one also
# pays for starting the threads and touching the fresh cache)
cpu_rrc_rate() {
  timeout 120 h5pack-stats run "$data/rrc.h5" --device cpu --threads "$1" --epochs 3 --cache 1G \
    --crop random_resized --output-size 224 --flip --json \
    | py 60 -c 'import json,sys; print(round(max(e["samples_per_s"] for e in json.load(sys.stdin)["epochs"][1:])))'
}
# CPU crops (issue 27): random resized crop 256 -> 224 + flip, float32 normalised, CPU backend, on 1 to 16
# threads, and what limits them there: without AVX-512, the plain conversion (no crop), and the machine's
# write floor for the same output bytes (bench/reader/write_floor, non-temporal stores). With a library
# bundled as .devbundle/before (H5PACK_GPU_BEFORE_LIB at prepare), 16 threads of it and of this one, alternated.
cpu_rate_of() { # THREADS [h5pack-stats options]: the best of epochs 2 and 3 (on 16 threads one epoch of
  local t=$1; shift # 20,160 images takes 0.2 s, and the first also pays for the threads and the fresh cache)
  timeout 120 h5pack-stats run "$data/rrc.h5" --device cpu --threads "$t" --epochs 3 --cache 1G --json "$@" \
    | py 60 -c 'import json,sys; print(round(max(e["samples_per_s"] for e in json.load(sys.stdin)["epochs"][1:])))'
}
cpu_crop_figures() {
  lscpu | grep -E "^(Model name|CPU\(s\)|Thread\(s\) per core|Socket\(s\)|NUMA node\(s\)|L3 cache|Flags)" \
    | sed 's/^Flags:.*/avx512: '"$(grep -o 'avx512[a-z_]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"'/'
  local t r r1="" floor crop="--crop random_resized --output-size 224 --flip"
  for t in 1 2 4 8 16; do
    # shellcheck disable=SC2086
    r=$(cpu_rate_of "$t" $crop)
    if [ "$t" = 1 ]; then r1=$r; echo "cpu_rrc_1_thread_samples_per_s: $r"; else echo "cpu_rrc_${t}_threads_samples_per_s: $r"; fi
  done
  echo "cpu_rrc_scaling_1_to_16: $(ratio "$r" "$r1")"
  for t in 1 16; do
    # shellcheck disable=SC2086
    echo "cpu_rrc_no_avx512_${t}_threads_samples_per_s: $(H5PACK_NO_AVX512=1 cpu_rate_of "$t" $crop)"
    echo "cpu_plain_${t}_threads_samples_per_s: $(cpu_rate_of "$t")"
    floor=$(write_floor --image-bytes $((3 * 224 * 224 * 4)) --samples 100000 --threads "$t" --stream 1 \
      | sed -n 's/.* = \([0-9.]*\) samples\/s.*/\1/p')
    echo "write_floor_224_f32_${t}_threads_samples_per_s: $floor"
    [ "$t" = 16 ] && echo "cpu_rrc_16_threads_vs_write_floor: $(ratio "$r" "$floor")"
  done
  if [ -f "$root/.devbundle/before/libh5pack.so.0" ]; then
    local round
    for round in 1 2 3; do
      # shellcheck disable=SC2086
      echo "cpu_rrc_before_16_threads_samples_per_s: $(LD_LIBRARY_PATH="$root/.devbundle/before${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        cpu_rate_of 16 $crop)"
      # shellcheck disable=SC2086
      echo "cpu_rrc_now_16_threads_samples_per_s: $(cpu_rate_of 16 $crop)"
    done
  fi
}

# Converter -j 1/4/8/16 against the PIL + h5py script with 16 processes, on the same folder.
converter_figures() {
  local j t t1=""
  for j in 1 4 8 16; do
    t=$(seconds h5pack -q -f --size 224x224 -j "$j" "$data/sub" "$data/conv$j.h5")
    echo "convert_j${j}_s: $t"
    [ "$j" = 1 ] && t1=$t
  done
  echo "convert_scaling_1_to_16: $(ratio "$t1" "$t")"
  # where -j 16's time goes: the phases, and who waited for whom (the writing thread or the workers)
  h5pack -v -f --size 224x224 -j 16 "$data/sub" "$data/conv16.h5" 2>&1 | grep -E "^h5pack: [a-z, ]+: [0-9.]+ s" \
    | sed 's/^h5pack: /convert_j16_phase: /'
  # side by side with the converter before the workers wrote the chunks (bundled as h5pack-before, if any)
  if command -v h5pack-before >/dev/null; then
    local b1 b16 n16
    b1=$(seconds h5pack-before -q -f --size 224x224 -j 1 "$data/sub" "$data/before1.h5")
    for k in 1 2 3; do
      b16=$(seconds h5pack-before -q -f --size 224x224 -j 16 "$data/sub" "$data/before16.h5")
      n16=$(seconds h5pack -q -f --size 224x224 -j 16 "$data/sub" "$data/conv16.h5")
      echo "convert_before_j16_s: $b16"
      echo "convert_now_j16_s: $n16"
    done
    echo "convert_before_j1_s: $b1"
    echo "convert_before_scaling_1_to_16: $(ratio "$b1" "$b16")"
    cmp -s "$data/before16.h5" "$data/conv16.h5" && echo "convert_before_same_bytes: yes" || echo "convert_before_same_bytes: NO"
  fi
  # the same into memory (/dev/shm): the CPU's scaling without the disk's write floor
  local shm=/dev/shm/h5pack-conv.h5 s1 s16
  s1=$(seconds h5pack -q -f --size 224x224 -j 1 "$data/sub" "$shm")
  s16=$(seconds h5pack -q -f --size 224x224 -j 16 "$data/sub" "$shm")
  rm -f "$shm"
  echo "convert_shm_j1_s: $s1"
  echo "convert_shm_j16_s: $s16"
  echo "convert_shm_scaling_1_to_16: $(ratio "$s1" "$s16")"
  # the floor's own scaling: a bare libjpeg-turbo decode of the folder's JPEGs on 1 and 16 threads
  local d1 d16
  d1=$(bench_convert_decode "$data/sub" 1 | sed -n 's/.* = \([0-9.]*\) images\/s.*/\1/p')
  d16=$(bench_convert_decode "$data/sub" 16 | sed -n 's/.* = \([0-9.]*\) images\/s.*/\1/p')
  echo "decode_only_1_thread_images_per_s: $d1"
  echo "decode_only_16_threads_images_per_s: $d16"
  echo "decode_only_scaling_1_to_16: $(ratio "$d16" "$d1")"
  local pil
  pil=$(seconds py 120 bench/convert/pil_h5py_baseline.py "$data/sub" "$data/pil.h5" 224 16)
  echo "pil_h5py_16proc_s: $pil"
  echo "convert_j16_vs_pil_16proc: $(ratio "$pil" "$t")"
}

# gzip chunks: the reader's samples/s on the CPU backend with 1 and 16 threads, in the second of two epochs
# with a cache smaller than the file (every chunk read and inflated again; the first epoch also pays for
# the fresh cache memory's page faults).
gzip_rate() {
  timeout 150 h5pack-stats run "$1" --device cpu --threads "$2" --epochs 2 --cache 512M --window 64 --json \
    | py 200 -c 'import json,sys; print(round(json.load(sys.stdin)["epochs"][1]["samples_per_s"]))'
}
gzip_figures() {
  local f=$data/gzip.h5 r1 r16
  h5pack -q -f --size 224x224 --compress gzip -j "$cores" "${1:-$data/img}" "$f" && cat "$f" >/dev/null
  ls -l "$f"
  r1=$(gzip_rate "$f" 1)
  r16=$(gzip_rate "$f" "$cores")
  echo "gzip_read_1_thread_samples_per_s: $r1"
  echo "gzip_read_${cores}_threads_samples_per_s: $r16"
  echo "gzip_read_scaling_1_to_${cores}: $(ratio "$r16" "$r1")"
}

ncu_figures() {
  if [ "${H5PACK_GPU_NCU:-1}" = 1 ] && command -v ncu >/dev/null; then
    echo "== $(date +%T) ncu: the fast conversion kernel and the resampling kernel, one launch each"
    local k
    for k in ${H5PACK_GPU_NCU_KERNELS:-convk_fast_kernel rsk_kernel}; do
      timeout 90 ncu --clock-control none --kernel-name "regex:$k" --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
        bench_gpu --batch 256 --iters 3 2>&1 | grep -vE "^==PROF==|^ *-+ *-* *$|^(h2d|kernel|rrc)|^(H2D|  *pipeline|kernel |random)" \
        | tail -60 || echo "ncu $k: exit status $?"
    done
  fi
}

run_body() {
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, /, driver /')"
  echo "cpus: $cores"
  echo "commit: $(cat .devbundle/commit 2>/dev/null || echo unknown)"
  echo "== $(date +%T) GPU tests"; gpu_tests
  if [ "${H5PACK_GPU_QUICK:-0}" = idle ]; then # a short rerun: the kernels, the GPU idle share, memory
    timeout 90 bench_gpu --batch 256 --size 224x224 --iters 100 || echo "bench_gpu: exit status $?"
    make_images "${H5PACK_GPU_PER_CLASS:-630}" >/dev/null
    echo "pack_224_s: $(seconds h5pack -q -f --size 224x224 -j "$cores" "$data/img" "$data/e2e.h5")"
    idle_figures
    echo "== gpu_feed: 20 epochs (memory growth)"
    timeout 90 gpu_feed "$data/e2e.h5" --threads "$cores" --epochs 20 --cache 1G >"$data/mem.log"
    grep -E "growth_bytes|by_epoch_mb" "$data/mem.log"
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = tests ]; then # the shortest run: the GPU tests, then bench_gpu once
    timeout 60 bench_gpu --batch 256 --size 224x224 --iters 100 | grep -E "_vs_|_per_s|through the backend"
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = kernels ]; then # a short A/B run: bench_gpu against the bundled bench_gpu-*
    local round v                                 # (H5PACK_GPU_EXTRA at prepare), the idle share, CPU crops
    for round in 1 2 3; do
      for v in bench_gpu $(cd .devbundle/bin && ls bench_gpu-* 2>/dev/null); do
        echo "== $v, round $round"
        timeout 60 "$v" --batch 256 --size 224x224 --iters 100 \
          | grep -E "^kernel (float32  nchw->nchw|float16  nchw->nchw)|^random resized crop kernel alone [0-9]|_vs_d2d:"
      done
    done
    make_images "${H5PACK_GPU_PER_CLASS:-630}" >/dev/null
    echo "pack_224_s: $(seconds h5pack -q -f --size 224x224 -j "$cores" "$data/img" "$data/e2e.h5")"
    echo "pack_256_s: $(seconds h5pack -q -f --size 256x256 -j "$cores" "$data/img" "$data/rrc.h5")"
    echo "== $(date +%T) GPU idle share"; idle_figures
    echo "== $(date +%T) CPU crop scaling"; cpu_crop_figures
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = cpu ]; then # a short run: what limits the CPU crops' scaling to 16 threads
    make_images "${H5PACK_GPU_PER_CLASS:-630}" >/dev/null
    echo "pack_256_s: $(seconds h5pack -q -f --size 256x256 -j "$cores" "$data/img" "$data/rrc.h5")"
    echo "== $(date +%T) CPU crop scaling"; cpu_crop_figures
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = patches ]; then # a short run: the tests, patches' device memory
    echo "== $(date +%T) patches"; patch_figures
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = convert ]; then # a short rerun: the kernels and the converter
    timeout 90 bench_gpu --batch 256 --size 224x224 --iters 100 || echo "bench_gpu: exit status $?"
    make_images "${H5PACK_GPU_PER_CLASS:-630}" >/dev/null
    echo "== $(date +%T) converter scaling"; converter_figures
    echo "== done at $(date +%T), started $started"
    return
  fi
  if [ "${H5PACK_GPU_QUICK:-0}" = 1 ]; then # a short rerun: tests, the kernels, gzip reads, one profile
    echo "== $(date +%T) bench_gpu (the device stage alone)"
    timeout 90 bench_gpu --batch 256 --size 224x224 --iters 100 || echo "bench_gpu: exit status $?"
    make_images "${H5PACK_GPU_PER_CLASS:-630}" >/dev/null
    echo "== $(date +%T) gzip read scaling"; gzip_figures
    H5PACK_GPU_NCU_KERNELS=rsk_kernel ncu_figures
    echo "== done at $(date +%T), started $started"
    return
  fi
  echo "== $(date +%T) bench_gpu (the device stage alone)"
  timeout 90 bench_gpu --batch 256 --size 224x224 --iters 100 || echo "bench_gpu: exit status $?"
  echo "== $(date +%T) data: $((16 * 2 * ${H5PACK_GPU_PER_CLASS:-630})) generated photos"
  make_images "${H5PACK_GPU_PER_CLASS:-630}"
  echo "pack_224_s: $(seconds h5pack -q -f --size 224x224 -j "$cores" "$data/img" "$data/e2e.h5")"
  echo "pack_256_s: $(seconds h5pack -q -f --size 256x256 -j "$cores" "$data/img" "$data/rrc.h5")"
  ls -l "$data"/*.h5
  reader_figures
  echo "== $(date +%T) ResNet-18 fed by h5pack vs DataLoader"
  PYTHONPATH="$root/python" py 150 bench/gpu/resnet_vs_dataloader.py "$data/rrc.h5" \
    --threads "$cores" --workers "$cores" || echo "resnet: exit status $?"
  echo "== $(date +%T) CPU crop scaling"; cpu_crop_figures
  echo "== $(date +%T) converter scaling"; converter_figures
  echo "== $(date +%T) gzip read scaling"; gzip_figures
  echo "== $(date +%T) patches"; patch_figures
  ncu_figures
  if [ "${H5PACK_GPU_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    echo "== compute-sanitizer memcheck: backend_gpu"
    (cd "$(mktemp -d)" && timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 test_backend_gpu \
      >"$data/sanitizer.log" 2>&1; echo "compute_sanitizer_backend_gpu: exit status $?")
    tail -4 "$data/sanitizer.log"
  fi
  echo "== done at $(date +%T), started $started"
}

run() {
  local out=${OUT:-.} gpu log
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  log=$out/$(date +%Y-%m-%d)-$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-').log
  mkdir -p "$data"
  started=$(date +%T)
  run_body 2>&1 | tee "$log"
}

prepare() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DH5PACK_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  local targets="bench_gpu gpu_feed bench_convert_decode write_floor h5pack_cli h5pack_gen_images h5pack_stats h5pack" t
  for t in $cuda_tests; do targets="$targets test_$t"; done
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$(nproc)" --target $targets
  local files=("$build/bench/gpu/bench_gpu" "$build/bench/gpu/gpu_feed" "$build/bench/convert/bench_convert_decode" "$build/bench/reader/write_floor"
               "$build/h5pack" "$build/h5pack-gen-images"
               "$build/h5pack-stats" "$build/reader/libh5pack.so")
  # an earlier converter to compare with in the same run: H5PACK_GPU_BEFORE=path/to/h5pack (bundled as h5pack-before)
  if [ -n "${H5PACK_GPU_BEFORE:-}" ]; then cp "$H5PACK_GPU_BEFORE" "$build/h5pack-before" && files+=("$build/h5pack-before"); fi
  # more programs to bundle, e.g. bench_gpu variants to compare with (H5PACK_GPU_EXTRA="dir/bench_gpu-before ...")
  # shellcheck disable=SC2206
  [ -n "${H5PACK_GPU_EXTRA:-}" ] && files+=($H5PACK_GPU_EXTRA)
  for t in $cuda_tests; do files+=("$(find "$build/tests" -name "test_$t" -type f | head -1)"); done
  mkdir -p .git/info  # bundle.sh records .devbundle in .git/info/exclude
  ../shared/device/bundle.sh "${files[@]}"
  # an earlier library to compare the CPU crops with (H5PACK_GPU_BEFORE_LIB=path/to/libh5pack.so)
  if [ -n "${H5PACK_GPU_BEFORE_LIB:-}" ]; then mkdir -p .devbundle/before && cp -L "$H5PACK_GPU_BEFORE_LIB" .devbundle/before/libh5pack.so.0; fi
  echo 'export H5PACK_LIBRARY="$here/lib/libh5pack.so"' >> .devbundle/env.sh
  # what was built (the device's copy of the tree may not carry this checkout's history)
  { git rev-parse --short HEAD; git status --porcelain | grep -q . && echo "(plus uncommitted changes)"; } \
    | paste -sd' ' > .devbundle/commit
}

case "${1:-}" in
prepare) prepare ;;
run) run ;;
dry)  # the host parts here: small data, the CPU dry run of the ResNet script, no GPU stages
  export PATH="$root/$build:$root/$build/bench/gpu:$root/$build/bench/convert:$PATH"
  export H5PACK_LIBRARY="$root/$build/reader/libh5pack.so"
  mkdir -p "$data"; make_images 60
  h5pack -q -f --size 256x256 -j "$cores" "$data/img" "$data/rrc.h5"
  converter_figures; gzip_figures "$data/sub"; cpu_crop_figures
  PYTHONPATH="$root/python" py 300 bench/gpu/resnet_vs_dataloader.py "$data/rrc.h5" --steps 1 --warmup 1 \
    --batch 8 --workers 2 --threads 2 --device cpu
  ;;
*) echo "usage: $0 prepare|dry|run" >&2; exit 2 ;;
esac
