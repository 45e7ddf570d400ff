#!/usr/bin/env bash
# Configures and builds ONNX Parity into a folder (default: build/).
#   ci/build.sh [BUILD_DIR] [extra cmake arguments...]
# PARITY_TARGETS (space-separated) limits the build to those targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
jobs=${PARITY_JOBS:-$(nproc)}
mkdir -p "$build"
# Release (no debug info) compiles fastest on CI's two cores; a later
# -DCMAKE_BUILD_TYPE among the extra arguments wins. A unity build (eight
# sources a unit) parses the shared headers and instantiates the shared
# templates once a unit instead of once a source: a full build here took
# 725 s of CPU against 1,607 s (sources that must stand alone say so in
# CMakeLists.txt).
# PARITY_UNITY=0 builds source by source.
cmake -S "$root" -B "$build" -G Ninja -DPARITY_WERROR=ON -DCMAKE_BUILD_TYPE="${PARITY_BUILD_TYPE:-Release}" \
  -DCMAKE_UNITY_BUILD="$([ "${PARITY_UNITY:-1}" = 1 ] && echo ON || echo OFF)" -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  "$@" > "$build/configure.log" 2>&1 || {
  cat "$build/configure.log"
  exit 1
}
# shellcheck disable=SC2086
ninja -C "$build" -j "$jobs" ${PARITY_TARGETS:-}
