"""Behaviour is reached through code that grep and go-to-definition follow: no
``"module:name"`` string names a function of the package, and ``importlib`` imports
by name only where a name cannot be written out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import zmqbench_magic

PACKAGE = Path(zmqbench_magic.__file__).parent
# "zmqbench_magic.sockets.kernel.measure:run_throughput", as entry points write a reference.
_REFERENCE = re.compile(r"^zmqbench_magic(\.\w+)+:\w+$")
# Where importing by name is the job: the package's and results' lazy top-level names
# (PEP 562), and the modules a user's cell names, imported in a task engine's worker.
_IMPORTS_BY_NAME = {"__init__.py", "results/__init__.py", "parallel/tasks.py"}


def _references(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _REFERENCE.match(node.value)
    ]


def _imports_by_name(tree: ast.AST) -> list[int]:
    """Calls of ``importlib.import_module`` or ``__import__`` (``find_spec``, which asks
    whether an optional package is there, imports nothing)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
        )
    ]


def test_the_detectors_find_what_they_look_for():
    planted = ast.parse(
        'run = "zmqbench_magic.sockets.kernel.measure:run_throughput"\n'
        "import importlib\nf = importlib.import_module(name)\ng = __import__(x)\n"
        'h = "not: a reference"\n'
    )
    assert _references(planted) == [1]
    assert _imports_by_name(planted) == [3, 4]


def test_no_module_names_a_function_by_a_string_or_imports_one_by_name():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text())
        lines = _references(tree)
        if relative not in _IMPORTS_BY_NAME:
            lines += _imports_by_name(tree)
        if lines:
            found[relative] = lines
    assert found == {}
