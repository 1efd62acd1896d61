"""A user's cell as the task (``%%taskflood``): the names it reads, sent to the engines
once before timing, and the function that runs it on an engine and times it there."""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..params.taskflood import TEST

_SOURCE_NAME, _CODE_NAME = "__zmqbench_source__", "__zmqbench_code__"
CELL_FILENAME = "<%%taskflood cell>"
# IPython's own names in a kernel's namespace: never the user's data.
_SHELL_NAMES = re.compile(r"^(_+|_i+\d*|_\d+|_oh|_dh|_ih|In|Out|get_ipython|exit|quit)$")


def run_cell(
    source_name: str = _SOURCE_NAME, code_name: str = _CODE_NAME, filename: str = CELL_FILENAME
) -> float:
    """The cell-form task, on an engine: run the cell's code in the engine's namespace
    (where its names were pushed) and return its own run time.

    It runs with the engine's globals, not this module's: what it needs from here
    travels as default arguments."""
    import linecache
    import time as clock

    namespace = globals()
    code = namespace.get(code_name)
    if code is None:
        source = namespace[source_name]
        # So that a traceback from the engine shows the cell's own lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = namespace[code_name] = compile(source, filename, "exec")
    start = clock.perf_counter()
    exec(code, namespace)
    return clock.perf_counter() - start


# ipyparallel runs a function from an importable module with that module's globals;
# one "from __main__" runs with the engine's own namespace, where the names are.
run_cell.__module__ = "__main__"


@dataclass(frozen=True)
class UserTask:
    """A cell's code as the task, and what it needs from the user's namespace."""

    source: str
    values: Mapping[str, Any]
    modules: Mapping[str, str]  # name -> module to import under it

    @classmethod
    def of(cls, source: str, namespace: Mapping[str, Any], test_given: bool) -> UserTask:
        if test_given:
            msg = "test does not apply to a cell task: the cell is the task"
            raise ValueError(msg)
        compile(source, CELL_FILENAME, "exec")  # a SyntaxError is the user's to see
        read = {
            node.id
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
        needed = {n: namespace[n] for n in read if n in namespace and not _SHELL_NAMES.match(n)}
        modules = {n: v.__name__ for n, v in needed.items() if isinstance(v, types.ModuleType)}
        values = {n: v for n, v in needed.items() if n not in modules}
        return cls(source, values, modules)

    def send_to(self, client: Any, engine_ids: list[int]) -> None:
        """Push the names the task reads to the engines, once, before any timing."""
        engines = client[engine_ids]
        if self.modules:
            imports = "\n".join(f"import {m} as {n}" for n, m in self.modules.items())
            engines.execute(imports, block=True)
        try:
            engines.push({**self.values, _SOURCE_NAME: self.source, _CODE_NAME: None}, block=True)
        except Exception as exc:  # pickling can fail in many ways
            names = ", ".join(sorted(self.values)) or "none"
            msg = f"could not send the task's names ({names}) to the engines: {exc}"
            raise ValueError(msg) from exc


def cell_task(shell: Any, source: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The cell form's task: the cell's source, as IPython would run it, and the user's
    namespace it reads its names from; ``--test`` has no meaning there."""
    if TEST.name in given:
        msg = f"{TEST.option} does not apply to the cell form: the cell is the task"
        raise ValueError(msg)
    return {"task": shell.transform_cell(source), "namespace": shell.user_ns}


def engine_traceback(exc: BaseException) -> BaseException | None:
    """The engine's own error behind a failed cell task (ipyparallel's RemoteError,
    with the user's lines), to show once; None for any other failure."""
    # Imported here: the cell form should not pay for ipyparallel's errors module
    # before a task has failed.
    from ipyparallel.error import RemoteError

    remote = exc.__cause__
    return remote if isinstance(remote, RemoteError) else None
