#!/usr/bin/env bash
# The tests: installs what is missing (ci/setup.sh), builds with warnings as
# errors, runs the unit tests (ctest: C++, Python and shell tests, among them
# fault injection, SIGKILL resume and the report in headless Chromium), then
# the conformance gates of the reference and ONNX Runtime on ONNX's node
# corpus, and the loader's malformed-model tests and the corpus again under
# AddressSanitizer and UndefinedBehaviorSanitizer (a clang build that also
# holds the libFuzzer targets of fuzz/, run briefly by ci/fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Each stage's wall time, printed as it ends and again, all together, at the
# end: CI has 90 minutes and should stay well under 30.
stage_name="setup"
stage_start=$SECONDS
stage_times=()
stage() {
  local took=$((SECONDS - stage_start))
  stage_times+=("$(printf '%6d s  %s' "$took" "$stage_name")")
  echo "-- ${stage_name}: ${took} s"
  stage_name=$1
  stage_start=$SECONDS
  echo "== $1"
}

bash ci/setup.sh

stage "build"
bash ci/build.sh build

stage "unit tests"
(cd build && ctest --output-on-failure -j "$(nproc)") | tee build/ctest.log
unit_tests=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' build/ctest.log)

stage "ONNX node corpus: the reference in process, then each adapter through workers (gates against their expectations)"
build/parity corpus onnx-node --out build/corpus/onnx_node
build/parity eval build/corpus/onnx_node --quiet --out build/results/eval-reference \
  --expect adapters/reference/expectations/onnx_node.json
.venv/bin/python cases/functions/write_cases.py --out build/corpus/functions --parity build/parity
# The reference computes the same bits with 1 and 2 threads per operator
# (spec/reference.md, "Threads"; spec/results.md, "Thread identity").
.venv/bin/python ci/thread_identity.py build/corpus/onnx_node build/corpus/functions
for adapter in reference onnxruntime; do
  build/parity run --adapter "$adapter" --cases build/corpus/onnx_node build/corpus/functions \
    --out "build/results/$adapter" --fresh --jobs "$(nproc)" \
    --expect "adapters/$adapter/expectations/onnx_node.json" --expect "adapters/$adapter/expectations/functions.json"
done
# The function bodies of spec/functions/ against the kernels' expected outputs.
build/parity eval build/corpus/functions --quiet --prefer-function-bodies \
  --expect adapters/reference/expectations/function_bodies.json
# onnx's Python reference and the numpy oracle (float64, from the operators' text) are the
# function corpus's other oracles besides ONNX Runtime (spec/functions/agreement.md).
build/parity run --adapter onnx_reference --cases build/corpus/functions --out build/results/onnx_reference --fresh \
  --jobs "$(nproc)" --progress quiet --expect adapters/onnx_reference/expectations/functions.json
build/parity run --adapter numpy_oracle --cases build/corpus/functions --out build/results/numpy_oracle --fresh \
  --jobs "$(nproc)" --progress quiet --expect adapters/numpy_oracle/expectations/functions.json

stage "error budgets (spec/tolerance.md): a FlashAttention-2-style kernel and nine faults; ONNX's node corpus of onnx 1.22 against ONNX's runner"
# The correct kernel must pass every Attention case of the function corpus
# (float16 and bfloat16 included), and each fault must fail one it passes.
PARITY_FUNCTION_CORPUS=build/corpus/functions PARITY_BINARY_DIR=build PYTHONPATH=build/python:harness/python \
  .venv/bin/python adapters/flash_attention/corpus_check.py
# Case folders without case.json (fetched by ci/setup.sh), read as ONNX's
# runner reads them; runner_agreement.py puts the runner's own verdicts beside ours.
rm -rf build/results/eval-onnx-1.22
build/parity eval build/corpus/onnx_node_1.22 --quiet --out build/results/eval-onnx-1.22 \
  --expect adapters/reference/expectations/onnx_node_1.22.json
.venv/bin/python cases/onnx_node/runner_agreement.py --corpus build/corpus/onnx_node_1.22 --eval build/results/eval-onnx-1.22

