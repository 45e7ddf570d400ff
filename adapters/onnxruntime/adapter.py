"""The ONNX Runtime adapter: runs cases on ONNX Runtime's CPU execution provider,
and on its CUDA execution provider where onnxruntime-gpu is installed (README.md)."""

from __future__ import annotations

import ctypes
import os
import re
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

import parity_external_data as external_data
import parity_protocol as protocol

ADAPTER_VERSION = "1"

_CPU_EP = "CPUExecutionProvider"
_CUDA_EP = "CUDAExecutionProvider"
_DEVICE_OF_EP = {_CPU_EP: "cpu", _CUDA_EP: "cuda"}

# Element types that ONNX Runtime's numpy bridge converts faithfully. Others
# (bfloat16, float8, int4, ...) cross as raw bytes in OrtValues: the bridge
# refuses some and, worse, returns float8e4m3fn outputs as plain uint8.
_NUMPY_BRIDGE_TYPES = {"float", "double", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "bool", "string"}
_NUMPY_BRIDGE_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
                                              np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.object_)}
# ONNX Runtime's names for element types ("tensor(float8e4m3fn)") -> onnx.TensorProto.DataType.
_ONNX_TYPE_OF_ORT_NAME = {name.lower().replace("_", ""): value
                          for name, value in onnx.TensorProto.DataType.items()}

# Failures that mean "ONNX Runtime cannot run this", not "it ran it wrong":
# a missing kernel, an op, domain or attribute its schemas lack, an IR or
# opset newer than it reads, an element type it has not registered, or a
# kernel that says a mode is not supported (spec/abi: UNSUPPORTED is "an
# operator, type or attribute the backend cannot run").
_UNSUPPORTED_MESSAGES = re.compile(
    r"Could not find an implementation|Failed to find kernel|is not a registered function/op"
    r"|Unsupported model IR version|Opset \d+ is under development|No opset import for domain"
    r"|Unrecognized attribute|is not currently registered|not supported|not implemented",
    re.IGNORECASE)
# ONNX Runtime's refusal when fallback to the CPU EP is disabled (inference_session.cc).
_FALLBACK_MESSAGES = re.compile(r"fallback to CPU EP has been explicitly disabled", re.IGNORECASE)
_OOM_MESSAGES = re.compile(r"Failed to allocate memory|bad_alloc|out of memory", re.IGNORECASE)


# Contrib twins (README.md, "Contrib twins"): ops of our contrib domain that
# ONNX Runtime ships under another domain with the same inputs, outputs,
# attributes and defaults (spec/functions/*.md, "Mapping to ONNX Runtime"), so
# that moving the node is the whole translation. An op of our domain that is
# not listed, or of another version, stays, and ONNX Runtime refuses it.
CONTRIB_DOMAIN = "org.onnxparity.contrib"
_MS_DOMAIN = "com.microsoft"
_MS_OPSET = 1
# (op_type, our domain version) -> ONNX Runtime's domain for its twin.
_CONTRIB_TWINS = {
    ("SimplifiedLayerNormalization", 1): "",  # ONNX Runtime registers it in the default domain
    ("SkipLayerNormalization", 1): _MS_DOMAIN,
    ("SkipSimplifiedLayerNormalization", 1): _MS_DOMAIN,
    ("MultiHeadAttention", 1): _MS_DOMAIN,
    ("GroupQueryAttention", 1): _MS_DOMAIN,
}
# The switch: PARITY_ORT_CONTRIB_TWINS=0 in the environment, or
# --no-contrib-twins on the manifest's command line, turns translation off.
TWINS_ENV = "PARITY_ORT_CONTRIB_TWINS"
NO_TWINS_FLAG = "--no-contrib-twins"


