"""What this host does to a figure's stability, read before anyone trusts one: the CPU
frequency governor, turbo boost, isolated and tickless CPUs, a cgroup's CPU quota and
memory limit, transparent huge pages, SMT, load, frequency, cores and memory.

:func:`system_facts` reads them (from ``/proc`` and ``/sys``; ``None`` where this host
does not expose one, as in most VMs) and every result keeps them in its metadata
(``metadata["system"]``); :func:`system_checks` says of each whether it helps or hurts
a stable figure and what to do about it, as pyperf's ``system show`` does;
``zmqbench system`` prints them. Linux only: elsewhere every fact is unknown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

# A check's verdict on a stable figure.
OK, HURTS, NOTE, UNKNOWN = "ok", "hurts", "note", "unknown"
_UNLIMITED = 2**60  # cgroup v1 writes "no limit" as a number near 2**63


class SystemFacts(TypedDict):
    """What :func:`system_facts` read; ``None`` (or empty) where the host does not say."""

    cpus: int  # online
    governors: list[str]  # the frequency governors in use, each once
    governed_cpus: int  # CPUs with a governor
    turbo: bool | None
    isolated: str  # isolcpus, as the kernel lists them ("2-3")
    nohz_full: str  # tickless CPUs, likewise
    smt: str  # "1": hyperthreads share cores
    cpu_quota: float | None  # the cgroup's CPU quota, in CPUs
    memory_limit: int | None  # the cgroup's memory limit, bytes
    thp: str  # transparent huge pages: always, madvise or never
    load: tuple[float, float, float] | None  # runnable over 1, 5 and 15 minutes
    mhz: list[float]  # each CPU's current frequency
    memory_total: int | None  # bytes
    memory_available: int | None


def system_facts(root: str | os.PathLike[str] = "/") -> SystemFacts:
    """The facts, from the files under ``root`` (``/``; a test gives a folder laid out
    like one)."""
    base = Path(root)
    cpus = _cpu_list(_read(base / "sys/devices/system/cpu/online")) or list(
        range(os.cpu_count() or 1)
    )
    governors = {
        cpu: value
        for cpu in cpus
        if (value := _read(base / f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"))
    }
    meminfo = _meminfo(base / "proc/meminfo")
    quota, limit = _cgroup_limits(base)
    return {
        "cpus": len(cpus),
        "governors": sorted(set(governors.values())),
        "governed_cpus": len(governors),
        "turbo": _turbo(base),
        "isolated": _read(base / "sys/devices/system/cpu/isolated"),
        "nohz_full": _read(base / "sys/devices/system/cpu/nohz_full"),
        "smt": _read(base / "sys/devices/system/cpu/smt/active"),
        "cpu_quota": quota,
        "memory_limit": limit,
        "thp": _bracketed(_read(base / "sys/kernel/mm/transparent_hugepage/enabled")),
        "load": _load(base / "proc/loadavg"),
        "mhz": _frequencies(base / "proc/cpuinfo"),
        "memory_total": meminfo.get("MemTotal"),
        "memory_available": meminfo.get("MemAvailable"),
    }


@dataclass(frozen=True)
class Check:
    """One fact about the host, and what it means for a stable figure."""

    name: str
    value: str
    verdict: str  # OK, HURTS, NOTE or UNKNOWN
    advice: str = ""

    def line(self, width: int) -> str:
        head = f"{self.name.ljust(width)}  {self.verdict:<7}  {self.value}"
        return f"{head}: {self.advice}" if self.advice else head


def system_checks(facts: SystemFacts) -> list[Check]:
    """Each fact's verdict, in the order a person would fix them."""
    return [
        _governor(facts),
        _turbo_check(facts),
        _isolated(facts),
        _quota(facts),
        _memory(facts),
        _thp(facts),
        _smt(facts),
        _load_check(facts),
        _frequency(facts),
    ]


def check_lines(checks: list[Check]) -> list[str]:
    """One line per check (name, verdict, value, what to do), then how many hurt."""
    width = max(len(check.name) for check in checks)
    hurting = [check.name for check in checks if check.verdict == HURTS]
    summary = (
        f"{len(hurting)} of {len(checks)} checks hurt a stable figure: {', '.join(hurting)}"
        if hurting
        else f"none of {len(checks)} checks hurts a stable figure"
    )
    # Within 100 columns, as every line the project prints.
    from ..words.text import fit

    return fit([check.line(width) for check in checks] + [summary])


def _governor(facts: SystemFacts) -> Check:
    governors, governed = facts["governors"], facts["governed_cpus"]
    if not governors:
        return Check("governor", "not exposed", UNKNOWN, "a VM's or firmware's: the host decides")
    value = f"{'/'.join(governors)} on {governed} of {facts['cpus']} CPUs"
    if governors == ["performance"]:
        return Check("governor", value, OK)
    return Check(
        "governor",
        value,
        HURTS,
        "the clock follows the load, so a figure depends on what ran just before: "
        "cpupower frequency-set -g performance",
    )


def _turbo_check(facts: SystemFacts) -> Check:
    turbo = facts["turbo"]
    if turbo is None:
        return Check("turbo", "not exposed", UNKNOWN)
    if not turbo:
        return Check("turbo", "off", OK)
    return Check(
        "turbo",
        "on",
        HURTS,
        "the clock rises and falls with temperature and the other cores' load: "
        "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo "
        "(or 0 > /sys/devices/system/cpu/cpufreq/boost)",
    )


