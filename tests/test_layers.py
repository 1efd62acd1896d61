"""The layers of the package hold: each imports only what its docstring allows, the
cores never import a front end, and the helper processes start on pyzmq alone."""

from __future__ import annotations

import ast
import functools
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import zmqbench_magic

PACKAGE = Path(zmqbench_magic.__file__).parent
# Layer -> the layers of this package it may import (the top level: the adapters).
ALLOWED = {
    "params": {"params"},
    "results": {"params", "results"},
    "method": {"params", "results", "method"},
    "sockets": {"params", "results", "method", "sockets"},
    "parallel": {"params", "results", "method", "parallel"},
    "kernel_messages": {"params", "results", "method", "kernel_messages"},
    "charts": {"params", "results", "charts"},
    "ui": {"params", "results", "method", "sockets", "parallel", "kernel_messages", "charts", "ui"},
    "panels": {
        *("params", "results", "method", "sockets", "parallel", "kernel_messages", "charts"),
        *("ui", "panels"),
    },
    # Each kind's module: what every layer does for it, imported inside its functions.
    "kinds": {
        *("params", "results", "method", "sockets", "parallel", "kernel_messages", "charts"),
        *("ui", "panels", "kinds", "widgets"),
    },
}
FRONT_ENDS = ("IPython", "ipywidgets", "altair", "vl_convert")
# The ipyparallel core may import ipyparallel, which brings IPython's core with it.
FORBIDDEN = {
    "params": (*FRONT_ENDS, "ipyparallel", "pandas"),
    "results": (*FRONT_ENDS, "ipyparallel"),
    "method": (*FRONT_ENDS, "ipyparallel"),
    "sockets": (*FRONT_ENDS, "ipyparallel"),
    "parallel": ("ipywidgets", "altair", "vl_convert"),
    "kernel_messages": (*FRONT_ENDS, "ipyparallel"),
    "charts": ("IPython", "ipywidgets", "ipyparallel"),
    # What the CLI and the magics are built from: the panels alone bring ipywidgets.
    "ui": ("ipywidgets", "altair", "vl_convert", "ipyparallel"),
}


def _modules() -> list[tuple[str, Path]]:
    found = []
    for info in pkgutil.walk_packages([str(PACKAGE)], "zmqbench_magic."):
        relative = info.name.split(".")[1:]
        path = PACKAGE.joinpath(*relative)
        path = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        found.append((info.name, path))
    return found


def _layer(module: str) -> str | None:
    """``zmqbench_magic.sockets.kernel.link`` -> ``sockets``; None for the top level."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or parts[1] in ALLOWED else None


def _imported_modules(module: str, path: Path, known: frozenset[str] | None = None) -> set[str]:
    """Every module of this package that ``module`` imports, by its full name: every
    import statement counts, at module level, in a function or under ``if
    TYPE_CHECKING:``. A name imported from a package counts as the package's module of
    that name where there is one (``known``: the package's modules), else as the package."""
    known = _module_names() if known is None else known
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or node.module):
            target = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names = [
                f"{target}.{a.name}" if f"{target}.{a.name}" in known or not node.module else target
                for a in node.names
            ]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(name for name in names if name.startswith(f"{module.split('.')[0]}."))
    return found


@functools.cache
def _module_names() -> frozenset[str]:
    return frozenset(name for name, _ in _modules())


def _imported_layers(module: str, path: Path) -> set[str]:
    return {_layer(name) or name.split(".")[1] for name in _imported_modules(module, path)}


