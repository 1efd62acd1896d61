"""What produced the numbers: versions, host, CPU and date, stored with each result;
and where this environment keeps what the project measures or builds for it."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import secrets
import socket
from pathlib import Path
from typing import Any

import zmq


def cache_dir() -> Path:
    """The project's cache folder: ``$XDG_CACHE_HOME/zmqbench_magic`` (default
    ``~/.cache/zmqbench_magic``)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "zmqbench_magic"


def environment() -> dict[str, Any]:
    """What produced the numbers: versions, host, CPU and date."""
    return {
        "python": platform.python_version(),
        "pyzmq": zmq.pyzmq_version(),
        "libzmq": zmq.zmq_version(),
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
