"""A real kernel under test, spoken to straight over its ZeroMQ channels: started from
its kernelspec as a notebook server starts one (jupyter_client's ``KernelManager``,
its channels on 127.0.0.1), waited for until it answers ``kernel_info``, and shut down
with everything it made (its process, its connection file) on success, error, timeout
or interrupt.

It is one of the kernel's two doors (:class:`Channels`); the other is a Jupyter
server's websocket (:mod:`.server`). Either sends a request on the shell channel and
hands back every message that comes, on any channel, tagged with its channel. Every
receive is bounded, and while it waits it looks at the kernel twice a second: a
kernel that dies mid-run is named, with what it wrote to its stderr, within a second,
not after the timeout.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from ..params.kernel_messages import PACKER

# How often a wait looks whether the kernel is still alive.
LOOK_EVERY_S = 0.5
# A message from the kernel, as jupyter_client's Session reads it: header, parent
# header, metadata, content and buffers, and the channel it came on.
Message = dict[str, Any]


class KernelDied(RuntimeError):
    """The kernel's process ended while a request waited on it."""


class NoReply(TimeoutError):
    """No answer within the timeout, from a kernel that is still alive."""


class Channels(Protocol):
    """A kernel's door: requests go in on its shell channel, and every message comes
    back, tagged with its ``channel``."""

    name: str  # the kernelspec's
    implementation: str  # as its kernel_info_reply names it: "ipython" is ipykernel

    def send(self, kind: str, content: Mapping[str, object], buffers: Sequence[bytes] = ()) -> str:
        """Send a request; its ``msg_id``."""
        ...

    def receive(self, timeout: float) -> Message:
        """The next message on any channel, within ``timeout`` (:class:`NoReply`), or
        :class:`KernelDied` as soon as the kernel is seen dead."""
        ...


def installed_kernels() -> list[str]:
    """The kernelspecs this environment can start (``jupyter kernelspec list``)."""
    return sorted(KernelSpecManager().find_kernel_specs())


def check_kernel(name: str) -> None:
    """A ``ValueError`` naming ``name`` and the installed kernelspecs, before anything
    starts, where ``name`` is not one of them."""
    installed = installed_kernels()
    if name not in installed:
        msg = f"kernel must be an installed kernelspec, one of {', '.join(installed)}; got {name!r}"
        raise ValueError(msg)


def parent_id(message: Message) -> str | None:
    """The id of the request a message answers; None for one that answers none (a
    kernel may send its first status with no parent header at all, as xeus-python
    does)."""
    return (message.get("parent_header") or {}).get("msg_id")


