#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (built with -DPARITY_FUZZ=ON):
#   1. every input under fuzz/regressions/<target>/ (each one crashed once)
#      through its target: any crash fails;
#   2. each target for a bounded time from seeds made of the project's own
#      corpora (fuzz/seeds.py): a crash fails and its input's path is printed.
#
#   ci/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET]     (defaults: build-asan, 20)
#
# Seeds come from the case folders in $PARITY_FUZZ_CASES (space-separated;
# default: build/corpus/*, which ci/test.sh writes, or ONNX's node tests
# written here when that is absent). Work files go to BUILD_DIR/fuzz-work/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build-asan}
seconds=${2:-20}
targets=(model_fuzzer tensor_fuzzer harness_files_fuzzer text_syntax_fuzzer protocol_fuzzer)
work="$build/fuzz-work"

for target in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/$target" ]; then
    echo "fuzz: $build/fuzz/$target is missing; build with: CC=clang-14 CXX=clang++-14 bash ci/build.sh $build -DPARITY_FUZZ=ON" >&2
    exit 1
  fi
done

# Every run: 2 GiB of resident memory at most, and no single allocation over
# 256 MiB, so that a length read from the input and allocated before it is
# checked shows up as a crash (the targets set the tensor limit to 64 MiB).
limits=(-rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=30)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The dictionaries of each target (fuzz/*.dict), joined into one file.
dictionary() {
  case "$1" in
    model_fuzzer | tensor_fuzzer) echo fuzz/onnx_proto.dict ;;
    harness_files_fuzzer) echo fuzz/harness_files.dict ;;
    text_syntax_fuzzer) echo fuzz/text_syntax.dict ;;
    protocol_fuzzer) echo fuzz/protocol.dict fuzz/onnx_proto.dict ;;
  esac
}
mkdir -p "$work/dict"
for target in "${targets[@]}"; do
  # shellcheck disable=SC2046
  cat $(dictionary "$target") > "$work/dict/$target.dict"
done

echo "== fuzz: regression inputs"
for target in "${targets[@]}"; do
  dir="fuzz/regressions/$target"
  [ -d "$dir" ] || continue
  mapfile -t inputs < <(find "$dir" -type f | sort)
  [ ${#inputs[@]} -gt 0 ] || continue
  if ! "$build/fuzz/$target" "${limits[@]}" "${inputs[@]}" > "$work/$target.regressions.log" 2>&1; then
    tail -n 60 "$work/$target.regressions.log"
    echo "fuzz: $target crashes again on an input under $dir (log: $work/$target.regressions.log)" >&2
    exit 1
  fi
  echo "$target: ${#inputs[@]} regression inputs pass"
done

echo "== fuzz: seeds"
if [ -n "${PARITY_FUZZ_CASES:-}" ]; then
  read -r -a cases <<< "$PARITY_FUZZ_CASES"
elif compgen -G "build/corpus/*" > /dev/null; then
  cases=(build/corpus/*)
else
  rm -rf "$work/onnx_node"
  "$build/parity" corpus onnx-node --out "$work/onnx_node" > /dev/null
  cases=("$work/onnx_node")
fi
rm -rf "$work/malformed" "$work/seeds"
"$build/parity" corpus malformed --out "$work/malformed" > /dev/null
.venv/bin/python fuzz/seeds.py --out "$work/seeds" --cases "${cases[@]}" --malformed "$work/malformed" \
  --python-protocol "$build/python"

# The targets run side by side, one a core (each alone on its core for its
# seconds), then each one's end is read in turn.
parallel=${PARITY_FUZZ_JOBS:-$(nproc)}
echo "== fuzz: ${seconds} s per target, ${parallel} at a time"
fuzz_target() {
  local target=$1 corpus="$work/corpus/$1" artifacts="$work/artifacts/$1/"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  "$build/fuzz/$target" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -dict="$work/dict/$target.dict" -artifact_prefix="$artifacts" "$corpus" "$work/seeds/$target" \
    > "$work/$target.log" 2>&1
}
pids=()
for target in "${targets[@]}"; do
  fuzz_target "$target" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
done
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  status=0
  wait "${pids[$i]}" || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$work/$target.log"
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/$target.log" | tail -n 1)
    echo "fuzz: $target crashed (exit status $status); the input: ${crash:-see $work/$target.log}" >&2
    echo "fuzz: reproduce with: $build/fuzz/$target ${limits[*]} ${crash:-INPUT}" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log")
  coverage=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$target.log" | sed -n 's/.*\(cov: [0-9]* ft: [0-9]*\).*/\1/p')
  echo "$target: ${runs:-?} runs, ${coverage:-no coverage line}, corpus $(find "$work/corpus/$target" -type f | wc -l) files"
done
echo "== fuzz: no crash"
