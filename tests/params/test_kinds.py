"""The kind and backend records (params/kinds.py, params/backends.py): each kind's
module does what a kind must, and no code outside the records branches on a kind's or
engine's name. (A fourth kind, whole in one module: tests/kinds/.)"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import zmqbench_magic
from zmqbench_magic import params
from zmqbench_magic.params.backends import BACKENDS
from zmqbench_magic.params.flood_tests import FLOOD_TESTS

PACKAGE = Path(zmqbench_magic.__file__).parent


@pytest.mark.parametrize("kind", params.KINDS.values(), ids=list(params.KINDS))
def test_every_kinds_module_does_what_a_kind_must_and_says_what_it_lacks(kind):
    module = kind.module
    assert module.KIND is kind and kind.params.benchmark == kind.name
    for required in (module.run, module.where, module.figures, module.chart):
        assert callable(required)
    for optional in (module.advice, module.cell, module.stop, module.panel):
        assert optional is None or callable(optional)
    # What it keeps between runs is said where, and only where, it can stop it.
    assert bool(kind.keeps) == (module.stop is not None)
    assert kind.headline is kind.params.metrics[0]


def test_a_declaration_registered_with_settings_of_another_kind_is_refused():
    from types import SimpleNamespace

    mislabelled = replace(params.KINDS["thr"], name="thr2")
    with pytest.raises(ValueError, match="'thr2' declares settings of 'thr'"):
        params.register(SimpleNamespace(KIND=mislabelled))
    assert "thr2" not in params.KINDS


@pytest.mark.parametrize("kind", params.KINDS.values(), ids=list(params.KINDS))
def test_a_kinds_columns_are_named_once_among_its_parameters_and_metrics(kind):
    from zmqbench_magic.params.columns import SAMPLE_COLUMNS

    names = [
        *(c.name for c in (*SAMPLE_COLUMNS, *kind.params.columns)),
        *(m.name for m in kind.metrics),
        *(p.name for p in kind.params.fields() if p.sweep),
    ]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("backend", BACKENDS.values(), ids=list(BACKENDS))
def test_every_backend_is_offered_by_backend_and_its_session_imports(backend):
    from zmqbench_magic.parallel.engines import SESSIONS
    from zmqbench_magic.parallel.engines.futures import FuturesSession
    from zmqbench_magic.params.taskflood import BACKEND

    assert backend.name in BACKEND.choices
    assert backend.workers(1) == f"1 {backend.worker}"
    assert backend.workers(2) == f"2 {backend.worker}s"
    assert backend.cluster(2).count("2") == 1 and backend.cluster(1).endswith(backend.worker)
    assert backend.heading and backend.title.endswith(backend.heading)
    if backend in SESSIONS:
        backend.need()  # the test extras install every engine
        session = SESSIONS[backend]()
        assert issubclass(session, FuturesSession) and session.backend == backend.name
    else:  # ipyparallel's own cluster, whose sessions have views and schemes
        assert backend.views


def test_a_missing_engine_package_names_its_extra(monkeypatch):
    from zmqbench_magic.params.backends import DASK

    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"pip install distributed \(or '\.\[dask\]'"):
        DASK.need()


# --- no name branched on outside the records ----------------------------------------

# Where a name may be written: the records, and the declarations they are made from;
# and the stamp's table of package versions (ipyparallel the package, not the engine).
_DECLARED_IN = {
    "params/kinds.py",
    "params/backends.py",
    "params/sockets.py",
    "params/taskflood.py",
    "results/host/environment.py",
}


def _names_branched_on(tree: ast.AST, names: set[str], test_column: bool = False) -> list[int]:
    """Lines comparing with a name, keying a dict by one, or picking rows by one
    (``.isin([...])``). Unless ``test_column``, a comparison with ``...["test"]`` is
    left alone: a flood's *test* named "flood" is a different thing from the kind."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if not test_column and any(_is_test_column(s) for s in sides):
                continue
            if any(_names_in(side, names) for side in sides):
                lines.append(node.lineno)
        elif _keyed_by(node, names) or _picked_by(node, names):
            lines.append(node.lineno)
    return sorted(lines)


def _keyed_by(node: ast.AST, names: set[str]) -> bool:
    """A dict with a name among its keys."""
    return isinstance(node, ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value in names for k in node.keys
    )


def _picked_by(node: ast.AST, names: set[str]) -> bool:
    """Rows picked by name: ``df["test"].isin(["flood", "echo"])``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "isin"
        and any(_names_in(arg, names) for arg in node.args)
    )


def _is_test_column(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == "test"
    )


def _names_in(side: ast.AST, names: set[str]) -> bool:
    items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
    return any(isinstance(i, ast.Constant) and i.value in names for i in items)


def _modules_outside(declared: set[str], elsewhere: tuple[str, ...] = ()) -> dict[str, ast.AST]:
    """Every module of the package but the ``declared`` ones and those under
    ``elsewhere``, parsed, by its path in the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative not in declared and not relative.startswith(elsewhere):
            found[relative] = ast.parse(path.read_text())
    return found


