"""Checks a Level Zero run's results.jsonl for the runs' copies (ABI run_cost).

Every case that passed ran its data sets through the adapter, so its line
must carry "run_cost" with one run per data set (a stateful case: per step,
and each step its own "cost"); a case with an NPU graph copies its outputs
back from the NPU's argument buffers, and holds them while it runs. Prints
the totals; exits 1 naming the first line that breaks a rule.
"""
import json
import sys


def check(path):
    counted = npu_cases = 0
    to_device = to_host = 0
    for number, text in enumerate(open(path, encoding="utf-8"), 1):
        line = json.loads(text)
        if line.get("state") != "PASS":
            continue
        where = f"{path}:{number} ({line.get('suite')}/{line.get('case')})"
        cost = line.get("run_cost")
        if not isinstance(cost, dict) or cost.get("runs", 0) < 1:
            return f"{where}: no run_cost with at least one run: {cost!r}"
        steps = line.get("steps") or []
        if steps:
            if cost["runs"] != len(steps):
                return f"{where}: run_cost counts {cost['runs']} runs for {len(steps)} steps"
            missing = [s.get("step") for s in steps if not isinstance(s.get("cost"), dict)]
            if missing:
                return f"{where}: steps {missing} have no cost"
        if line.get("placement", {}).get("npu", 0) > 0:
            # Every NPU graph has an output to copy back (a graph of
            # Constant nodes alone has no input to copy in).
            npu_cases += 1
            if cost["to_host_copies"] < 1 or cost["device_peak_bytes"] < 1:
                return f"{where}: nodes ran on the NPU but the runs copied back or held nothing: {cost!r}"
        counted += 1
        to_device += cost["to_device_bytes"]
        to_host += cost["to_host_bytes"]
    if counted == 0:
        return f"{path}: no case passed, so no run_cost was checked"
    print(f"run_cost: {counted} passing cases report their runs' copies ({npu_cases} with NPU nodes): "
          f"{to_device} bytes to the NPU, {to_host} back")
    return None


if __name__ == "__main__":
    problem = check(sys.argv[1])
    if problem:
        print(f"run_cost_check: {problem}", file=sys.stderr)
        sys.exit(1)