stage "variant graphs (spec/variants.md): validator, equivalence, selection and fallback"
.venv/bin/python cases/variants/write_cases.py --out build/corpus/variants --parity build/parity --no-check
build/parity check --cases build/corpus/variants/invalid
build/parity check --cases build/corpus/variants/valid --equivalence
# The reference with each of its targets must select what each case pins
# (com.example.npu: blobs it cannot run end UNSUPPORTED, never FAIL);
# ONNX Runtime knows nothing of the field and must run every main graph.
for targets in org.onnxparity.reference portable "org.onnxparity.reference,portable" "portable,org.onnxparity.reference" \
  com.example.npu; do
  build/parity run --adapter reference --cases build/corpus/variants/valid --variant-targets "$targets" \
    --out "build/results/variants-reference-${targets:-none}" --fresh --jobs "$(nproc)" --progress quiet
done
build/parity run --adapter onnxruntime --cases build/corpus/variants/valid --out build/results/variants-onnxruntime \
  --fresh --jobs "$(nproc)" --progress quiet
build/parity eval build/corpus/variants/valid --quiet --variant-targets org.onnxparity.reference,portable
.venv/bin/python cases/variants/weight_sharing.py --check

stage "aliasing (spec/aliasing.md): validator, checking mode, stateful cases functional and in place"
.venv/bin/python cases/aliasing/write_cases.py --out build/corpus/aliasing --parity build/parity --no-check
build/parity check --cases build/corpus/aliasing/invalid
build/parity check --cases build/corpus/aliasing/hazard
build/parity check --cases build/corpus/aliasing/valid
build/parity eval build/corpus/aliasing/valid --quiet --check-aliasing
# Every hazard case is one whose result sharing changes: --check-aliasing must say so (exit 1).
if build/parity eval build/corpus/aliasing/hazard --quiet --check-aliasing > build/results/aliasing-hazard.log; then
  echo "parity eval --check-aliasing found no hazard in cases/aliasing hazard cases" >&2
  exit 1
fi
# The steps in one session: the reference functionally and in place, each
# step bit for bit the functional reference's; ONNX Runtime functionally,
# its state kept by the Python worker.
for adapter in reference reference_inplace onnxruntime; do
  build/parity run --adapter "$adapter" --cases build/corpus/aliasing/valid --out "build/results/aliasing-$adapter" \
    --fresh --jobs "$(nproc)" --progress quiet
done
.venv/bin/python cases/aliasing/same_every_step.py build/results/aliasing-reference build/results/aliasing-reference_inplace

stage "the oneDNN adapter (adapters/onednn/): every corpus through its lowering, gated by its expectations"
onednn_cases=(build/corpus/onnx_node build/corpus/functions build/corpus/variants/valid build/corpus/aliasing/valid cases/models)
build/parity run --adapter onednn --cases "${onednn_cases[@]}" --out build/results/onednn --fresh --jobs "$(nproc)" \
  --progress quiet --expect adapters/onednn/expectations/onnx_node.json \
  --expect adapters/onednn/expectations/functions.json --expect adapters/onednn/expectations/models.json
# With fallback forbidden: FALLBACK_REQUIRED exactly for the cases with a
# node it did not lower above, FELL_BACK for none (fallback_check.py).
build/parity run --adapter onednn --cases "${onednn_cases[@]}" --out build/results/onednn-no-fallback --fresh \
  --jobs "$(nproc)" --progress quiet --no-fallback > build/results/onednn-no-fallback.log || true
.venv/bin/python adapters/onednn/fallback_check.py build/results/onednn build/results/onednn-no-fallback