def test_no_module_outside_the_records_branches_on_a_kind_or_an_engine_by_name():
    names = set(params.KINDS) | set(BACKENDS)
    planted = (
        'if a == "lat":\n    pass\nb = {"dask": 1}\nc = d in ("thr", "x")\n'
        'e = df["test"] == "flood"\n'
    )
    assert _names_branched_on(ast.parse(planted), names) == [1, 3, 4]
    found = {}
    for relative, tree in _modules_outside(_DECLARED_IN).items():
        lines = _names_branched_on(tree, names)
        if lines:
            found[relative] = lines
    assert found == {}


# Where a flood test's name may be written: its record's module; and the sockets layer,
# whose "echo" is a socket's role (the far end's REP), not the flood's test.
_TESTS_DECLARED_IN = {"params/taskflood.py"}
_OTHER_ECHOES = ("sockets/", "params/sockets.py")


def test_no_module_outside_the_records_branches_on_a_flood_test_by_name():
    names = set(FLOOD_TESTS)
    planted = (
        'a = df["test"] == "echo"\n'
        'b = point["test"] in ("map", "push")\n'
        'c = {"echo": 1}\n'
        'if test.name == "map":\n    pass\n'
        'd = df[df["test"].isin(["flood", "echo"])]\n'
        'e = df["test"] == test.name\n'
        "f = {test.name: 1}\n"
    )
    assert _names_branched_on(ast.parse(planted), names, test_column=True) == [1, 2, 3, 4, 6]
    found = {}
    for relative, tree in _modules_outside(_TESTS_DECLARED_IN, _OTHER_ECHOES).items():
        lines = _names_branched_on(tree, names, test_column=True)
        if lines:
            found[relative] = lines
    assert found == {}


# Where a pattern's name may be written: its record's module; and the module that
# declares the far ends' roles, two of which ("proxy", "joiner") are named after the
# pattern they serve. A comparison with a ``role`` is a role's, wherever it is.
_PATTERNS_DECLARED_IN = {"params/patterns.py", "sockets/far_ends/member.py"}


def _pattern_names_branched_on(tree: ast.AST, names: set[str]) -> list[int]:
    """As :func:`_names_branched_on`, but a comparison with a role is left alone, and a
    literal collection of two or more names is a table of them too (a set of the
    patterns that may do something is a branch written ahead)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_role(side) for side in sides):
                continue
            if any(_names_in(side, names) for side in sides):
                lines.add(node.lineno)
        elif _keyed_by(node, names) or _picked_by(node, names):
            lines.add(node.lineno)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            listed = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if len(listed & names) >= 2:
                lines.add(node.lineno)
    return sorted(lines)


def _is_role(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "role") or (
        isinstance(node, ast.Attribute) and node.attr == "role"
    )


def test_no_module_outside_the_records_branches_on_a_pattern_by_name():
    names = set(params.PATTERN.choices)
    planted = (
        'if point["pattern"] == "fanin":\n    pass\n'
        'a = {"pairs": None}\n'
        'SPREAD = {"pipeline", "pubsub"}\n'
        'b = m.role in ("sink", "joiner")\n'
        "c = pattern.name == PIPELINE.name\n"
        'd = df["pattern"].isin(["proxy"])\n'
    )
    assert _pattern_names_branched_on(ast.parse(planted), names) == [1, 3, 4, 7]
    found = {}
    for relative, tree in _modules_outside(_PATTERNS_DECLARED_IN).items():
        lines = _pattern_names_branched_on(tree, names)
        if lines:
            found[relative] = lines
    assert found == {}


# --- no call up into a kind's module and back ----------------------------------------

_KIND_FUNCTIONS = {"run", "where", "figures", "chart", "panel", "advice", "stop", "cell"}


def _asks_a_kind(tree: ast.AST) -> bool:
    """Whether a module calls a kind's module: ``KINDS[name].module.where`` and alike."""
    return any(
        isinstance(node, ast.Attribute)
        and node.attr in _KIND_FUNCTIONS
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "module"
        for node in ast.walk(tree)
    )


def _imported_by_the_kinds() -> set[str]:
    """Every module of the package a kind's module imports (inside its functions too),
    as a path in the package: ``results/words/text.py``."""
    found = set()
    for path in (PACKAGE / "kinds").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
                found.add(node.module.replace(".", "/") + ".py")
    return found


def test_no_module_a_kind_calls_into_calls_a_kind():
    """A kind's module answers from the modules below it; the one that asked it (the
    summary's lines, the default chart, the adapters) is never one of them, so a call
    goes up into a kind and down, never back into the module it came from."""
    planted = "def f(kind):\n    return KINDS[kind].module.where\n"
    assert _asks_a_kind(ast.parse(planted)) and not _asks_a_kind(ast.parse("a.module"))
    asking = {relative for relative, tree in _modules_outside(set()).items() if _asks_a_kind(tree)}
    assert {"results/words/summary_lines.py", "charts/default.py"} <= asking
    assert asking & _imported_by_the_kinds() == set()
