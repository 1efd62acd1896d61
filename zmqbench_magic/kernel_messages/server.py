"""A kernel behind a real Jupyter server, spoken to as a notebook page speaks to it:
the run starts ``jupyter_server`` (on 127.0.0.1, a token of its own, no extension, its
IOPub rate limits as asked), creates each kernel over its REST API and talks to it over
the kernel's websocket, in either of the server's protocols: the legacy one (JSON text,
a binary frame for a message with buffers) or ``v1.kernel.websocket.jupyter.org``
(every message one binary frame, its parts by offset).

The websocket client is tornado's, on an event loop of this object's own. Every
receive is bounded; a kernel the server finds dead, or a websocket it closes, is
named at once. The server, its kernels and its runtime folder go on close, whatever
happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from .beside import IOPubBeside
from .kernel import (
    LOOK_EVERY_S,
    KernelDied,
    Message,
    NoReply,
    check_kernel,
    parent_id,
    wait_ready,
)

T = TypeVar("T")
V1 = "v1.kernel.websocket.jupyter.org"
_LARGEST_MESSAGE = 1 << 30
# What the server says of a kernel that died: it restarts it, and a restart is a death
# for the request that was waiting.
_DEATHS = ("dead", "restarting", "autorestarting")
_NEEDS = "--via server needs jupyter_server (pip install jupyter_server)"


class ServerFailed(RuntimeError):
    """The Jupyter server did not start, or stopped answering; ``status``: the HTTP
    status it answered with, if it answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Rest:
    """A Jupyter server's REST API and websockets, at ``url`` with ``token``."""

    url: str
    token: str

    def request(self, method: str, path: str, body: Mapping[str, object] | None = None) -> Any:
        """A REST call with the server's token; its JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        asked = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(asked, timeout=10) as answer:
                text = answer.read()
        except urllib.error.HTTPError as exc:
            raise ServerFailed(
                f"the Jupyter server answered {method} {path} with {exc.code}", exc.code
            ) from None
        return json.loads(text) if text else None

    def ws_url(self, path: str) -> str:
        """``path`` on the server, as a websocket's URL (ws:// or wss://)."""
        return "ws" + self.url.removeprefix("http") + path


