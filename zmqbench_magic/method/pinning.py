"""``--cpu``: a run's processes held to the CPUs the user chose, and let go after.

Linux gives each thread its own CPU affinity, and a process or thread inherits the
affinity of the thread that starts it. So the run's own thread is pinned first, to the
driver's CPUs: the driver's loop and the driver processes start pinned. The far end's
side goes to its own CPUs (the same ones unless ``--cpu`` names two sets): a far end's
process by pid as it starts, its thread by itself (:func:`pin_this_thread`), and a
flood's cluster or workers by pid once they are up (:meth:`Pinning.pin_tree`,
:meth:`Pinning.pin_new`: ipyparallel's launchers run on a loop of their own; Dask's and
Ray's workers are started by theirs). At the end the thread gets its own CPUs back, and
so does every process pinned by pid that is still there (a cluster kept for the next
run, which may have inherited the pinning when it started), so a later run without
``--cpu`` is not pinned unknowingly.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..params.cpus import cpu_plan

# psutil is imported where it is used, never here: a far end's link imports this module
# in driver processes under another environment's interpreter, which has only pyzmq and
# numpy (the kernel's side, which pins by pid, has it with ipyparallel).
if TYPE_CHECKING:
    import psutil


@dataclass
class Pinning:
    """The CPUs of a run (None: not pinned) and the processes it pinned by pid."""

    cpus: set[int] | None  # the far end's side
    # The CPUs the run's thread had: what everything pinned gets back.
    restore: set[int] = field(default_factory=set)
    pinned: dict[int, psutil.Process] = field(default_factory=dict)
    # The kernel's descendants when the run began: the ones that appear later are its.
    known: set[int] = field(default_factory=set)

    def pin_tree(self, pids: Iterable[int]) -> None:
        """Pin these processes and their descendants (those that exit meanwhile are
        skipped)."""
        import psutil

        if self.cpus is None:
            return
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                for process in [root, *root.children(recursive=True)]:
                    self._pin(process)

    def pin_new(self) -> None:
        """Pin the processes started below this one since the run began."""
        import psutil

        if self.cpus is None:
            return
        for process in psutil.Process().children(recursive=True):
            if process.pid not in self.known:
                self._pin(process)

    def _pin(self, process: psutil.Process) -> None:
        import psutil

        with contextlib.suppress(psutil.Error):
            self.pinned.setdefault(process.pid, process)
            process.cpu_affinity(sorted(self.cpus or ()))

    def release(self) -> None:
        import psutil

        for process in self.pinned.values():
            with contextlib.suppress(psutil.Error):
                if process.is_running():
                    process.cpu_affinity(sorted(self.restore))
        self.pinned.clear()


def pin_this_thread(cpus: set[int]) -> None:
    """Pin the calling thread (a far end's, as it starts); nothing for an empty set."""
    if cpus:
        os.sched_setaffinity(0, cpus)


def pin_process(pid: int, cpus: set[int]) -> None:
    """Pin a process just started (a far end's); nothing for an empty set, or if it is
    gone already (its own exit is reported where it is waited for)."""
    if cpus:
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(pid, cpus)


@contextlib.contextmanager
def pinned(cpus: str) -> Iterator[Pinning]:
    """Pin this thread to the driver's CPUs of ``cpus`` (a ``--cpu`` value; "" pins
    nothing) for the block, and what :class:`Pinning` is asked to pin to the far end's;
    everything gets its CPUs back after."""
    driver, far = cpu_plan(cpus)
    if not driver:
        yield Pinning(None)
        return
    import psutil

    before = os.sched_getaffinity(0)
    known = {p.pid for p in psutil.Process().children(recursive=True)}
    pinning = Pinning(far, before, known=known)
    os.sched_setaffinity(0, driver)
    try:
        yield pinning
    finally:
        pinning.release()
        os.sched_setaffinity(0, before)
