"""Checks a device adapter's results.jsonl for the runs' copies (ABI run_cost).

    run_cost_check.py RESULTS_JSONL --device DEVICE    (npu: Level Zero, cuda)

Every case that passed ran its data sets through the adapter, so its line
must carry "run_cost" with one run per data set (a stateful case: per step,
and each step its own "cost"); a case with nodes on the device copies their
outputs back from it, and holds memory there while it runs. Prints the
totals; exits 1 naming the first line that breaks a rule.
"""
import argparse
import json
import sys


def check(path, device):
    counted = device_cases = 0
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
        if line.get("placement", {}).get(device, 0) > 0:
            # Some output made on the device comes back to the host (a graph
            # of Constant nodes alone has no input to copy in).
            device_cases += 1
            if cost["to_host_copies"] < 1 or cost["device_peak_bytes"] < 1:
                return f"{where}: nodes ran on {device} but the runs copied back or held nothing: {cost!r}"
        counted += 1
        to_device += cost["to_device_bytes"]
        to_host += cost["to_host_bytes"]
    if counted == 0:
        return f"{path}: no case passed, so no run_cost was checked"
    print(f"run_cost: {counted} passing cases report their runs' copies ({device_cases} with {device} nodes): "
          f"{to_device} bytes to {device}, {to_host} back")
    return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--device", required=True, help="the device of the adapter's placement (npu, cuda)")
    args = parser.parse_args()
    problem = check(args.results, args.device)
    if problem:
        print(f"run_cost_check: {problem}", file=sys.stderr)
        sys.exit(1)
