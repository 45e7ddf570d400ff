"""The worker protocol (spec/protocol/parity_worker.proto) for adapters written in Python.

An adapter subclasses `Adapter` and calls `serve(adapter)`: this module owns the
pipe, the framing, the timings, the session table and the error statuses, so
that an adapter only deals with models and numpy values.
"""

from __future__ import annotations

import dataclasses
import io
import os
import resource
import signal
import sys
import time
import traceback
from typing import Any, Optional

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

import parity_worker_pb2 as pb

PROTOCOL_VERSION = pb.PROTOCOL_VERSION
# Exit statuses, those of parity-worker (spec/protocol/README.md).
EXIT_OK = 0
EXIT_LOAD_FAILED = 3  # the adapter's info() failed before any request was read
EXIT_PROTOCOL_BROKEN = 4  # a corrupt request stream, or responses cannot be written
MAX_WARM_REPEATS = 1000
# Seconds that releasing every session may take once the harness has gone,
# so that a hanging release never leaves an orphan worker behind.
RELEASE_DEADLINE_S = 30
# The largest frame either end accepts (harness/protocol/framing.h): a longer
# length prefix is taken as a corrupt stream, never allocated.
MAX_FRAME_BYTES = 1 << 30

# Status codes, the numbers of spec/abi/parity_adapter.h.
OK = pb.OK
UNSUPPORTED = pb.UNSUPPORTED
INVALID_ARGUMENT = pb.INVALID_ARGUMENT
DEVICE_UNAVAILABLE = pb.DEVICE_UNAVAILABLE
FALLBACK_REQUIRED = pb.FALLBACK_REQUIRED
OUT_OF_MEMORY = pb.OUT_OF_MEMORY
INTERNAL = pb.INTERNAL


