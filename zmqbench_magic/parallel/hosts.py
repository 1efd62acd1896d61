"""Engines on other hosts (``%taskflood --ssh-hosts``), started and stopped by
ipyparallel's own SSH engine launcher: this module only configures it.

The controller listens on the interface of this machine that reaches the first host
(the address a connection to it would leave from), never beyond what the user named.
``ssh`` is ``$ZMQBENCH_SSH_COMMAND`` when set, as for ``--remote ssh://``; ``scp``
takes the same options. The remote profile directory is the cluster's private path,
removed on every host when the cluster stops (and by the reaper when the kernel dies).
"""

from __future__ import annotations

import contextlib
import shlex
import socket
import subprocess

from traitlets.config import Config

from ..params.remote import ssh_command

_REMOVE_TIMEOUT_S = 20


def engine_config(
    config: Config, hosts: tuple[str, ...], per_host: int, python: str, profile_dir: str
) -> None:
    """``config`` set for ipyparallel's SSH engine sets: ``per_host`` engines on each."""
    ssh = ssh_command()
    config.SSHLauncher.ssh_cmd = ssh
    config.SSHLauncher.scp_cmd = ["scp", *ssh[1:]]
    config.SSHLauncher.remote_python = python
    config.SSHLauncher.remote_profile_dir = profile_dir
    config.SSHEngineSetLauncher.engines = dict.fromkeys(hosts, per_host)


def interface_towards(host: str) -> str:
    """The address of this machine a connection to ``[user@]host[:port]`` leaves from
    (a UDP socket's connect sends nothing)."""
    name = host.rsplit("@", 1)[-1].rsplit(":", 1)[0]
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((name, 22))
            return probe.getsockname()[0]
    except OSError as exc:
        msg = f"cannot reach engine host {host!r}: {exc}"
        raise ValueError(msg) from None


def remove_remote_profiles(hosts: tuple[str, ...], profile_dir: str) -> None:
    """Remove the cluster's profile directory on every host (best effort)."""
    for host in hosts:
        target, port = host, []
        if ":" in host.rsplit("@", 1)[-1]:
            target, number = host.rsplit(":", 1)
            port = ["-p", number]
        remove = f"rm -rf {shlex.quote(profile_dir)}"
        # A host that cannot be reached must not stop the rest of the cleanup.
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [*ssh_command(), "-o", "BatchMode=yes", *port, target, remove],
                capture_output=True, timeout=_REMOVE_TIMEOUT_S, check=False,
            )  # fmt: skip
