"""The typed point records (a ZeroMQ run's, a flood's): one field per setting a sweep
can vary, its default the declaration's, and, as a mapping, the settings the run names."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from zmqbench_magic.parallel.flood.session import describe as describe_flood
from zmqbench_magic.params import FloodParams, LatencyParams, SocketPoint, ThroughputParams
from zmqbench_magic.params.flood_tests import FLOOD_TESTS
from zmqbench_magic.params.interpreter import KERNEL
from zmqbench_magic.params.socket_point import SETTINGS
from zmqbench_magic.params.taskflood import FloodPoint
from zmqbench_magic.sockets.kernel.driver import _inner
from zmqbench_magic.sockets.kernel.rounds import describe, point_key

PACKAGE = Path(__file__).parents[2] / "zmqbench_magic"


@pytest.mark.parametrize(
    ("record", "kinds"),
    [(SocketPoint, (ThroughputParams, LatencyParams)), (FloodPoint, (FloodParams,))],
    ids=["sockets", "flood"],
)
def test_a_record_has_a_field_per_swept_setting_defaulting_to_its_declaration(record, kinds):
    swept = {param.name: param for kind in kinds for param in kind.sweep_fields()}
    assert set(record.settings_of_a_point()) == set(swept)
    for field in dataclasses.fields(record):
        if field.name != "names":
            assert field.default == swept[field.name].default, field.name
    assert SocketPoint.settings_of_a_point() == SETTINGS


def test_a_flood_point_names_a_tests_own_setting_only_where_the_test_reads_it():
    flood, echo = (next(FloodParams(test=t, size="64k").points()) for t in ("flood", "echo"))
    assert type(flood) is FloodPoint and "size" not in flood and "size" in echo
    assert (flood.size, echo.size, flood.scheme, flood.chunksize) == (1024, 65536, "leastload", 1)
    assert describe_flood(echo, FLOOD_TESTS["echo"]).endswith(", 64k B arrays")
    assert not describe_flood(flood, FLOOD_TESTS["flood"]).endswith("arrays")


def test_points_are_records_read_by_attribute_and_rows_see_only_what_the_run_names():
    thr = list(ThroughputParams(size=[100, "1k"], transport="ipc").points())
    assert [type(p) for p in thr] == [SocketPoint, SocketPoint]
    assert [p.size for p in thr] == [100, 1024]
    first = thr[0]
    # Not named by the run, read all the same: the declaration's default.
    assert (first.python, first.rate, first.hwm) == (KERNEL, 0.0, "auto")
    assert "python" not in first and "hwm" not in first
    assert dict(first) == {k: first[k] for k in first.names}
    assert first == dict(first) and hash(first) == hash(SocketPoint.of(dict(first)))
    with pytest.raises(KeyError):
        first["python"]
    lat = next(LatencyParams(size=64).points())
    assert (lat.pattern, lat.peers, lat.clients) == ("pipeline", 1, 1)
    assert lat.crowd_shape() is None and lat.crowd_words() == ""


def test_a_point_goes_to_a_driver_process_and_back_as_its_own_json():
    point = next(ThroughputParams(python=[KERNEL, "b=" + KERNEL], size=100).points())
    assert point.python == KERNEL
    sent = json.loads(json.dumps(_inner(point).settings()))
    assert "python" not in sent
    back = SocketPoint.of(sent)
    # Its calibrated count is found again by the key the kernel kept it under.
    assert point_key(back) == point_key(_inner(point))
    assert describe(back) == describe(point)


def test_where_and_without_set_and_unset_a_setting_and_its_name():
    point = SocketPoint.of({"size": 100, "transport": "tcp"})
    louder = point.where(rate=1000.0)
    assert louder.rate == 1000.0 and "rate" in louder and louder.far_role("echo") == "route"
    assert point.far_role("echo") == "echo"
    assert point.where(size=200).names == ("size", "transport")
    assert louder.without("rate") == point and louder.without("rate").rate == 0.0


def test_a_setting_no_point_has_is_refused_by_name():
    with pytest.raises(ValueError, match="not a setting of a ZeroMQ point: colour"):
        SocketPoint.of({"size": 100, "colour": "blue"})
    with pytest.raises(ValueError, match="not a setting of a flood's point: copy"):
        FloodPoint.of({"tasks": 16, "copy": True})


def test_the_crowd_of_a_point_follows_its_pattern_peers_and_clients():
    assert SocketPoint.of({"pattern": "pubsub", "peers": 4}).crowd_words() == "pubsub 4 peers"
    assert SocketPoint.of({"peers": 2}).many_ends
    assert SocketPoint.of({"clients": 16}).crowd_words() == "16 clients"
    one = SocketPoint.of({"rate": 1000.0})
    assert one.under_pressure and one.crowd_shape() is None
    shape = one.crowd_shape(as_pattern=True)
    assert shape is not None and shape[0].name == "pipeline" and shape[1] == 1


def test_the_loops_read_no_declared_setting_with_a_default_of_their_own():
    """A run's settings are read as declared (``params.remote``), never with a default
    restated where they are read (``getattr(params, "remote", "")``)."""
    restated = []
    for path in [*(PACKAGE / "sockets").rglob("*.py"), *(PACKAGE / "parallel").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) == 3
                and "params" in ast.unparse(node.args[0])
            ):
                restated.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert restated == []


def test_a_rows_point_is_its_settings_among_its_columns():
    row = {"size": 100, "transport": "tcp", "frames": 2, "msgs_per_s": 1e6, "pattern": "fanin"}
    point = SocketPoint.of_row(row)
    assert dict(point) == {"size": 100, "transport": "tcp", "pattern": "fanin"}
    assert point.pattern == "fanin" and point.peers == 1
