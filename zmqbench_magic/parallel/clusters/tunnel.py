"""The client reaches the controller through an SSH tunnel (``%taskflood --ssh-tunnel
[user@]gateway[:port]``): what ipyparallel's ``Client(sshserver=...)`` does, with one
ssh process of the project's own.

Why not ``sshserver`` itself: it opens one ``ssh -f ... sleep 60`` per socket (seven)
through pyzmq's ``openssh_tunnel`` under pexpect, and here most of those tunnels died
as ssh went to the background (1 of 5 survived in a loop of five, pyzmq 27.3,
ipyparallel 9.2), so the client timed out ("Hub connection request timed out"). Those
that live also outlast a killed kernel by their ``sleep``. Here one ``ssh -L ... -L
...`` carries all seven ports; ``ExitOnForwardFailure`` makes a port that cannot be
forwarded an error, and it ends when its stdin closes: on stop, and with the kernel.
The traffic takes the same path as with ``sshserver``: client -> local port -> ssh ->
the gateway's sshd -> the controller's address as the gateway sees it.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipyparallel as ipp

from ...method.piped import Tail, read_until, stop
from ...params.far_end import ssh_to

# The controller's sockets, as the connection file names their ports.
_CHANNELS = ("registration", "control", "mux", "task", "iopub", "notification", "broadcast")
_OPEN = re.compile(rb"zmqbench-tunnel-open")
# How many times the tunnel opens, each on fresh local ports, while one is taken; and
# what ssh says of a local port it cannot listen on.
_PORT_TRIES = 3
_PORT_IN_USE = "Address already in use"


@dataclass
class Tunnel:
    """One ssh process forwarding local ports to the controller's, through ``gateway``."""

    gateway: str
    process: subprocess.Popen[bytes]

    def close(self) -> None:
        stop(self.process)


def tunnelled_client(
    connection_file: str | Path, gateway: str, timeout: float
) -> tuple[ipp.Client, Tunnel]:
    """A client of the controller in ``connection_file``, through an SSH tunnel via
    ``gateway``, and the tunnel (close it after the client)."""
    info = json.loads(Path(connection_file).read_text())
    # A free port can be taken by another process before ssh binds it: the tunnel then
    # opens again on fresh ones.
    for _ in range(_PORT_TRIES - 1):
        with contextlib.suppress(_PortTaken):
            return _open(info, gateway, timeout)
    return _open(info, gateway, timeout)  # the last try's failure is the caller's


class _PortTaken(ConnectionError):
    """ssh could not listen on a local port of the tunnel: another process took it."""


def _open(info: dict[str, Any], gateway: str, timeout: float) -> tuple[ipp.Client, Tunnel]:
    """One ssh process forwarding fresh local ports, and a client through them."""
    target = _controller_address(info)
    local = _free_ports(len(_CHANNELS))
    forwards = []
    for channel, port in zip(_CHANNELS, local, strict=True):
        forwards += ["-L", f"127.0.0.1:{port}:{target}:{info[channel]}"]
    # The remote side says when it is there (the forwards are set up before the
    # session), then reads its stdin to the end: closing ours ends the tunnel.
    remote = "echo zmqbench-tunnel-open; exec cat >/dev/null"
    process = subprocess.Popen(
        [*ssh_to(gateway, "-o", "ExitOnForwardFailure=yes", *forwards), remote],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a Ctrl-C at a terminal is the kernel's to handle
    )
    said = Tail(process.stderr)
    tunnel = Tunnel(gateway, process)
    try:
        opened = read_until(process, _OPEN, timeout)
        if opened is None:
            process.wait()
            why = said.last() or f"ssh exit status {process.returncode}"
            msg = f"could not open an SSH tunnel through {gateway} to {target}: {why}"
            if any(_PORT_IN_USE in line for line in said.lines):
                raise _PortTaken(msg)
            raise ConnectionError(msg)
        Tail(process.stdout)
        through = {
            **info,
            "interface": "tcp://127.0.0.1",
            **dict(zip(_CHANNELS, local, strict=True)),
            "ssh": "",
            # The controller is "here" now, at our end of the tunnel.
            "location": socket.gethostname(),
        }
        return ipp.Client(through, timeout=timeout), tunnel
    except TimeoutError:
        tunnel.close()
        msg = f"the SSH tunnel through {gateway} did not open within {timeout:g} s"
        raise TimeoutError(msg) from None
    except BaseException:
        tunnel.close()
        raise


def _controller_address(info: dict[str, Any]) -> str:
    """The controller's address as the gateway sees it (ipyparallel's own rule: a
    controller listening on all interfaces is at its ``location``)."""
    address = info["interface"].split("://", 1)[-1]
    if address in ("*", "0.0.0.0", ""):
        return info.get("location") or "127.0.0.1"
    return address


def _free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (all held at once, so they differ)."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            probe = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
        return ports
