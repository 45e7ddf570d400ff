# Shared by the report checks (reports/*_check_test.sh), sourced, not run:
# finds the build and Chromium, makes a work folder, and loads a page in
# headless Chromium for its DOM or a screenshot. Sets bin, python, parity,
# chromium and work; the caller names its work folder in CHECK_NAME.

bin=${PARITY_BINARY_DIR:?set PARITY_BINARY_DIR to the build folder}
python=${PARITY_PYTHON:-python3}
parity="$bin/parity"
[[ -x "$parity" ]] || { echo "no parity binary at $parity"; exit 1; }
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$chromium" ]]; then
  echo "chromium not installed (ci/setup.sh installs it)"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/parity_${CHECK_NAME:?}.XXXXXX")
trap 'rm -rf "$work"' EXIT

run_chromium() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --no-first-run --disable-extensions "$@" 2>"$work/chromium.log"
}

# dump_dom PAGE OUT: the DOM Chromium built from PAGE, into OUT.
dump_dom() {
  run_chromium --dump-dom "file://$1" > "$2" || {
    cat "$work/chromium.log"
    echo "FAIL: chromium could not load $1"
    exit 1
  }
}

# screenshot PAGE PNG WIDTHxHEIGHT: a screenshot, checked to be a PNG of a
# rendered page (a blank one is far smaller than 20,000 bytes).
screenshot() {
  rm -f "$2"
  run_chromium --screenshot="$2" --window-size="$3" --hide-scrollbars "file://$1" >/dev/null || {
    cat "$work/chromium.log"
    echo "FAIL: chromium could not take a screenshot"
    exit 1
  }
  local size signature
  size=$(stat -c %s "$2" 2>/dev/null || echo 0)
  signature=$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')
  if [[ "$signature" != "89504e470d0a1a0a" || "$size" -lt 20000 ]]; then
    echo "FAIL: screenshot $2 is not a PNG of a rendered page ($size bytes)"
    exit 1
  fi
  echo "screenshot: $2 ($size bytes)"
}
