#!/usr/bin/env bash
# The CUDA adapter on a real GPU, in two steps (adapters/cuda/README.md):
#
#   bash ci/cuda_gpu.sh pack               here, after ci/test.sh (or ci/build.sh build)
#   bash ci/cuda_gpu.sh run OUT [--bench]  on the GPU machine, in a copy of this tree
#
# `pack` writes build-gpu/ (under 64 MiB: what may travel to a GPU machine
# besides the tracked files): the harness, the worker, the CUDA adapter and
# the shared libraries they need that are not the C library's, the
# corpora (node, function, aliasing, variants; the exported models are
# tracked) and the GPU benchmark's models (adapters/cuda/gpu_bench.py),
# compressed (xz). The CUDA runtime is linked into the adapter, and its
# shared library, which the cuDNN frontend opens, is carried. cuBLASLt and
# cuDNN are not (over 500 MiB each): `run` takes the GPU machine's own,
# from its CUDA toolkit or its PyTorch's nvidia-cublas and nvidia-cudnn
# wheels.
#
# `run` unpacks, runs every corpus through the adapter with the
# expectations of adapters/cuda/expectations/ where they exist, then with
# fallback forbidden, and writes OUT/: results.jsonl and summary.json of
# each run, the report, the adapter's device description and the ctest
# log of the device-free tests. With --bench it then runs the GPU
# benchmark, whose figures it prints and writes to OUT/bench/gpu_bench.json.
# It exits non-zero when a case CRASHes or TIMEOUTs, or a run fails its
# expectations.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pack=build-gpu
limit=$((64 * 1024 * 1024))

corpora=(build/corpus/onnx_node build/corpus/functions build/corpus/aliasing/valid build/corpus/variants/valid)

do_pack() {
  local adapter=build/adapters/libparity_adapter_cuda.so
  for f in build/parity build/parity-worker "$adapter"; do
    [ -f "$f" ] || { echo "cuda_gpu.sh pack: $f is missing: build first (bash ci/build.sh build)" >&2; exit 1; }
  done
  for c in "${corpora[@]}"; do
    [ -d "$c" ] || { echo "cuda_gpu.sh pack: $c is missing: bash ci/test.sh writes the corpora" >&2; exit 1; }
  done
  rm -rf "$pack"
  mkdir -p "$pack/build/adapters" "$pack/lib"
  cp build/parity build/parity-worker "$pack/build/"
  # The binaries read spec/ from the source folder they were built in.
  sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt > "$pack/build/source_dir"
  cp "$adapter" "$pack/build/adapters/"
  # Every shared library the three need, but the C library's own (libc,
  # libm, the loader, libdl, libpthread, librt), which the GPU machine has.
  ldd build/parity build/parity-worker "$adapter" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' | while read -r lib; do
      cp -L "$lib" "$pack/lib/"
    done
  # The cuDNN frontend opens the CUDA runtime's shared library itself (the
  # adapter's own runtime is linked in): under 1 MiB, carried.
  local cudart
  cudart=$(find_library libcudart.so.13 nvidia.cuda_runtime)
  [ -n "$cudart" ] && cp -L "$cudart/libcudart.so.13" "$pack/lib/"
  # xz, which Python's tarfile also reads where the GPU machine has no xz.
  XZ_OPT="-6 -T0" tar -cJf "$pack/corpora.tar.xz" "${corpora[@]}"
  XZ_OPT="-6 -T0" tar -cJf "$pack/binaries.tar.xz" -C "$pack" lib build
  .venv/bin/python adapters/cuda/gpu_bench.py write "$pack/bench" --parity build/parity > /dev/null
  XZ_OPT="-6 -T0" tar -cJf "$pack/bench.tar.xz" -C "$pack" bench
  rm -rf "$pack/bench"
  rm -rf "$pack/lib" "$pack/build"
  local bytes
  bytes=$(du -sb "$pack" | cut -f1)
  echo "cuda_gpu.sh pack: $pack/ holds $((bytes / 1024 / 1024)) MiB ($bytes bytes)"
  if [ "$bytes" -gt "$limit" ]; then
    echo "cuda_gpu.sh pack: over the 64 MiB that may travel" >&2
    exit 1
  fi
}

