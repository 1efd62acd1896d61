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
from dataclasses import dataclass

from traitlets.config import Config

from ...params.far_end import ssh_command, ssh_to

_SSH_COMMAND_TIMEOUT_S = 20


@dataclass(frozen=True)
class Placement:
    """Where a started cluster's engines run and how the client reaches its controller."""

    hosts: tuple[str, ...] = ()  # engines there, over SSH; none: on this machine
    python: str = "python3"  # the interpreter on those hosts
    tunnel: str = ""  # [user@]gateway: the client goes through an SSH tunnel there

    def controller_ip(self) -> str:
        """Where the controller listens: loopback, unless engines or a gateway on other
        hosts must reach it; then the interface of ours that reaches the first."""
        first = self.hosts[0] if self.hosts else self.tunnel
        return interface_towards(first) if first else "127.0.0.1"

    def engine_count(self, engines: int) -> int:
        """The engines ``--engines`` starts: that many on this machine, or on each host."""
        return engines * max(1, len(self.hosts))

    def describe(self) -> str:
        """`` on HOSTS``, `` through an SSH tunnel via GATEWAY``, both or nothing."""
        where = f" on {', '.join(self.hosts)}" if self.hosts else ""
        return where + (f" through an SSH tunnel via {self.tunnel}" if self.tunnel else "")


ON_THIS_MACHINE = Placement()


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
        msg = f"cannot reach host {host!r}: {exc}"
        raise ValueError(msg) from None


def prepare_remote_profiles(hosts: tuple[str, ...], profile_dir: str) -> None:
    """Make the cluster's profile directory on every host, with the two config files
    that ``ipython profile create`` (which the SSH launcher runs there) would otherwise
    announce it generates, in lines that reach the cell."""
    quoted = shlex.quote(profile_dir)
    _on_each(
        hosts,
        f"mkdir -p {quoted} && touch {quoted}/ipython_config.py {quoted}/ipython_kernel_config.py",
    )


def remove_remote_profiles(hosts: tuple[str, ...], profile_dir: str) -> None:
    """Remove the cluster's profile directory on every host (best effort)."""
    _on_each(hosts, f"rm -rf {shlex.quote(profile_dir)}")


def _on_each(hosts: tuple[str, ...], command: str) -> None:
    """Run a shell command on every host (best effort: a host that cannot be reached
    must not stop the rest; the engine start names it)."""
    for host in hosts:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [*ssh_to(host), command],
                capture_output=True,
                timeout=_SSH_COMMAND_TIMEOUT_S,
                check=False,
            )
