"""The kind and backend records (params/kinds.py, params/backends.py): each names what
every layer does for it, a fourth kind needs no edit outside its own modules and one
registration, and no code outside the records branches on a kind's or engine's name."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

import zmqbench_magic
from zmqbench_magic import cli, params
from zmqbench_magic.params.backends import BACKENDS
from zmqbench_magic.params.common import REPEAT
from zmqbench_magic.params.declare import BenchParams, Metric, Param, param_field
from zmqbench_magic.params.kinds import Kind
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.words.text import summary_lines

PACKAGE = Path(zmqbench_magic.__file__).parent
HOOKS = ("run", "where", "figures", "chart", "panel", "notes", "sample", "advice", "stop", "cell")


@pytest.mark.parametrize("kind", params.KINDS.values(), ids=list(params.KINDS))
def test_every_hook_of_a_kind_names_something_that_imports(kind):
    assert kind.params.benchmark == kind.name
    for hook in HOOKS:
        if getattr(kind, hook):
            assert callable(kind.load(hook)), hook
    assert kind.headline is kind.params.metrics[0]


@pytest.mark.parametrize("kind", params.KINDS.values(), ids=list(params.KINDS))
def test_a_kinds_columns_are_named_once_among_its_parameters_and_metrics(kind):
    from zmqbench_magic.params.columns import SAMPLE_COLUMNS

    names = [
        *(c.name for c in (*SAMPLE_COLUMNS, *kind.params.columns)),
        *(m.name for m in kind.metrics),
        *(p.name for p in kind.params.fields() if p.sweep),
    ]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_a_kind_without_a_hook_says_which_it_lacks():
    with pytest.raises(LookupError, match="the flood benchmark has no sample"):
        params.KINDS["flood"].load("sample")


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


# --- a fourth kind, registered once -------------------------------------------------

BEATS = Param("beats", 10, "beats per sample", "beats", "int", low=1, high=1000, sweep=True)
TOY_METRICS = (Metric("beats_per_s", "beats", "beats per second", "higher", unit="beats/s"),)


@dataclass(frozen=True)
class ToyParams(BenchParams):
    beats: tuple[int, ...] = param_field(BEATS)
    repeat: int = param_field(REPEAT)

    benchmark = "toy"
    metrics = TOY_METRICS


def run_toy(
    settings: ToyParams, progress: object = None, bonus: float = 0.0, **_: object
) -> ResultSet:
    """Known figures: a point of ``b`` beats runs at ``100 * b + bonus`` beats/s."""
    rows = [
        {
            "benchmark": "toy",
            "run": "toy",
            "sample": sample,
            "beats": b,
            "beats_per_s": 100.0 * b + bonus,
        }
        for sample in range(settings.repeat)
        for b in settings.beats
    ]
    return ResultSet("toy", rows, settings.settings())


def toy_where(point):
    return [f"{point['beats']} beats"]


def toy_figures(point):
    return f"{point['beats_per_s']:,.0f} beats/s (n={point['n']})"


def toy_cell(shell, source, given):
    """The toy's cell form: the cell's value is a bonus on every figure."""
    return {"bonus": eval(source, shell.user_ns)}


def toy_chart(df, distributions=()):
    return alt.Chart(df).mark_point().encode(x="beats:Q", y="beats_per_s:Q")


TOY = Kind(
    name="toy",
    title="a toy benchmark",
    params=ToyParams,
    counted="beats",
    run="test_kinds:run_toy",
    where="test_kinds:toy_where",
    figures="test_kinds:toy_figures",
    chart="test_kinds:toy_chart",
    panel="",
    counts_at=(0,),
    magic="toy",
    magic_help="Count beats: a toy benchmark.",
    cell="test_kinds:toy_cell",
)


def test_a_fourth_kind_registered_once_is_a_command_with_a_summary_and_a_chart(monkeypatch, capsys):
    from zmqbench_magic.charts import default_chart

    monkeypatch.setitem(params.KINDS, TOY.name, TOY)
    assert cli.main(["toy", "--beats", "5", "20", "--repeat", "3"]) == 0
    out = capsys.readouterr().out
    assert " 5 beats: 500 beats/s (n=3)" in out and "20 beats: 2,000 beats/s (n=3)" in out
    result = run_toy(ToyParams(beats=[1, 2], repeat=3))
    assert summary_lines("toy", result.summary().to_dict("records"))[1].startswith("2 beats:")
    assert isinstance(default_chart("toy", result.df), alt.Chart)
    assert result.advice() == [] and result.metric_names == ("beats_per_s",)
    assert isinstance(result.df, pd.DataFrame)


def test_a_fourth_kind_registered_once_is_a_magic_with_a_cell_form(monkeypatch, ip):
    from IPython.core.magic import magics_class

    from zmqbench_magic.magics import ZmqBench, _magic_for

    monkeypatch.setitem(params.KINDS, TOY.name, TOY)

    class WithToy(ZmqBench):  # type: ignore[misc]
        """The project's magics, and the toy's as the package would make it."""

    WithToy.toy = _magic_for(TOY)
    WithToy.toyline = _magic_for(replace(TOY, magic="toyline", cell=""))
    magics_class(WithToy)
    toys = WithToy(shell=ip)
    ip.register_magics(toys)
    try:
        line = ip.run_line_magic("toy", "--beats 5 20 --repeat 3 -q -o --no-chart")
        assert list(line.summary()["beats_per_s"]) == [500.0, 2000.0]
        cell = ip.run_cell_magic("toy", "--beats 5 --repeat 2 -q -o --no-chart", "3 + 4")
        assert list(cell.summary()["beats_per_s"]) == [507.0]
        assert "Count beats: a toy benchmark." in WithToy.toy.__doc__
        # Without a cell form, a line magic alone.
        assert ip.run_line_magic("toyline", "--beats 1 -r 1 -q -o --no-chart").df["beats"][0] == 1
        assert "toyline" not in ip.magics_manager.magics["cell"]
    finally:
        ip.magics_manager.magics["line"].pop("toyline")
        for kind in ("line", "cell"):
            del ip.magics_manager.magics[kind]["toy"]
        ip.configurables.remove(toys)


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
