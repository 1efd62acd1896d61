"""The one way the sockets layer starts a process of its own: a pair's far end
(:mod:`..far_ends.peer`), a pattern's member (:mod:`..far_ends.member`, here or on a
standing far end's host) and a driver process (:mod:`..far_ends.worker`) all start
through :func:`start_module`; the SSH session of a far end started on another host
(:mod:`.remote`) through :func:`start_command`, beneath it.

Each is ``python -m MODULE ARGS`` with this package importable; a far end's also with
its steady malloc thresholds (:data:`..malloc.STEADY_MALLOC`), so it costs what a
warmed, long-running process costs. A Ctrl-C that lands while it starts is held until
the process is the caller's to stop, and it is pinned at once where ``--cpu`` asks:
it measures nothing before it says it is ready.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, TypedDict

from ...method.pinning import pin_process
from ...method.spawn import child_env, interrupt_after, module_command
from ..malloc import STEADY_MALLOC

if TYPE_CHECKING:  # Python 3.11's, named for the checker alone (3.10 is supported)
    from typing_extensions import Unpack

# Where a started process's stream goes: a pipe, /dev/null, a file of the caller's,
# or the caller's own (None).
Stream = int | IO[Any] | None


def far_end_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A far end's environment: this one's, this package importable, the steady malloc
    thresholds, and ``extra`` (an encrypted path's keys)."""
    return {**child_env(), **STEADY_MALLOC, **(extra or {})}


class StartOptions(TypedDict, total=False):
    """How :func:`start_command` starts a process: its environment (None: this one's),
    its CPUs (none: not pinned), its streams, and whether it has a session of its own
    (so a terminal's Ctrl-C reaches the caller alone, which then ends the process)."""

    env: Mapping[str, str] | None
    cpus: Iterable[int]
    stdin: Stream
    stdout: Stream
    stderr: Stream
    own_session: bool


def start_module(
    module: str, args: Iterable[str], *, python: str | None = None, **options: Unpack[StartOptions]
) -> subprocess.Popen[bytes]:
    """``python -m module args`` (this interpreter, or ``python``), started as
    :func:`start_command` starts any process."""
    return start_command(module_command(module, *args, python=python), **options)


def start_command(
    command: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cpus: Iterable[int] = (),
    stdin: Stream = subprocess.DEVNULL,
    stdout: Stream = subprocess.DEVNULL,
    stderr: Stream = subprocess.PIPE,
    own_session: bool = False,
) -> subprocess.Popen[bytes]:
    """Any process of the sockets layer (an SSH session to a far end's host, too), held
    until it is the caller's to stop and pinned at once (see :class:`StartOptions`)."""
    with interrupt_after():  # never a child started but not yet ours to stop
        process = subprocess.Popen(
            command,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=None if env is None else dict(env),
            start_new_session=own_session,
        )
        pin_process(process.pid, set(cpus))
    return process


__all__ = ["far_end_env", "start_command", "start_module"]
