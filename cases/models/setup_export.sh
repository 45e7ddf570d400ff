#!/usr/bin/env bash
# Creates .venv-export at the repository root: the exporter environment of
# cases/models/export_models.py (torch and onnxscript, pinned in
# requirements-export.txt). The project's own setup (ci/setup.sh) never
# installs torch; only this script does. Safe to run again: it reinstalls
# only when requirements-export.txt changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv="$root/.venv-export"
requirements="$root/cases/models/requirements-export.txt"
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  echo "setup_export: creating $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup_export: installing $requirements (torch pulls about 5 GB of CUDA wheels; this takes a while)"
  "$venv/bin/python" -m pip install --progress-bar off --disable-pip-version-check -q -r "$requirements"
  echo "$want" > "$stamp"
fi
echo "setup_export: ready; export with $venv/bin/python cases/models/export_models.py --out DIR or --check"
