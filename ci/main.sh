#!/usr/bin/env bash
# The main job: ONNX's node corpus (from the pinned onnx package), the
# generated function corpus (cases/functions/) and the valid variant-graph
# cases (cases/variants/; the reference selects entries for its targets,
# ONNX Runtime runs the main graphs) and the stateful aliasing cases
# (cases/aliasing/valid, their steps in one session) and the exported models
# (cases/models/, expected outputs from eager PyTorch) through the
# CPU adapters, the reference evaluator, ONNX Runtime's CPU execution
# provider, oneDNN (adapters/onednn/) and OpenVINO (adapters/openvino/), and
# the Level Zero NPU adapter through its test driver (adapters/level_zero/),
# each in worker processes; one run folder per adapter (out/reference/,
# out/onnxruntime/, out/onednn/, out/openvino/, out/level_zero/) and one report with them side
# by side (out/report/report.html, report.md, junit.xml). An adapter whose
# library was not built (its vendor package absent) is left out, with a line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/setup.sh
bash ci/build.sh build
build/parity corpus onnx-node --out build/corpus/onnx_node
.venv/bin/python cases/functions/write_cases.py --out build/corpus/functions --parity build/parity
.venv/bin/python cases/variants/write_cases.py --out build/corpus/variants --parity build/parity
.venv/bin/python cases/aliasing/write_cases.py --out build/corpus/aliasing --parity build/parity
status=0
reported=()
for adapter in reference onnxruntime onednn openvino; do
  if [ -f "adapters/$adapter/adapter.cc" ] && [ ! -f "build/adapters/libparity_adapter_$adapter.so" ]; then
    echo "adapters/$adapter: not built (its vendor package is absent from .venv): left out"
    continue
  fi
  reported+=("out/$adapter")
  # Adapters with cases of the variant or aliasing corpora that do not pass
  # list them in their own files (adapters/openvino/).
  extra=()
  for suite in variants aliasing; do
    if [ -f "adapters/$adapter/expectations/$suite.json" ]; then
      extra+=(--expect "adapters/$adapter/expectations/$suite.json")
    fi
  done
  build/parity run --adapter "$adapter" --device cpu --cases build/corpus/onnx_node build/corpus/functions build/corpus/variants/valid \
    build/corpus/aliasing/valid cases/models \
    --out "out/$adapter" --fresh --jobs "$(nproc)" \
    --expect "adapters/$adapter/expectations/onnx_node.json" --expect "adapters/$adapter/expectations/functions.json" \
    --expect "adapters/$adapter/expectations/models.json" "${extra[@]}" \
    || status=$?
done
# The Level Zero NPU adapter (adapters/level_zero/) through the test driver
# (no NPU here: adapters/level_zero/test_driver/ compiles the NPU's graphs
# with OpenVINO's CPU plugin), on the same corpora and the NPU's blob cases.
if [ -f build/adapters/libparity_adapter_level_zero.so ]; then
  npu_driver="$root/build/adapters/level_zero/libze_parity_test_npu.so"
  ZE_ENABLE_ALT_DRIVERS="$npu_driver" .venv/bin/python adapters/level_zero/write_blob_cases.py \
    --out build/corpus/variants_npu
  ZE_ENABLE_ALT_DRIVERS="$npu_driver" build/parity run --adapter level_zero --device npu --cases build/corpus/onnx_node \
    build/corpus/functions build/corpus/variants/valid build/corpus/aliasing/valid cases/models build/corpus/variants_npu \
    --out out/level_zero --fresh --jobs "$(nproc)" --expect adapters/level_zero/expectations/onnx_node.json \
    --expect adapters/level_zero/expectations/functions.json --expect adapters/level_zero/expectations/models.json \
    || status=$?
  reported+=(out/level_zero)
else
  echo "adapters/level_zero: not built (OpenVINO absent from .venv, or no libze-dev): left out"
fi
build/parity report "${reported[@]}" --out out/report
echo "report: out/report/report.html (also report.md, junit.xml); per adapter: out/<adapter>/results.jsonl"
exit "$status"
