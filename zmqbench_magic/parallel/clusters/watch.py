"""Watching a cluster's processes while the project uses it: an engine, the
controller or one of its schedulers that exits is named at once, with how it ended
and what it last wrote.

For a cluster the project started, the launchers' processes are the kernel's own
children: their exit is seen in the next look (every quarter second while a sample
or a start runs), whatever ipyparallel's heartbeat makes of it. For a cluster someone
else started, only the controller can tell: an engine is gone once it unregisters,
which happens at once when the engine's nanny reports its exit, or after the
heartbeat misses when the whole engine host is gone (:data:`HEARTBEAT_NOTE`).
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# ipyparallel's defaults (HeartMonitor.period, max_heartmonitor_misses).
HEARTBEAT_NOTE = (
    "engines of a cluster the project did not start are seen to go only when its "
    "controller unregisters them: at once when an engine's nanny reports its exit, else "
    "after the heartbeat misses (ipyparallel's defaults: 10 misses of a 3 s ping, about 30 s)"
)
_LAST_LINES = 4
# How often a running sample, a start or a resize looks at the cluster's processes;
# also how often the wait for aborted tasks looks whether they still move.
LOOK_S = 0.25
# How long a request for the engines' process ids waits before it is asked again.
ASK_AGAIN_S = 5.0


class _Lost(RuntimeError):
    """A watched process found gone; ``noticed_at`` (``time.monotonic()``) is when,
    kept apart from the moment the error reaches the user, which comes after the
    cluster's teardown."""

    def __init__(self, message: str, noticed_at: float | None = None) -> None:
        super().__init__(message)
        self.noticed_at = time.monotonic() if noticed_at is None else noticed_at


class EngineLost(_Lost):
    """An engine of the cluster went away (died, or was stopped) while it was used."""


class ClusterLost(_Lost):
    """The cluster's controller went away while it was used."""


@dataclass(frozen=True)
class Exited:
    """A watched process that has ended: who it was and how it ended."""

    what: str  # "engine 3 (pid 1234)", "the controller (pid 1200)"
    status: str  # "exit code 1", "killed by signal 9 (SIGKILL)", "exit status unknown"
    last_lines: tuple[str, ...]

    def words(self) -> str:
        said = f"{self.what} exited: {self.status}"
        if self.last_lines:
            said += "; its last lines: " + " | ".join(self.last_lines)
        return said


def exited(launcher: Any, what: str) -> Exited | None:
    """How ``launcher``'s process ended, or None while it runs (or has none)."""
    import psutil

    process = getattr(launcher, "process", None)
    if process is None:
        return None
    try:
        # ipyparallel's own waiting thread reaps its children with this same psutil
        # object, which keeps the exit code: asking again returns it.
        code = process.wait(0)
        if code is None:  # that thread reaped it between our two looks: ask once more
            time.sleep(0.05)
            code = process.wait(0)
    except psutil.TimeoutExpired:
        return None
    except psutil.Error:
        code = None
    return Exited(what, _status(code), _last_lines(getattr(launcher, "output_file", "")))


