"""The harness's end of the worker protocol, in Python: starts a worker process
and exchanges frames with it. For tests of workers and Python adapters."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time

import parity_worker_pb2 as pb


class WorkerDied(Exception):
    """The worker closed its output (it exited, or broke the stream)."""


class WorkerClient:
    """`timeout`: seconds to wait for each response before giving up with
    WorkerDied, so that a worker that breaks the stream cannot hang a test."""

    def __init__(self, command, cwd=None, env=None, timeout: float = 120):
        self.timeout = timeout
        # The log goes to a file, not a pipe: a chatty worker must never block
        # on a pipe that nobody reads while the test waits for a frame.
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, cwd=cwd, env=env if env is not None else dict(os.environ),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, bufsize=0)

    def send_bytes(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, request: pb.Request) -> None:
        body = request.SerializeToString()
        self.send_bytes(len(body).to_bytes(4, "little") + body)

    def _read_exact(self, size: int, deadline: float) -> bytes:
        data = bytearray()
        fd = self.process.stdout.fileno()
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerDied(f"no whole frame within {self.timeout} s ({len(data)} of {size} bytes)")
            chunk = os.read(fd, min(size - len(data), 1 << 20))
            if not chunk:
                break
            data += chunk
        return bytes(data)

    def receive(self) -> pb.Response:
        deadline = time.monotonic() + self.timeout
        prefix = self._read_exact(4, deadline)
        if len(prefix) < 4:
            raise WorkerDied(f"the worker closed its output after {len(prefix)} bytes of a length prefix")
        size = int.from_bytes(prefix, "little")
        if size > 1 << 30:
            raise WorkerDied(f"the worker sent a length prefix of {size} bytes: corrupt stream")
        body = self._read_exact(size, deadline)
        if len(body) < size:
            raise WorkerDied(f"the worker closed its output inside a frame ({len(body)} of {size} bytes)")
        response = pb.Response()
        response.ParseFromString(body)
        return response

    def call(self, request: pb.Request) -> pb.Response:
        self.send(request)
        return self.receive()

    # Shorthands for each request kind.
    def hello(self, version: int = pb.PROTOCOL_VERSION) -> pb.Response:
        return self.call(pb.Request(hello=pb.Hello(protocol_version=version)))

    def capabilities(self, device: str = "") -> pb.Response:
        return self.call(pb.Request(get_capabilities=pb.GetCapabilities(device=device)))

    def create(self, model: bytes, device: str = "", allow_fallback: bool = True, warm_repeats: int = 0,
               case_name: str = "", model_dir: str = "") -> pb.Response:
        options = pb.SessionOptions(device=device, allow_fallback=allow_fallback, case_name=case_name)
        return self.call(pb.Request(create_session=pb.CreateSession(model=model, options=options,
                                                                    warm_repeats=warm_repeats, model_dir=model_dir)))

    def run(self, session_id: int, inputs) -> pb.Response:
        """`inputs`: pb.Value messages (parity_protocol.value_to_proto makes them)."""
        return self.call(pb.Request(run=pb.Run(session_id=session_id, inputs=list(inputs))))

    def release(self, session_id: int) -> pb.Response:
        return self.call(pb.Request(release_session=pb.ReleaseSession(session_id=session_id)))

    def shutdown(self) -> pb.Response:
        return self.call(pb.Request(shutdown=pb.Shutdown()))

    def finish(self, timeout: float = 30) -> tuple:
        """Closes the worker's input and waits: (exit status, what it wrote to stderr)."""
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        status = self.process.wait(timeout)
        log = self.log()
        self.close()
        return status, log

    def close(self) -> None:
        """Kills the worker if it still runs and frees the pipes and the log."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._log.close()

    def log(self) -> str:
        """What the worker has written to stderr so far."""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")


def start_adapter_worker(adapter_dir: str, environment: dict | None = None, drop_prefix: str = "") -> tuple:
    """Starts the Python adapter of `adapter_dir` as the harness does: the
    command of its adapter.json ("{python}" being PARITY_PYTHON or this
    interpreter), in its folder, with PYTHONPATH made absolute (a relative one
    would not reach the modules from there). Variables starting with
    `drop_prefix` are left out of the environment and `environment` is added.
    Returns (manifest, worker, hello's AdapterInfo) once hello answered OK."""
    with open(os.path.join(adapter_dir, "adapter.json")) as f:
        manifest = json.load(f)
    python = os.environ.get("PARITY_PYTHON", sys.executable)
    command = [python if part == "{python}" else part for part in manifest["command"]]
    python_path = ":".join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(":") if p)
    env = {k: v for k, v in os.environ.items() if not (drop_prefix and k.startswith(drop_prefix))}
    env.update(environment or {}, PYTHONPATH=python_path)
    worker = WorkerClient(command, cwd=adapter_dir, env=env, timeout=120)
    hello = worker.hello()
    assert hello.status.code == pb.OK, hello.status.message
    return manifest, worker, hello.info