class JupyterServer(_Rest):
    """A ``jupyter_server`` this run started, with the IOPub rate limits given (0: the
    server's own defaults are replaced by none, as its documentation has it)."""

    def __init__(
        self, timeout: float, msg_rate_limit: float, data_rate_limit: float, lab: bool = False
    ) -> None:
        """``lab``: with JupyterLab, its app exposed to the page's scripts, for a page
        that makes the requests (:mod:`.browser`)."""
        try:
            import jupyter_server  # noqa: F401
        except ImportError:
            raise ValueError(_NEEDS) from None
        self.token = secrets.token_hex(16)
        self.root = tempfile.mkdtemp(prefix="zmqbench-server-")
        self._log = open(os.path.join(self.root, "server.log"), "wb")  # noqa: SIM115
        try:
            # A free port can be taken by another process before the server binds it
            # (it imports for seconds first): then it starts again on another.
            for tries_left in reversed(range(_PORT_TRIES)):
                self.port = _free_port()
                self.url = f"http://127.0.0.1:{self.port}"
                self.process = self._start(msg_rate_limit, data_rate_limit, lab)
                try:
                    self._wait_up(timeout)
                    return
                except ServerFailed:
                    if not tries_left or not self._port_was_taken():
                        raise
                    self._stop()
        except BaseException:
            self.close()
            raise

    def _start(
        self, msg_rate_limit: float, data_rate_limit: float, lab: bool
    ) -> subprocess.Popen[bytes]:
        limits = "ZMQChannelsWebsocketConnection"
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.open_browser=False",
            f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
            # A plain server, or JupyterLab's for a page: nothing else to load or serve.
            f"--ServerApp.jpserver_extensions={{'jupyterlab': {lab}, 'notebook': False}}",
            *(["--LabApp.expose_app_in_browser=True"] if lab else []),
            f"--{limits}.iopub_msg_rate_limit={msg_rate_limit}",
            f"--{limits}.iopub_data_rate_limit={data_rate_limit}",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ]
        # Its runtime files (its own, its kernels' connection files) in its folder.
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": os.path.join(self.root, "runtime")}
        return subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=self._log, env=env, cwd=self.root
        )

    def _port_was_taken(self) -> bool:
        """Whether the server exited because its port was no longer free."""
        return self.process.poll() is not None and "is not available" in self._last_words()

    def _wait_up(self, timeout: float) -> None:
        deadline = time.monotonic() + max(timeout, 30.0)  # a cold start imports a lot
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailed(
                    f"the Jupyter server exited ({self.process.returncode}){self._last_words()}"
                )
            with contextlib.suppress(OSError, ServerFailed):
                self.request("GET", "/api/status")
                return
            time.sleep(0.1)
        raise ServerFailed(f"the Jupyter server did not answer within {timeout:g} s")

    def check_kernel(self, name: str) -> None:
        check_kernel(name)  # the server runs in this environment: its kernelspecs

    def connection_file(self, kernel_id: str) -> str | None:
        """Where the server wrote a kernel's connection file (its runtime folder)."""
        return os.path.join(self.root, "runtime", f"kernel-{kernel_id}.json")

    def _last_words(self) -> str:
        self._log.flush()
        with open(self._log.name, "rb") as log:
            lines = [ln for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
        return f": {lines[-1].strip()}" if lines else ""

    def close(self) -> None:
        """Stop the server (it shuts its kernels down) and remove its folder."""
        self._stop()
        self._log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _stop(self) -> None:
        process = getattr(self, "process", None)  # none yet: it failed before starting
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


class ExistingServer(_Rest):
    """A running Jupyter server the user named, gone through and left running: the run
    makes its kernels there and deletes them after. Its token is never taken from the
    user's words (they are saved with the results): it is read from the server's own
    runtime file on this machine (as ``jupyter server list`` reads it), else from
    ``JUPYTER_TOKEN``."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.runtime_dir: str | None = None
        self.token, told = os.environ.get("JUPYTER_TOKEN", ""), "JUPYTER_TOKEN"
        for info in _running_servers():
            if str(info.get("url", "")).rstrip("/") == self.url:
                self.token, told = str(info.get("token", "")), "its runtime file"
                self.runtime_dir = str(info["runtime_dir"])
                break
        else:
            told = told if self.token else "none"
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("GET", "/api/status")
                return
            except ServerFailed as refused:
                if refused.status in (401, 403):
                    msg = (
                        f"the Jupyter server at {self.url} refused the token (from {told}): "
                        "run on the server's machine, or set JUPYTER_TOKEN to its token"
                    )
                    raise ServerFailed(msg, refused.status) from None
                raise
            except OSError as unreachable:
                if time.monotonic() > deadline:
                    reason = getattr(unreachable, "reason", unreachable)
                    msg = f"no Jupyter server answered at {self.url} within {timeout:g} s"
                    msg += f" ({reason})"
                    raise ServerFailed(msg) from None
                time.sleep(0.2)

    def check_kernel(self, name: str) -> None:
        installed = sorted(self.request("GET", "/api/kernelspecs")["kernelspecs"])
        if name not in installed:
            msg = (
                f"kernel must be a kernelspec of the Jupyter server at {self.url}, one of "
                f"{', '.join(installed)}; got {name!r}"
            )
            raise ValueError(msg)

    def connection_file(self, kernel_id: str) -> str | None:
        """The kernel's connection file, where the server keeps its runtime files on this
        machine (else None: the server's hop back is then not measured)."""
        if self.runtime_dir is None:
            return None
        path = os.path.join(self.runtime_dir, f"kernel-{kernel_id}.json")
        return path if os.path.exists(path) else None

    def close(self) -> None:
        """Nothing: the server is the user's, and each kernel deleted itself."""


def _running_servers() -> Iterator[dict[str, Any]]:
    """The servers running on this machine, by their runtime files, each with the
    folder it keeps them in."""
    from jupyter_core.paths import jupyter_runtime_dir
    from jupyter_server.serverapp import list_running_servers

    runtime_dir = jupyter_runtime_dir()
    for info in list_running_servers(runtime_dir):
        yield {**info, "runtime_dir": runtime_dir}


class ServerKernel:
    """A kernel the server made, spoken to over its websocket (a :class:`.Channels`)."""

    def __init__(
        self,
        server: JupyterServer | ExistingServer,
        name: str,
        protocol: str,
        timeout: float,
        ack_at_once: bool = False,
    ) -> None:
        """``ack_at_once``: the client acknowledges each TCP segment as it comes
        (``TCP_QUICKACK``, Linux) rather than after the usual delay, as no browser does;
        for the benchmark that finds what the delay costs."""
        from jupyter_client.session import Session
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        server.check_kernel(name)
        self.server, self.name, self.protocol, self.timeout = server, name, protocol, timeout
        self.implementation = ""  # the kernel's, once it answers kernel_info
        # The server checks no signature from its websocket, and signs what it sends on.
        self.session = Session(key=secrets.token_bytes(16), username="zmqbench")
        self.id = ""
        self._beside: IOPubBeside | None = None
        self.ack_at_once = ack_at_once
        self._reading: asyncio.Future[Any] | None = None
        # The websocket's own loop, on a thread of its own: the caller may be a kernel
        # whose thread already runs a loop (a notebook's magic), which cannot run another.
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            self.id = str(server.request("POST", "/api/kernels", {"name": name})["id"])
            connection_file = server.connection_file(self.id)
            if connection_file is not None:
                self._beside = IOPubBeside(connection_file)
            url = server.ws_url(
                f"/api/kernels/{self.id}/channels?session_id={self.session.session}"
            )
            asked = HTTPRequest(url, headers={"Authorization": f"token {server.token}"})
            subprotocols = [V1] if protocol == "v1" else None

            async def connect() -> Any:  # tornado's futures belong to the running loop
                # A stream's batched output can pass tornado's 10 MiB default.
                return await websocket_connect(
                    asked, subprotocols=subprotocols, max_message_size=_LARGEST_MESSAGE
                )

            self._ws = self._call(asyncio.wait_for(connect(), timeout))
            self.implementation = wait_ready(self, timeout)
        except BaseException:
            self.close()
            raise

    def send(self, kind: str, content: Mapping[str, object], buffers: Sequence[bytes] = ()) -> str:
        from jupyter_client.session import json_default
        from jupyter_server.services.kernels.connection.base import (
            serialize_binary_message,
            serialize_msg_to_ws_v1,
        )

        message = self.session.msg(kind, dict(content))
        frame: str | bytes
        if self.protocol == "v1":
            parts = [
                json.dumps(message[part], default=json_default).encode()
                for part in ("header", "parent_header", "metadata", "content")
            ]
            frame = serialize_msg_to_ws_v1([*parts, *buffers], "shell")
        elif buffers:
            frame = serialize_binary_message(
                {**message, "channel": "shell", "buffers": list(buffers)}
            )
        else:
            frame = json.dumps({**message, "channel": "shell"}, default=json_default)

        async def write() -> None:  # tornado's futures belong to the running loop
            await self._ws.write_message(frame, binary=not isinstance(frame, str))

        self._call(write())
        return str(message["header"]["msg_id"])

    def receive(self, timeout: float) -> Message:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                frame = self._call(self._read(min(left, LOOK_EVERY_S)))
            except asyncio.TimeoutError:
                self._check_alive()
                if left <= 0:
                    raise NoReply(
                        f"the {self.name} kernel sent nothing within {timeout:g} s"
                    ) from None
                continue
            if frame is None:  # the server closed the websocket
                self._check_alive()
                raise ServerFailed(f"the Jupyter server closed the {self.name} kernel's websocket")
            message = self._message(frame)
            # The client has it now: what follows (a wait for the subscriber beside the
            # server) is not the message's.
            message["arrived"] = time.time()
            if message["msg_type"] == "status" and self._beside is not None:
                # The same status, as a subscriber beside the server heard it.
                beside = self._beside.arrival(parent_id(message), message)
                if beside is not None:
                    message["arrived_beside"] = beside
            state = (
                message["content"].get("execution_state") if message["msg_type"] == "status" else ""
            )
            if state in _DEATHS:  # the server's word, with no parent, as it restarts it
                raise KernelDied(f"the {self.name} kernel died (the Jupyter server says: {state})")
            return message

    async def _closed(self) -> None:
        self._ws.close()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the websocket's loop and wait for what it gives (its
        own timeouts bound it)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def _read(self, timeout: float) -> str | bytes | None:
        # One read, kept across waits: a read cut off by its timeout would lose its frame.
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._ws.read_message())
        done, _ = await asyncio.wait([self._reading], timeout=max(0.0, timeout))
        if not done:
            raise asyncio.TimeoutError
        frame, self._reading = self._reading.result(), None
        if self.ack_at_once:  # the kernel clears it after each segment: set it again
            self._ws.stream.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        return frame

    def _message(self, frame: str | bytes) -> Message:
        from jupyter_client.jsonutil import extract_dates
        from jupyter_server.services.kernels.connection.base import (
            deserialize_binary_message,
            deserialize_msg_from_ws_v1,
        )

        if isinstance(frame, str):
            message: Message = json.loads(frame)
        elif self.protocol == "v1":
            channel, parts = deserialize_msg_from_ws_v1(frame)
            header, parent, metadata, content = (json.loads(p) for p in parts[:4])
            message = {
                "header": header,
                "parent_header": parent,
                "metadata": metadata,
                "content": content,
                "buffers": parts[4:],
                "channel": channel,
                "msg_type": header["msg_type"],
            }
        else:
            message = deserialize_binary_message(frame)
        message.setdefault("msg_type", message["header"]["msg_type"])
        message["header"] = extract_dates(message["header"])
        return message

    def _check_alive(self) -> None:
        try:
            state = self.server.request("GET", f"/api/kernels/{self.id}")["execution_state"]
        except ServerFailed:
            state = "dead"  # gone from the server's list: it was culled or it died
        if state in _DEATHS:
            raise KernelDied(f"the {self.name} kernel died (the Jupyter server says: {state})")

    def close(self) -> None:
        """Close the websocket, the subscriber beside the server and the kernel."""
        if self._beside is not None:
            self._beside.close()
        with contextlib.suppress(Exception):
            self._call(self._closed())
        if self.id:
            with contextlib.suppress(Exception):
                self.server.request("DELETE", f"/api/kernels/{self.id}")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


@contextlib.contextmanager
def server_kernel(
    server: JupyterServer | ExistingServer, name: str, protocol: str, timeout: float
) -> Iterator[ServerKernel]:
    kernel = ServerKernel(server, name, protocol, timeout)
    try:
        yield kernel
    finally:
        kernel.close()


# How many times a server starts, each on a fresh free port, while its port is taken.
_PORT_TRIES = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


__all__ = [
    "V1",
    "ExistingServer",
    "JupyterServer",
    "ServerFailed",
    "ServerKernel",
    "server_kernel",
]
