#!/usr/bin/env bash
# Renders a report of three runs of one adapter at different dates (given
# out of order) and one run of another adapter with `parity report`, loads
# report.html in headless Chromium and checks the trend in the DOM it
# builds: rows in date order with their pass counts, the SVG chart, and the
# cases that changed state. Leaves a screenshot in
# $PARITY_BINARY_DIR/trend_screenshot.png.
set -euo pipefail

CHECK_NAME=trend_check
source "$(dirname "$0")/headless_chromium.sh"

# gamma@cpu in January (7 of 10 pass), February (8 of 9: removed_later is
# gone, flaky_<b> passes) and March (9 of 10: new_in_march added); delta@cpu
# once, which makes no trend of its own.
"$python" - "$work" <<'EOF'
import json, os, sys
root = sys.argv[1]

def write(folder, adapter, finished, version, states, cold):
    d = os.path.join(root, folder)
    os.makedirs(d)
    lines = []
    for i, (name, state) in enumerate(states.items()):
        j = {"case": name, "suite": "s1", "dir": f"cases/s1/{name}", "operator": "Add", "adapter": adapter,
             "device": "cpu", "state": state, "load_ms_cold": cold + i,
             "load_ms_warm": {"median": cold / 4, "min": cold / 5, "max": cold / 3, "repeats": 3},
             "run_ms": 1.0, "outputs": []}
        if state != "PASS":
            j["message"] = f"{state.lower()} on purpose"
        lines.append(j)
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        f.writelines(json.dumps(j) + "\n" for j in lines)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"adapter": {"name": adapter, "version": version, "backend_version": "b" + version},
                   "device": {"name": "cpu", "kind": "cpu"}, "finished": finished}, f)

base = {f"add_{i}": "PASS" for i in range(6)}
jan = dict(base, **{"flaky_<b>x</b>": "FAIL", "removed_later": "PASS", "slow": "TIMEOUT", "odd": "UNSUPPORTED"})
feb = dict(base, **{"flaky_<b>x</b>": "PASS", "slow": "PASS", "odd": "UNSUPPORTED"})
mar = dict(feb, **{"odd": "PASS", "new_in_march": "FAIL"})
write("gamma_mar", "gamma", "2026-03-05T10:00:00Z", "1.2", mar, 30.0)
write("gamma_jan", "gamma", "2026-01-05T10:00:00Z", "1.0", jan, 10.0)
write("delta", "delta", "2026-02-01T00:00:00Z", "9", base, 5.0)
write("gamma_feb", "gamma", "2026-02-05T10:00:00Z", "1.1", feb, 20.0)
EOF

out="$work/out"
"$parity" report "$work/gamma_mar" "$work/gamma_jan" "$work/delta" "$work/gamma_feb" --out "$out" \
  --title "Trend check"
grep -q "^## Trends" "$out/report.md" || { echo "FAIL: report.md has no Trends section"; exit 1; }

dump_dom "$out/report.html" "$work/dom.html"

# Check the DOM that Chromium built: the tables' cells as text, the chart's elements.
"$python" - "$work/dom.html" <<'EOF'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables = {}  # id or class -> rows of cell texts
        self.table = None
        self.cell = None
        self.svg_trend = False
        self.in_trend_svg = False
        self.trend_dots = 0
        self.trend_h3 = []
        self.in_h3 = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            key = a.get("id") or a.get("class") or ""
            self.table = self.tables.setdefault(key, [])
        elif tag == "tr" and self.table is not None:
            self.table.append([])
        elif tag in ("td", "th") and self.table is not None:
            self.cell = ""
        elif tag == "svg" and "trend-chart" in (a.get("class") or "").split():
            self.svg_trend = self.in_trend_svg = True
        elif tag == "circle" and self.in_trend_svg:
            self.trend_dots += 1
        elif tag == "h3":
            self.in_h3 = True
            self.trend_h3.append("")
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.table[-1].append(self.cell.strip())
            self.cell = None
        elif tag == "table":
            self.table = None
        elif tag == "svg":
            self.in_trend_svg = False
        elif tag == "h3":
            self.in_h3 = False
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.in_h3:
            self.trend_h3[-1] += data

dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
failures = []
trend = dom.tables.get("trend-1")
if not trend:
    sys.exit("FAIL: no trend table #trend-1")
header, rows = trend[0], trend[1:]
run, finished, passed = header.index("run"), header.index("finished"), header.index("pass")
got = [(r[run], r[finished], r[passed]) for r in rows]
want = [("gamma@cpu (gamma_jan)", "2026-01-05T10:00:00Z", "7"),
        ("gamma@cpu (gamma_feb)", "2026-02-05T10:00:00Z", "8"),
        ("gamma@cpu (gamma_mar)", "2026-03-05T10:00:00Z", "9")]
if got != want:
    failures.append(f"trend rows {got}, expected {want}")
if "trend-2" in dom.tables:
    failures.append("a second trend: delta has one run only")
if not any(h.startswith("gamma@cpu over 3 runs") for h in dom.trend_h3):
    failures.append(f"no heading 'gamma@cpu over 3 runs' in {dom.trend_h3}")
if not dom.svg_trend:
    failures.append("no <svg class=trend-chart>")
elif dom.trend_dots < 6:  # pass counts and cold medians, three runs each
    failures.append(f"the trend chart has {dom.trend_dots} dots")
changes = dom.tables.get("trend-changes", [])
# The markup in a case's name stays text: as an element it would read "flaky_x".
expected = [["s1", "flaky_<b>x</b>", "FAIL", "PASS"], ["s1", "slow", "TIMEOUT", "PASS"],
            ["s1", "removed_later", "PASS", "–"], ["s1", "odd", "UNSUPPORTED", "PASS"],
            ["s1", "new_in_march", "–", "FAIL"]]
for row in expected:
    if row not in changes:
        failures.append(f"changed case {row} not listed (have {changes})")
if failures:
    print("FAIL: " + "; ".join(failures))
    sys.exit(1)
print(f"dom: trend rows {[r[0] for r in got]}, passes {[r[2] for r in got]}, "
      f"{dom.trend_dots} chart dots, {len(changes) - 2} changed cases listed")
EOF

screenshot "$out/report.html" "$bin/trend_screenshot.png" 1400,1400
echo "trend check passed"