class AdapterError(Exception):
    """Raised by an adapter to answer with a given status code and message."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class ProtocolError(Exception):
    """The stream broke the framing: the worker cannot answer and must exit."""


@dataclasses.dataclass
class Device:
    name: str  # what --device selects: "cpu", "cuda"
    kind: str  # "cpu", "gpu" or "npu"
    description: str = ""


@dataclasses.dataclass
class AdapterInfo:
    name: str
    version: str
    backend_version: str
    devices: list  # of Device, or (name, kind, description) tuples; the first is the default


@dataclasses.dataclass
class Capabilities:
    operators: list = dataclasses.field(default_factory=list)  # "domain:op_type" or "domain:*"
    data_types: list = dataclasses.field(default_factory=list)  # onnx.TensorProto.DataType; empty: all
    variant_targets: list = dataclasses.field(default_factory=list)
    honours_aliasing: bool = False
    can_forbid_fallback: bool = False
    declared: bool = True  # False: the adapter declares nothing and tries every case


@dataclasses.dataclass
class SessionOptions:
    device: str  # always one of the adapter's device names (the module resolves the default)
    allow_fallback: bool = True
    variant_targets: list = dataclasses.field(default_factory=list)
    case_name: str = ""  # for logs only; results must not depend on it
    # The folder holding the model: external data locations are relative to it,
    # and must stay inside it (parity_external_data.check_external_data). Empty:
    # no folder, and a model with external data must be refused.
    model_dir: str = ""


@dataclasses.dataclass
class SessionReport:
    variants: list = dataclasses.field(default_factory=list)  # (entry, chosen) pairs
    placement: list = dataclasses.field(default_factory=list)  # (node, device) pairs


@dataclasses.dataclass
class OptionalValue:
    """An output of optional type. `value` is None for an empty optional; then
    `kind` ("tensor" or "sequence") says what it would have held."""

    value: Any = None
    kind: str = "tensor"


class Adapter:
    """What a Python adapter implements. Values cross as numpy arrays (with
    their ONNX dtype kept: ml_dtypes for bfloat16, float8, int4...), lists for
    sequences, and None or the contained value for optional inputs."""

    def info(self) -> AdapterInfo:
        raise NotImplementedError

    def capabilities(self, device: str) -> Optional[Capabilities]:
        """None: the adapter declares nothing, and the harness tries every case."""
        return None

    def create_session(self, model_bytes: bytes, options: SessionOptions):
        """Returns (session, SessionReport or None)."""
        raise NotImplementedError

    def run(self, session, inputs: dict) -> list:
        """Returns [(name, value)] in the order of the graph's outputs. An
        output of optional type is an OptionalValue, or None when empty."""
        raise NotImplementedError

    def release(self, session) -> None:
        pass


# --- Values


def value_from_proto(value: pb.Value):
    """A protocol Value as the Python object an adapter receives."""
    kinds = [kind for kind in ("tensor", "sequence", "optional") if value.HasField(kind)]
    if len(kinds) != 1:
        raise AdapterError(INVALID_ARGUMENT, f"input '{value.name}' sets {'none' if not kinds else 'more than one'} "
                           "of tensor, sequence and optional; exactly one must be set")
    if value.HasField("tensor"):
        return _tensor_to_array(value.tensor)
    if value.HasField("sequence"):
        return _sequence_to_list(value.sequence)
    return _optional_to_value(value.optional)


def _tensor_to_array(tensor: onnx.TensorProto) -> np.ndarray:
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise AdapterError(INVALID_ARGUMENT, f"tensor '{tensor.name}' refers to external data, which cannot cross the pipe")
    return numpy_helper.to_array(tensor)


def _sequence_to_list(sequence: onnx.SequenceProto) -> list:
    elem = sequence.elem_type
    holds_nothing = not (sequence.tensor_values or sequence.sparse_tensor_values or sequence.sequence_values
                         or sequence.map_values or sequence.optional_values)
    if elem == onnx.SequenceProto.TENSOR or (elem == onnx.SequenceProto.UNDEFINED and holds_nothing):
        return [_tensor_to_array(t) for t in sequence.tensor_values]
    if elem == onnx.SequenceProto.SEQUENCE:
        return [_sequence_to_list(s) for s in sequence.sequence_values]
    if elem == onnx.SequenceProto.OPTIONAL:
        return [_optional_to_value(o) for o in sequence.optional_values]
    raise AdapterError(UNSUPPORTED, f"sequence '{sequence.name}' holds element type {elem}, which Python adapters do not take")


def _optional_to_value(optional: onnx.OptionalProto):
    if optional.HasField("tensor_value"):
        return _tensor_to_array(optional.tensor_value)
    if optional.HasField("sequence_value"):
        return _sequence_to_list(optional.sequence_value)
    if optional.HasField("optional_value"):
        return _optional_to_value(optional.optional_value)
    return None


def value_to_proto(name: str, value) -> pb.Value:
    """An adapter's output as a protocol Value."""
    out = pb.Value(name=name)
    if value is None:
        out.optional.CopyFrom(_optional_proto(name, OptionalValue(None)))
    elif isinstance(value, OptionalValue):
        out.optional.CopyFrom(_optional_proto(name, value))
    elif isinstance(value, (list, tuple)):
        out.sequence.CopyFrom(_sequence_proto(name, value))
    else:
        out.tensor.CopyFrom(_tensor_proto(name, value))
    return out


def _tensor_proto(name: str, value) -> onnx.TensorProto:
    array = np.asarray(value)
    if array.dtype.kind == "U":  # numpy text: store as ONNX strings
        array = array.astype(object)
    return numpy_helper.from_array(array, name)


def _sequence_proto(name: str, items) -> onnx.SequenceProto:
    sequence = onnx.SequenceProto(name=name)
    first = items[0] if items else np.zeros(0)  # an empty sequence is taken to hold tensors
    if isinstance(first, (list, tuple)):
        sequence.elem_type = onnx.SequenceProto.SEQUENCE
        sequence.sequence_values.extend(_sequence_proto("", item) for item in items)
    elif first is None or isinstance(first, OptionalValue):
        sequence.elem_type = onnx.SequenceProto.OPTIONAL
        sequence.optional_values.extend(
            _optional_proto("", item if isinstance(item, OptionalValue) else OptionalValue(item)) for item in items)
    else:
        sequence.elem_type = onnx.SequenceProto.TENSOR
        sequence.tensor_values.extend(_tensor_proto("", item) for item in items)
    return sequence


def _optional_proto(name: str, optional: OptionalValue) -> onnx.OptionalProto:
    proto = onnx.OptionalProto(name=name)
    value = optional.value
    if value is None:
        proto.elem_type = onnx.OptionalProto.SEQUENCE if optional.kind == "sequence" else onnx.OptionalProto.TENSOR
    elif isinstance(value, (list, tuple)):
        proto.elem_type = onnx.OptionalProto.SEQUENCE
        proto.sequence_value.CopyFrom(_sequence_proto(name, value))
    else:
        proto.elem_type = onnx.OptionalProto.TENSOR
        proto.tensor_value.CopyFrom(_tensor_proto(name, value))
    return proto


