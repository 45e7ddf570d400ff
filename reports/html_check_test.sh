#!/usr/bin/env bash
# Renders a synthetic two-run report with `parity report`, loads report.html
# in headless Chromium and checks the DOM it builds: the matrix, a NOT RUN
# cell, the SVG chart, and that markup injected through case data stayed
# text. Leaves a screenshot in $PARITY_BINARY_DIR/report_screenshot.png.
set -euo pipefail

CHECK_NAME=html_check
source "$(dirname "$0")/headless_chromium.sh"

# Two run folders: alpha@cpu with every kind of state, a planned case that
# never ran and hostile strings; beta@gpu that never planned s1/Relu.
"$python" - "$work" <<'EOF'
import json, os, sys
root = sys.argv[1]
script = "<script>document.title='INJECTED'</script>"
image = "<img src=x onerror=\"document.title='INJECTED'\">"

def line(suite, name, op, state, adapter, device, cold, message=None):
    j = {"case": name, "suite": suite, "dir": f"cases/{suite}/{name}", "operator": op,
         "adapter": adapter, "device": device, "state": state, "load_ms_cold": cold,
         "load_ms_warm": {"median": cold / 4, "min": cold / 5, "max": cold / 3, "repeats": 3},
         "run_ms": 1.5, "outputs": [],
         "repro": f"parity run --adapter {adapter} --cases cases/{suite} --filter {name}"}
    if state != "PASS":
        j["message"] = message or f"{state.lower()} on purpose"
    return j

def write(name, run, lines, summary=None):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(run, f)
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        for j in lines:
            f.write(json.dumps(j) + "\n")
    if summary:
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(summary, f)

fail = line("s1", "add_" + image, "Add", "FAIL", "alpha", "cpu", 14.0, "mismatch " + script + " & 'q' \"dq\" \x07 a|b")
fail["outputs"] = [{"index": 0, "verdict": "mismatch", "max_abs_error": 0.25, "max_rel_error": "inf",
                    "max_ulp_error": 1048576, "mismatches": 1, "elements": 8, "first_mismatch_index": 5,
                    "first_mismatch": "at [5]: expected 1 (0x3f800000), got 1.25 (0x3fa00000) " + image}]
alpha = [line("s1", "add_ok", "Add", "PASS", "alpha", "cpu", 9.5), fail,
         line("s1", "relu_unsupported", "Relu", "UNSUPPORTED", "alpha", "cpu", 1.2),
         line("s2", "conv_crash", "Conv", "CRASH", "alpha", "cpu", 31.0, "worker killed by signal 11"),
         line("s2", "conv_error", "Conv", "ERROR", "alpha", "cpu", 22.0),
         line("s2", "mm_xfail", "MatMul", "XFAIL", "alpha", "cpu", 5.0),
         line("s2", "mm_mistrusted", "MatMul", "MISTRUSTED", "alpha", "cpu", 6.0)]
alpha += [line("s3", f"big_{i}", f"Op{i % 7}", "PASS", "alpha", "cpu", 2.0 + i * 1.7) for i in range(40)]
plan = [{"case": j["case"], "suite": j["suite"], "operator": j["operator"]} for j in alpha]
plan.append({"case": "relu_never_ran", "suite": "s1", "operator": "Relu"})
write("alpha", {"adapter": "alpha", "device": "cpu", "planned": plan}, alpha,
      {"adapter": {"name": "alpha", "version": "1.0", "backend_version": "7.1"},
       "device": {"name": "cpu", "kind": "cpu", "description": "synthetic " + image},
       "seconds": 12.5, "versions": {"parity": "0.1", "protocol": 1, "abi": 1}})
beta = [line("s1", "add_ok", "Add", "PASS", "beta", "gpu", 120.0),
        line("s1", "add_" + image, "Add", "PASS", "beta", "gpu", 140.0)]
beta += [line("s3", f"big_{i}", f"Op{i % 7}", "PASS" if i % 9 else "FAIL", "beta", "gpu", 80.0 + i * 3) for i in range(40)]
write("beta", {"adapter": "beta", "device": "gpu",
               "planned": [{"case": j["case"], "suite": j["suite"], "operator": j["operator"]} for j in beta]}, beta)
EOF

out="$work/out"
"$parity" report "$work/alpha" "$work/beta" --out "$out" --title "Synthetic parity report"
for f in junit.xml report.md report.html; do
  [[ -s "$out/$f" ]] || { echo "FAIL: $out/$f missing or empty"; exit 1; }
done

# junit.xml parses as XML and its counts agree with its testcases.
"$python" - "$out/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
for suite in root.iter("testsuite"):
    cases = suite.findall("testcase")
    counts = {k: sum(1 for c in cases if c.find(k) is not None) for k in ("failure", "error", "skipped")}
    assert int(suite.get("tests")) == len(cases), suite.attrib
    assert int(suite.get("failures")) == counts["failure"], suite.attrib
    assert int(suite.get("errors")) == counts["error"], suite.attrib
    assert int(suite.get("skipped")) == counts["skipped"], suite.attrib
names = [c.get("name") for c in root.iter("testcase")]
assert "add_<img src=x onerror=\"document.title='INJECTED'\">" in names, names
assert any(s.get("message") == "NOT RUN" for s in root.iter("skipped"))
print("junit.xml: well-formed,", len(names), "testcases")
EOF

dump_dom "$out/report.html" "$work/dom.html"

# Check elements of the DOM that Chromium built, not the text of the file.
"$python" - "$work/dom.html" <<'EOF'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.title, self.in_title, self.notrun_cells = [], "", False, 0
        self.ids = set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "td" and "notrun" in (a.get("class") or "").split():
            self.notrun_cells += 1
        # The page's own <title>, not the <title> tooltips inside the SVG.
        self.in_title = tag == "title" and self.tags.count("title") == 1
    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
    def handle_data(self, data):
        if self.in_title:
            self.title += data

dom = Dom()
text = open(sys.argv[1], encoding="utf-8").read()
dom.feed(text)
failures = []
if dom.title.strip() != "Synthetic parity report":
    failures.append(f"title is {dom.title!r}")
if "INJECTED" in dom.title:
    failures.append("injected script ran")
if "matrix" not in dom.ids or "table" not in dom.tags:
    failures.append("no matrix table")
if dom.notrun_cells < 2:
    failures.append(f"expected NOT RUN cells (a planned case and a row beta never planned), found {dom.notrun_cells}")
if "NOT RUN" not in text:
    failures.append("no NOT RUN text")
if "svg" not in dom.tags:
    failures.append("no <svg> element")
for tag in ("img", "script", "iframe", "object"):
    if tag in dom.tags:
        failures.append(f"a <{tag}> element from the data")
if "&lt;script&gt;document.title='INJECTED'&lt;/script&gt;" not in text:
    failures.append("the escaped script text is missing")
if failures:
    print("FAIL: " + "; ".join(failures))
    sys.exit(1)
print(f"dom: title {dom.title!r}, {len(dom.tags)} elements, {dom.notrun_cells} NOT RUN cells, no injected elements")
EOF

screenshot "$out/report.html" "$bin/report_screenshot.png" 1400,1600
echo "html check passed"
