#!/usr/bin/env bash
# Checks the include layering of the results library and the reports:
# reports/ includes of the harness only harness/results/, and harness/results/
# includes neither reports/ nor any other part of the harness.
set -euo pipefail
root=${PARITY_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0
bad=$(grep -rnE '#include "harness/' reports | grep -vE '#include "harness/results/' || true)
if [ -n "$bad" ]; then
  echo "reports/ may include only harness/results/ of the harness:"; echo "$bad"; status=1
fi
bad=$(grep -rnE '#include "(reports/|harness/)' harness/results | grep -vE '#include "harness/results/' || true)
if [ -n "$bad" ]; then
  echo "harness/results/ may include neither reports/ nor the rest of the harness:"; echo "$bad"; status=1
fi
[ "$status" -eq 0 ] && echo "layering: ok"
exit "$status"