# The directory of library $1 on this machine, or nothing: the CUDA
# toolkit's, the wheel of Python module $2 (PyTorch's nvidia-* wheels), or
# anywhere.
find_library() {
  local name=$1 module=$2 dir python
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$dir/$name" ] && { echo "$dir"; return; }
  done
  for python in python3 python; do
    command -v "$python" > /dev/null || continue
    dir=$("$python" -c "import $module, os; print(os.path.join(list($module.__path__)[0], 'lib'))" 2> /dev/null || true)
    [ -n "$dir" ] && [ -e "$dir/$name" ] && { echo "$dir"; return; }
  done
  find / -name "$name" -print -quit 2> /dev/null | xargs -r dirname
}

do_run() {
  local out=${1:?usage: cuda_gpu.sh run OUT [--bench]} bench=${2:-}
  mkdir -p "$out"
  [ -f "$pack/binaries.tar.xz" ] || { echo "cuda_gpu.sh run: $pack/ is missing: carry it (cuda_gpu.sh pack)" >&2; exit 1; }
  local here="$root/$pack/unpacked"
  rm -rf "$here" && mkdir -p "$here"
  local archive
  for archive in "$pack/binaries.tar.xz" "$pack/corpora.tar.xz" "$pack/bench.tar.xz"; do
    if command -v xz > /dev/null; then
      tar -xJf "$archive" -C "$here"
    else
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$here"
    fi
  done
  # The binaries read spec/ where they were built; this tree is the same one.
  local built_at
  built_at=$(cat "$here/build/source_dir")
  if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
    if ! { mkdir -p "$(dirname "$built_at")" && ln -s "$root" "$built_at"; }; then
      echo "cuda_gpu.sh run: cannot link $built_at to this tree: the runs name spec/ themselves," \
           "but \`parity report\` may not find its scripts" >&2
    fi
  fi
  local cublaslt cudnn
  cublaslt=$(find_library libcublasLt.so.13 nvidia.cublas)
  cudnn=$(find_library libcudnn.so.9 nvidia.cudnn)
  echo "cuBLASLt: ${cublaslt:-not found (MatMul and Gemm fall back, saying so)}"
  echo "cuDNN: ${cudnn:-not found (Conv and LayerNormalization fall back, Attention runs the own kernel)}"
  export LD_LIBRARY_PATH="$here/lib${cublaslt:+:$cublaslt}${cudnn:+:$cudnn}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.csv" 2>&1 || true
  local parity="$here/build/parity" adapter="$here/build/adapters/libparity_adapter_cuda.so"
  local cases=(cases/models)
  for c in "${corpora[@]}"; do cases+=("$here/$c"); done
  local expect=()
  for e in adapters/cuda/expectations/*.json; do [ -e "$e" ] && expect+=(--expect "$e"); done
  local status=0
  # The corpora take cuDNN's heuristic plans: autotuning every creation of
  # thousands of small cases would spend the device time on timing plans.
  # The benchmark below autotunes, as a session does by default.
  PARITY_CUDA_AUTOTUNE=0 "$parity" run --adapter "$adapter" --cases "${cases[@]}" --out "$out/cuda" --fresh --jobs 4 \
    --progress quiet --tolerance spec/tolerance.json "${expect[@]}" || status=$?
  PARITY_CUDA_AUTOTUNE=0 "$parity" run --adapter "$adapter" --cases "${cases[@]}" --out "$out/cuda-no-fallback" \
    --fresh --jobs 4 \
    --progress quiet --warm-repeats 0 --no-fallback --tolerance spec/tolerance.json > "$out/no-fallback.log" || true
  "$parity" report "$out/cuda" --out "$out/report" || status=$?
  python3 - "$out/cuda/results.jsonl" <<'EOF' || status=1
import collections, json, sys
states = collections.Counter(json.loads(line)["state"] for line in open(sys.argv[1]))
print("states:", dict(sorted(states.items())))
sys.exit(1 if states.get("CRASH") or states.get("TIMEOUT") else 0)
EOF
  # Every passing case reports its runs' copies and device memory (ABI run_cost).
  python3 adapters/device/run_cost_check.py "$out/cuda/results.jsonl" --device cuda || status=1
  if [ "$bench" = --bench ]; then
    python3 adapters/cuda/gpu_bench.py run "$here/bench" "$out/bench" --parity "$parity" --adapter "$adapter" ||
      status=$?
  fi
  return "$status"
}

case "${1:-}" in
  pack) do_pack ;;
  run) shift; do_run "$@" ;;
  *) echo "usage: bash ci/cuda_gpu.sh pack | run OUT [--bench]" >&2; exit 2 ;;
esac
