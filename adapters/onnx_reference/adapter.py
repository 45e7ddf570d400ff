"""The onnx reference adapter: runs cases with onnx's own Python evaluator,
`onnx.reference.ReferenceEvaluator`, as a second oracle beside our reference (README.md)."""

from __future__ import annotations

import os

# One thread for numpy's BLAS, set before numpy loads: steadier timings, and
# parallel workers do not oversubscribe the cores (as the ONNX Runtime adapter).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import re  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import parity_external_data as external_data  # noqa: E402
import parity_protocol as protocol  # noqa: E402

ADAPTER_VERSION = "1"

# Failures that mean "the evaluator has no implementation for this", not "it
# computed it wrong": an op or domain it does not know ("Node type 'X' from
# domain 'Y' is unknown"), or an operator that raises NotImplementedError for
# an attribute value it lacks (RMSNormalization with stash_type other than 1).
_UNSUPPORTED_MESSAGES = re.compile(r"is unknown|not implemented|not supported|no implementation|unable to find",
                                   re.IGNORECASE)


def _status_of(error: Exception) -> protocol.AdapterError:
    """Maps an exception raised by the evaluator to a protocol status (the
    harness names the phase, session creation or run, itself)."""
    label = f"onnx {onnx.__version__} ReferenceEvaluator {type(error).__name__}: {error}"
    if isinstance(error, NotImplementedError) or _UNSUPPORTED_MESSAGES.search(str(error)):
        return protocol.AdapterError(protocol.UNSUPPORTED, label)
    if isinstance(error, MemoryError):
        return protocol.AdapterError(protocol.OUT_OF_MEMORY, label)
    return protocol.AdapterError(protocol.INTERNAL, label)


class _Session:
    """One evaluator and what run() needs to know about its graph."""

    def __init__(self, model: onnx.ModelProto, evaluator: ReferenceEvaluator):
        self.evaluator = evaluator
        self.input_names = {i.name for i in model.graph.input}
        # Outputs of optional type go back as optionals, with the kind they would hold.
        self.outputs = []
        for output in model.graph.output:
            kind = None
            if output.type.HasField("optional_type"):
                inner = output.type.optional_type.elem_type
                kind = "sequence" if inner.HasField("sequence_type") else "tensor"
            self.outputs.append((output.name, kind))


class OnnxReferenceAdapter(protocol.Adapter):
    def info(self) -> protocol.AdapterInfo:
        description = f"onnx {onnx.__version__} ReferenceEvaluator (Python and numpy {np.__version__}), one thread"
        return protocol.AdapterInfo(name="onnx_reference", version=ADAPTER_VERSION, backend_version=onnx.__version__,
                                    devices=[protocol.Device("cpu", "cpu", description)])

    def capabilities(self, device: str) -> protocol.Capabilities:
        # The evaluator's coverage depends on opset and attributes: every case
        # is tried, and a missing implementation answers UNSUPPORTED.
        return protocol.Capabilities(declared=False)

    def create_session(self, model_bytes: bytes, options: protocol.SessionOptions):
        # External data is read only from inside the model's folder (the
        # containment rule, checked before onnx opens any file), into the
        # tensors themselves, so the evaluator sees ordinary initializers.
        model = external_data.read_model(model_bytes, options.model_dir, f"onnx {onnx.__version__}")
        try:
            evaluator = ReferenceEvaluator(model)
        except Exception as error:  # noqa: BLE001 - every evaluator failure becomes a status
            raise _status_of(error) from error
        # The evaluator runs every node itself, in this process, on the CPU.
        placement = [(node.name or f"{node.op_type}#{index}", "cpu") for index, node in enumerate(model.graph.node)]
        return _Session(model, evaluator), protocol.SessionReport(placement=placement)

    def run(self, session: _Session, inputs: dict) -> list:
        for name in inputs:
            if name not in session.input_names:
                raise protocol.AdapterError(protocol.INVALID_ARGUMENT, f"the model has no graph input named '{name}'")
        try:
            results = session.evaluator.run(None, inputs)
        except Exception as error:  # noqa: BLE001
            raise _status_of(error) from error
        if len(results) != len(session.outputs):
            raise protocol.AdapterError(protocol.INTERNAL, f"the evaluator returned {len(results)} values for "
                                        f"{len(session.outputs)} graph outputs")
        outputs = []
        for (name, optional_kind), result in zip(session.outputs, results):
            if optional_kind is not None:
                result = protocol.OptionalValue(result, optional_kind)
            outputs.append((name, result))
        return outputs

    def release(self, session: _Session) -> None:
        session.evaluator = None


if __name__ == "__main__":
    protocol.serve(OnnxReferenceAdapter())
