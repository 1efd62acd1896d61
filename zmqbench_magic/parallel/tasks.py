"""The tasks the tests run, in a module that imports nothing: a process-pool worker
unpickles them by reference without loading ipyparallel."""

from __future__ import annotations

from typing import Any


def echo(x: Any) -> Any:
    """The task of the flood and echo tests: hand the argument back."""
    return x


def timed_call(task: Any, *args: Any) -> tuple[Any, float]:
    """``task(*args)`` and how long it ran, timed where it ran: a Ray task's run stage
    (Ray's own timeline is gathered asynchronously, not by a sample's end)."""
    import time

    start = time.perf_counter()
    value = task(*args)
    return value, time.perf_counter() - start


def sleep_each(durations: list[float]) -> None:
    """A process pool's map chunk, as ``ProcessPoolExecutor.map`` sends it: sleep for
    each duration in turn."""
    import time

    for duration in durations:
        time.sleep(duration)


def pid_after(seconds: float) -> tuple[int, str]:
    """A worker's process id and host, after a sleep that keeps it busy while the
    others start."""
    import os
    import socket
    import time

    time.sleep(seconds)
    return os.getpid(), socket.gethostname()


# The cell form on a futures backend (a process pool, Dask, Ray): the cell's code and
# the names it reads are installed once per worker process, under a token, then each
# task only names the token.
_CELLS: dict[str, tuple[Any, dict[str, Any]]] = {}


def install_cell(
    token: str, source: str, values: dict[str, Any], modules: dict[str, str], filename: str
) -> None:
    """Compile the cell and build its namespace in this worker, once."""
    import importlib
    import linecache

    if token in _CELLS:
        return
    namespace: dict[str, Any] = {"__name__": "__main__"}
    namespace.update({name: importlib.import_module(module) for name, module in modules.items()})
    namespace.update(values)
    # So that a traceback from the worker shows the cell's own lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _CELLS[token] = (compile(source, filename, "exec"), namespace)


def run_installed_cell(token: str) -> float:
    """Run the cell installed under ``token``; return its own run time."""
    import time

    code, namespace = _CELLS[token]
    start = time.perf_counter()
    exec(code, namespace)
    return time.perf_counter() - start


def run_cell_boxed(token: str, boxed: list[Any]) -> float:
    """Ray's cell task: ``boxed`` holds a reference to the cell (a reference inside a
    list is not fetched by Ray on each call), fetched once per worker process."""
    if token not in _CELLS:
        import ray

        install_cell(token, *ray.get(boxed[0]))
    return run_installed_cell(token)
