"""Jupyter's own messages on a real kernel (ipykernel, started from its kernelspec):
every message is timed and cut into stages that add up to its round trip, a delay
planted in one stage is found in that stage, and bad input, a cell that raises and a
kernel that dies are each named, with nothing left behind."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from jupyter_client.session import Session

from zmqbench_magic.kernel_messages.kernel import KernelDied, installed_kernels
from zmqbench_magic.kernel_messages.server import JupyterServer, ServerFailed
from zmqbench_magic.kernel_messages.sweep import run_kernel_messages
from zmqbench_magic.kernel_messages.trips import CellFailed
from zmqbench_magic.params.kernel_messages import STAGE_METRICS

STAGES = [m.name for m in STAGE_METRICS]
QUICK = {"repeat": 1, "warmup": 0, "count": 3, "timeout": 30.0}
# A delay planted in one stage: far longer than a stage takes, however busy the machine.
PLANTED_S = 0.25


def _stage_sum(df):
    return df[STAGES].sum(axis=1)


def test_every_message_is_timed_and_its_stages_add_up_to_its_round_trip(no_leftovers):
    r = run_kernel_messages(
        msg=["execute", "info", "comm", "stream"], size=[100], buffers=[False, True], **QUICK
    )
    df = r.df
    assert sorted(df["msg"].unique()) == ["comm", "execute", "info", "stream"]
    assert set(df[df["msg"] == "comm"]["buffers"]) == {False, True}
    assert (abs(_stage_sum(df) - df["roundtrip_us"]) < 1e-6).all()
    # One clock: what the kernel stamps comes after what the client sent, and before
    # what the client then receives.
    assert (df[STAGES] > 0).all().all()
    executed = df[df["msg"] == "execute"]
    assert (executed["handler_us"] < executed["in_kernel_us"]).all()
    assert df[df["msg"].isin(["info", "comm"])]["handler_us"].isna().all()
    stream = df[df["msg"] == "stream"].iloc[0]
    assert stream["output_msgs"] >= 1 and stream["output_mb_per_s"] > 0
    assert stream["chunks_per_msg"] == 3 / stream["output_msgs"]
    text = str(r)
    assert "to the kernel" in text and "comm 100 B binary buffer" in text


def test_a_delay_planted_in_the_cell_is_found_in_the_kernel(no_leftovers):
    r = run_kernel_messages(code=f"import time; time.sleep({PLANTED_S})", **QUICK)
    row = r.df.iloc[0]
    assert row["handler_us"] >= PLANTED_S * 1e6
    assert max(STAGES, key=lambda stage: row[stage]) == "in_kernel_us"


@pytest.mark.parametrize(
    ("patched", "stage"),
    [("serialize", "to_kernel_us"), ("deserialize", "reply_us")],
)
def test_a_delay_planted_in_the_client_is_found_in_its_stage(monkeypatch, patched, stage):
    """The client's own serialising of a request (before the hop to the kernel) and
    its reading of the reply (after the hop back), each slowed by a planted sleep."""
    original = getattr(Session, patched)

    def slowed(self, msg_list, *args, **kwargs):
        kind = msg_list["msg_type"] if patched == "serialize" else None
        if kind == "execute_request" or (patched == "deserialize" and _is_reply(msg_list)):
            time.sleep(PLANTED_S)
        return original(self, msg_list, *args, **kwargs)

    monkeypatch.setattr(Session, patched, slowed)
    row = run_kernel_messages(**QUICK).df.iloc[0]
    assert row[stage] >= PLANTED_S * 1e6
    assert max(STAGES, key=lambda s: row[s]) == stage


def _is_reply(frames) -> bool:
    """Whether a message's frames, as the client receives them, are an execute reply."""
    return any(b'"execute_reply"' in bytes(frame) for frame in frames[:4])


