"""The magics' user experience: options, output, -o/-v/-q, charts, help, bad input."""

from __future__ import annotations

import pytest
from conftest import TINY_OPTIONS
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic import ResultSet
from zmqbench_magic.params import ThroughputParams
from zmqbench_magic.ui.present import NO_CHART_HERE


def test_summary_line_per_point_and_no_return_without_o(ip, no_leftovers):
    with capture_output() as captured:
        returned = ip.run_line_magic("zmqthr", f"{TINY_OPTIONS} --size 100 1k --no-chart")
    assert returned is None
    lines = [ln for ln in captured.stdout.splitlines() if "msgs/s delivered" in ln]
    assert len(lines) == 2
    assert "tcp" in lines[0] and "100 B" in lines[0] and "1k B" in lines[1]
    assert captured.outputs == []  # --no-chart


def test_patterns_and_peers_in_one_call(ip, no_leftovers):
    with capture_output() as captured:
        result = ip.run_line_magic(
            "zmqthr",
            f"{TINY_OPTIONS} -o --no-chart --size 100 --pattern pipeline pubsub --peers 1 2",
        )
    lines = [ln for ln in captured.stdout.splitlines() if "msgs/s delivered" in ln]
    assert len(lines) == 4
    assert any("pubsub 2 peers" in ln for ln in lines)
    assert {"pattern", "peers", "lost", "peer_fairness"} <= set(result.df.columns)
    assert set(zip(result.df["pattern"], result.df["peers"], strict=True)) == {
        ("pipeline", 1),
        ("pipeline", 2),
        ("pubsub", 1),
        ("pubsub", 2),
    }


def test_quiet_output_and_variable(ip, no_leftovers):
    with capture_output() as captured:
        returned = ip.run_line_magic(
            "zmqlat", f"{TINY_OPTIONS} -q -o -v last_lat --no-chart --size 1"
        )
    assert captured.stdout == ""
    assert isinstance(returned, ResultSet)
    assert ip.user_ns["last_lat"] is returned
    assert returned.benchmark == "lat"


@pytest.mark.parametrize(
    ("magic", "title"), [("zmqthr", "PUSH/PULL throughput"), ("zmqlat", "REQ/REP round trip")]
)
def test_a_terminal_gets_no_object_repr_but_a_line_saying_how_to_save_the_chart(
    ip, magic, title, tmp_path, no_leftovers
):
    with capture_output() as captured:
        ip.run_line_magic(magic, f"{TINY_OPTIONS} -q --size 100 1k")
    assert captured.outputs == []  # nothing displayed: a terminal would print its repr
    assert "object>" not in captured.stdout
    assert captured.stdout == captured.stderr == ""  # -q: nothing else either
    with capture_output() as captured:
        ip.run_line_magic(magic, f"{TINY_OPTIONS} --size 100 1k")
    assert captured.outputs == [] and "object>" not in captured.stdout
    assert captured.stderr.strip() == NO_CHART_HERE
    svg, png = tmp_path / "chart.svg", tmp_path / "chart.png"
    with capture_output() as captured:
        ip.run_line_magic(magic, f"{TINY_OPTIONS} --size 100 1k --svg {svg} --png {png}")
    assert f"chart saved to {svg}" in captured.stdout and f"chart saved to {png}" in captured.stdout
    assert "no chart in a terminal" not in captured.stdout
    text = svg.read_text()
    assert text.lstrip().startswith("<svg") and title in text
    assert "http://" not in text.replace("http://www.w3.org", "")  # nothing to fetch
    assert png.read_bytes().startswith(b"\x89PNG")


def test_a_chart_path_in_no_folder_is_refused_before_measuring(ip, tmp_path):
    with pytest.raises(UsageError, match="no folder"):
        ip.run_line_magic("zmqthr", f"{TINY_OPTIONS} --png {tmp_path}/missing/chart.png")
    # A name that says another format: SVG would be written into a file named .png.
    with pytest.raises(UsageError, match=r"chart\.png: --svg writes SVG, .* not \.png"):
        ip.run_line_magic("zmqthr", f"{TINY_OPTIONS} --svg {tmp_path}/chart.png")
    assert list(tmp_path.iterdir()) == []