def _isolated(facts: SystemFacts) -> Check:
    isolated, tickless = facts["isolated"], facts["nohz_full"]
    if isolated:
        ticks = f", tickless {tickless}" if tickless else ""
        return Check("isolated CPUs", f"{isolated}{ticks}", OK, f"pin with --cpu {isolated}")
    return Check(
        "isolated CPUs",
        "none",
        NOTE,
        "every CPU is shared with the system's own work; isolcpus= and nohz_full= at "
        "boot set some apart, --cpu pins a run to chosen ones",
    )


def _quota(facts: SystemFacts) -> Check:
    quota = facts["cpu_quota"]
    if quota is None:
        return Check("cgroup CPU quota", "none", OK)
    verdict = HURTS if quota < facts["cpus"] else NOTE
    return Check(
        "cgroup CPU quota",
        f"{quota:g} CPUs of {facts['cpus']}",
        verdict,
        "the group is paused when it spends its quota in a period: samples include "
        "the pauses; run outside the quota or with fewer processes than it allows",
    )


def _memory(facts: SystemFacts) -> Check:
    limit, total = facts["memory_limit"], facts["memory_total"]
    available = facts["memory_available"]
    value = f"{_gib(available)} available of {_gib(total)}" if total else "unknown"
    if limit is not None:
        return Check(
            "memory",
            f"{value}, cgroup limit {_gib(limit)}",
            NOTE,
            "a flood of many tasks holds tens of kB per task in flight in the kernel",
        )
    return Check("memory", value, OK if total else UNKNOWN)


def _thp(facts: SystemFacts) -> Check:
    thp = facts["thp"]
    if not thp:
        return Check("transparent huge pages", "not exposed", UNKNOWN)
    if thp == "always":
        return Check(
            "transparent huge pages",
            thp,
            NOTE,
            "compaction can pause a process now and then: a latency tail to read with "
            "care; madvise leaves it to programs that ask",
        )
    return Check("transparent huge pages", thp, OK)


def _smt(facts: SystemFacts) -> Check:
    smt = facts["smt"]
    if smt == "1":
        return Check(
            "SMT",
            "on",
            NOTE,
            "two threads of one core share it: pin the driver and the far end to "
            "different cores (--cpu)",
        )
    return Check("SMT", "off" if smt == "0" else "not exposed", OK if smt == "0" else UNKNOWN)


def _load_check(facts: SystemFacts) -> Check:
    load = facts["load"]
    if load is None:
        return Check("load", "unknown", UNKNOWN)
    value = f"{load[0]:.2f} runnable over the last minute, on {facts['cpus']} CPUs"
    if load[0] > 0.5 * facts["cpus"]:
        return Check("load", value, HURTS, "other work shares the CPUs: run when it is done")
    return Check("load", value, OK)


def _frequency(facts: SystemFacts) -> Check:
    mhz = facts["mhz"]
    if not mhz:
        return Check("frequency", "unknown", UNKNOWN)
    low, high = min(mhz), max(mhz)
    value = f"{low:,.0f} MHz" if high - low < 1 else f"{low:,.0f} to {high:,.0f} MHz"
    return Check("frequency", value + " now", NOTE if high - low >= 1 else OK)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _cpu_list(text: str) -> list[int]:
    """``0-3,8`` as [0, 1, 2, 3, 8]."""
    cpus: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        cpus += range(int(first), int(last or first) + 1)
    return cpus


def _bracketed(text: str) -> str:
    """The selected choice of a sysfs list: ``always [madvise] never`` is madvise."""
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else text


def _turbo(base: Path) -> bool | None:
    no_turbo = _read(base / "sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo:
        return no_turbo == "0"
    boost = _read(base / "sys/devices/system/cpu/cpufreq/boost")
    return boost == "1" if boost else None


def _cgroup_limits(base: Path) -> tuple[float | None, int | None]:
    """This process's cgroup CPU quota (in CPUs) and memory limit (bytes), v2 or v1."""
    quota: float | None = None
    limit: int | None = None
    for line in _read(base / "proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        where = path.lstrip("/")
        if controllers == "":  # cgroup v2
            v2 = base / "sys/fs/cgroup" / where
            cpu_max = _read(v2 / "cpu.max").split()
            if len(cpu_max) == 2 and cpu_max[0] != "max":
                quota = int(cpu_max[0]) / int(cpu_max[1])
            memory_max = _read(v2 / "memory.max")
            if memory_max.isdigit():
                limit = int(memory_max)
        elif "cpu" in controllers.split(","):
            v1 = base / "sys/fs/cgroup/cpu" / where
            period, cfs = _read(v1 / "cpu.cfs_period_us"), _read(v1 / "cpu.cfs_quota_us")
            if period.isdigit() and cfs.lstrip("-").isdigit() and int(cfs) > 0:
                quota = int(cfs) / int(period)
        elif controllers == "memory":
            found = _read(base / "sys/fs/cgroup/memory" / where / "memory.limit_in_bytes")
            if found.isdigit() and int(found) < _UNLIMITED:
                limit = int(found)
    return quota, limit


def _load(path: Path) -> tuple[float, float, float] | None:
    fields = _read(path).split()
    return (float(fields[0]), float(fields[1]), float(fields[2])) if len(fields) >= 3 else None


def _frequencies(path: Path) -> list[float]:
    return [
        float(line.split(":", 1)[1])
        for line in _read(path).splitlines()
        if line.startswith("cpu MHz")
    ]


def _meminfo(path: Path) -> dict[str, int]:
    found = {}
    for line in _read(path).splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            found[name] = int(fields[0]) * 1024  # kB
    return found


def _gib(value: int | None) -> str:
    return f"{value / 2**30:.1f} GiB" if value is not None else "unknown"
