"""A real kernel under test: started from its kernelspec as a notebook server starts
one (jupyter_client's ``KernelManager``, its channels on 127.0.0.1), waited for until
it answers ``kernel_info``, and shut down with everything it made (its process, its
connection file) on success, error, timeout or interrupt.

Every receive is bounded, and while it waits it looks at the kernel's process twice a
second: a kernel that dies mid-run is named, with what it wrote to its stderr, within
a second, not after the timeout.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import KernelManager

# How often a wait looks whether the kernel is still alive.
_LOOK_EVERY_S = 0.5
# A message from the kernel, as jupyter_client's Session reads it: header, parent
# header, metadata, content and buffers.
Message = dict[str, Any]


class KernelDied(RuntimeError):
    """The kernel's process ended while a request waited on it."""


class NoReply(TimeoutError):
    """No answer within the timeout, from a kernel that is still alive."""


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


class KernelUnderTest:
    """One started kernel and its blocking client (``client``); ``close`` ends both."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.manager = KernelManager(kernel_name=name)
        try:
            self.manager.start_kernel(stdout=subprocess.DEVNULL, stderr=self._stderr)
            self.client = self.manager.client()
            self.client.start_channels()
            self._wait_ready()
        except NoSuchKernel:
            self._stderr.close()
            check_kernel(name)  # names the installed ones
            raise
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        """Until the kernel answers ``kernel_info`` on the shell channel and its IOPub
        is heard too (a subscription still joining misses what is published before,
        so until then a request's statuses could be lost), as jupyter_client waits."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg_id = self.client.kernel_info()
            try:
                self.shell_reply(msg_id, 1.0)
                self.iopub(0.2)
            except NoReply:
                continue
            time.sleep(0.05)  # the request's idle status, then nothing
            self.drain_iopub()
            return
        msg = f"the {self.name} kernel did not answer within {self.timeout:g} s of its start"
        raise NoReply(msg)

    def pid(self) -> int | None:
        provisioner = self.manager.provisioner
        process = getattr(provisioner, "process", None)
        return None if process is None else int(process.pid)

    def _check_alive(self) -> None:
        if not self.manager.is_alive():
            raise KernelDied(f"the {self.name} kernel died{self._last_words()}")

    def _last_words(self) -> str:
        self._stderr.seek(0)
        lines = [
            line
            for line in self._stderr.read().decode(errors="replace").splitlines()
            if line.strip() and "without encryption" not in line
        ]
        return f": {lines[-1].strip()}" if lines else " (it wrote nothing to its stderr)"

    def _receive(self, get: Callable[..., Message], timeout: float, what: str) -> Message:
        """One message from a channel within ``timeout``, looking at the kernel's
        process between waits."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._check_alive()
                raise NoReply(f"the {self.name} kernel sent no {what} within {timeout:g} s")
            try:
                return get(timeout=min(left, _LOOK_EVERY_S))
            except Exception as exc:  # queue.Empty, the channel's timeout
                if type(exc).__name__ != "Empty":
                    raise
                self._check_alive()

    def shell_reply(self, msg_id: str, timeout: float | None = None) -> Message:
        """The shell channel's reply to ``msg_id`` (any other reply is dropped)."""
        while True:
            reply = self._receive(self.client.get_shell_msg, timeout or self.timeout, "reply")
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def iopub(self, timeout: float | None = None) -> Message:
        """The next IOPub message."""
        return self._receive(self.client.get_iopub_msg, timeout or self.timeout, "output")

    def drain_iopub(self) -> None:
        """Drop what IOPub holds (a start's statuses), so a trip reads its own."""
        while self.client.iopub_channel.msg_ready():
            self.client.get_iopub_msg(timeout=0)

    def close(self) -> None:
        """Stop the channels, the kernel's process and its connection file."""
        with contextlib.suppress(Exception):
            self.client.stop_channels()
        with contextlib.suppress(Exception):
            self.manager.shutdown_kernel(now=True)
        with contextlib.suppress(Exception):
            self.manager.cleanup_resources()
        self._stderr.close()


@contextlib.contextmanager
def kernel_under_test(name: str, timeout: float) -> Iterator[KernelUnderTest]:
    """A started kernel for the ``with`` block, closed whatever happens in it."""
    kernel = KernelUnderTest(name, timeout)
    try:
        yield kernel
    finally:
        kernel.close()


__all__ = [
    "KernelDied",
    "KernelUnderTest",
    "Message",
    "NoReply",
    "check_kernel",
    "installed_kernels",
    "kernel_under_test",
]
