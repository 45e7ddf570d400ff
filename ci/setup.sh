#!/usr/bin/env bash
# Installs what ONNX Parity needs on a fresh Debian bookworm machine: the
# Debian packages of the C++ build and a project Python virtual environment
# with pinned versions. Safe to run again: every step checks before it acts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

debian_packages=(
  build-essential cmake ninja-build pkg-config
  clang-14 libclang-rt-14-dev
  protobuf-compiler libprotobuf-dev
  nlohmann-json3-dev
  libssl-dev
  libgtest-dev libgmock-dev googletest
  libbenchmark-dev
  libopenblas-dev libopenblas0-pthread
  libze-dev libze1
  python3-venv
  chromium fonts-dejavu-core
  locales
)

missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The en_US.UTF-8 locale: ONNX Runtime's StringNormalizer opens it by name
# (its default locale attribute), and fails without it.
if ! locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: generating the en_US.UTF-8 locale"
  $sudo_cmd localedef -i en_US -f UTF-8 en_US.UTF-8
fi

# Python: a virtual environment in .venv with the versions in ci/requirements.txt.
venv="$root/.venv"
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want=$(cat "$root/ci/requirements.txt" "$root/ci/requirements-nodeps.txt" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/ci/requirements.txt"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$root/ci/requirements-nodeps.txt"
  echo "$want" > "$stamp"
fi
# ONNX's node corpus as onnx 1.22.0 shipped it on disk (its wheel, pinned
# by hash and cached), a second corpus whose cases carry ONNX's own data.
bash "$root/cases/onnx_node/fetch_onnx_data.sh"
echo "setup: ready"
