"""Fresh driver processes (``--driver process``, ``--python``): each group of points,
each round, is measured by a new process the kernel starts (:mod:`.worker`), which
runs both ends, as pyperf's workers do. The rounds are then independent: their spread
includes what differs from one process to the next (its heap, its addresses, where
the scheduler put it), which one long-lived driver hides. With ``--python`` each arm's
processes run that arm's interpreter, with its own pyzmq and libzmq.

The kernel only starts them, asks for samples and waits: every wait is bounded by the
timeout since the process last said it was alive, and a process that stops, or a run
that is interrupted, is ended with its whole process group (its far end too) and its
ipc folder removed.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from ...method.spawn import child_env, foreign_env, interrupt_after
from ...params import SocketPoint, ZmqParams
from ...params.columns import Row
from ...params.cpus import cpu_plan
from ...params.interpreter import KERNEL, executable, split
from ...results.statistics.histogram import LogHistogram
from ..far_ends.peer import PeerError
from ..far_ends.worker import RAISED_AS_THEMSELVES
from ..payload import Payload
from ..protocol import (
    QUIT,
    Alive,
    DriverFailed,
    DriverJob,
    DriverReady,
    DriverSettings,
    FromDriver,
    SampleTaken,
    TakeSample,
    ToDriver,
)
from .processes import start_module
from .rounds import point_key

_STOP_GRACE_S = 2.0
_LOOK_S = 0.25
_PROBE_TIMEOUT_S = 60.0


@dataclass
class ProcessDrivers:
    """A run's driver processes: what they share across rounds (each point's
    calibrated count) and what they said of their environments.

    The count is calibrated once per point, by the first arm measured, and every arm
    takes it: a sample is then the same work in each environment. (Counts of their
    own, one calibration landing at twice the other's, made samples of unequal length
    whose means differ by what a fresh process pays first: an A/A of one interpreter
    called a difference that was not there.)"""

    params: ZmqParams
    payload: Payload | None
    counts: dict[tuple[Any, ...], int] = field(default_factory=dict)
    environments: dict[str, dict[str, str]] = field(default_factory=dict)

    def check(self) -> None:
        """Before anything is measured: every arm's interpreter can run a driver
        (``ValueError`` saying what it lacks otherwise)."""
        for arm, spec in self.params.interpreters().items():
            imports = "import numpy, zmq, zmqbench_magic.sockets.far_ends.worker"
            command = [executable(spec), "-c", imports]
            try:
                done = subprocess.run(
                    command,
                    env=_env(spec),
                    capture_output=True,
                    text=True,
                    timeout=_PROBE_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                msg = f"python {arm} ({executable(spec)}) could not be started: {exc}"
                raise ValueError(msg) from None
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
                msg = (
                    f"python {arm} ({executable(spec)}) cannot run a driver: {why}; an "
                    "interpreter for --python needs pyzmq and numpy (zmqbench env builds one)"
                )
                raise ValueError(msg)

    @contextlib.contextmanager
    def far_end(self, group: list[SocketPoint]) -> Iterator[_Session]:
        """A fresh driver process (and its far end) for one round of ``group``."""
        arm = group[0].python
        spec = self.params.interpreters()[arm]
        job = DriverJob(
            benchmark=self.params.benchmark,
            settings=_settings(self.params),
            # Its far end's CPUs (--cpu): the process itself inherits the driver's.
            far_cpus=sorted(cpu_plan(self.params.cpu)[1]),
            group=[_inner(p).settings() for p in group],
            counts=[
                (list(point_key(_inner(p))), self.counts[point_key(_inner(p))])
                for p in group
                if point_key(_inner(p)) in self.counts
            ],
            payload=_frames(self.payload),
        )
        worker = None
        try:
            with interrupt_after():  # never a process started but not yet ours to end
                worker = _Worker(spec, self.params.timeout)
            worker.send(job)
            ready = cast(DriverReady, worker.receive())  # its first answer
            worker.ipc_dir = ready.get("ipc_dir")
            self.environments.setdefault(arm, ready["environment"])
            yield _Session(self, worker)
            worker.finish()
        finally:
            if worker is not None:
                worker.end()


@dataclass
class _Session:
    """One round of a group, in its driver process."""

    drivers: ProcessDrivers
    worker: _Worker

    def sample(self, point: SocketPoint) -> Row:
        self.worker.send(TakeSample(cmd="sample", point=_inner(point).settings()))
        row = cast(SampleTaken, self.worker.receive())["row"]  # a sample's answer
        self.drivers.counts[point_key(_inner(point))] = row["count"]
        if "rtt_hist" in row:
            row["rtt_hist"] = LogHistogram.from_json(row["rtt_hist"])
        return row


class _Worker:
    """One driver process and its JSON-lines pipe."""

    def __init__(self, spec: str, timeout: float) -> None:
        self.timeout = timeout
        self.ipc_dir: str | None = None
        self.executable = executable(spec)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by end()
        self._pending = b""
        # A session of its own: a terminal's Ctrl-C reaches the kernel alone, which
        # then ends this process and its far end together (its process group).
        self.process = start_module(
            "zmqbench_magic.sockets.far_ends.worker",
            ("--parent", str(os.getpid())),
            env=_env(spec),
            python=self.executable,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            own_session=True,
        )

    def send(self, message: DriverJob | ToDriver) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise self._failure("exited") from None

    def receive(self) -> FromDriver:
        """Its next message, waiting while it says it is alive, at most ``timeout``
        seconds past the last time it did; a reported error is raised as itself."""
        assert self.process.stdout is not None
        pipe, heard = self.process.stdout.fileno(), time.monotonic()
        while True:
            while b"\n" not in self._pending:
                if select.select([pipe], [], [], _LOOK_S)[0]:
                    chunk = os.read(pipe, 1 << 16)
                    if not chunk:
                        raise self._failure("exited")
                    self._pending += chunk
                    heard = time.monotonic()
                elif time.monotonic() - heard > self.timeout:
                    raise self._failure(f"said nothing for {self.timeout:g} s", TimeoutError)
            line, self._pending = self._pending.split(b"\n", 1)
            message: FromDriver | Alive | DriverFailed = json.loads(line)
            if "error" in message:
                failed = cast(DriverFailed, message)
                raise RAISED_AS_THEMSELVES.get(failed.get("kind", ""), PeerError)(failed["error"])
            if "alive" not in message:
                return message

    def finish(self) -> None:
        """Ask it to close its far end and quit; a far end that did not end cleanly
        (its samples not to be trusted) is a PeerError."""
        self.send(QUIT)
        self.receive()  # Closed
        try:
            code = self.process.wait(_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            raise self._failure("did not exit after its last sample") from None
        if code != 0:
            raise self._failure("did not end cleanly")

    def end(self) -> None:
        """Whatever happened: the process group ended, the pipes closed, the ipc
        folder gone."""
        if self.process.poll() is None:
            # Its far end is in its group: one stopped mid-sample leaves none behind.
            _signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(self.process.pid, signal.SIGKILL)
                self.process.wait(_STOP_GRACE_S)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._stderr.close()
        if self.ipc_dir:
            shutil.rmtree(self.ipc_dir, ignore_errors=True)

    def _failure(self, what: str, kind: type[Exception] = PeerError) -> Exception:
        code = self.process.poll()
        if code is None and what == "exited":
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(_STOP_GRACE_S)
        how = "" if code is None else f" (exit code {code})"
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()[-5:]
        said = ("; it said: " + " / ".join(tail)) if tail else ""
        return kind(f"the driver process ({self.executable}) {what}{how}{said}")


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def _env(spec: str) -> dict[str, str]:
    """The kernel's own interpreter gets the kernel's environment; another its own."""
    return child_env() if split(spec)[1] == KERNEL else foreign_env()


def _settings(params: ZmqParams) -> DriverSettings:
    """What a driver process is told of the settings; the rest is the kernel's business."""
    return DriverSettings(
        count=params.count,
        warmup=params.warmup,
        min_time=params.min_time,
        timeout=params.timeout,
        address=params.address,
    )


def _inner(point: SocketPoint) -> SocketPoint:
    """A point as its driver process knows it: which interpreter runs it is moot there."""
    return point.without("python")


def _frames(payload: Payload | None) -> list[str] | None:
    if payload is None:
        return None
    return [base64.b64encode(memoryview(frame).tobytes()).decode() for frame in payload.frames]


__all__ = ["ProcessDrivers"]
