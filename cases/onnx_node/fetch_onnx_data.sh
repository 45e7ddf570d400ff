#!/usr/bin/env bash
# Puts ONNX's node corpus as onnx 1.22.0 shipped it on disk (the wheel's
# onnx/backend/test/data/node/; later wheels build the cases in memory only)
# into build/corpus/onnx_node_1.22, one folder per case in the backend-test
# layout, without case.json. Called by ci/setup.sh; safe to run again.
#   cases/onnx_node/fetch_onnx_data.sh [OUT_DIR]
# The wheel is cached in ${PARITY_CACHE:-~/.cache/onnx-parity}/wheels and
# checked against its pinned SHA-256; nothing is downloaded when the cached
# wheel or the extracted corpus is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-"$root/build/corpus/onnx_node_1.22"}
cache=${PARITY_CACHE:-"${XDG_CACHE_HOME:-$HOME/.cache}/onnx-parity"}/wheels
python="$root/.venv/bin/python"
[ -x "$python" ] || python=python3

# One wheel, pinned by platform and hash, so that every machine extracts the
# same bytes (the data files are the same in every platform's wheel; the
# pin only makes the download reproducible and checkable).
version=1.22.0
wheel=onnx-1.22.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
sha256=1d0a2bdb15eb2b3cb65c438f3423d9620d14fdce32f92380e6bb1b2e09568ef5
prefix=onnx/backend/test/data/node/

stamp="$out/.source"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wheel $sha256" ]; then
  echo "fetch_onnx_data: $out is there (onnx $version)"
  exit 0
fi

mkdir -p "$cache"
if [ ! -f "$cache/$wheel" ] || ! echo "$sha256  $cache/$wheel" | sha256sum -c --status; then
  echo "fetch_onnx_data: downloading onnx==$version ($wheel)"
  # --platform/--python-version/--abi select the pinned wheel whatever the
  # host's Python is; they require --only-binary and --no-deps.
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
    --dest "$cache" "onnx==$version"
  if [ ! -f "$cache/$wheel" ]; then
    echo "fetch_onnx_data: pip did not leave $wheel in $cache" >&2
    exit 1
  fi
  if ! echo "$sha256  $cache/$wheel" | sha256sum -c --status; then
    echo "fetch_onnx_data: $cache/$wheel does not have the pinned SHA-256 $sha256" >&2
    rm -f "$cache/$wheel"
    exit 1
  fi
fi

# Extract into a sibling folder and rename it into place, so an interrupted
# run never leaves a half corpus that looks complete.
tmp="$out.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$python" - "$cache/$wheel" "$prefix" "$tmp" <<'EOF'
import os, sys, zipfile

wheel, prefix, dest = sys.argv[1:4]
count = 0
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        relative = info.filename[len(prefix):]
        # Names come from a checked archive, but a path that climbs out of
        # the destination is refused all the same.
        parts = relative.split("/")
        if any(part in ("", ".", "..") for part in parts):
            sys.exit(f"fetch_onnx_data: unexpected member name {info.filename!r} in {wheel}")
        target = os.path.join(dest, *parts)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as src, open(target, "wb") as dst:
            dst.write(src.read())
        count += 1
if count == 0:
    sys.exit(f"fetch_onnx_data: no member under {prefix} in {wheel}")
print(f"fetch_onnx_data: extracted {count} files")
EOF
echo "$wheel $sha256" > "$tmp/.source"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$tmp" "$out"
trap - EXIT
echo "fetch_onnx_data: $(find "$out" -name model.onnx | wc -l) cases in $out"