# --- Frames


class Channel:
    """The two ends of the pipe: requests in, responses out."""

    def __init__(self, reader, writer_fd: int):
        self._reader = reader
        self._writer_fd = writer_fd

    @classmethod
    def claim_stdio(cls) -> "Channel":
        """Keeps fds 0 and 1 for frames only. Anything else that writes to fd 1
        (a print in the adapter, a native library's printf) would corrupt the
        stream, so fd 1 and sys.stdout are pointed at the log (fd 2); and
        fd 0 is pointed at /dev/null so that nothing else can eat requests.
        The duplicates are not inheritable (PEP 446): processes the backend
        starts do not hold the protocol pipes."""
        request_fd = os.dup(0)
        response_fd = os.dup(1)
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.close(null_fd)
        sys.stdin = open(os.devnull, "r")
        return cls(io.open(request_fd, "rb", buffering=1 << 16), response_fd)

    def read_frame(self) -> Optional[bytes]:
        """One frame's bytes, or None when the pipe closed cleanly between frames."""
        prefix = self._reader.read(4)
        if not prefix:
            return None
        if len(prefix) < 4:
            raise ProtocolError(f"the pipe closed inside a length prefix ({len(prefix)} of 4 bytes)")
        size = int.from_bytes(prefix, "little")
        if size > MAX_FRAME_BYTES:
            raise ProtocolError(f"a frame announces {size} bytes, over the limit of {MAX_FRAME_BYTES}: corrupt stream")
        body = self._reader.read(size)
        if len(body) < size:
            raise ProtocolError(f"the pipe closed inside a frame ({len(body)} of {size} bytes)")
        return body

    def write_bytes(self, body: bytes) -> None:
        """Writes one frame holding `body` (at most MAX_FRAME_BYTES, checked by the caller)."""
        data = memoryview(len(body).to_bytes(4, "little") + body)
        while data:
            written = os.write(self._writer_fd, data)
            data = data[written:]


# --- The serve loop


def _log(message: str) -> None:
    print(f"parity worker: {message}", file=sys.stderr, flush=True)


def _proc_status_kb():
    """(VmHWM, VmRSS) in KiB from /proc/self/status; either None where unreadable."""
    peak = rss = None
    try:
        with open("/proc/self/status") as status:
            for line in status:
                field, _, value = line.partition(":")
                if field == "VmHWM":
                    peak = int(value.split()[0])
                elif field == "VmRSS":
                    rss = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return peak, rss


# The high-water marks seen before each reset, folded, so that _peak_rss_kb
# stays the peak of the whole process although each run resets VmHWM.
_peak_before_resets_kb = 0


def _peak_rss_kb() -> int:
    # VmHWM belongs to this process image: getrusage's ru_maxrss would also
    # count the resident size of the harness that started the worker.
    peak, _ = _proc_status_kb()
    if peak is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return max(_peak_before_resets_kb, peak)


def _reset_peak_rss() -> bool:
    """Resets the resident high-water mark (VmHWM) with "5" in /proc/self/clear_refs;
    False where the kernel does not allow it."""
    global _peak_before_resets_kb
    _peak_before_resets_kb = max(_peak_before_resets_kb, _proc_status_kb()[0] or 0)
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _run_memory(peak_was_reset: bool):
    """(VmHWM, VmRSS) after a run, in KiB: the peak is None unless it was
    reset just before the run; either is None where unreadable."""
    peak, rss = _proc_status_kb()
    return (peak if peak_was_reset else None), rss


def _as_input(value):
    """An adapter's output as it would come in as an input: an OptionalValue
    becomes its content (None when empty), inside sequences too."""
    if isinstance(value, OptionalValue):
        return _as_input(value.value)
    if isinstance(value, list):
        return [_as_input(item) for item in value]
    return value


def _describe_bindings(bindings) -> str:
    return ", ".join(f"'{output}'->'{input}'" for output, input in bindings) or "none"


