"""The numpy oracle adapter: runs the function corpus's models node by node
with the oracle's own float64 operators (README.md), a check of the
reference that shares none of its code."""

from __future__ import annotations

import os

# One BLAS thread, set before numpy loads: steady timings, and parallel
# workers do not oversubscribe the cores.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

import ops_attention  # noqa: E402
import ops_basic  # noqa: E402
import ops_contrib_attention  # noqa: E402
import ops_contrib_norm  # noqa: E402
import ops_functions  # noqa: E402
import parity_external_data as external_data  # noqa: E402
import parity_protocol as protocol  # noqa: E402
from graph import Model, Registry  # noqa: E402
from values import OracleError, to_numpy  # noqa: E402

ADAPTER_VERSION = "1"


def make_registry() -> Registry:
    registry = Registry()
    for module in (ops_basic, ops_functions, ops_contrib_norm, ops_attention, ops_contrib_attention):
        module.register(registry)
    return registry


REGISTRY = make_registry()


def status_of(error: OracleError) -> protocol.AdapterError:
    code = protocol.UNSUPPORTED if error.unsupported else protocol.INVALID_ARGUMENT
    return protocol.AdapterError(code, f"numpy oracle: {error.message}")


class NumpyOracleAdapter(protocol.Adapter):
    def info(self) -> protocol.AdapterInfo:
        description = f"float64 oracle in numpy {np.__version__}, one thread"
        return protocol.AdapterInfo(name="numpy_oracle", version=ADAPTER_VERSION, backend_version=np.__version__,
                                    devices=[protocol.Device("cpu", "cpu", description)])

    def capabilities(self, device: str) -> protocol.Capabilities:
        # Support depends on operator versions and attributes: every case is
        # tried, and what the oracle lacks answers UNSUPPORTED naming it.
        return protocol.Capabilities(declared=False)

    def create_session(self, model_bytes: bytes, options: protocol.SessionOptions):
        model = external_data.read_model(model_bytes, options.model_dir, "the numpy oracle")
        try:
            session = Model(model, REGISTRY)
        except OracleError as error:
            raise status_of(error) from error
        placement = [(node.name or f"{node.op_type}#{index}", "cpu") for index, node in enumerate(model.graph.node)]
        return session, protocol.SessionReport(placement=placement)

    def run(self, session: Model, inputs: dict) -> list:
        known = {name for name, _ in session.graph.inputs}
        for name in inputs:
            if name not in known:
                raise protocol.AdapterError(protocol.INVALID_ARGUMENT, f"the model has no graph input named '{name}'")
        try:
            results = session.run(inputs)
            return [(name, to_numpy(result)) for (name, _), result in zip(session.graph.outputs, results)]
        except OracleError as error:
            raise status_of(error) from error


if __name__ == "__main__":
    protocol.serve(NumpyOracleAdapter())