def _status(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        return f"killed by signal {-code}"
    return f"exit code {code}"


def _last_lines(path: str) -> tuple[str, ...]:
    """The last few lines a process wrote (ipyparallel sends each launched process's
    output to a log file of its own)."""
    if not path:
        return ()
    try:
        with open(path, errors="replace") as output:
            lines = deque((line.strip() for line in output if line.strip()), _LAST_LINES)
    except OSError:
        return ()
    return tuple(lines)


# How long a child keeps the controller's command line before it counts as a scheduler.
SETTLED_S = 0.1


@dataclass
class Schedulers:
    """The controller's schedulers: ipyparallel forks a process for each (with the
    controller's command line), which the kernel cannot wait on, as they are the
    controller's children, not its own. Each is known once looks at least
    :data:`SETTLED_S` apart find it with that command line, and is gone once its
    process no longer runs (a zombie the controller has not reaped counts as gone):
    tasks routed through it are never answered. One look is not enough: a command the
    controller runs is a child that has the controller's command line from its fork
    until its exec (well under a millisecond), and then exits."""

    known: dict[int, Any] = field(default_factory=dict)
    # Children found with the controller's command line, not yet for long: when first.
    candidates: dict[int, float] = field(default_factory=dict)

    def exit(self, controller: Any) -> Exited | None:
        """The first scheduler of ``controller``'s process found gone, or None."""
        import psutil

        pid = getattr(controller, "pid", None)
        if pid is None:
            return None
        try:
            parent = psutil.Process(pid)
            command, children = parent.cmdline(), parent.children()
        except psutil.Error:
            return None  # the controller's own end is its launcher's to name
        now, candidates = time.monotonic(), {}
        for child in children:
            if child.pid not in self.known:
                with contextlib.suppress(psutil.Error):  # one ending now: seen next look
                    if child.cmdline() == command:
                        first = self.candidates.get(child.pid, now)
                        if now - first >= SETTLED_S:
                            self.known[child.pid] = child
                        else:
                            candidates[child.pid] = first
        self.candidates = candidates
        for scheduler_pid, process in self.known.items():
            try:
                # is_running() also tells a new process that took a wrapped pid.
                running = process.is_running() and process.status() != psutil.STATUS_ZOMBIE
            except psutil.Error:
                running = False
            if not running:
                what = f"a scheduler of the controller (pid {scheduler_pid})"
                return Exited(what, _status(None), ())
        return None


def engine_exit(cluster: Any, name: Callable[[Any, str], str]) -> Exited | None:
    """The first engine of ``cluster`` found to have exited, named by ``name(pid,
    host)``; None while all run."""
    for engine_set in list(getattr(cluster, "engines", {}).values()):
        for launcher in list(getattr(engine_set, "launchers", {}).values()):
            host = getattr(launcher, "hostname", "") or "this machine"
            gone = exited(launcher, name(getattr(launcher, "pid", None), host))
            if gone is not None:
                return gone
        # An engine that exited while ipyparallel's event loop ran (as it does while
        # the cluster starts engines) is already taken out of its set, its exit and
        # output kept in the set's records.
        records = getattr(engine_set, "stop_data", {}).get("engines", {})
        for identifier, record in list(records.items()):
            output = getattr(engine_set, "outputs", {}).get(identifier, "")
            lines = [line.strip() for line in output.splitlines() if line.strip()]
            host = getattr(engine_set, "hostname", "") or "this machine"
            return Exited(
                name(record.get("pid"), host),
                _status(record.get("exit_code")),
                tuple(lines[-_LAST_LINES:]),
            )
    return None


def has_exited(engine_set: Any) -> bool:
    """Whether every engine of an engine set has exited."""
    launchers = list(getattr(engine_set, "launchers", {}).values())
    if not launchers:
        return bool(getattr(engine_set, "stop_data", {}).get("engines"))
    return all(exited(launcher, "") is not None for launcher in launchers)


def engine_processes(cluster: Any) -> list[Any]:
    """The launchers of a cluster's engines, one per engine process (an engine set
    started over SSH has one per host)."""
    found = []
    for engine_set in list(getattr(cluster, "engines", {}).values()):
        found += list(getattr(engine_set, "launchers", {}).values())
    return found


def ask_pids(client: Any, engine_ids: list[int], timeout: float) -> dict[int, int]:
    """Each engine's process id, by engine id (asked once per start or resize).

    An engine's registration completes on its first heartbeat, which can come before
    its own connection to the scheduler's queue is made; a request routed to it before
    then is dropped by that queue's ROUTER, never answered. So a request unanswered
    for :data:`ASK_AGAIN_S` is given up (no longer outstanding) and asked again, until
    ``timeout``: asking an engine its process id twice does no harm.
    """
    import os

    if not engine_ids:
        return {}
    deadline = time.monotonic() + timeout
    while True:
        asked = client[engine_ids].apply_async(os.getpid)
        try:
            pids = asked.get(timeout=max(0.0, min(ASK_AGAIN_S, deadline - time.monotonic())))
        except TimeoutError:
            client.outstanding.difference_update(asked.msg_ids)
            if time.monotonic() >= deadline:
                raise
            continue
        return dict(zip(pids, engine_ids, strict=True))


__all__ = [
    "HEARTBEAT_NOTE",
    "LOOK_S",
    "ClusterLost",
    "EngineLost",
    "Exited",
    "Schedulers",
    "ask_pids",
    "engine_exit",
    "engine_processes",
    "exited",
    "has_exited",
]
