"""Engines the project starts that are not ipyparallel's (Dask, Ray): their processes
carry a tag in their environment, and a reaper beside them ends every tagged process
if the kernel is killed (SIGKILL skips every cleanup), as it does for a cluster."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator

from ...method.spawn import child_env, module_command
from ..clusters.reaper import TAG_VARIABLE, end_tagged, wait_or_kill


@contextlib.contextmanager
def tagged(tag: str, **settings: str) -> Iterator[None]:
    """Processes started meanwhile (and every process they start) carry ``tag``, and
    ``settings`` in their environment; the kernel's own is as it was after."""
    from multiprocessing import resource_tracker

    # multiprocessing's resource tracker is the kernel's, for its life: started untagged
    # now, rather than by the engine's first spawn (and then killed with the engine).
    resource_tracker.ensure_running()
    changes = {TAG_VARIABLE: tag, **settings}
    before = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def start_reaper(tag: str, remove: str | None = None) -> subprocess.Popen[bytes]:
    command = module_command(
        "zmqbench_magic.parallel.clusters.reaper",
        "--parent",
        str(os.getpid()),
        "--tag",
        tag,
        *(["--remove", remove] if remove else []),
    )
    env = {k: v for k, v in child_env().items() if k != TAG_VARIABLE}  # never reap itself
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )


def end(tag: str, reaper: subprocess.Popen[bytes] | None) -> None:
    """After the engine's own shutdown: kill what of it still runs, then its reaper."""
    end_tagged(tag)
    if reaper is not None:
        reaper.send_signal(signal.SIGTERM)
        wait_or_kill(reaper)
