"""The flash_attention adapter: runs models that are one Attention node with a
FlashAttention-2-style kernel in numpy (kernel.py), or with one of its
deliberate faults (faults.py), to show what the suite's verdicts accept and
catch in a 16-bit attention kernel (README.md)."""

from __future__ import annotations

import os

# One thread for numpy's BLAS, set before numpy loads: steady timings, and
# parallel workers do not oversubscribe the cores.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

import attention_call  # noqa: E402
import faults  # noqa: E402
import kernel  # noqa: E402
import parity_external_data as external_data  # noqa: E402
import parity_protocol as protocol  # noqa: E402

ADAPTER_VERSION = "1"


class _Session:
    def __init__(self, call: attention_call.AttentionCall, fault: str, blocks: tuple):
        self.call = call
        self.fault = fault
        self.blocks = blocks


def _merge_heads(y: np.ndarray) -> np.ndarray:
    """[B, H, S, Dv] -> [B, S, H*Dv], the layout of 3-D inputs."""
    batch, heads, seq, size = y.shape
    return y.transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)


class FlashAttentionAdapter(protocol.Adapter):
    def info(self) -> protocol.AdapterInfo:
        description = f"FlashAttention-2-style Attention kernel in numpy {np.__version__}, one thread"
        return protocol.AdapterInfo(name="flash_attention", version=ADAPTER_VERSION, backend_version=np.__version__,
                                    devices=[protocol.Device("cpu", "cpu", description)])

    def capabilities(self, device: str) -> protocol.Capabilities:
        # Not declared: a model that is not one Attention node, or an attribute
        # the kernel lacks, answers UNSUPPORTED from create_session with the reason.
        return protocol.Capabilities(declared=False)

    def create_session(self, model_bytes: bytes, options: protocol.SessionOptions):
        try:
            fault = faults.fault_from_environment()
            blocks = faults.blocks_from_environment()
        except faults.SettingError as error:
            raise protocol.AdapterError(protocol.INVALID_ARGUMENT, str(error)) from error
        model = external_data.read_model(model_bytes, options.model_dir, "the flash kernel")
        call = attention_call.read_call(model)
        return _Session(call, fault, blocks), protocol.SessionReport(placement=[(call.node_name, "cpu")])

    def run(self, session: _Session, inputs: dict) -> list:
        call = session.call
        bound = attention_call.bind(call, inputs, session.fault, session.blocks)
        results = {}
        if call.outputs[0]:
            y = kernel.flash_forward(bound.problem)
            results[0] = (_merge_heads(y) if bound.three_d else y).astype(bound.out_type)
        # The present key and value are the concatenated inputs: no rounding.
        results[1] = bound.present_key
        results[2] = bound.present_value
        if call.outputs[3]:
            mode = call.attributes.get("qk_matmul_output_mode", 0)
            results[3] = kernel.qk_output(bound.problem, mode).astype(bound.out_type)
        return [(name, results[position]) for name, position in call.graph_outputs]

    def release(self, session: _Session) -> None:
        session.call = None


if __name__ == "__main__":
    protocol.serve(FlashAttentionAdapter())
