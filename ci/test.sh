#!/usr/bin/env bash
# The tests: installs what is missing (ci/setup.sh), builds with warnings as
# errors, runs the unit tests (ctest), then the conformance gate of the
# reference on ONNX's node corpus, and the loader's malformed-model tests
# and the whole corpus again under AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash ci/setup.sh

echo "== build"
bash ci/build.sh build

echo "== unit tests"
(cd build && ctest --output-on-failure -j "$(nproc)") | tee build/ctest.log
unit_tests=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' build/ctest.log)

echo "== ONNX node corpus on the reference (gate against its expectations)"
build/parity corpus onnx-node --out build/corpus/onnx_node
build/parity eval build/corpus/onnx_node --quiet --out build/results/reference-onnx-node \
  --expect adapters/reference/expectations/onnx_node.json

if [ "${PARITY_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== AddressSanitizer and UndefinedBehaviorSanitizer"
  PARITY_TARGETS="parity parity_tests" bash ci/build.sh build-asan -DPARITY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  build-asan/parity_tests
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
fi
echo "== all tests passed"
echo "ci: ${unit_tests:-0} passed, 0 failed"
