"""A fourth kind is one module plus one line: ``toy_kind.py``, registered here, runs
through the CLI, the magic and its cell form, compare with ``--fail-on``, history, the
chart and the panel, with a metric no other kind has, and no other module touched."""

from __future__ import annotations

import json

import altair as alt
import pytest
import toy_kind

from zmqbench_magic import cli
from zmqbench_magic.params import COLUMN_TITLES, METRICS, register, unregister
from zmqbench_magic.results import load


@pytest.fixture
def toy():
    register(toy_kind)  # the one line
    try:
        yield toy_kind
    finally:
        unregister("toy")


def test_its_metric_joins_every_table_derived_from_the_declarations(toy):
    assert METRICS["beats_per_s"].better == "higher"
    assert COLUMN_TITLES["beats_per_s"] == "beat rate (beats/s)"
    assert COLUMN_TITLES["pace"] == "pace"


def test_it_is_a_command_whose_slower_run_the_gate_fails(toy, tmp_path, capsys):
    base, same, slow = (tmp_path / f"{name}.json" for name in ("base", "same", "slow"))
    common = ["--beats", "5", "20", "--repeat", "6"]
    assert cli.main(["toy", *common, "--json", str(base)]) == 0
    out = capsys.readouterr().out
    assert " 5 beats: 502 beats/s (n=6)" in out and "20 beats: 2,002 beats/s (n=6)" in out
    assert cli.main(["toy", *common, "--json", str(same)]) == 0
    assert cli.main(["toy", *common, "--pace", "0.5", "--json", str(slow)]) == 0
    assert load(slow).summary()["beats_per_s"].tolist() == [252.5, 1002.5]
    capsys.readouterr()

    # The planted slower run fails the gate, in the words of the metric's direction.
    assert cli.main(["compare", str(base), str(slow), "--fail-on", "slower"]) == 1
    verdicts = capsys.readouterr().out
    assert "beats=5: beats_per_s medians 502.5 -> 252.5; ratio 0.502" in verdicts
    assert verdicts.count("): slower\n") == 2 and "higher" not in verdicts
    # The same figures again pass it.
    assert cli.main(["compare", str(base), str(same), "--fail-on", "slower"]) == 0
    assert ": slower" not in capsys.readouterr().out


def test_its_history_finds_the_step_and_draws_it(toy, tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    # Five runs, then five at half the pace: the fewest a permutation test can call.
    for index, pace in enumerate(["1"] * 5 + ["0.5"] * 5):
        saved = str(runs / f"{index}.json")
        assert cli.main(["toy", "--beats", "5", "-r", "6", "--pace", pace, "--json", saved]) == 0
    capsys.readouterr()
    svg = tmp_path / "history.svg"
    assert cli.main(["history", str(runs), "--svg", str(svg)]) == 0
    said = capsys.readouterr().out
    assert "5 beats: 10 runs" in said and "last 252.5 beats/s; step at run" in said, said
    assert ": 502.5 -> 252.5" in said, said
    assert "beat rate (beats/s)" in svg.read_text()


def test_it_is_a_magic_with_a_cell_form_and_a_panel(toy, ip):
    from zmqbench_magic.magics import ZmqBench

    magics = ZmqBench(shell=ip)  # as %load_ext makes them, now with the toy's
    ip.register_magics(magics)
    try:
        line = ip.run_line_magic("toy", "--beats 5 20 --repeat 3 -q -o --no-chart")
        assert list(line.summary()["beats_per_s"]) == [501.0, 2001.0]
        cell = ip.run_cell_magic("toy", "--beats 5 --repeat 2 -q -o --no-chart", "3 + 4")
        assert list(cell.summary()["beats_per_s"]) == [507.5]
        assert "Count beats: a toy benchmark." in ip.find_line_magic("toy").__doc__
        panel = ip.run_line_magic("toy", "--beats 7 --repeat 2 --widget")
        assert isinstance(panel, toy_kind.ToyPanel)
        result = panel.run()
        assert list(result.summary()["beats_per_s"]) == [700.5]
        assert "7 beats: 700 beats/s (n=2)" in panel.status.value
        assert "beats_per_s" in json.dumps(panel.chart.to_dict())
    finally:
        for kind in ("line", "cell"):
            ip.magics_manager.magics[kind].pop("toy", None)
        ip.configurables.remove(magics)


def test_its_default_chart_is_its_own(toy):
    from zmqbench_magic.charts import default_chart

    result = toy_kind.run(toy_kind.ToyParams(beats=[1, 2], repeat=3))
    assert isinstance(default_chart("toy", result.df), alt.Chart)
    assert result.advice() == [] and result.metric_names == ("beats_per_s",)
