"""The files `parity spec-diff` writes from its result (spec_diff.json's
object): report.md, short enough for a pull-request comment; report.html,
every difference, self-contained (no script, no external resource, every
string escaped); junit.xml, one test case per difference."""
from __future__ import annotations

import html
from xml.sax.saxutils import escape as xml_escape, quoteattr

import verdicts

# Rows of one list in report.md before it is cut with "and N more".
MD_ROWS = 25
# report.md is cut to stay under GitHub's comment limit (65,536 characters).
MD_LIMIT = 60000


def build_words(build: dict) -> str:
    words = build["distribution"] or ("onnx " + build["onnx_version"])
    return f"{words} (opset {build['opset']})" if build.get("opset") else words


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(rows, columns, limit=MD_ROWS):
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        out.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    if len(rows) > limit:
        out.append(f"\n... and {len(rows) - limit} more (report.html and spec_diff.json list every one)")
    return out


def markdown(result: dict) -> str:
    gate = result["gate"]
    out = [f"## ONNX spec change: {build_words(result['base'])} -> {build_words(result['head'])}", ""]
    out.append(("**Gate passed**" if gate["passed"] else "**Gate failed**") + ": "
               + (f"{len(gate['unacknowledged'])} meaning change(s) not acknowledged"
                  if not gate["passed"] else
                  f"no unacknowledged meaning change ({len(gate['acknowledged'])} acknowledged)"))
    out += ["", "| what changed | cases |", "|---|---|"]
    out += [f"| {kind} | {n} |" for kind, n in result["counts"].items() if n]
    sorts = result["sorts"]
    if sorts:
        out += ["", "| the reference's verdict | cases |", "|---|---|"]
        out += [f"| {s} | {n} |" for s, n in sorts.items()]
    meaning = [c for c in result["cases"] if c.get("sort") == verdicts.MEANING]
    if meaning:
        out += ["", "### Meaning changes", ""]
        out += _table([(c["case"], c["operator"], c["kind"], "yes" if c.get("acknowledged") else "**no**",
                        c.get("reference", {}).get("message", "")[:160]) for c in meaning],
                      ["case", "operator", "change", "acknowledged", "the reference says"])
    if result["work_for_reference"]:
        out += ["", "### Work for the reference", ""]
        out += _table([(v, n) for v, n in result["work_for_reference"].items()], ["operator version", "cases"])
    for key, words in (("operators_added", "Operators added to the spec"), ("versions_added", "Operator versions added"),
                       ("operators_removed", "Operators removed"),
                       ("operators_with_first_cases", "Operators with their first cases")):
        if result.get(key):
            out += ["", f"{words}: " + ", ".join(result[key])]
    for run in result["runs"]:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(run["counts"].items())) or "no case touched"
        out += ["", f"### Earlier run: {run['adapter'] or run['run']}", "", counts]
        turning = [c for c in run["cases"] if c["verdict"] in ("turns FAIL", "may turn", "dropped")]
        if turning:
            out += [""] + _table([(c["case"], c["state"], c["verdict"], c["why"][:160]) for c in turning],
                                 ["case", "state", "after the change", "why"], limit=10)
    out += ["", f"Base {result['base']['spec']}, head {result['head']['spec']}; {result['seconds']:.0f} s. "
            "Full lists: report.html, spec_diff.json."]
    text = "\n".join(out) + "\n"
    if len(text) > MD_LIMIT:
        text = text[:MD_LIMIT].rsplit("\n", 1)[0] + "\n\n... cut to fit a comment; see report.html\n"
    return text


def _h(text) -> str:
    return html.escape(str(text), quote=True)


