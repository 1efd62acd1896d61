"""Parameter declarations: parsing, validation messages, the sweep grid."""

from __future__ import annotations

import pytest

from zmqbench_magic import params
from zmqbench_magic.params import LatencyParams, ThroughputParams, high_water_mark
from zmqbench_magic.params.units import GiB, MiB, format_rate, format_size, parse_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("100", 100),
        ("1k", 1024),
        ("64k", 65536),
        ("1M", 1048576),
        ("2m", 2 << 20),
        (" 8 kB", 8192),
        (7, 7),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "1x", "1.5k", "-3", "k", "1kk", True])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError, match="whole number of bytes"):
        parse_size(text)


@pytest.mark.parametrize(
    ("size", "text"), [(100, "100"), (1024, "1k"), (65536, "64k"), (1 << 20, "1M"), (1500, "1500")]
)
def test_format_size_round_trips(size, text):
    assert format_size(size) == text
    assert parse_size(format_size(size)) == size


@pytest.mark.parametrize(
    ("rate", "text"),
    [(999.4, "999.4"), (999.6, "1k"), (10_000, "10k"), (999_400, "999k"), (999_600, "1M")],
)
def test_a_rate_near_a_unit_is_written_in_the_larger_one(rate, text):
    """Three figures of 999,600 in thousands would be "1e+03k"."""
    assert format_rate(rate) == text


def test_defaults_and_scalars_become_one_point():
    p = ThroughputParams()
    assert (p.size, p.copy, p.transport, p.copy_threshold) == ((1024,), (True,), ("tcp",), (65536,))
    assert list(p.points()) == [
        {
            "size": 1024,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "loop": "python",
            "copy_threshold": 65536,
            "io_threads": 1,
            "curve": False,
            "pattern": "pipeline",
            "peers": 1,
            "rate": 0.0,
        }
    ]


def test_grid_is_the_product_with_transport_outermost_and_repeats_dropped():
    p = LatencyParams(size=["1k", 100, 1024], copy=[True, False], transport=["ipc", "inproc"])
    points = list(p.points())
    assert p.size == (1024, 100)
    assert len(points) == 2 * 2 * 2
    assert [pt["transport"] for pt in points] == ["ipc"] * 4 + ["inproc"] * 4
    assert {pt["peer"] for pt in points if pt["transport"] == "inproc"} == {"thread"}
    assert {pt["peer"] for pt in points if pt["transport"] == "ipc"} == {"process"}


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"size": 0}, ["size", "from 1 B to 1G", "got 0 B"]),
        ({"size": "2G"}, ["size", "got 2G"]),
        ({"size": "12q"}, ["size", "'12q'", "from 1 B"]),
        ({"copy": "maybe"}, ["copy", "'maybe'", "true, false"]),
        ({"transport": "udp"}, ["transport", "udp", "tcp, ipc, inproc"]),
        ({"peer": "remote"}, ["peer", "remote", "auto, process, thread"]),
        ({"count": -1}, ["count", "-1", "from 0"]),
        ({"repeat": 0}, ["repeat", "got 0", "from 1 to 1000"]),
        ({"min_time": 0}, ["min_time", "from 0.001"]),
        ({"timeout": 0.01}, ["timeout", "0.01", "from 0.1"]),
        ({"size": []}, ["size needs at least one value"]),
        ({"transport": "inproc", "peer": "process"}, ["inproc", "peer thread"]),
        ({"count": 1}, ["count", "at least 2", "got 1"]),
    ],
)
def test_bad_values_name_the_value_and_the_allowed_range(values, words):
    with pytest.raises(ValueError) as caught:
        ThroughputParams(**values)
    for word in words:
        assert word in str(caught.value)


def test_size_beyond_available_memory_is_refused(monkeypatch):
    monkeypatch.setattr(params.memory, "available_memory", lambda: 64 * MiB)
    with pytest.raises(ValueError, match=r"needs about \d+ MiB .* only 64 MiB is available"):
        ThroughputParams(size="16M")


def test_high_water_mark_bounds_queued_bytes():
    assert high_water_mark(100) == 1000
    assert high_water_mark(1 << 20) == 128
    assert high_water_mark(GiB) == 2
    assert all(high_water_mark(s) * s <= params.QUEUE_BYTES for s in (64 << 10, 1 << 20, 64 << 20))


def test_a_size_with_few_messages_a_sample_is_cautioned_before_the_run():
    from zmqbench_magic.params import LatencyParams, ThroughputParams

    assert ThroughputParams(size=["1k", "64M"]).cautions() == []
    (caution,) = ThroughputParams(size=["1k", "256M"]).cautions()
    assert "size 256M (268435456 B)" in caution and "only a few messages" in caution
    assert "round trips" in LatencyParams(size="512M").cautions()[0]


def test_a_slow_point_is_spelled_without_contradicting_itself():
    """1 GB at 0.49 msgs/s is 4.2 Gbit/s: the line says 0.49, never '0 msgs/s'."""
    from zmqbench_magic.results.words.summary_lines import summary_line

    nan = float("nan")
    point = {
        "transport": "tcp",
        "size": 2**30,
        "copy": True,
        "msgs_per_s": 0.49,
        "send_msgs_per_s": nan,
        "mbit_per_s": 0.49 * 2**30 * 8 / 1e6,
        "n": 1,
        "ci_low": nan,
        "ci_high": nan,
        "ci_level": 0,
    }
    line = summary_line("thr", point)
    assert "0.49 msgs/s delivered" in line and "4.21 Gbit/s" in line and "sent" not in line
