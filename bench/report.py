"""Where a bench's tables go: to the terminal, and, for a full run, to
``docs/benchmarks/<name>.md`` with what made them (the command, the date, the commit
and the machine), so that every benchmark table in the documentation is one a bench
script wrote in one run, never one typed by hand.

    if __name__ == "__main__":
        with report("flood"):
            status = main()  # prints the tables
        sys.exit(status)

A ``--quick`` run checks the script and writes nothing, unless ``ZMQBENCH_REPORT_DIR``
names a folder (the bench tests do). A run that fails writes nothing.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS_DIR = ROOT / "docs" / "benchmarks"


def machine() -> str:
    """The machine in one line: host, CPU, cores this process may use, Python, pyzmq."""
    import zmq

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        names = [line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return (
        f"{platform.node()}: {cpu}, {len(os.sched_getaffinity(0))} cores, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}"
    )


def commit() -> str:
    """The commit measured, and whether the project's files differed from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--", "zmqbench_magic", "bench")
    return head + (" with uncommitted changes" if changed else "")


def spelled(args: list[str]) -> list[str]:
    """A command's arguments as a page shows them: no folder of the machine that ran it.
    A path in the project is given from the project's root; one outside it by its name
    alone, or by as many of its last parts as tell it from the command's other paths
    (two interpreters: ``pyzmq==25.1.2/bin/python``, ``pyzmq==26.4.0/bin/python``)."""
    values = [arg.partition("=")[2] if arg.startswith("-") else arg for arg in args]
    outside = {Path(v) for v in values if Path(v).is_absolute() and ROOT not in Path(v).parents}
    shown = []
    for arg, value in zip(args, values, strict=True):
        path = Path(value)
        if not value or not path.is_absolute():
            shown.append(arg)
            continue
        short = _tail(path, outside - {path}) if path in outside else path.relative_to(ROOT)
        shown.append(arg[: len(arg) - len(value)] + str(short))
    return shown


def _tail(path: Path, others: set[Path]) -> Path:
    """The fewest last parts of ``path`` that no path of ``others`` ends with."""
    parts = path.parts[1:]  # without the root
    for n in range(1, len(parts)):
        if all(other.parts[-n:] != parts[-n:] for other in others):
            return Path(*parts[-n:])
    return Path(*parts)


@contextlib.contextmanager
def report(name: str, quick: bool = False) -> Iterator[None]:
    """Print as usual; on a clean finish, also write what was printed, with its
    provenance, to the documentation's benchmark folder."""
    quick = quick or "--quick" in sys.argv[1:]
    folder = os.environ.get("ZMQBENCH_REPORT_DIR") or (None if quick else str(DOCS_DIR))
    started = datetime.datetime.now(datetime.timezone.utc)
    captured = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, captured)):
        yield
    if folder is None:
        return
    command = "python " + shlex.join(["bench/" + Path(sys.argv[0]).name, *spelled(sys.argv[1:])])
    seconds = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    took = f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.0f} min"
    text = (
        f"Written by `{command}` in one run of {took}, started "
        f"{started:%Y-%m-%d %H:%M} UTC, at commit {commit()}, on {machine()}.\n\n"
        f"```text\n{captured.getvalue().rstrip()}\n```\n"
    )
    path = Path(folder) / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"(written to {path})", file=sys.stderr)


class _Tee(io.TextIOBase):
    """A stream that writes to the terminal and keeps a copy."""

    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()
