"""Writes the seed corpus of each libFuzzer target in fuzz/, at run time,
from the project's own corpora: nothing here is committed data.

    fuzz/seeds.py --out DIR --cases CORPUS_DIR... [--malformed DIR]
                  [--python-protocol BUILD/python]

CORPUS_DIR: folders of cases (model.onnx, test_data_set_N/*.pb, case.json)
as `parity corpus onnx-node` and cases/*/write_cases.py write them;
--malformed: the folder of `parity corpus malformed`. The other sources
are in the tree: spec/functions/*.onnxtxt, adapters/*/expectations/*.json,
spec/tolerance.json. Each target's folder is DIR/<target>/; every seed
starts with the selector its target reads (see each fuzz/*_fuzzer.cc).
"""
from __future__ import annotations

import argparse
import hashlib
import pathlib
import struct
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, printer

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Seeds above this size slow every execution and teach little that a
# smaller one does not; the cap also keeps libFuzzer's -max_len low.
MAX_SEED_BYTES = 64 << 10
# Per corpus folder, at most this many cases give seeds (spread evenly over
# the names, so every operator family has some), so the seed folders stay
# quick to load in CI.
MAX_CASES_PER_CORPUS = 600


class SeedWriter:
    """One target's seed folder; identical seeds are written once."""

    def __init__(self, out: pathlib.Path, target: str):
        self.dir = out / target
        self.dir.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def add(self, data: bytes) -> None:
        if len(data) > MAX_SEED_BYTES:
            return
        name = hashlib.sha1(data).hexdigest()
        path = self.dir / name
        if not path.exists():
            path.write_bytes(data)
            self.count += 1


def framed(*payloads: bytes) -> bytes:
    return b"".join(struct.pack("<I", len(p)) + p for p in payloads)