def test_help_is_built_from_the_params(ip):
    doc = ip.find_line_magic("zmqthr").__doc__
    for param in ThroughputParams.fields():
        assert param.option in doc
    assert "Allowed: from 1 B to 1G" in doc and "-o" in doc and "--no-chart" in doc


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("--size 0", ["size", "got 0 B", "from 1 B"]),
        ("--size 1x", ["size", "'1x'"]),
        ("--size 4G", ["size", "got 4G"]),
        ("--transport udp", ["transport", "udp", "tcp, ipc, inproc"]),
        ("--copy maybe", ["copy", "maybe", "true, false"]),
        ("-n -1", ["count", "-1", "from 0"]),
        ("-r 0", ["repeat", "got 0"]),
        ("--transport inproc --peer process", ["inproc", "peer thread"]),
        ("--address 192.0.2.1", ["192.0.2.1", "cannot bind"]),
        ("--bogus 3", ["unrecognized arguments: --bogus 3"]),
        ("--peers 0", ["peers", "got 0", "from 1 to 256"]),
        ("--peers 10000", ["peers", "got 10000"]),
        ("--pattern mesh", ["pattern", "mesh", "pipeline, pubsub, fanin, pairs, proxy"]),
        ("--pattern pubsub --loop asyncio", ["--loop asyncio drives one socket"]),
        ("--io-threads 0", ["io_threads", "got 0"]),
        ("--nodrop true", ["--nodrop true", "pubsub or proxy"]),
        ("--sequence true --size 4", ["--sequence true", "got 4 B", "from 8 B"]),
    ],
)
def test_bad_input_is_a_usage_error_naming_the_value(ip, line, words, no_leftovers):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("zmqthr", f"{TINY_OPTIONS} -q --no-chart {line}")
    for word in words:
        assert word in str(caught.value)


@pytest.fixture
def configured(ip):
    """``%config ZmqBench.*`` for one test; every trait is back to its default after,
    and the shell's config as it was (a refused value stays in it, and a magics class
    made later, in another test, would read it)."""
    magics = next(c for c in ip.configurables if type(c).__name__ == "ZmqBench")
    before = ip.config["ZmqBench"].copy() if "ZmqBench" in ip.config else None
    yield lambda line: ip.run_line_magic("config", f"ZmqBench.{line}")
    for name, trait in magics.traits(config=True).items():
        setattr(magics, name, trait.default_value)
    ip.config.pop("ZmqBench", None)
    if before is not None:
        ip.config["ZmqBench"] = before


def test_config_sets_defaults_that_the_line_overrides(ip, configured, no_leftovers):
    configured("repeat = 3")
    configured("count = 200")
    configured("warmup = 0")
    configured("size = ['100', '1k']")
    configured("chart = False")
    with capture_output() as captured:
        result = ip.run_line_magic("zmqthr", "-o")
    assert captured.outputs == []  # chart = False
    assert sorted(result.df["size"].unique()) == [100, 1024]
    assert (result.df.groupby("size").size() == 3).all()
    assert set(result.df["count"]) == {200}
    result = ip.run_line_magic("zmqlat", "-o -q --size 1 -r 2")  # the line wins
    assert list(result.df["size"].unique()) == [1] and len(result.df) == 2
    assert result.settings["count"] == 200  # the rest still from %config


def test_config_refuses_a_bad_value_with_the_params_message(ip, configured, caplog):
    configured("repeat = 0")
    configured("copy = 'maybe'")
    assert "ZmqBench.repeat must be from 1 to 1000, got 0" in caplog.text
    assert "ZmqBench.copy: expected true or false, got 'maybe'" in caplog.text
    assert ip.run_line_magic("config", "ZmqBench.repeat") is None  # unchanged


def test_config_lists_every_parameter_with_its_help(ip):
    with capture_output() as captured:
        ip.run_line_magic("config", "ZmqBench")
    for name, help_part in [
        ("repeat", "None: the benchmark's default (10 for thr, lat, kernelmsg; 6 for flood)"),
        ("min_time", "calibrated samples last at least this long [s]"),
        ("engines", "used by flood"),
        ("chart", "show the chart"),
    ]:
        assert f"ZmqBench.{name}=" in captured.stdout
        assert help_part in " ".join(captured.stdout.split())