def _circles(
    modules: list[tuple[str, Path]], known: frozenset[str] | None = None
) -> list[set[str]]:
    """The import circles among ``modules``: each set of modules that import one another,
    directly or around a loop (the strongly connected components of more than one
    module, by Tarjan's walk), every import statement counted."""
    names = {m for m, _ in modules}
    graph = {m: _imported_modules(m, p, known) & names - {m} for m, p in modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            # The modules above this one on the stack are those that reach back to it.
            component = set(stack[stack.index(module) :])
            del stack[stack.index(module) :]
            if len(component) > 1:
                circles.append(component)

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return circles


@pytest.mark.parametrize("layer", [*ALLOWED, None], ids=lambda layer: layer or "top level")
def test_no_import_circle_inside_a_layer(layer):
    """Within a layer the modules import one another one way only: a module can be read,
    tested and moved with what lies below it, never with what imports it."""
    modules = [(m, p) for m, p in _modules() if _layer(m) == layer]
    files = [
        sorted(str(p.relative_to(PACKAGE.parent)) for m, p in modules if m in circle)
        for circle in _circles(modules)
    ]
    assert files == [], f"import circles in {layer or 'the top level'}: {files}"


def test_the_circle_check_finds_a_planted_circle(tmp_path):
    # A circle closed by a function's import and one under TYPE_CHECKING, beside a module
    # that only imports into it: the check names the circle's modules and no others.
    planted = {
        "bottom": "VALUE = 1\n",
        "data": "from .bottom import VALUE\n\ndef words():\n    from .words import say\n",
        "words": (
            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
            "    from .data import words\n\ndef say(): ...\n"
        ),
        "top": "from . import data, words\n",
    }
    modules = []
    for stem, text in planted.items():
        (tmp_path / f"{stem}.py").write_text(text)
        modules.append((f"zmqbench_magic.planted.{stem}", tmp_path / f"{stem}.py"))
    known = frozenset(m for m, _ in modules)
    assert _circles(modules, known) == [
        {"zmqbench_magic.planted.data", "zmqbench_magic.planted.words"}
    ]
    (tmp_path / "words.py").write_text("def say(): ...\n")
    assert _circles(modules, known) == []


def test_what_a_result_set_calls_never_imports_it():
    """ResultSet's methods call results' parts (statistics, words, ...), which read a
    result as a ResultLike: they import the data type's module never, so it stays above
    them with nothing of theirs tied back to it."""
    parts = [
        (m, p)
        for m, p in _modules()
        if m.startswith("zmqbench_magic.results.") and m.count(".") >= 3
    ]
    assert parts, "results has no parts to check"
    importing = [
        m for m, p in parts if "zmqbench_magic.results.resultset" in _imported_modules(m, p)
    ]
    assert importing == []


# parallel/'s parts -> the parts they may import; "shared" is its modules at the top
# (the tasks and their stamps), which every part may import and which import no part.
PARALLEL_PARTS = {
    "shared": {"shared"},
    "clusters": {"shared", "clusters"},
    "engines": {"shared", "clusters", "engines"},
    "flood": {"shared", "clusters", "engines", "flood"},
}


def _parallel_part(module: str) -> str:
    """``zmqbench_magic.parallel.flood.samples`` -> ``flood``; a top module -> shared."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 or parts[2] in PARALLEL_PARTS else "shared"


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda v: str(v).split("/")[-1])
def test_each_module_imports_only_the_layers_below_it(module, path):
    layer = _layer(module)
    if layer is None:
        return  # the adapters at the top level may import everything
    outside = _imported_layers(module, path) - ALLOWED[layer]
    assert outside == set(), f"{module} ({layer}) imports {sorted(outside)}"


@pytest.mark.parametrize(
    ("module", "path"),
    [(m, p) for m, p in _modules() if m.startswith("zmqbench_magic.parallel.")],
    ids=lambda v: str(v).split("zmqbench_magic/")[-1],
)
def test_parallel_parts_import_only_the_parts_below_them(module, path):
    """Clusters know nothing of the engines or the flood; the engines nothing of the
    flood; the flood drives both."""
    part = _parallel_part(module)
    imported = {
        _parallel_part(name)
        for name in _imported_modules(module, path)
        if name.startswith("zmqbench_magic.parallel.")
    }
    assert imported - PARALLEL_PARTS[part] == set(), f"{module} ({part}) imports {imported}"


def test_the_parallel_part_list_covers_every_folder():
    parallel = PACKAGE / "parallel"
    folders = {p.name for p in parallel.iterdir() if (p / "__init__.py").is_file()}
    assert folders | {"shared"} == set(PARALLEL_PARTS)


def test_the_layer_list_covers_every_subpackage():
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert subpackages == set(ALLOWED)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_core_layer_never_imports_a_front_end(layer):
    modules = [m for m, _ in _modules() if _layer(m) == layer]
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(m for m in {FORBIDDEN[layer]!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"{layer} loads {out.stdout.strip()}"


def test_the_package_and_the_cli_load_no_front_end():
    code = (
        "import sys, zmqbench_magic, zmqbench_magic.cli\n"
        f"print(sorted(m for m in {(*FRONT_ENDS, 'ipyparallel')!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "helper", ["zmqbench_magic.sockets.far_ends.peer", "zmqbench_magic.parallel.clusters.reaper"]
)
def test_a_helper_process_starts_without_pandas_or_numpy(helper):
    # Each far end starts a fresh interpreter: pandas and numpy would add ~0.3 s a start.
    code = (
        f"import sys, {helper}\nprint(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_summary_imports_no_statistics_library_until_a_test_is_run():
    # scipy's import takes about a second of every command's start; a summary's
    # intervals are order statistics, counted exactly: only a verdict's rank test and a
    # pooled percentile's bootstrap need scipy.
    code = (
        "import sys, zmqbench_magic.cli\n"
        "from zmqbench_magic.results.statistics import stats\n"
        "print(stats.median_ci(range(1, 11)), 'scipy' in sys.modules)\n"
        "stats.paired_ratio_test([1.0] * 6, [1.1, 1.2, 1.0, 1.3, 1.1, 1.2])\n"
        "print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["(2.0, 9.0, 0.978515625) False", "True"]


def test_a_driver_process_starts_without_pandas():
    # Another environment's interpreter may have only pyzmq and numpy.
    code = "import sys, zmqbench_magic.sockets.far_ends.worker\nprint('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda v: str(v).split("/")[-1])
def test_modules_stay_one_job_long(module, path):
    # A tripwire, not a target: a module is as long as its one job, and past 500 lines
    # that job is worth a second look (never split a job to get under it).
    assert len(path.read_text().splitlines()) <= 500, f"{module}: is it one job?"


def test_no_two_modules_share_a_file_name():
    """A traceback names a module by its file: two ``flood.py`` would read alike."""
    by_name: dict[str, list[str]] = {}
    for module, path in _modules():
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(module)
    assert {name: found for name, found in by_name.items() if len(found) > 1} == {}


def test_the_public_names_still_resolve():
    import zmqbench_magic.results

    for name in zmqbench_magic.__all__:
        assert getattr(zmqbench_magic, name) is not None
    for name in zmqbench_magic.results.__all__:
        assert getattr(zmqbench_magic.results, name) is not None