def case_dirs(corpora: list[pathlib.Path]) -> list[pathlib.Path]:
    found = []
    for corpus in corpora:
        models = sorted(corpus.rglob("model.onnx"))
        models = models[::-(-len(models) // MAX_CASES_PER_CORPUS) or 1]
        found.extend(m.parent for m in models)
    return found


def kind_selector(value_type: onnx.TypeProto) -> bytes:
    """tensor_fuzzer's first byte: 0 tensor, 1 sequence, 2 optional."""
    which = value_type.WhichOneof("value")
    return bytes([{"sequence_type": 1, "optional_type": 2}.get(which, 0)])


def external_data_model() -> tuple[bytes, bytes]:
    """A model whose initializer lives in data.bin, with that file's bytes."""
    weights = numpy_helper.from_array(
        np.arange(6, dtype="float32").reshape(2, 3), "w")
    data = weights.raw_data
    weights.ClearField("raw_data")
    weights.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", "data.bin"), ("offset", "0"), ("length", str(len(data)))):
        entry = weights.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "external",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return model.SerializeToString(), data


def model_seeds(out: pathlib.Path, cases: list[pathlib.Path], malformed: pathlib.Path | None) -> SeedWriter:
    seeds = SeedWriter(out, "model_fuzzer")
    models = [c / "model.onnx" for c in cases]
    if malformed:
        models += sorted(malformed.rglob("model.onnx"))
    for path in models:
        data = path.read_bytes()
        seeds.add(struct.pack("<I", len(data)) + data)
    model, external = external_data_model()
    seeds.add(struct.pack("<I", len(model)) + model + external)
    return seeds


def tensor_seeds(out: pathlib.Path, cases: list[pathlib.Path]) -> SeedWriter:
    seeds = SeedWriter(out, "tensor_fuzzer")
    for case in cases:
        try:
            graph = onnx.load(str(case / "model.onnx"), load_external_data=False).graph
        except Exception:  # a malformed case on purpose
            continue
        for data_set in sorted(case.glob("test_data_set_*")):
            for prefix, values in (("input", graph.input), ("output", graph.output)):
                for k, info in enumerate(values):
                    path = data_set / f"{prefix}_{k}.pb"
                    if path.exists():
                        seeds.add(kind_selector(info.type) + path.read_bytes())
    return seeds


def harness_file_seeds(out: pathlib.Path, cases: list[pathlib.Path]) -> SeedWriter:
    seeds = SeedWriter(out, "harness_files_fuzzer")
    for case in cases:
        if (case / "case.json").exists():
            seeds.add(b"\x00" + (case / "case.json").read_bytes())
    for path in sorted(ROOT.glob("adapters/*/expectations/*.json")):
        seeds.add(b"\x01" + path.read_bytes())
    seeds.add(b"\x02" + (ROOT / "spec/tolerance.json").read_bytes())
    return seeds


def text_seeds(out: pathlib.Path, cases: list[pathlib.Path]) -> SeedWriter:
    seeds = SeedWriter(out, "text_syntax_fuzzer")
    for path in sorted(ROOT.glob("spec/functions/*.onnxtxt")):
        seeds.add(path.read_bytes())
    # Model texts printed by the onnx package from a sample of the cases.
    for case in cases[::8]:
        try:
            seeds.add(printer.to_text(onnx.load(str(case / "model.onnx"))).encode())
        except Exception:  # the printer refuses some models; they are not needed
            continue
    return seeds


def protocol_seeds(out: pathlib.Path, cases: list[pathlib.Path]) -> SeedWriter:
    import parity_worker_pb2 as pb  # from the build folder's python/ (--python-protocol)

    seeds = SeedWriter(out, "protocol_fuzzer")

    def both_ends(requests: list, responses: list) -> None:
        raw_requests = [r.SerializeToString() for r in requests]
        raw_responses = [r.SerializeToString() for r in responses]
        for raw in raw_requests:
            seeds.add(b"\x00" + raw)
        for raw in raw_responses:
            seeds.add(b"\x02" + raw)
        seeds.add(b"\x01" + framed(*raw_requests))
        seeds.add(b"\x03" + framed(*raw_responses))

    hello = pb.Request(hello=pb.Hello(protocol_version=1))
    info = pb.Response(info=pb.AdapterInfo(protocol_version=1, name="reference", version="1",
                                           devices=[pb.Device(name="cpu", kind="cpu")], abi_version=1, pid=1))
    caps = pb.Response(capabilities=pb.Capabilities(operators=["ai.onnx:*"], data_types=[1, 7],
                                                    variant_targets=["portable"], declared=True))
    for case in cases[::16]:
        model = (case / "model.onnx").read_bytes()
        data_set = case / "test_data_set_0"
        inputs = [pb.Value(name=f"in{k}", tensor=onnx.load_tensor(str(p)))
                  for k, p in enumerate(sorted(data_set.glob("input_*.pb"))) if _is_tensor(p)]
        outputs = [pb.Value(name=f"out{k}", tensor=onnx.load_tensor(str(p)))
                   for k, p in enumerate(sorted(data_set.glob("output_*.pb"))) if _is_tensor(p)]
        create = pb.Request(create_session=pb.CreateSession(
            model=model, options=pb.SessionOptions(device="cpu", allow_fallback=False,
                                                   variant_targets=["portable"], case_name=case.name),
            warm_repeats=1))
        run = pb.Request(run=pb.Run(session_id=1, inputs=inputs, keep=[pb.StateBinding(output="y", input="x")]))
        session = pb.Response(session=pb.SessionCreated(
            session_id=1, load_ms_cold=1.5, load_ms_warm=[1.0],
            variants=[pb.VariantChoice(entry="e0", chosen="main")],
            placement=[pb.NodePlacement(node="n0", device="cpu")]))
        done = pb.Response(run=pb.RunDone(outputs=outputs, run_ms=0.5, rss_kb=1024))
        both_ends([hello, pb.Request(get_capabilities=pb.GetCapabilities(device="cpu")), create, run,
                   pb.Request(release_session=pb.ReleaseSession(session_id=1)), pb.Request(shutdown=pb.Shutdown())],
                  [info, caps, session, done,
                   pb.Response(status=pb.Status(code=pb.UNSUPPORTED, message="not supported"))])
    return seeds


def _is_tensor(path: pathlib.Path) -> bool:
    try:
        onnx.load_tensor(str(path))
        return True
    except Exception:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--cases", type=pathlib.Path, nargs="+", required=True)
    parser.add_argument("--malformed", type=pathlib.Path)
    parser.add_argument("--python-protocol", type=pathlib.Path, default=ROOT / "build/python",
                        help="folder holding the generated parity_worker_pb2.py")
    args = parser.parse_args()
    sys.path.insert(0, str(args.python_protocol))
    cases = case_dirs(args.cases)
    if not cases:
        print("seeds: no model.onnx under " + " ".join(map(str, args.cases)), file=sys.stderr)
        return 1
    for seeds in (model_seeds(args.out, cases, args.malformed), tensor_seeds(args.out, cases),
                  harness_file_seeds(args.out, cases), text_seeds(args.out, cases),
                  protocol_seeds(args.out, cases)):
        print(f"seeds: {seeds.dir.name}: {seeds.count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