@dataclasses.dataclass
class _SessionState:
    """A stateful session's bindings, in the order of the first run that named
    them, and the values kept for the bound inputs (the adapter's own output
    objects, never serialized between runs)."""
    bindings: list  # of (output, input)
    kept: dict = dataclasses.field(default_factory=dict)  # input -> value


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _error_status(error: BaseException, doing: str) -> pb.Status:
    """The status an exception from the adapter (or from value conversion) answers with."""
    if isinstance(error, AdapterError):
        return pb.Status(code=error.code, message=error.message)  # the adapter's own words, unchanged
    if isinstance(error, MemoryError):
        return pb.Status(code=OUT_OF_MEMORY, message=f"{doing}: out of memory (MemoryError)")
    # A bug in the adapter: the worker lives on, the harness gets the message,
    # and the log gets the traceback.
    _log(f"{doing} raised:\n{traceback.format_exc().rstrip()}")
    return pb.Status(code=INTERNAL, message=f"{doing}: {type(error).__name__}: {error}")


def _failed(code: int, message: str) -> pb.Response:
    return pb.Response(status=pb.Status(code=code, message=message))


class Worker:
    """Answers Requests for one adapter, as parity-worker does for a native
    one. Holds the open sessions under ids 1, 2, 3, ... never reused."""

    def __init__(self, adapter: Adapter, info: AdapterInfo):
        self._adapter = adapter
        self._info = info
        self._devices = [d if isinstance(d, Device) else Device(*d) for d in info.devices]
        self._sessions: dict = {}
        self._states: dict = {}  # session id -> _SessionState, once a run named bindings
        self._next_session_id = 1

    def handle(self, request: pb.Request) -> pb.Response:
        kind = request.WhichOneof("kind")
        handler = {
            "hello": self._hello,
            "get_capabilities": self._get_capabilities,
            "create_session": self._create_session,
            "run": self._run,
            "release_session": self._release_session,
            "shutdown": self._shutdown,
        }.get(kind)
        if handler is None:
            return _failed(INVALID_ARGUMENT, "the request sets none of the kinds this worker knows (hello, "
                           "get_capabilities, create_session, run, release_session, shutdown)")
        try:
            return handler(getattr(request, kind))
        except AdapterError as error:
            return _failed(error.code, error.message)
        except Exception as error:  # noqa: BLE001 - e.g. a malformed report: answer, never die
            return pb.Response(status=_error_status(error, kind))

    def _resolve_device(self, device: str) -> str:
        # Unlike parity-worker, which leaves it to the native adapter, the
        # module checks the device, so an adapter only ever sees its own names.
        names = [d.name for d in self._devices]
        if not names:
            raise AdapterError(DEVICE_UNAVAILABLE, "the adapter lists no devices")
        if not device:
            return names[0]
        if device not in names:
            raise AdapterError(DEVICE_UNAVAILABLE, f"device '{device}' is not one of this adapter's: {', '.join(names)}")
        return device

    def _hello(self, hello: pb.Hello) -> pb.Response:
        if hello.protocol_version != PROTOCOL_VERSION:
            raise AdapterError(INVALID_ARGUMENT, f"hello asks for protocol version {hello.protocol_version}; "
                               f"this worker speaks version {PROTOCOL_VERSION}")
        response = pb.Response()
        out = response.info
        out.protocol_version = PROTOCOL_VERSION
        out.name, out.version, out.backend_version = self._info.name, self._info.version, self._info.backend_version
        for device in self._devices:
            out.devices.add(name=device.name, kind=device.kind, description=device.description)
        out.pid = os.getpid()
        return response

    def _get_capabilities(self, request: pb.GetCapabilities) -> pb.Response:
        device = self._resolve_device(request.device)
        try:
            capabilities = self._adapter.capabilities(device)
        except Exception as error:  # noqa: BLE001 - any adapter failure becomes a status
            return pb.Response(status=_error_status(error, "get_capabilities"))
        response = pb.Response()
        out = response.capabilities
        if capabilities is None:
            out.declared = False
            return response
        out.operators.extend(capabilities.operators)
        out.data_types.extend(int(t) for t in capabilities.data_types)
        out.variant_targets.extend(capabilities.variant_targets)
        out.honours_aliasing = bool(capabilities.honours_aliasing)
        out.can_forbid_fallback = bool(capabilities.can_forbid_fallback)
        out.declared = bool(capabilities.declared)
        return response

    def _create_session(self, request: pb.CreateSession) -> pb.Response:
        if request.warm_repeats > MAX_WARM_REPEATS:
            raise AdapterError(INVALID_ARGUMENT, f"create_session asks for {request.warm_repeats} warm repeats; "
                               f"at most {MAX_WARM_REPEATS} are allowed")
        given = request.options
        options = SessionOptions(device=self._resolve_device(given.device), allow_fallback=given.allow_fallback,
                                 variant_targets=list(given.variant_targets), case_name=given.case_name,
                                 model_dir=request.model_dir)
        model = request.model
        try:
            start = time.perf_counter()
            session, report = self._adapter.create_session(model, options)
            load_ms_cold = _ms_since(start)
        except Exception as error:  # noqa: BLE001
            return pb.Response(status=_error_status(error, "create_session"))
        # Warm repeats run while the cold session stays open, each released at
        # once: they measure creation apart from first-use costs.
        load_ms_warm = []
        for repeat in range(request.warm_repeats):
            try:
                start = time.perf_counter()
                warm_session, _ = self._adapter.create_session(model, options)
                load_ms_warm.append(_ms_since(start))
                self._adapter.release(warm_session)
            except Exception as error:  # noqa: BLE001
                self._release_quietly(session)
                return pb.Response(status=_error_status(error, f"create_session (warm repeat {repeat + 1})"))
        session_id = self._next_session_id
        self._next_session_id += 1
        self._sessions[session_id] = session
        response = pb.Response()
        out = response.session
        out.session_id = session_id
        out.load_ms_cold = load_ms_cold
        out.load_ms_warm.extend(load_ms_warm)
        if report is not None:
            for entry, chosen in report.variants:
                out.variants.add(entry=entry, chosen=chosen)
            for node, device in report.placement:
                out.placement.add(node=node, device=device)
        return response

    def _open_session(self, doing: str, session_id: int):
        if session_id not in self._sessions:
            raise AdapterError(INVALID_ARGUMENT, f"{doing}: no open session has id {session_id}")
        return self._sessions[session_id]

    def _bind(self, request: pb.Run) -> Optional[_SessionState]:
        """The session's state after checking this run's bindings (Run.keep):
        the first run that names any makes the session stateful; every later
        run names the same ones, in any order. None: a stateless run."""
        keep = [(b.output, b.input) for b in request.keep]
        state = self._states.get(request.session_id)
        if not keep:
            if state is None:
                return None
            raise AdapterError(INVALID_ARGUMENT, f"run: session {request.session_id} is stateful (it keeps "
                               f"{_describe_bindings(state.bindings)}); every later run must name the same "
                               "bindings, and this one names none")
        for i, (output, input) in enumerate(keep):
            if not output or not input:
                raise AdapterError(INVALID_ARGUMENT, f"run: binding {i} ('{output}'->'{input}') must name both "
                                   "an output and an input")
            earlier = [o for o, n in keep[:i] if n == input]
            if earlier:
                raise AdapterError(INVALID_ARGUMENT, f"run: input '{input}' is bound twice ('{earlier[0]}' and "
                                   f"'{output}'); each binding must name its own input")
        if state is None:
            state = self._states[request.session_id] = _SessionState(bindings=keep)
            return state
        dropped = [b for b in state.bindings if b not in keep]
        added = [b for b in keep if b not in state.bindings]
        if dropped or added:
            difference = f"it leaves out {_describe_bindings(dropped)}" if dropped else ""
            if added:
                difference += f"{' and' if difference else 'it'} adds {_describe_bindings(added)}"
            raise AdapterError(INVALID_ARGUMENT, f"run: session {request.session_id} keeps "
                               f"{_describe_bindings(state.bindings)} and every later run must name the same "
                               f"bindings; {difference}")
        return state

    def _run(self, request: pb.Run) -> pb.Response:
        session = self._open_session("run", request.session_id)
        inputs = {}
        for value in request.inputs:
            try:
                inputs[value.name] = value_from_proto(value)
            except Exception as error:  # noqa: BLE001 - a malformed value, whatever the exception
                status = _error_status(error, f"run: input '{value.name}'")
                if status.code == INTERNAL:
                    status.code = INVALID_ARGUMENT
                return pb.Response(status=status)
        state = self._bind(request)
        if state is not None:
            # Kept values feed the bound inputs this run leaves out; one sent anyway replaces it.
            for name, kept in state.kept.items():
                inputs.setdefault(name, kept)
        peak_reset = _reset_peak_rss()
        try:
            start = time.perf_counter()
            outputs = self._adapter.run(session, inputs)
            run_ms = _ms_since(start)
        except Exception as error:  # noqa: BLE001
            return pb.Response(status=_error_status(error, "run"))
        finally:
            peak_kb, rss_kb = _run_memory(peak_reset)
        response = pb.Response()
        out = response.run
        out.run_ms = run_ms
        if peak_kb is not None:
            out.run_peak_rss_kb = peak_kb
        if rss_kb is not None:
            out.rss_kb = rss_kb
        outputs = list(outputs)
        if state is not None:
            produced = dict(outputs)
            kept = {}
            for output, input in state.bindings:
                if output not in produced:
                    raise AdapterError(INVALID_ARGUMENT, f"run returned no output '{output}', which the binding "
                                       f"'{output}'->'{input}' keeps (outputs: {', '.join(produced) or 'none'})")
                kept[input] = _as_input(produced[output])
            bound_outputs = {output for output, _ in state.bindings}
            outputs = [(name, value) for name, value in outputs if name not in bound_outputs]
            if request.return_kept:
                outputs += [(output, produced[output]) for output, _ in state.bindings]
            state.kept = kept
        for name, value in outputs:
            try:
                out.outputs.append(value_to_proto(name, value))
            except Exception as error:  # noqa: BLE001
                return pb.Response(status=_error_status(error, f"run: output '{name}'"))
        return response

    def _release_session(self, request: pb.ReleaseSession) -> pb.Response:
        session = self._open_session("release_session", request.session_id)
        del self._sessions[request.session_id]
        self._states.pop(request.session_id, None)
        try:
            self._adapter.release(session)
        except Exception as error:  # noqa: BLE001
            return pb.Response(status=_error_status(error, "release_session"))
        return pb.Response()

    def _release_quietly(self, session) -> None:
        try:
            self._adapter.release(session)
        except Exception:  # noqa: BLE001 - already answering, or ending
            _log(f"release_session raised:\n{traceback.format_exc().rstrip()}")

    def release_all(self) -> None:
        # Taken out of the table first, so that a failing release leaves no session behind twice.
        sessions, self._sessions = self._sessions, {}
        self._states = {}
        for session in sessions.values():
            self._release_quietly(session)

    def _shutdown(self, _: pb.Shutdown) -> pb.Response:
        self.release_all()
        return pb.Response()


