"""Where a run's far end is: on this machine, a standing one (``tcp://``) or one
started over SSH for the run (``ssh://``), and the secret that reaches it.

A far end over SSH (``--remote ssh://[user@]host[:port]``): the driver runs
``PYTHON -m zmqbench_magic.cli peer --over-ssh`` there with ``ssh -o BatchMode=yes``
(``$ZMQBENCH_SSH_COMMAND`` replaces ``ssh``, as Git's ``GIT_SSH_COMMAND`` does, for an
identity or a config file), hands it a fresh secret on stdin (never on a command
line), reads the one line saying where it listens, and runs against it as against any
standing far end. Closing stdin stops it: at the end of the run, on an error or
interrupt, and when the kernel dies (its SSH session dies with it, and the far end
ends the moment its stdin closes).
"""

from __future__ import annotations

import contextlib
import re
import shlex
import subprocess
from collections.abc import Iterator

from ...method.piped import STOP_GRACE_S, Tail, read_until, stop
from ...params.far_end import REMOTE_PYTHON, remote_hosts, ssh_to
from ..far_ends.peer import PeerError
from ..secret import Door, Keys, read_secret
from .processes import start_command


@contextlib.contextmanager
def reach(
    remote: str, secret_file: str, python: str, timeout: float
) -> Iterator[tuple[str, Keys | None]]:
    """The far end's ``tcp://`` URL ("" for one on this machine) and its secret, for
    as long as the block lasts; an SSH-started one is stopped when it ends."""
    if remote.startswith("ssh://"):
        with far_end_over_ssh(remote, python, timeout) as reached:
            yield reached
        return
    yield remote, read_secret(secret_file) if secret_file else None


@contextlib.contextmanager
def reach_all(remote: str, secret_file: str, python: str, timeout: float) -> Iterator[list[Door]]:
    """Every far end of ``--remote`` (several, separated by commas, for a pattern's
    peers), as :func:`reach` gives each; none for a far end on this machine."""
    with contextlib.ExitStack() as reached:
        yield [
            reached.enter_context(reach(host, secret_file, python, timeout))
            for host in remote_hosts(remote)
        ]


_LISTENING = re.compile(rb"listening on (tcp://\S+)")


@contextlib.contextmanager
def far_end_over_ssh(url: str, python: str, timeout: float) -> Iterator[tuple[str, Keys]]:
    """A far end on the host of ``ssh://[user@]host[:port]``: its tcp URL and the secret
    it was handed, for as long as the block lasts."""
    keys = Keys.fresh()
    process = start_command(
        far_end_command(url, python),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # What it says is read all the time: a pipe left full would stall the far end
    # (it logs each run) in the middle of a long sweep.
    said = Tail(process.stderr)
    try:
        assert process.stdin is not None
        process.stdin.write(keys.to_json().encode() + b"\n")
        process.stdin.flush()
        url_there = _where_it_listens(process, url, python, timeout, said)
        Tail(process.stdout)
        yield url_there, keys
    finally:
        stop(process)


def far_end_command(url: str, python: str) -> list[str]:
    """``ssh -o BatchMode=yes [-p PORT] [user@]host PYTHON -m zmqbench_magic.cli peer
    --over-ssh``, with ``$ZMQBENCH_SSH_COMMAND`` for ``ssh``."""
    remote = f"{shlex.quote(python)} -m zmqbench_magic.cli peer --over-ssh"
    return [*ssh_to(url.removeprefix("ssh://")), remote]


def _where_it_listens(
    process: subprocess.Popen[bytes], url: str, python: str, timeout: float, said: Tail
) -> str:
    try:
        found = read_until(process, _LISTENING, timeout)
    except TimeoutError:
        msg = f"the far end over {url} did not say where it listens within {timeout:g} s"
        raise TimeoutError(msg) from None
    if found is None:
        raise PeerError(_failed(process, url, python, said))
    return found.group(1).decode()


def _failed(process: subprocess.Popen[bytes], url: str, python: str, said: Tail) -> str:
    """Why the far end did not start, from ssh's and the far end's own words."""
    process.wait(STOP_GRACE_S)
    last = said.last() or f"exit status {process.returncode}"
    hint = ""
    if "No module named" in last or process.returncode == 127:
        hint = f"; is zmqbench_magic installed for {python} there? ({REMOTE_PYTHON.option})"
    return f"could not start a far end over {url}: {last}{hint}"


__all__ = ["far_end_over_ssh", "reach", "reach_all"]
