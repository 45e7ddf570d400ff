#!/usr/bin/env bash
# The main job: ONNX's node corpus (from the pinned onnx package), the
# generated function corpus (cases/functions/) and the valid variant-graph
# cases (cases/variants/; the reference selects entries for its targets,
# ONNX Runtime runs the main graphs) and the stateful aliasing cases
# (cases/aliasing/valid, their steps in one session) and the exported models
# (cases/models/, expected outputs from eager PyTorch) through the
# CPU adapters, the reference evaluator, ONNX Runtime's CPU execution
# provider and oneDNN (adapters/onednn/), each in worker processes; one run
# folder per adapter (out/reference/, out/onnxruntime/, out/onednn/) and one
# report with the three side by side
# (out/report/report.html, report.md, junit.xml).
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
for adapter in reference onnxruntime onednn; do
  build/parity run --adapter "$adapter" --device cpu --cases build/corpus/onnx_node build/corpus/functions build/corpus/variants/valid \
    build/corpus/aliasing/valid cases/models \
    --out "out/$adapter" --fresh --jobs "$(nproc)" \
    --expect "adapters/$adapter/expectations/onnx_node.json" --expect "adapters/$adapter/expectations/functions.json" \
    --expect "adapters/$adapter/expectations/models.json" \
    || status=$?
done
build/parity report out/reference out/onnxruntime out/onednn --out out/report
echo "report: out/report/report.html (also report.md, junit.xml); per adapter: out/<adapter>/results.jsonl"
exit "$status"