def serve(adapter: Adapter) -> None:
    """Serves requests on stdin and stdout, then leaves the process with the
    exit status of parity-worker: 0 after shutdown or a clean end of input,
    3 when the adapter's info() fails, 4 when the stream breaks."""
    channel = Channel.claim_stdio()
    status = serve_channel(adapter, channel)
    sys.stderr.flush()
    # os._exit: every session is released by now, and the backend's teardown
    # at interpreter exit must not turn a clean end into a crash.
    os._exit(status)


def _end(worker: Worker) -> None:
    signal.alarm(RELEASE_DEADLINE_S)  # SIGALRM's default action ends the process
    worker.release_all()


def serve_channel(adapter: Adapter, channel: Channel) -> int:
    """The loop of `serve` on a given channel; returns the exit status."""
    try:
        info = adapter.info()
    except Exception as error:  # noqa: BLE001
        _log(f"the adapter cannot start: info() raised {type(error).__name__}: {error}")
        return EXIT_LOAD_FAILED
    worker = Worker(adapter, info)
    while True:
        try:
            frame = channel.read_frame()
        except ProtocolError as error:
            _log(f"the request stream broke: {error}")
            _end(worker)
            return EXIT_PROTOCOL_BROKEN
        if frame is None:  # the harness closed the pipe between frames: nothing more to answer
            _end(worker)
            return EXIT_OK
        request = pb.Request()
        try:
            request.ParseFromString(frame)
            response = worker.handle(request)
        except DecodeError as error:
            request = pb.Request()
            response = _failed(INVALID_ARGUMENT, f"a request frame is not a valid parity.protocol.Request: {error}")
        response.peak_rss_kb = _peak_rss_kb()
        body = response.SerializeToString()
        if len(body) > MAX_FRAME_BYTES:  # answer, rather than break the stream
            body = pb.Response(status=pb.Status(code=OUT_OF_MEMORY, message=(
                f"the response of {len(body)} bytes is over the frame limit of {MAX_FRAME_BYTES}")),
                peak_rss_kb=response.peak_rss_kb).SerializeToString()
        try:
            channel.write_bytes(body)
        except OSError as error:
            _log(f"cannot write a response: {error}")
            _end(worker)
            return EXIT_PROTOCOL_BROKEN
        if request.WhichOneof("kind") == "shutdown":
            return EXIT_OK
