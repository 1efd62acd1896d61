"""What produced the numbers: versions, host, CPU and date, stored with each result;
a new run's name; and the stamp a notebook or a report prints at its top."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import secrets
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import zmq

from ...params.interpreter import this_interpreter


class Environment(TypedDict):
    """What produced the numbers, as every result's metadata keeps it."""

    python: str
    pyzmq: str
    libzmq: str
    ipyparallel: str | None  # None: not installed
    zmqbench_magic: str | None
    host: str
    platform: str
    cpu: str  # the model's name
    cpu_count: int | None
    date: str  # ISO 8601, UTC
    zmq_copy_threshold_default: int


class StampFacts(Environment):
    """A stamp's: the environment, its date in words, the checkout's commit and the
    versions it names."""

    commit: str
    versions: dict[str, str]


def environment() -> Environment:
    """What produced the numbers: versions, host, CPU and date."""
    interpreter = this_interpreter()
    return {
        "python": interpreter["python"],
        "pyzmq": interpreter["pyzmq"],
        "libzmq": interpreter["libzmq"],
        "ipyparallel": _version_of("ipyparallel"),
        "zmqbench_magic": _version_of("zmqbench_magic"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "zmq_copy_threshold_default": zmq.COPY_THRESHOLD,
    }


def _version_of(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_identity(benchmark: str, label: str = "") -> dict[str, str]:
    """A new run's name and id: ``run`` is the label when given, else the id, which is
    the benchmark, the UTC time and 4 random hex digits (``thr-20261122-001503-1f2e``)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    run_id = f"{benchmark}-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    return {"run": label or run_id, "run_id": run_id, "label": label}


@dataclass(frozen=True)
class Stamp:
    """When, where and with what a notebook or a report ran: printed at its top."""

    facts: StampFacts

    def lines(self) -> list[str]:
        facts = self.facts
        commit = f", commit {facts['commit']}" if facts["commit"] else ""
        versions = " · ".join(f"{name} {version}" for name, version in facts["versions"].items())
        lines = [
            f"zmqbench_magic {facts['zmqbench_magic']}{commit} · run {facts['date']}",
            f"on {facts['host']}: {facts['cpu']}, {facts['cpu_count']} cores, {facts['platform']}",
            versions,
        ]
        # Within 100 columns, as every line the project prints. Imported here: the text
        # module brings pandas, which a run's environment() does not need.
        from ..words.text import fit

        return fit(lines)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def stamp(*also: str) -> Stamp:
    """When, where and with what this runs: the package's version and, from a checkout,
    its commit; the date, host, CPU, cores and platform; Python, pyzmq, libzmq,
    ipyparallel, and the distributions named in ``also`` (e.g. ``"dask", "ray"``).

    >>> print(stamp("dask"))  # doctest: +SKIP
    zmqbench_magic 0.1.0, commit 400400f · run 2026-11-25 08:30 UTC
    on build-7: Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, Linux-6.1.0-x86_64-with-glibc2.36
    Python 3.11.7 · pyzmq 27.3.0 · libzmq 4.3.5 · ipyparallel 9.2.0 · dask 2026.8.0
    """
    facts = environment()
    now = datetime.datetime.now(datetime.timezone.utc)
    versions = {"Python": facts["python"], "pyzmq": facts["pyzmq"], "libzmq": facts["libzmq"]}
    for name in ("ipyparallel", *also):
        versions[name] = _version_of(name) or "not installed"
    when = f"{now:%Y-%m-%d %H:%M} UTC"
    return Stamp({**facts, "date": when, "commit": checkout_commit(), "versions": versions})


def checkout_commit() -> str:
    """The commit the package's code is at when it runs from a git checkout (with
    "+ changes" when its files differ from it); "" elsewhere (an installed wheel)."""
    package = Path(__file__).resolve().parents[2]  # zmqbench_magic/, from results/host/
    try:
        top = _git(package.parent, "rev-parse", "--show-toplevel")
        if Path(top) != package.parent:
            return ""  # not the package's own checkout (an install inside someone else's)
        head = _git(package.parent, "rev-parse", "--short", "HEAD")
        changed = _git(package.parent, "status", "--porcelain", "--", package.name)
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{head} + changes" if changed else head


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()
