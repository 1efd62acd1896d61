"""Resident memory of a sample's processes, by role: each role's peak while the sample
ran, and how far it rose above where it stood as the sample began, per task.

The peak is the kernel's own: Linux keeps each process's high-water mark of resident
memory (``VmHWM`` in ``/proc/PID/status``), and writing ``5`` to
``/proc/PID/clear_refs`` sets it back to the process's resident memory now. So each
sample resets the mark of every process it watches as it starts and reads it as it
ends: the true peak, however briefly it was held, with no thread polling beside the
measurement (a poller would take the GIL from the client it measures, and miss a peak
between two looks).

A role is one or more processes, with their descendants as the sample starts where
asked (a controller's schedulers, an engine under its nanny): its peak is the sum of its
processes' peaks, at least what they held together at any one moment (each may peak at
another time), and equal to it for a role of one process. A role whose processes cannot
be watched from here (another host's, someone else's, a platform without
``clear_refs``) gets NaN, never a figure of another process.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..params.columns import Row

_KB = 1024


def _status_kb(pid: int, key: str) -> int | None:
    """A ``kB`` figure of ``/proc/PID/status`` (``VmHWM``, ``VmRSS``), None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _reset_peak(pid: int) -> bool:
    """Set the process's high-water mark back to its resident memory now."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


def _children_of() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/*/stat`` (no psutil: a driver process may
    run under another environment's interpreter, which has only pyzmq and numpy)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                # The command name may hold spaces: the fields start after its ')'.
                parent = int(stat.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    return children


def _descendants(pid: int, children: dict[int, list[int]], claimed: set[int]) -> list[int]:
    """``pid``'s descendants, but none that another role claims, nor any below one."""
    found: list[int] = []
    for child in children.get(pid, []):
        if child not in claimed:
            found += [child, *_descendants(child, children, claimed)]
    return found


@dataclass
class MemoryMeter:
    """``start()`` then ``stop(tasks)`` -> each role's ``{role}_peak_mb`` and
    ``{role}_kb_per_task`` for a sample of ``tasks`` tasks. ``roles`` gives each role's
    processes (asked as the sample starts); those of a role in ``trees`` count with
    their descendants, up to any process another role names (Ray's raylet is the parent
    of its workers). A role without any process is NaN."""

    roles: Mapping[str, Callable[[], Iterable[int]]]
    trees: frozenset[str] = frozenset()
    _watched: dict[str, dict[int, int]] = field(default_factory=dict)  # role: {pid: kB before}

    def _processes(self) -> dict[str, list[int]]:
        named = {role: sorted(set(pids())) for role, pids in self.roles.items()}
        if not self.trees:
            return named
        claimed = {pid for pids in named.values() for pid in pids}
        children = _children_of() if os.path.isdir("/proc") else {}
        return {
            role: sorted(
                {*pids, *(d for pid in pids for d in _descendants(pid, children, claimed))}
            )
            if role in self.trees
            else pids
            for role, pids in named.items()
        }

    def start(self) -> None:
        self._watched = {}
        for role, pids in self._processes().items():
            before: dict[int, int] = {}
            for pid in pids:
                # Reset, then read: the mark then never ends below what was read.
                if not _reset_peak(pid):
                    if _status_kb(pid, "VmRSS") is None:
                        continue  # gone already
                    before = {}  # one unknown peak makes the role's sum unknown
                    break
                resident = _status_kb(pid, "VmRSS")
                if resident is not None:
                    before[pid] = resident
            self._watched[role] = before

    def stop(self, tasks: int) -> dict[str, float]:
        row: dict[str, float] = {}
        for role in self.roles:
            peak_kb, rise_kb = math.nan, math.nan
            before = self._watched.get(role, {})
            peaks = [(_status_kb(pid, "VmHWM"), kb) for pid, kb in before.items()]
            known = [(peak, kb) for peak, kb in peaks if peak is not None]
            # A process that exited during the sample took its peak with it.
            if before and len(known) == len(peaks):
                peak_kb = float(sum(peak for peak, _ in known))
                rise_kb = float(sum(peak - kb for peak, kb in known))
            row[f"{role}_peak_mb"] = peak_kb * _KB / 1e6
            row[f"{role}_kb_per_task"] = rise_kb * _KB / 1e3 / tasks
        return row

    def around(self, sample: Callable[[], Row], tasks: int) -> Row:
        """``sample()``'s row, with this meter's figures over it."""
        self.start()
        row = sample()
        return {**row, **self.stop(tasks)}


def this_process() -> list[int]:
    return [os.getpid()]


def flood_meter(
    controller: Callable[[], Iterable[int]], engines: Callable[[], Iterable[int]]
) -> MemoryMeter:
    """A flood's roles: the client (this process alone: what it started are its children
    too), the controller and the engines, each of these two with its descendants."""
    return MemoryMeter(
        {"client": this_process, "controller": controller, "engines": engines},
        trees=frozenset({"controller", "engines"}),
    )


__all__ = ["MemoryMeter", "flood_meter", "this_process"]
