#!/usr/bin/env bash
# The main job: the reference evaluator over ONNX's node corpus from the
# pinned onnx package, writing results.jsonl and summary.json to
# out/reference-onnx-node/ and printing counts by state and per operator.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/setup.sh
bash ci/build.sh build
build/parity corpus onnx-node --out build/corpus/onnx_node
build/parity eval build/corpus/onnx_node --out out/reference-onnx-node \
  --expect adapters/reference/expectations/onnx_node.json
echo "results: out/reference-onnx-node/results.jsonl, out/reference-onnx-node/summary.json"