def contrib_twins_enabled(argv: list[str]) -> bool:
    if NO_TWINS_FLAG in argv:
        return False
    return os.environ.get(TWINS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _nodes_in(nodes):
    """The nodes and, depth first, those of every graph in their attributes (If, Loop, Scan bodies)."""
    for node in nodes:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _nodes_in(attribute.g.node)
            elif attribute.type == onnx.AttributeProto.GRAPHS:
                for graph in attribute.graphs:
                    yield from _nodes_in(graph.node)


def _scopes_of(model: onnx.ModelProto):
    """(nodes, opset imports that govern them): the main graph with its nested
    graphs under the model's imports, and each model-local function's body
    under the function's own imports."""
    yield _nodes_in(model.graph.node), model.opset_import
    for function in model.functions:
        yield _nodes_in(function.node), function.opset_import


def translate_contrib_twins(model_bytes: bytes) -> tuple[bytes, list[str]]:
    """Rewrites nodes of CONTRIB_DOMAIN that have an exact ONNX Runtime twin to
    that twin's domain. Returns the model (unchanged bytes when nothing moved)
    and one line per translated node, for the log."""
    # A cheap test first: most models never mention our domain.
    if CONTRIB_DOMAIN.encode() not in model_bytes:
        return model_bytes, []
    model = onnx.ModelProto()
    model.ParseFromString(model_bytes)
    # A model-local function of the same name would be what the model means by the op:
    # ONNX Runtime inlines those itself, so such nodes are left alone.
    local = {(f.domain, f.name) for f in model.functions}
    moved = []
    for nodes, opset_import in _scopes_of(model):
        imports = {opset.domain: opset.version for opset in opset_import}
        version = imports.get(CONTRIB_DOMAIN)
        twin_domains = set()
        for index, node in enumerate(nodes):
            if node.domain != CONTRIB_DOMAIN or (node.domain, node.op_type) in local:
                continue
            twin_domain = _CONTRIB_TWINS.get((node.op_type, version))
            if twin_domain is None:
                continue
            node.domain = twin_domain
            twin_domains.add(twin_domain)
            label = node.name or f"{node.op_type}#{index}"
            moved.append(f"{label}: {CONTRIB_DOMAIN} {node.op_type}-{version} -> "
                         f"{twin_domain or 'default domain'} {node.op_type}")
        # Our domain's import stays: nodes without a twin may still use it.
        for domain in sorted(twin_domains - imports.keys()):
            opset_import.append(onnx.helper.make_opsetid(domain, _MS_OPSET if domain == _MS_DOMAIN else 1))
    if not moved:
        return model_bytes, []
    return model.SerializeToString(), moved


# ONNX Runtime's session option (onnxruntime_session_options_config_keys.h)
# naming the folder that external data is read from when the model comes as
# bytes. The data stays out of the model bytes, so models over 2 GiB load too.
_EXTERNAL_DATA_FOLDER_KEY = "session.model_external_initializers_file_folder_path"


def check_external_data(model_bytes: bytes, model_dir: str) -> bool:
    """Applies the containment rule (parity_external_data) to the model's
    external tensors before ONNX Runtime opens any file; returns whether it
    has any. Raises AdapterError (INVALID_ARGUMENT) naming the rule broken."""
    # A cheap test first: every external tensor names its file under the key
    # "location". A tensor marked EXTERNAL without one is ONNX Runtime's to refuse.
    if b"location" not in model_bytes:
        return False
    model = onnx.ModelProto()
    try:
        model.ParseFromString(model_bytes)
    except Exception:  # noqa: BLE001 - a model that does not parse is ONNX Runtime's to refuse
        return False
    return external_data.check_external_data(model, model_dir)


def _status_of(error: Exception, allow_fallback: bool) -> protocol.AdapterError:
    """Maps an exception raised by ONNX Runtime to a protocol status (the
    harness names the phase, session creation or run, itself)."""
    text = str(error)
    origin = "ONNX Runtime " if type(error).__module__.startswith("onnxruntime") else ""
    label = f"{origin}{type(error).__name__}: {text}"
    if not allow_fallback and _FALLBACK_MESSAGES.search(text):
        return protocol.AdapterError(protocol.FALLBACK_REQUIRED, label)
    if isinstance(error, ort_errors.NotImplemented) or _UNSUPPORTED_MESSAGES.search(text):
        return protocol.AdapterError(protocol.UNSUPPORTED, label)
    if isinstance(error, MemoryError) or _OOM_MESSAGES.search(text):
        return protocol.AdapterError(protocol.OUT_OF_MEMORY, label)
    # The harness maps INVALID_ARGUMENT to FAIL: corpus models are valid ONNX,
    # so ONNX Runtime rejecting one (or its inputs) is a conformance failure.
    if isinstance(error, (ort_errors.InvalidGraph, ort_errors.InvalidProtobuf, ort_errors.InvalidArgument, ValueError)):
        return protocol.AdapterError(protocol.INVALID_ARGUMENT, label)
    return protocol.AdapterError(protocol.INTERNAL, label)


def _element_type(type_name: str) -> str:
    """"tensor(float)" -> "float"; "seq(tensor(int64))" -> "int64"; "optional(tensor(x))" -> "x"."""
    inner = type_name
    while "(" in inner:
        inner = inner[inner.index("(") + 1:inner.rindex(")")]
    return inner


def _to_ort_value(array: np.ndarray) -> ort.OrtValue:
    """A tensor of an element type numpy's bridge lacks, as an OrtValue holding
    the same bytes as the ONNX raw_data (sub-byte types packed two or four to a byte)."""
    tensor = numpy_helper.from_array(array)
    value = ort.OrtValue.ortvalue_from_shape_and_type(list(array.shape), tensor.data_type)
    raw = tensor.raw_data
    if len(raw) != value.tensor_size_in_bytes():
        raise protocol.AdapterError(protocol.INTERNAL, f"{len(raw)} bytes of {array.dtype} do not fill an ONNX Runtime "
                                    f"tensor of {value.tensor_size_in_bytes()} bytes")
    if raw:
        ctypes.memmove(value.data_ptr(), raw, len(raw))
    return value


def _from_ort_value(name: str, value: ort.OrtValue) -> np.ndarray:
    """An output tensor in CPU memory as numpy; the inverse of _to_ort_value for
    element types numpy's bridge lacks."""
    if not value.is_tensor():
        raise protocol.AdapterError(protocol.UNSUPPORTED, f"output '{name}' is a {value.data_type()}, which the ONNX "
                                    "Runtime Python API returns only through numpy, which lacks its element type")
    if value.device_name().lower() != "cpu":
        raise protocol.AdapterError(protocol.INTERNAL, f"output '{name}' came back in {value.device_name()} memory")
    element = _element_type(value.data_type())
    if element in _NUMPY_BRIDGE_TYPES:
        return value.numpy()
    if element not in _ONNX_TYPE_OF_ORT_NAME:
        raise protocol.AdapterError(protocol.UNSUPPORTED, f"output '{name}' has element type {element}, unknown to ONNX")
    tensor = onnx.TensorProto(name=name, data_type=_ONNX_TYPE_OF_ORT_NAME[element], dims=value.shape())
    size = value.tensor_size_in_bytes()
    tensor.raw_data = ctypes.string_at(value.data_ptr(), size) if size else b""
    return numpy_helper.to_array(tensor)


class _Session:
    """One ONNX Runtime session and what run() needs to know about its graph."""

    def __init__(self, ort_session: ort.InferenceSession, allow_fallback: bool):
        self.ort = ort_session
        self.allow_fallback = allow_fallback
        self.input_names = {i.name for i in ort_session.get_inputs()}
        self.overridable = {i.name for i in ort_session.get_overridable_initializers()}
        self.outputs = [(o.name, o.type) for o in ort_session.get_outputs()]
        # Outputs of an element type numpy lacks need the OrtValue path.
        self.raw_outputs = any(_element_type(t) not in _NUMPY_BRIDGE_TYPES for _, t in self.outputs)


class OnnxRuntimeAdapter(protocol.Adapter):
    def __init__(self, contrib_twins: bool = True):
        self._has_cuda = _CUDA_EP in ort.get_available_providers()
        self._contrib_twins = contrib_twins
        self._logged_twins = set()  # cases whose translation is already in the log (warm repeats recreate sessions)

    def info(self) -> protocol.AdapterInfo:
        devices = [protocol.Device("cpu", "cpu", self._describe(_CPU_EP, "CPU"))]
        if self._has_cuda:
            devices.append(protocol.Device("cuda", "gpu", self._describe(_CUDA_EP, "GPU 0")))
        return protocol.AdapterInfo(name="onnxruntime", version=ADAPTER_VERSION, backend_version=ort.__version__,
                                    devices=devices)

    @staticmethod
    def _describe(ep_name: str, fallback_text: str) -> str:
        hardware = fallback_text
        try:
            for ep_device in ort.get_ep_devices():
                if ep_device.ep_name == ep_name:
                    hardware = f"{ep_device.device.vendor} {ep_device.device.type.name}"
                    break
        except Exception:  # noqa: BLE001 - the description is for reports only
            pass
        return f"{hardware} through ONNX Runtime {ort.__version__} {ep_name}, one intra-op thread"

    def capabilities(self, device: str) -> protocol.Capabilities:
        # ONNX Runtime's coverage depends on opset, types and attributes:
        # declaring nothing lets each case find out, and answer UNSUPPORTED.
        return protocol.Capabilities(declared=False, can_forbid_fallback=True)

    def create_session(self, model_bytes: bytes, options: protocol.SessionOptions):
        session_options = ort.SessionOptions()
        # One thread: stable timings, and parallel workers do not oversubscribe.
        session_options.intra_op_num_threads = 1
        session_options.inter_op_num_threads = 1
        session_options.logid = options.case_name
        session_options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        if options.device == "cuda":
            providers = [_CUDA_EP]
            if options.allow_fallback:
                providers.append(_CPU_EP)
            else:
                session_options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        else:
            # On the CPU EP nothing can fall back; ONNX Runtime also refuses
            # disable_cpu_ep_fallback with the CPU EP listed.
            providers = [_CPU_EP]
        if check_external_data(model_bytes, options.model_dir):
            session_options.add_session_config_entry(_EXTERNAL_DATA_FOLDER_KEY, options.model_dir)
        moved = []
        if self._contrib_twins:
            model_bytes, moved = self._translate(model_bytes, options.case_name)
        try:
            # enable_fallback=0: the Python wrapper would otherwise quietly retry
            # a failed session, or a failed run, on other providers.
            session = ort.InferenceSession(model_bytes, session_options, providers=providers, enable_fallback=0)
        except Exception as error:  # noqa: BLE001 - every ONNX Runtime failure becomes a status
            status = _status_of(error, options.allow_fallback)
            if moved:
                # The refusal is of ONNX Runtime's twin, not of the node the case wrote: say so.
                status = protocol.AdapterError(status.code, f"{status} [ran as ONNX Runtime's contrib twin: "
                                               f"{'; '.join(moved)}]")
            raise status from error
        if providers[0] not in session.get_providers():
            raise protocol.AdapterError(protocol.DEVICE_UNAVAILABLE,
                                        f"ONNX Runtime did not register {providers[0]}: {session.get_providers()}")
        return _Session(session, options.allow_fallback), self._report(session)

    def _translate(self, model_bytes: bytes, case_name: str) -> tuple[bytes, list[str]]:
        try:
            translated, moved = translate_contrib_twins(model_bytes)
        except Exception as error:  # noqa: BLE001 - a model that does not parse is ONNX Runtime's to refuse
            print(f"onnxruntime adapter: {case_name}: contrib twins not applied, the model did not parse: {error}",
                  file=sys.stderr, flush=True)
            return model_bytes, []
        if moved and case_name not in self._logged_twins:
            self._logged_twins.add(case_name)
            for line in moved:
                print(f"onnxruntime adapter: {case_name}: contrib twin {line}", file=sys.stderr, flush=True)
        return translated, moved

    @staticmethod
    def _report(session: ort.InferenceSession) -> protocol.SessionReport:
        # What ONNX Runtime assigned after its graph optimisations: nodes it
        # fused, folded or inserted (Memcpy) are reported as it names them.
        report = protocol.SessionReport()
        index = 0
        for subgraph in session.get_provider_graph_assignment_info():
            device = _DEVICE_OF_EP.get(subgraph.ep_name, subgraph.ep_name)
            for node in subgraph.get_nodes():
                report.placement.append((node.name or f"{node.op_type}#{index}", device))
                index += 1
        return report

    def run(self, session: _Session, inputs: dict) -> list:
        feed = {}
        for name, value in inputs.items():
            if name not in session.input_names and name not in session.overridable:
                raise protocol.AdapterError(protocol.INVALID_ARGUMENT, f"the model has no graph input named '{name}'")
            feed[name] = self._feed_value(name, value)
        try:
            if session.raw_outputs:
                values = session.ort.run_with_ort_values(None, {n: self._as_ort_value(n, v) for n, v in feed.items()})
                results = [_from_ort_value(name, value) for (name, _), value in zip(session.outputs, values)]
            else:
                results = session.ort.run(None, feed)
        except protocol.AdapterError:
            raise
        except Exception as error:  # noqa: BLE001
            raise _status_of(error, session.allow_fallback) from error
        outputs = []
        for (name, type_name), result in zip(session.outputs, results):
            if type_name.startswith("optional("):
                inner = "sequence" if type_name.startswith("optional(seq(") else "tensor"
                result = protocol.OptionalValue(result, inner)
            outputs.append((name, result))
        return outputs

    @staticmethod
    def _feed_value(name: str, value):
        if value is None or isinstance(value, list):
            if isinstance(value, list) and any(np.asarray(v).dtype not in _NUMPY_BRIDGE_DTYPES for v in value):
                raise protocol.AdapterError(protocol.UNSUPPORTED, f"input '{name}' is a sequence of an element type "
                                            "that the ONNX Runtime Python API cannot pass")
            return value  # a sequence, or an empty optional
        array = np.asarray(value)
        if array.dtype in _NUMPY_BRIDGE_DTYPES:
            return array
        return _to_ort_value(array)

    @staticmethod
    def _as_ort_value(name: str, value) -> ort.OrtValue:
        # run_with_ort_values, the only way to read outputs numpy lacks, takes
        # only OrtValues, and Python can build them only for tensors.
        if isinstance(value, ort.OrtValue):
            return value
        if isinstance(value, np.ndarray):
            return ort.OrtValue.ortvalue_from_numpy(value)
        raise protocol.AdapterError(protocol.UNSUPPORTED, f"input '{name}' is a sequence or an empty optional, which the "
                                    "ONNX Runtime Python API cannot pass to a model with outputs of a type numpy lacks")

    def release(self, session: _Session) -> None:
        session.ort = None  # ONNX Runtime frees the session with its last reference


if __name__ == "__main__":
    protocol.serve(OnnxRuntimeAdapter(contrib_twins=contrib_twins_enabled(sys.argv[1:])))
