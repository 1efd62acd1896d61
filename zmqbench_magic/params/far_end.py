"""Where the far end is and how the link to it is secured: a remote far end (a
standing one at ``tcp://``, or one started over ``ssh://``), the secret it shares, and
CURVE encryption of the data path."""

from __future__ import annotations

import os
import re
import shlex

from .address import is_loopback_url
from .declare import Param

# The ssh command (with an identity or config file, say) for far ends and engines
# started over SSH, as Git's GIT_SSH_COMMAND.
SSH_COMMAND_ENV = "ZMQBENCH_SSH_COMMAND"


def ssh_command() -> list[str]:
    """``ssh``, or ``$ZMQBENCH_SSH_COMMAND`` split as a shell would."""
    return shlex.split(os.environ.get(SSH_COMMAND_ENV) or "ssh")


def ssh_to(host: str, *options: str) -> list[str]:
    """The command that runs what follows on ``[user@]host[:port]``: ``ssh -o
    BatchMode=yes [-p PORT] OPTIONS [user@]host`` (never a password prompt in a
    kernel)."""
    port = []
    if re.search(r":\d+$", host):
        host, number = host.rsplit(":", 1)
        port = ["-p", number]
    return [*ssh_command(), "-o", "BatchMode=yes", *port, *options, host]


# fmt: off
CURVE = Param(
    "curve", False,
    "encrypt the data path with ZeroMQ's CURVE (true) or not (false), swept, so its cost "
    "is measured (tcp and ipc; the control channel to a remote far end is always "
    "encrypted)",
    "CURVE encryption", "bool", choices=(True, False), sweep=True, labels=("curve", "plain"),
    said="CURVE",
)
REMOTE = Param(
    "remote", "",
    "a far end on another host: tcp://HOST:PORT of a standing `zmqbench peer --bind`, "
    "or ssh://[user@]host[:port] to start one there for the run (ssh -o BatchMode=yes, "
    "or $ZMQBENCH_SSH_COMMAND); empty: a far end on this machine (--peer); with "
    "--pattern or --clients, several, separated by commas: the peers are dealt among "
    "them in turn",
    "remote far end", "str",
)
SECRET_FILE = Param(
    "secret_file", "",
    "the secret a driver and a remote far end share: zmqbench peer makes the file "
    "(readable by you only) when it does not exist; give the same file to both sides; "
    "needed beyond loopback",
    "secret file", "str",
)

REMOTE_PYTHON = Param(
    "remote_python", "python3",
    "with --remote ssh://: the interpreter on that host that has zmqbench_magic installed",
    "remote Python", "str",
)
# fmt: on

_SSH_URL = re.compile(r"^ssh://([\w.-]+@)?[\w.-]+(:\d+)?$")


def remote_hosts(remote: str) -> tuple[str, ...]:
    """The far ends' hosts of ``--remote``, in order (several: separated by commas)."""
    return tuple(remote.replace(",", " ").split())


def host_of(url: str) -> str:
    """The host of a far end's ``tcp://HOST:PORT``: how a peer there is named."""
    return url.removeprefix("tcp://").rsplit(":", 1)[0]


def check_remote(
    remote: str,
    transports: tuple[str, ...],
    peers: tuple[str, ...],
    secret_file: str,
    curves: tuple[bool, ...],
) -> None:
    """Each of ``remote``'s far ends is reached over the network's tcp, with a secret
    beyond loopback (one handed over SSH for ``ssh://``)."""
    hosts = remote_hosts(remote)
    if len(set(hosts)) < len(hosts):
        msg = f"remote names a host twice ({remote!r}): give each once, its peers are dealt in turn"
        raise ValueError(msg)
    if transports != ("tcp",) or peers != ("auto",):
        msg = (
            "with --remote the transport is the network's tcp and the far end is the "
            f"remote one: leave --transport and --peer out, got {'/'.join(transports)} "
            f"and {'/'.join(peers)}"
        )
        raise ValueError(msg)
    for host in hosts:
        _check_one_remote(host, secret_file, curves)
    if secret_file and not any(h.startswith("tcp://") for h in hosts):
        msg = "secret_file does not apply to ssh://: a fresh secret is handed over SSH"
        raise ValueError(msg)


def _check_one_remote(remote: str, secret_file: str, curves: tuple[bool, ...]) -> None:
    host, _, port = remote.removeprefix("tcp://").rpartition(":")
    standing = remote.startswith("tcp://") and host and port.isdigit()
    if not standing and not _SSH_URL.match(remote):
        msg = (
            "remote must be tcp://HOST:PORT (a standing `zmqbench peer`) or "
            f"ssh://[user@]host[:port], got {remote!r}"
        )
        raise ValueError(msg)
    if not standing:
        return
    if not secret_file and not is_loopback_url(remote):
        msg = f"remote {remote} is beyond loopback: give --secret-file, the far end's secret"
        raise ValueError(msg)
    if True in curves and not secret_file:
        msg = "curve true with --remote needs --secret-file: the keys come from the secret"
        raise ValueError(msg)