def test_an_unknown_kernelspec_is_named_with_the_installed_ones(ip):
    with pytest.raises(ValueError, match="no-such-kernel") as caught:
        run_kernel_messages(kernel=["no-such-kernel"], **QUICK)
    assert all(name in str(caught.value) for name in installed_kernels())
    with pytest.raises(UsageError, match="python3"):
        ip.run_line_magic("kernelmsg", "--kernel no-such-kernel -q --no-chart")


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("--via server --server-url ftp://host", "must be an http:// or https:// URL; got"),
        (
            "--via server --server-url http://127.0.0.1:1/?token=abc",
            "must not carry its token (the results save it): give http://127.0.0.1:1/",
        ),
        ("--server-url http://127.0.0.1:1", "the server --via server goes through: add it"),
        ("--via server browser --server-url http://127.0.0.1:1", "via browser needs"),
        (
            "--via server --server-url http://127.0.0.1:1 --iopub-msg-rate-limit 0",
            "a running server keeps its own IOPub limits",
        ),
    ],
)
def test_a_bad_running_server_is_a_usage_error_naming_it(ip, line, words):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("kernelmsg", f"-q --no-chart {line}")
    assert words in str(caught.value)


def test_a_running_server_is_gone_through_and_left_running_with_none_of_its_kernels(
    monkeypatch, no_leftovers
):
    """A server someone else started (here one started apart, as a user's would be):
    its token read from its runtime file, as `jupyter server list` reads it; the
    kernels the run made there are deleted, and the server runs on."""
    server = JupyterServer(30.0, 1000.0, 1e6)
    try:
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", os.path.join(server.root, "runtime"))
        monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
        r = run_kernel_messages(
            msg=["execute"], via=["zmq", "server"], server_url=server.url + "/", **QUICK
        )
        df = r.df
        assert set(df["via"]) == {"zmq", "server"}
        assert (abs(_stage_sum(df) - df["roundtrip_us"]) < 1e-6).all()
        # Its runtime folder held the kernel's connection file: the hop back is measured.
        assert (df.query("via == 'server'")["server_hop_us"] > 0).all()
        assert r.settings["server_url"] == server.url + "/"
        assert server.request("GET", "/api/kernels") == [] and server.process.poll() is None
    finally:
        server.close()


def test_a_server_whose_port_was_taken_before_it_bound_starts_again_on_another(
    monkeypatch, no_leftovers
):
    """The free port it was given is taken by another process while the server starts
    (a race a busy machine runs, forced here by a listening socket on it): the server
    exits naming the port, and starts again on a fresh one, which answers."""
    import socket

    from zmqbench_magic.kernel_messages import server as server_module

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        given = iter([taken])
        fresh = server_module._free_port
        monkeypatch.setattr(server_module, "_free_port", lambda: next(given, 0) or fresh())
        server = JupyterServer(30.0, 1000.0, 1e6)
        try:
            assert server.port != taken and server.process.poll() is None
            assert server.request("GET", "/api/kernels") == []
            with open(server._log.name, "rb") as log:
                assert f"port {taken} is not available".encode() in log.read()
        finally:
            server.close()


def test_a_running_server_that_refuses_the_token_or_is_not_there_is_named(monkeypatch, tmp_path):
    server = JupyterServer(30.0, 1000.0, 1e6)
    try:
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))  # not where its files are
        monkeypatch.setenv("JUPYTER_TOKEN", "not-its-token")
        with pytest.raises(ServerFailed, match=r"refused the token \(from JUPYTER_TOKEN\)"):
            run_kernel_messages(msg=["info"], via=["server"], server_url=server.url, **QUICK)
        assert server.request("GET", "/api/kernels") == []
    finally:
        server.close()
    gone = f"no Jupyter server answered at {server.url} within 1 s"
    with pytest.raises(ServerFailed, match=gone):
        run_kernel_messages(
            msg=["info"], via=["server"], server_url=server.url, **{**QUICK, "timeout": 1.0}
        )


def test_a_cell_that_raises_is_named(no_leftovers):
    with pytest.raises(CellFailed, match="ZeroDivisionError"):
        run_kernel_messages(code="1 / 0", **QUICK)


def test_a_kernel_that_dies_mid_run_is_named_at_once_and_nothing_is_left(no_leftovers):
    files = set(glob.glob(os.path.join(_runtime_dir(), "kernel-*.json")))
    began = time.monotonic()
    with pytest.raises(KernelDied, match="python3 kernel died"):
        run_kernel_messages(code="import os; os._exit(3)", **{**QUICK, "timeout": 60.0})
    assert time.monotonic() - began < 30  # the start, then far less than the timeout
    assert set(glob.glob(os.path.join(_runtime_dir(), "kernel-*.json"))) == files


def _runtime_dir() -> str:
    from jupyter_core.paths import jupyter_runtime_dir

    return jupyter_runtime_dir()


