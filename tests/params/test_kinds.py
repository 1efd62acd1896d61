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
    from zmqbench_magic.params.taskflood import BACKEND

    assert backend.name in BACKEND.choices
    assert backend.workers(1) == f"1 {backend.worker}"
    assert backend.workers(2) == f"2 {backend.worker}s"
    assert backend.cluster(2).count("2") == 1 and backend.cluster(1).endswith(backend.worker)
    if backend.session:
        backend.need()  # the test extras install every engine
        assert callable(backend.load_session())


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
    "results/environment.py",
}


def _names_branched_on(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines comparing with a name, or keying a dict by one (a flood's *test* named
    "flood" is a different thing: a comparison with ``...["test"]`` is left alone)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(
                isinstance(s, ast.Subscript)
                and isinstance(s.slice, ast.Constant)
                and s.slice.value == "test"
                for s in sides
            ):
                continue
            for side in sides:
                items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                if any(isinstance(i, ast.Constant) and i.value in names for i in items):
                    lines.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(
            isinstance(k, ast.Constant) and k.value in names for k in node.keys
        ):
            lines.append(node.lineno)
    return lines


def test_no_module_outside_the_records_branches_on_a_kind_or_an_engine_by_name():
    names = set(params.KINDS) | set(BACKENDS)
    planted = (
        'if a == "lat":\n    pass\nb = {"dask": 1}\nc = d in ("thr", "x")\n'
        'e = df["test"] == "flood"\n'
    )
    assert _names_branched_on(ast.parse(planted), names) == [1, 3, 4]
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in _DECLARED_IN:
            continue
        lines = _names_branched_on(ast.parse(path.read_text()), names)
        if lines:
            found[relative] = lines
    assert found == {}
