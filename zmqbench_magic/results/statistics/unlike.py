"""What two results differ in besides what was compared: the Python, pyzmq and
libzmq that ran them, the host and its CPU, the host's conditions (governor, turbo,
cgroup quota, SMT), the driver, the count and the high-water marks. Each is part of
every ratio a comparison of them gives; a comparison lists them rather than leave them
unsaid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...params import KINDS
from ...params.point_record import Settings

if TYPE_CHECKING:
    from ..resultlike import ResultLike

# (key in a run's environment, words): the versions are those of the interpreters
# that ran the loops (with --python, each arm's).
_ENVIRONMENT = (
    ("python", "Python"),
    ("pyzmq", "pyzmq"),
    ("libzmq", "libzmq"),
    ("host", "host"),
    ("cpu", "CPU"),
    ("cpu_count", "CPU count"),
    ("driver", "driver"),
)
_RAN_THE_LOOPS = ("python", "pyzmq", "libzmq")
# The host's conditions that move a figure (``metadata["system"]``, ..host.system):
# compared where both runs recorded them (files from before it was kept have none).
_HOST_CONDITIONS = (
    ("governors", "CPU governor"),
    ("turbo", "turbo"),
    ("cpu_quota", "cgroup CPU quota"),
    ("smt", "SMT"),
)


def differences(baseline: ResultLike, candidate: ResultLike) -> list[str]:
    """``pyzmq 25.1.2 vs 26.4.0``, one phrase per thing the two differ in."""
    found = []
    for key, words in _ENVIRONMENT:
        before, after = _environment(baseline, key), _environment(candidate, key)
        if before != after:
            found.append(f"{words} {_spell(before)} vs {_spell(after)}")
    for key, words in _HOST_CONDITIONS:
        before, after = _condition(baseline, key), _condition(candidate, key)
        if before and after and before != after:
            found.append(f"{words} {_spell(before)} vs {_spell(after)}")
    for key, words in (("count", "count"), ("hwm", "high-water mark")):
        before, after = _settings(baseline, key), _settings(candidate, key)
        if before and after and before != after:
            found.append(f"{words} {_spell(before)} vs {_spell(after)}")
    return found


def _environment(result: ResultLike, key: str) -> list[str]:
    values: list[str] = []
    for meta in result.runs.values():
        arms = meta.get("environments") or {}
        if key in _RAN_THE_LOOPS and arms:
            values += [str(env.get(key)) for env in arms.values()]
        elif key in (old_files := KINDS[result.benchmark].old_files):
            values.append(str(meta.get(key, old_files[key])))  # files from before it had one
        elif meta.get(key) is not None:
            values.append(str(meta[key]))
    return list(dict.fromkeys(values))


def _condition(result: ResultLike, key: str) -> list[str]:
    values = [
        _said(meta["system"].get(key))
        for meta in result.runs.values()
        if isinstance(meta.get("system"), Mapping)
    ]
    return list(dict.fromkeys(values))


def _said(value: Any) -> str:
    """A host fact in words: ``powersave``, ``on``, ``none``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return "/".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def _settings(result: ResultLike, key: str) -> list[str]:
    if key == "hwm":
        marks = {str(r["queue_hwm"]) for r in result.rows if r.get("queue_hwm") is not None}
        return sorted(marks, key=int)
    values = [_count(meta.get("settings", {})) for meta in result.runs.values()]
    return list(dict.fromkeys(v for v in values if v))


def _count(settings: Settings) -> str:
    count = settings.get("count")
    if count is None:
        return ""
    return "calibrated" if count == 0 else f"{count:,}"


def _spell(values: list[str]) -> str:
    return " / ".join(values) if values else "unknown"


__all__ = ["differences"]