def test_the_magic_and_its_cell_form(ip, no_leftovers):
    with capture_output() as captured:
        result = ip.run_line_magic(
            "kernelmsg", "--msg info comm --size 1k --count 3 --repeat 1 --warmup 0 -o --no-chart"
        )
    assert set(result.df["msg"]) == {"info", "comm"}
    assert "info" in captured.stdout and "comm 1k B" in captured.stdout
    with capture_output():
        cell = ip.run_cell_magic(
            "kernelmsg", "--count 2 --repeat 1 --warmup 0 -o --no-chart", "x = sum(range(10))"
        )
    assert list(cell.df["msg"]) == ["execute"]


def test_the_command_line(tmp_path):
    zmqbench = Path(sys.executable).with_name("zmqbench")
    out = tmp_path / "run.json"
    command = ["kernelmsg", "--msg", "info", "--count", "3", "--repeat", "1", "--json", str(out)]
    done = subprocess.run(
        [str(zmqbench), *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "info" in done.stdout and "to the kernel" in done.stdout
    assert out.exists()


def test_the_panel_runs_and_redraws_its_chart(no_leftovers):
    from zmqbench_magic.widgets import KernelMessagesPanel

    panel = KernelMessagesPanel(msg=["info"], count=3, repeat=1, warmup=0)
    panel.run()
    assert set(panel.result.df["msg"]) == {"info"}
    assert panel.chart is not None


@pytest.mark.parametrize("protocol", ["v1", "legacy"])
def test_through_a_server_in_either_protocol_the_same_stages_add_up(protocol, no_leftovers):
    r = run_kernel_messages(
        msg=["execute", "info", "comm"],
        size=[1000],
        buffers=[False, True],
        via=["zmq", "server"],
        ws_protocol=[protocol],
        **QUICK,
    )
    df = r.df
    served = df[df["via"] == "server"]
    assert set(served["msg"]) == {"execute", "info", "comm"}
    assert set(served["ws_protocol"]) == {protocol}
    assert df[df["via"] == "zmq"]["ws_protocol"].isna().all()
    assert (abs(_stage_sum(df) - df["roundtrip_us"]) < 1e-6).all()
    assert (served[STAGES] > 0).all().all()
    assert f"through a server ({protocol})" in str(r)
    # The server's hop back, heard beside it: within the reply and idle stages it ends.
    assert (served["server_hop_us"] > 0).all()
    assert (served["server_hop_us"] <= served["reply_us"] + served["idle_us"] + 1).all()
    assert df[df["via"] == "zmq"]["server_hop_us"].isna().all()
    assert "the server's hop back" in str(r)


def test_a_servers_iopub_limits_drop_a_streams_output_and_say_which_fired(no_leftovers):
    # 20 MB in one cell: past jupyter_server's default 1 MB/s data limit at once.
    flood = {"msg": ["stream"], "size": ["10k"], "via": ["server"], **QUICK, "count": 2000}
    limited = run_kernel_messages(**flood).df.iloc[0]
    assert limited["output_lost_fraction"] > 0
    assert limited["data_limit_hits"] >= 1
    unlimited = run_kernel_messages(
        **flood, iopub_msg_rate_limit=0, iopub_data_rate_limit=0
    ).df.iloc[0]
    assert unlimited["output_lost_fraction"] == 0
    assert unlimited["data_limit_hits"] == unlimited["msg_limit_hits"] == 0


def test_a_kernels_start_is_not_asked_of_a_server():
    with pytest.raises(ValueError, match="--via zmq"):
        run_kernel_messages(msg=["start"], via=["server"], **QUICK)


def test_a_kernel_that_dies_behind_a_server_is_named_and_nothing_is_left(no_leftovers):
    with pytest.raises(KernelDied, match="python3 kernel died"):
        run_kernel_messages(code="import os; os._exit(3)", via=["server"], **QUICK)


def test_the_chart_of_a_run_whose_points_name_different_settings_draws():
    """Execute rows have no size or buffers, comm rows have both: one chart of them all."""
    from zmqbench_magic.charts import chart_to_svg
    from zmqbench_magic.kinds.kernelmsg import chart

    r = run_kernel_messages(msg=["execute", "comm"], size=[100], buffers=[False, True], **QUICK)
    svg = chart_to_svg(chart(r.df))
    assert "Where a kernel message's round trip goes" in svg
    assert svg.count("<path") > 3


def test_both_paths_run_where_the_thread_already_runs_an_event_loop(no_leftovers):
    """As in a notebook, whose kernel's main thread runs its own loop."""
    import asyncio

    async def in_a_running_loop():
        return run_kernel_messages(msg=["info"], via=["zmq", "server"], **QUICK)

    assert set(asyncio.run(in_a_running_loop()).df["via"]) == {"zmq", "server"}


def test_the_two_paths_pair_though_only_one_names_a_websocket_protocol():
    """A known answer: the server's path ten times the direct one's, every round."""
    from zmqbench_magic import ResultSet

    rows = []
    for sample in range(8):
        for via, extra, roundtrip in (
            ("zmq", {}, 2000.0),
            ("server", {"ws_protocol": "v1"}, 20000.0),
        ):
            rows.append(
                {
                    "msg": "info",
                    "kernel": "python3",
                    "via": via,
                    **extra,
                    "sample": sample,
                    "run": "r",
                    "roundtrip_us": roundtrip + sample,
                }
            )
    table = ResultSet("kernelmsg", tuple(rows)).versus("via", "zmq", "server")
    assert list(table["verdict"]) == ["slower"]
    assert table["ratio"].iloc[0] == pytest.approx(10, rel=0.01)


def test_signing_on_and_off_in_one_run_and_off_means_an_empty_key(no_leftovers):
    from zmqbench_magic.kernel_messages.kernel import kernel_under_test

    with kernel_under_test("python3", 30.0, signing=False) as kernel:
        assert json.loads(Path(kernel.manager.connection_file).read_text())["key"] == ""
    r = run_kernel_messages(msg=["info"], signing=[True, False], **QUICK)
    assert set(r.df["signing"]) == {True, False}
    assert "unsigned" in str(r) and "signed" in str(r)
    with pytest.raises(ValueError, match="--via zmq"):
        run_kernel_messages(msg=["info"], signing=[False], via=["server"], **QUICK)


def test_a_request_whose_kernel_stamps_fall_outside_the_clients_is_left_out_of_the_stages():
    """A known answer: the same instants, once as a kernel stamps them and once as
    xeus-python 0.19 writes a stamp whose fraction of the second is under 0.1
    (``07.37174Z`` for 07.037174: the leading zero dropped)."""
    from zmqbench_magic.kernel_messages.sweep import _row
    from zmqbench_magic.kernel_messages.trips import Trip
    from zmqbench_magic.params.kernel_messages import KernelMsgPoint

    def trip(busy):
        made = Trip(sent=7.036514, busy=busy, replied=7.037380, reply_received=7.037592)
        made.ended = 7.037700
        return made

    right, misprinted = trip(7.037174), trip(7.37174)
    slower = Trip(sent=8.0, busy=8.001, replied=8.002, reply_received=8.003)
    slower.ended = 8.004
    assert right.stamps_in_order() and not misprinted.stamps_in_order()
    point = KernelMsgPoint(msg="info")
    row = _row(point, 3, [right, misprinted, slower])
    assert row["unordered_stamps"] == 1
    # The stages are the two staged requests' means, and add up to their mean round trip;
    # the round trip is all three's.
    assert row["staged_roundtrip_us"] == pytest.approx(1e6 * (0.001186 + 0.004) / 2)
    assert sum(row[s] for s in STAGES) == pytest.approx(row["staged_roundtrip_us"])
    assert row["to_kernel_us"] == pytest.approx(1e6 * (0.000660 + 0.001) / 2)
    assert row["roundtrip_us"] == pytest.approx(1e6 * (2 * 0.001186 + 0.004) / 3)
    row = _row(point, 1, [misprinted])
    assert row["unordered_stamps"] == 1 and all(row[s] != row[s] for s in STAGES)  # NaN


def test_ipykernel_against_xeus_python_gets_a_paired_verdict(no_leftovers):
    """Two kernelspecs in one interleaved run, each round on fresh kernels of both: a
    verdict paired by round. xeus-python's stamps are checked, not believed, and its
    ``started`` (stamped as its reply is made, after the cell ran) bounds no handler."""
    r = run_kernel_messages(
        msg=["execute", "info"],
        kernel=["python3", "xpython"],
        repeat=3,
        warmup=0,
        count=50,
        timeout=30.0,
    )
    df = r.df
    assert set(df["kernel"]) == {"python3", "xpython"}
    table = r.versus("kernel", "python3", "xpython")
    # Three rounds: three pairs, each of a round's two fresh kernels (too few to call:
    # the verdict is inconclusive, and says why).
    assert table[["paired", "n"]].to_dict("records") == [{"paired": True, "n": 3}] * 2
    assert set(table["verdict"]) == {"inconclusive"} and "3 cannot reach" in table["reason"].iloc[0]
    ipykernel = df[df["kernel"] == "python3"]
    assert (ipykernel["unordered_stamps"] == 0).all()
    assert (ipykernel["staged_roundtrip_us"] == ipykernel["roundtrip_us"]).all()
    # A sample whose every request the kernel misstamped (a short one, within a tenth
    # of a second) has no stages at all.
    staged = df[df["staged_roundtrip_us"].notna()]
    assert (abs(_stage_sum(staged) - staged["staged_roundtrip_us"]) < 1e-6).all()
    assert df[df["staged_roundtrip_us"].isna()][STAGES].isna().all().all()
    executes = df[df["msg"] == "execute"]
    assert executes.query("kernel == 'python3'")["handler_us"].notna().all()  # never misstamped
    assert executes.query("kernel == 'xpython'")["handler_us"].isna().all()
    if df["unordered_stamps"].sum():
        assert "left out of the stages, not of the round trip" in str(r)


def test_a_kernel_whose_comms_never_echo_is_named(no_leftovers):
    """xeus-python 0.19's PyPI wheel fails a frontend's comm_open (a pybind11 error on
    its stderr): the echo registered on it never answers, and the run says so after one
    timeout, not one a request."""
    with pytest.raises(TimeoutError, match="no echo of a comm message to the target"):
        run_kernel_messages(msg=["comm"], kernel=["xpython"], **{**QUICK, "timeout": 3.0})


def test_each_packer_is_the_one_on_the_wire_and_they_are_paired(no_leftovers):
    """The kernel's reply, read off its shell socket as bytes: msgpack where the run
    says msgpack (no JSON parser reads it), JSON where it says json; both packers in
    one run, paired by round."""
    import msgpack

    from zmqbench_magic.kernel_messages.kernel import kernel_under_test

    for packer, unpack in (("msgpack", msgpack.unpackb), ("json", json.loads)):
        with kernel_under_test("python3", 30.0, packer=packer) as kernel:
            session = kernel.client.session
            session.send(kernel._shell, session.msg("kernel_info_request", {}))
            frames = kernel._shell.recv_multipart()
            content = frames[frames.index(b"<IDS|MSG>") + 5]
            assert unpack(content)["implementation"] == "ipython"
            if packer == "msgpack":
                with pytest.raises(ValueError):
                    json.loads(content)
    r = run_kernel_messages(msg=["info"], packer=["json", "msgpack"], **{**QUICK, "repeat": 2})
    assert set(r.df["packer"]) == {"json", "msgpack"} and "packed by msgpack" in str(r)
    assert list(r.versus("packer", "json", "msgpack")["paired"]) == [True]


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"packer": ["msgpack"], "via": ["server"]}, "a server packs with its own Session"),
        ({"packer": ["json"], "kernel": ["xpython"]}, "the xpython kernel is not one"),
    ],
)
def test_a_packer_the_path_or_kernel_cannot_take_is_named(values, words):
    with pytest.raises(ValueError, match=words):
        run_kernel_messages(msg=["info"], **values, **QUICK)


@pytest.mark.slow
def test_from_a_jupyterlab_page_in_chromium_the_same_stages_add_up(no_leftovers):
    """JupyterLab's own kernel client in headless Chromium makes the requests; run, as
    in a notebook, where the thread already runs an event loop."""
    import asyncio

    async def in_a_running_loop():
        return run_kernel_messages(
            msg=["execute", "comm"], size=[1000], buffers=[True], via=["browser"], **QUICK
        )

    r = asyncio.run(in_a_running_loop())
    df = r.df
    assert set(df["via"]) == {"browser"} and set(df["msg"]) == {"execute", "comm"}
    assert (abs(_stage_sum(df) - df["roundtrip_us"]) < 1e-6).all()
    assert (df[["to_kernel_us", "in_kernel_us", "reply_us"]] > 0).all().all()
    assert "from a JupyterLab page" in str(r)
