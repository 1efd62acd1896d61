"""``--cpu`` values: the CPUs a run's processes may use, as taskset writes them.

``0``, ``2-3``, ``0,2-3``: every process of the run on these. ``0/1``: the driver's
side (the kernel's loop or the driver processes; a flood's client) on the CPUs before
the slash, the far end's (the far end's thread or process; a flood's controller and
engines) on those after it, as libzmq's perf tools are run under taskset on two cores.
Each one of the CPUs this process may use (its affinity, which a container or a
cgroup's cpuset may narrow). Empty: not pinned. The value is kept normalised (``3,2``
reads ``2-3``), so a result's settings say where its run was pinned.
"""

from __future__ import annotations

import os

ALLOWED = (
    "a list of this machine's usable CPUs as taskset -c takes it (0, 2-3, 0,2-3), or "
    "two, the driver's and the far end's (0/1)"
)


def usable_cpus() -> set[int]:
    """The CPUs this process may run on."""
    return set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set()


def cpu_set(text: str) -> set[int]:
    """``0,2-3`` as {0, 2, 3}; empty for ""."""
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            msg = f"{part!r} is not a CPU number or a range of them"
            raise ValueError(msg)
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            msg = f"the range {part!r} runs backwards"
            raise ValueError(msg)
        cpus.update(range(low, high + 1))
    return cpus


def parse_cpus(text: str) -> str:
    """Check a ``--cpu`` value against the usable CPUs; the value, normalised."""
    sides = str(text).split("/")
    if len(sides) > 2:
        msg = f"{text!r} has more than two sides"
        raise ValueError(msg)
    sets = [cpu_set(side) for side in sides]
    if not any(sets):
        return ""
    if not all(sets):
        msg = f"{text!r} leaves a side without CPUs"
        raise ValueError(msg)
    if not hasattr(os, "sched_setaffinity"):
        msg = "this system cannot pin processes to CPUs"
        raise ValueError(msg)
    usable = usable_cpus()
    unusable = sorted(set().union(*sets) - usable)
    if unusable:
        msg = f"CPU {spell(set(unusable))} is not one this process may use ({spell(usable)})"
        raise ValueError(msg)
    return "/".join(spell(cpus) for cpus in sets)


def cpu_plan(text: str) -> tuple[set[int], set[int]]:
    """A checked ``--cpu`` value as (the driver's CPUs, the far end's CPUs): the same
    set twice without a slash; two empty sets for ""."""
    driver, _, far = str(text).partition("/")
    return cpu_set(driver), cpu_set(far or driver)


def spell(cpus: set[int]) -> str:
    """{0, 2, 3} as ``0,2-3``."""
    ranges: list[list[int]] = []
    for cpu in sorted(cpus):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)