def page(result: dict) -> str:
    base, head = build_words(result["base"]), build_words(result["head"])
    gate = result["gate"]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>ONNX spec change: {_h(base)} -&gt; {_h(head)}</title>",
             "<style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
             ".bad{background:#fdd}.ok{background:#dfd}.warn{background:#ffd}code{font-size:12px}</style>",
             "</head><body>",
             f"<h1>ONNX spec change: {_h(base)} &rarr; {_h(head)}</h1>",
             f"<p id='gate' class='{'ok' if gate['passed'] else 'bad'}'>Gate "
             f"{'passed' if gate['passed'] else 'failed'}: {len(gate['unacknowledged'])} unacknowledged, "
             f"{len(gate['acknowledged'])} acknowledged meaning change(s).</p>",
             "<table id='counts'><tr><th>what changed</th><th>cases</th></tr>"]
    parts += [f"<tr><td>{_h(k)}</td><td>{n}</td></tr>" for k, n in result["counts"].items()]
    parts.append("</table><table id='sorts'><tr><th>the reference's verdict</th><th>cases</th></tr>")
    parts += [f"<tr><td>{_h(k)}</td><td>{n}</td></tr>" for k, n in result["sorts"].items()]
    parts.append("</table>")
    if result["work_for_reference"]:
        parts.append("<h2>Work for the reference</h2><table id='work'><tr><th>operator version</th><th>cases</th></tr>")
        parts += [f"<tr><td>{_h(v)}</td><td>{n}</td></tr>" for v, n in result["work_for_reference"].items()]
        parts.append("</table>")
    for key, words in (("operators_added", "Operators added to the spec"), ("versions_added", "Operator versions added"),
                       ("operators_removed", "Operators removed"),
                       ("operators_with_first_cases", "Operators with their first cases")):
        if result.get(key):
            parts.append(f"<p id='{key}'>{_h(words)}: {_h(', '.join(result[key]))}</p>")
    parts.append("<h2>Every difference</h2><table id='cases'><tr><th>case</th><th>operator</th><th>change</th>"
                 "<th>detail</th><th>the reference on the head</th><th>verdict</th></tr>")
    for c in result["cases"]:
        ref = c.get("reference") or {}
        css = "bad" if c.get("sort") == verdicts.MEANING and not c.get("acknowledged") else (
            "warn" if c.get("sort") in (verdicts.NEW_OP, verdicts.NOT_JUDGED) else "")
        parts.append(f"<tr class='{css}'><td>{_h(c['case'])}</td><td>{_h(c['operator'])}</td><td>{_h(c['kind'])}</td>"
                     f"<td>{_h(c.get('detail', ''))}{_h('; new: ' + ', '.join(c['new_versions'])) if c.get('new_versions') else ''}</td>"
                     f"<td>{_h(ref.get('state', ''))} {_h(ref.get('message', '')[:300])}</td>"
                     f"<td>{_h(c.get('sort', ''))}{' (acknowledged)' if c.get('acknowledged') else ''}</td></tr>")
    parts.append("</table>")
    for run in result["runs"]:
        parts.append(f"<h2>Earlier run: {_h(run['adapter'])} <code>{_h(run['run'])}</code></h2>"
                     "<table class='run'><tr><th>case</th><th>state</th><th>change</th><th>after the change</th>"
                     "<th>why</th></tr>")
        parts += [f"<tr class='{'bad' if c['verdict'] == 'turns FAIL' else ''}'><td>{_h(c['case'])}</td>"
                  f"<td>{_h(c['state'])}</td><td>{_h(c['change'])}</td><td>{_h(c['verdict'])}</td>"
                  f"<td>{_h(c['why'])}</td></tr>" for c in run["cases"]]
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)


def junit(result: dict) -> str:
    cases = result["cases"]
    failures = sum(1 for c in cases if c.get("sort") == verdicts.MEANING and not c.get("acknowledged"))
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="spec-diff" tests="{len(cases)}" failures="{failures}">',
           f'<testsuite name="spec-diff" tests="{len(cases)}" failures="{failures}">']
    for c in cases:
        name = quoteattr(c["case"])
        sort = c.get("sort", "")
        text = f"{c['kind']}: {c.get('detail', '')}; the reference: {sort}"
        out.append(f'<testcase classname={quoteattr(c["operator"] or "unknown")} name={name}>')
        if sort == verdicts.MEANING and not c.get("acknowledged"):
            message = (c.get("reference") or {}).get("message", "")
            out.append(f"<failure message={quoteattr('meaning changed: ' + message[:300])}>{xml_escape(text)}</failure>")
        elif sort in (verdicts.NEW_OP, verdicts.DROPPED, verdicts.NOT_JUDGED):
            out.append(f"<skipped message={quoteattr(sort)}/>")
        out.append(f"<system-out>{xml_escape(text)}</system-out></testcase>")
    out += ["</testsuite>", "</testsuites>", ""]
    return "\n".join(out)