stage "the OpenVINO adapter (adapters/openvino/): every corpus, the whole model on OpenVINO's CPU plugin, gated by its expectations"
openvino_results=()
if [ -f build/adapters/libparity_adapter_openvino.so ]; then
  openvino_expect=()
  for file in adapters/openvino/expectations/*.json; do openvino_expect+=(--expect "$file"); done
  # No warm repeats: each creation compiles the model again (about 0.14 s a
  # case), and the gate needs none; ci/main.sh measures them.
  build/parity run --adapter openvino --cases "${onednn_cases[@]}" --out build/results/openvino --fresh --jobs "$(nproc)" \
    --progress quiet --warm-repeats 0 "${openvino_expect[@]}"
  openvino_results=(build/results/openvino)
else
  echo "adapters/openvino: libparity_adapter_openvino.so not built (OpenVINO absent from .venv): skipped"
fi

stage "the Level Zero NPU adapter (adapters/level_zero/) through its test driver: every corpus, the NPU's blob cases, fallback"
level_zero_results=()
if [ -f build/adapters/libparity_adapter_level_zero.so ]; then
  # The loader takes the test driver (no NPU here); npu_test.py, under
  # ctest, has checked the runs without it (SKIP) and the injected faults.
  export ZE_ENABLE_ALT_DRIVERS="$root/build/adapters/level_zero/libze_parity_test_npu.so"
  .venv/bin/python adapters/level_zero/write_blob_cases.py --out build/corpus/variants_npu
  level_zero_cases=("${onednn_cases[@]}" build/corpus/variants_npu)
  level_zero_expect=(--expect adapters/level_zero/expectations/onnx_node.json
    --expect adapters/level_zero/expectations/functions.json --expect adapters/level_zero/expectations/models.json)
  build/parity run --adapter level_zero --cases "${level_zero_cases[@]}" --out build/results/level_zero --fresh \
    --jobs "$(nproc)" --progress quiet --warm-repeats 0 "${level_zero_expect[@]}"
  # A driver that did not load would make every case SKIP, which no gate counts.
  if grep -q '"state":"SKIP"' build/results/level_zero/results.jsonl; then
    echo "adapters/level_zero: cases ended SKIP: the test driver did not load" >&2
    exit 1
  fi
  # Every case that ran reports its runs' copies and argument memory (ABI
  # run_cost), and every step of a stateful case its own.
  .venv/bin/python adapters/device/run_cost_check.py build/results/level_zero/results.jsonl --device npu
  # With fallback forbidden: FALLBACK_REQUIRED exactly for the cases with a
  # node the driver's layer query left out above, FELL_BACK for none.
  # (The expectations make the cases that run wholly on the NPU end as they
  # did above; those that fell back are refused, so that run's gate fails.)
  build/parity run --adapter level_zero --cases "${level_zero_cases[@]}" --out build/results/level_zero-no-fallback \
    --fresh --jobs "$(nproc)" --progress quiet --warm-repeats 0 --no-fallback "${level_zero_expect[@]}" \
    > build/results/level_zero-no-fallback.log || true
  .venv/bin/python adapters/onednn/fallback_check.py build/results/level_zero build/results/level_zero-no-fallback \
    --device npu
  unset ZE_ENABLE_ALT_DRIVERS
  level_zero_results=(build/results/level_zero)
else
  echo "adapters/level_zero: libparity_adapter_level_zero.so not built (OpenVINO absent from .venv, or no libze-dev): skipped"
fi

stage "the CUDA adapter (adapters/cuda/): every corpus; with no NVIDIA driver here, every case SKIP"
# ctest has run its device-free tests (parity_cuda_tests: the kernels'
# arithmetic against the reference, the lowering's claims, the cuBLASLt
# calls emulated and their descriptors) and cuda_test.py, discovery against
# stand-in drivers. Here the real corpora must end SKIP, never FAIL or
# CRASH; ci/cuda_gpu.sh runs them on a GPU.
if [ ! -f build/adapters/libparity_adapter_cuda.so ]; then
  if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "adapters/cuda: the CUDA toolkit is here but libparity_adapter_cuda.so was not built" >&2
    exit 1
  fi
  echo "adapters/cuda: no CUDA toolkit (nvcc) here: not built, skipped"
else
  build/parity run --adapter cuda --cases "${onednn_cases[@]}" --out build/results/cuda --fresh --jobs "$(nproc)" \
    --progress quiet --warm-repeats 0
  if .venv/bin/python -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2> /dev/null; then
    echo "adapters/cuda: an NVIDIA driver is installed here: the run above is not required to SKIP"
  elif ! .venv/bin/python -c 'import json, sys; sys.exit(any(json.loads(line)["state"] != "SKIP" for line in open(sys.argv[1])))' \
      build/results/cuda/results.jsonl; then
    echo "adapters/cuda: without an NVIDIA driver a case ended other than SKIP" >&2
    exit 1
  fi
  # What a GPU machine is given must fit in what may travel to it.
  bash ci/cuda_gpu.sh pack
fi

build/parity report build/results/reference build/results/onnxruntime build/results/onednn "${openvino_results[@]}" \
  "${level_zero_results[@]}" --out build/results/report

if [ "${PARITY_SKIP_SANITIZERS:-0}" != 1 ]; then
  stage "AddressSanitizer and UndefinedBehaviorSanitizer, and the fuzz targets (one clang build)"
  # One build serves both: every object has the sanitizers and libFuzzer's
  # coverage (PARITY_FUZZ), and only fuzz/*_fuzzer.cc link libFuzzer's main.
  # -O0 with line tables only: it compiles in 40% of the time -O1 with full
  # debug information took (1,005 s of CI's 2,709 s went to this build), and
  # the reports still name file and line. The fuzzers run fewer inputs in
  # their 20 s each. A folder configured by another compiler starts afresh.
  if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:FILEPATH=.*clang++-14$' build-asan/CMakeCache.txt; then
    rm -rf build-asan
  fi
  CC=clang-14 CXX=clang++-14 \
    PARITY_TARGETS="parity parity-worker parity_adapter_reference parity_adapter_reference_inplace parity_tests parity_fuzzers" \
    bash ci/build.sh build-asan -DPARITY_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -O0"
  stage "sanitizers: the unit tests, the malformed models and the corpora"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The unit tests in one shard a core (gtest's sharding; ctest already runs
  # them one process a test, side by side): 90 s in one process here.
  shards=$(nproc)
  shard_pids=()
  for ((shard = 0; shard < shards; shard++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard build-asan/parity_tests > "build-asan/parity_tests.$shard.log" 2>&1 &
    shard_pids+=($!)
  done
  for ((shard = 0; shard < shards; shard++)); do
    if ! wait "${shard_pids[$shard]}"; then
      tail -n 120 "build-asan/parity_tests.$shard.log"
      echo "build-asan/parity_tests: shard $shard of $shards failed (log: build-asan/parity_tests.$shard.log)" >&2
      exit 1
    fi
    tail -n 1 "build-asan/parity_tests.$shard.log"
  done
  rm -rf build-asan/malformed
  build-asan/parity corpus malformed --out build-asan/malformed > /dev/null
  for model in build-asan/malformed/*/model.onnx; do
    status=0
    build-asan/parity check "$model" > build-asan/check.log 2>&1 || status=$?
    # 1 (problems found) and 2 (unreadable) are the expected answers; a
    # sanitizer report aborts with another status.
    if [ "$status" -ne 1 ] && [ "$status" -ne 2 ]; then
      cat build-asan/check.log
      echo "parity check $model: exit status $status"
      exit 1
    fi
  done
  echo "malformed models: every one refused with a message, no sanitizer report"
  build-asan/parity eval build/corpus/onnx_node --quiet --out build-asan/results \
    --expect adapters/reference/expectations/onnx_node.json
  # The harness, parity-worker and the reference adapter together: a
  # sanitizer report in a worker ends its case as CRASH and fails the gate.
  build-asan/parity run --adapter reference --cases build/corpus/onnx_node --out build-asan/run-reference \
    --fresh --progress quiet --jobs "$(nproc)" --expect adapters/reference/expectations/onnx_node.json
  # Variant entries: the validator on every invalid model, resolution and
  # equivalence on every valid one, and the adapter resolving in its worker.
  build-asan/parity check --cases build/corpus/variants/invalid > build-asan/variants-invalid.log
  build-asan/parity check --cases build/corpus/variants/valid --equivalence > build-asan/variants-valid.log
  build-asan/parity run --adapter reference --cases build/corpus/variants/valid --out build-asan/run-variants \
    --fresh --progress quiet --jobs "$(nproc)" --variant-targets "org.onnxparity.reference,portable"
  # Aliasing: the rules on every annotated model, the checking mode, and the
  # in-place adapter writing into kept buffers.
  build-asan/parity check --cases build/corpus/aliasing/invalid > build-asan/aliasing-invalid.log
  build-asan/parity eval build/corpus/aliasing/valid --quiet --check-aliasing > build-asan/aliasing-check.log
  build-asan/parity run --adapter reference_inplace --cases build/corpus/aliasing/valid --out build-asan/run-aliasing \
    --fresh --progress quiet --jobs "$(nproc)"
  # The fuzz targets: their regression inputs, then 20 s each from seeds
  # made of the corpora above (about 2 minutes in all on 2 cores).
  stage "fuzz targets"
  bash ci/fuzz.sh build-asan 20
fi
stage "all tests passed"
printf '%s\n' "${stage_times[@]}" "$(printf '%6d s  in all' "$SECONDS")"
echo "ci: ${unit_tests:-0} passed, 0 failed"