def wait_ready(channels: Channels, timeout: float) -> str:
    """Until the kernel answers ``kernel_info`` on its shell channel and its IOPub is
    heard too (a subscription still joining misses what is published before it, so a
    request's statuses could be lost), as jupyter_client waits; then until that
    request's idle status, so the first timed request reads only its own. The kernel's
    implementation, as its reply names it (``ipython``: ipykernel)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg_id = channels.send("kernel_info_request", {})
        heard = {"shell": False, "iopub": False}
        implementation = ""
        with contextlib.suppress(NoReply):
            while not all(heard.values()):
                message = channels.receive(1.0)
                if parent_id(message) == msg_id:
                    heard[message["channel"]] = True
                    if message["msg_type"] == "kernel_info_reply":
                        implementation = str(message["content"].get("implementation", ""))
            while not _is_idle(channels.receive(1.0), msg_id):
                pass
            return implementation
    msg = f"the {channels.name} kernel did not answer within {timeout:g} s of its start"
    raise NoReply(msg)


def _is_idle(message: Message, msg_id: str) -> bool:
    return (
        message["msg_type"] == "status"
        and parent_id(message) == msg_id
        and message["content"]["execution_state"] == "idle"
    )


class KernelUnderTest:
    """One started kernel and its blocking client (``client``), spoken to on its own
    ZeroMQ sockets; ``close`` ends both."""

    def __init__(
        self, name: str, timeout: float, signing: bool = True, packer: str = PACKER.default
    ) -> None:
        """``signing`` false: an empty key in the connection file, so neither the kernel
        nor the client signs or checks a message (jupyter_client's own switch).
        ``packer``: jupyter_client's ``Session.packer`` on both sides (given to the
        kernel on its command line, which an ipykernel reads); "auto", each side's own."""
        check_kernel(name)
        extra = _packer_arguments(name, packer)
        self.name = name
        self.implementation = ""  # the kernel's, once it answers kernel_info
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.manager = KernelManager(kernel_name=name)
        if not signing:
            self.manager.session.key = b""
        if extra:
            self.manager.session.packer = packer  # the client's (it shares the manager's)
        try:
            self.manager.start_kernel(
                stdout=subprocess.DEVNULL, stderr=self._stderr, extra_arguments=extra
            )
            self.client = self.manager.client()
            self.client.start_channels()
            self._shell = self.client.shell_channel.socket
            self._iopub = self.client.iopub_channel.socket
            self._poller = zmq.Poller()
            self._poller.register(self._shell, zmq.POLLIN)
            self._poller.register(self._iopub, zmq.POLLIN)
            self.implementation = wait_ready(self, timeout)
        except BaseException:
            self.close()
            raise

    def send(self, kind: str, content: Mapping[str, object], buffers: Sequence[bytes] = ()) -> str:
        session = self.client.session
        message = session.msg(kind, dict(content))
        session.send(self._shell, message, buffers=list(buffers))
        return str(message["header"]["msg_id"])

    def receive(self, timeout: float) -> Message:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready = dict(self._poller.poll(round(1000 * max(0.0, min(left, LOOK_EVERY_S)))))
            for socket, channel in ((self._shell, "shell"), (self._iopub, "iopub")):
                if socket in ready:
                    _, message = self.client.session.recv(socket, mode=zmq.NOBLOCK)
                    assert message is not None  # polled: a whole message waits
                    return {**message, "channel": channel}
            self._check_alive()
            if left <= 0:
                raise NoReply(f"the {self.name} kernel sent nothing within {timeout:g} s")

    def _check_alive(self) -> None:
        if not self.manager.is_alive():
            raise KernelDied(f"the {self.name} kernel died{self._last_words()}")

    def _last_words(self) -> str:
        lines = self.stderr_lines()
        return f": {lines[-1]}" if lines else " (it wrote nothing to its stderr)"

    def stderr_lines(self) -> list[str]:
        """What the kernel wrote to its stderr so far, line by line (bar ipykernel's
        warning that its channels are not encrypted)."""
        self._stderr.seek(0)
        return [
            line.strip()
            for line in self._stderr.read().decode(errors="replace").splitlines()
            if line.strip() and "without encryption" not in line
        ]

    def close(self) -> None:
        """Stop the channels, the kernel's process and its connection file."""
        with contextlib.suppress(Exception):
            self.client.stop_channels()
        with contextlib.suppress(Exception):
            self.manager.shutdown_kernel(now=True)
        with contextlib.suppress(Exception):
            self.manager.cleanup_resources()
        self._stderr.close()


def _packer_arguments(name: str, packer: str) -> list[str]:
    """The kernel's command-line arguments that set its packer: none for "auto"; for
    another, ipykernel's traitlets option, and a ``ValueError`` for a kernel that is
    not an ipykernel (its own options are its own)."""
    if packer == PACKER.default:
        return []
    argv = KernelSpecManager().get_kernel_spec(name).argv
    if not any("ipykernel" in word for word in argv):
        msg = f"packer {packer} is set on an ipykernel's command line; the {name} kernel is not one"
        raise ValueError(msg)
    return [f"--Session.packer={packer}"]


@contextlib.contextmanager
def kernel_under_test(
    name: str, timeout: float, signing: bool = True, packer: str = PACKER.default
) -> Iterator[KernelUnderTest]:
    """A started kernel for the ``with`` block, closed whatever happens in it."""
    kernel = KernelUnderTest(name, timeout, signing, packer)
    try:
        yield kernel
    finally:
        kernel.close()


__all__ = [
    "Channels",
    "KernelDied",
    "KernelUnderTest",
    "Message",
    "NoReply",
    "check_kernel",
    "installed_kernels",
    "kernel_under_test",
    "wait_ready",
]
