"""A fresh driver process (``--driver process``): both ends of one round of a group
of points, run by whichever interpreter the kernel started it with
(``python -m zmqbench_magic.sockets.far_ends.worker --parent PID``).

It needs only pyzmq and numpy (an environment built for another pyzmq may have
nothing else). It talks JSON lines: the kernel writes the job on stdin, then one
``{"cmd": "sample", "point": ...}`` per kept sample (its count in the job) and ``{"cmd":
"quit"}``; the worker answers on stdout ``{"ready": pid, "environment": ...}`` once
its far end is up, ``{"row": ...}`` per sample, ``{"closed": true}`` once its far end
has ended cleanly, or ``{"error": text, "kind": name}``; and ``{"alive": true}``
every second meanwhile, so the kernel can bound its wait without bounding a sample
(each message declared in :mod:`.protocol`).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import threading
import time
from typing import Any, TextIO

from ...params import KINDS, SocketPoint, ZmqParams
from ...params.interpreter import this_interpreter
from ..kernel.link import PeerError
from ..kernel.rounds import RunState
from ..loops.pair import SAMPLE_OF_ROLE
from ..payload import Payload
from ..protocol import (
    Alive,
    Closed,
    DriverFailed,
    DriverJob,
    DriverReady,
    FromDriver,
    SampleTaken,
    ToDriver,
)
from .peer import exit_with_parent

ALIVE_EVERY_S = 1.0
_EXIT_GRACE_S = 5.0
# Errors the kernel raises again as themselves; anything else is a PeerError.
RAISED_AS_THEMSELVES = {
    "PeerError": PeerError,
    "TimeoutError": TimeoutError,
    "ValueError": ValueError,
}


class _Say:
    """One JSON line at a time on stdout, from the sampling thread and the heartbeat."""

    def __init__(self, out: TextIO) -> None:
        self._out, self._lock = out, threading.Lock()

    def __call__(self, message: FromDriver | Alive | DriverFailed) -> None:
        line = json.dumps(message, default=_plain)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()


def _plain(value: Any) -> Any:
    if hasattr(value, "to_json"):  # a latency sample's histogram
        return value.to_json()
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    msg = f"cannot send a {type(value).__name__}"
    raise TypeError(msg)


def run(job: DriverJob, commands: TextIO, say: _Say) -> None:
    """Open the job's far end, take the samples asked for, close it."""
    kind = KINDS[job["benchmark"]]
    assert issubclass(kind.params, ZmqParams), f"{kind.name} has no far end to run"
    params = kind.params(**job["settings"])
    frames = job.get("payload")
    payload = Payload.of([base64.b64decode(f) for f in frames]) if frames else None
    state = RunState(params, kind.far_end, SAMPLE_OF_ROLE[kind.far_end], payload)
    state.far_cpus = set(job.get("far_cpus", ()))
    state.counts.update({tuple(map(tuple, key)): count for key, count in job["counts"]})
    with state.far_end([SocketPoint.of(p) for p in job["group"]]) as far_end:
        assert far_end.link is not None
        say(
            DriverReady(
                ready=os.getpid(),
                environment=this_interpreter(),
                ipc_dir=far_end.link.ipc_dir,
            )
        )
        for line in commands:
            command: ToDriver = json.loads(line)
            if command["cmd"] == "quit":
                break
            row = far_end.sample(SocketPoint.of(command["point"]))
            say(SampleTaken(row=row))
    say(Closed(closed=True))


def _end_as_terminated() -> None:
    """The kernel is gone: end as a SIGTERM would (the far end and its ipc folder
    closed), and surely within a few seconds."""
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_EXIT_GRACE_S)
    os._exit(3)


def _heartbeat(say: _Say, done: threading.Event) -> None:
    while not done.wait(ALIVE_EVERY_S):
        say(Alive(alive=True))


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parent", type=int, required=True, help="exit when it is gone")
    args = parser.parse_args(argv)
    # The kernel owns shutdown (a quit, or SIGTERM then SIGKILL).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    threading.Thread(
        target=exit_with_parent, args=(args.parent, _end_as_terminated), daemon=True
    ).start()
    # The replies get stdout to themselves: anything a library prints goes to stderr,
    # which the kernel shows only when this process fails.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    say, done = _Say(replies), threading.Event()
    threading.Thread(target=_heartbeat, args=(say, done), daemon=True).start()
    try:
        run(json.loads(sys.stdin.readline()), sys.stdin, say)
    except Exception as exc:  # noqa: BLE001 - every failure is reported to the kernel
        say(DriverFailed(error=str(exc), kind=type(exc).__name__))
        return 1
    finally:
        done.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
