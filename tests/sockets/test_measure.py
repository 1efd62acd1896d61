"""Real ZeroMQ sockets on every transport, through the function and through the magic."""

from __future__ import annotations

import itertools
import math
import time

import pytest
from conftest import TINY

from zmqbench_magic.method.calibrate import calibrate
from zmqbench_magic.params import SocketPoint
from zmqbench_magic.sockets.protocol import PeerOrder

THR_COLUMNS = {
    "benchmark",
    "size",
    "copy",
    "transport",
    "peer",
    "count",
    "sample",
    "copy_threshold",
    "frames",
    "received",
    "msgs_per_s",
    "send_msgs_per_s",
    "mbit_per_s",
    "queue_hwm",
}
LAT_COLUMNS = {
    "benchmark",
    "size",
    "copy",
    "transport",
    "peer",
    "count",
    "sample",
    "copy_threshold",
    "frames",
    "sample_mean_us",
    "sample_p50_us",
    "sample_p90_us",
    "sample_p99_us",
    "max_us",
    "min_us",
}


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_throughput_on_each_transport(bench, transport, no_leftovers):
    result = bench("thr", size=[100, 64 * 1024], copy=[True, False], transport=transport, **TINY)
    df = result.df
    assert set(df.columns) >= THR_COLUMNS
    assert len(df) == 2 * 2 * TINY["repeat"]
    assert set(df["benchmark"]) == {"thr"}
    assert set(df["peer"]) == {"thread" if transport == "inproc" else "process"}
    assert (df["count"] == TINY["count"]).all()
    assert sorted(df["sample"].unique()) == list(range(TINY["repeat"]))
    # tcp never loses messages; libzmq may over ipc, which the row then records.
    if transport != "ipc":
        assert (df["received"] == df["count"]).all()
    assert (df["msgs_per_s"] > 0).all()
    # The send-only rate times the first sends the sender's own queue holds (here all
    # 200: fewer than its high-water mark), within the time all the sends took.
    assert (df["send_only_count"] == df[["count", "queue_hwm"]].min(axis=1)).all()
    assert (df["send_only_count"] / df["send_msgs_per_s"] <= df["send_elapsed_s"]).all()
    # The derived figures agree with the raw timings they came from.
    assert list(df["msgs_per_s"] * df["elapsed_s"]) == pytest.approx(list(df["received"] - 1))
    assert list(df["mbit_per_s"]) == pytest.approx(list(df["msgs_per_s"] * df["size"] * 8 / 1e6))
    _check_cpu(df, transport)


def _check_cpu(df, transport: str) -> None:
    """Each end's CPU per message: measured, and on the clock its far end allows; and
    each end's peak memory, where the far end is a process of its own."""
    assert (df["send_cpu_us_per_msg"] > 0).all() and (df["recv_cpu_us_per_msg"] > 0).all()
    assert set(df["cpu_clock"]) == {"thread" if transport == "inproc" else "process"}
    assert (df["driver_peak_mb"] > 0).all()
    if transport == "inproc":  # a thread of the driver: in the driver's figure
        assert df["far_peak_mb"].isna().all()
    else:
        assert (df["far_peak_mb"] > 0).all()


def test_a_threads_cpu_time_never_exceeds_the_time_it_ran(bench, no_leftovers):
    """With a thread far end each end counts its own thread's CPU, which cannot be more
    than the wall time of the loop (plus the CPU clock's resolution)."""
    df = bench("thr", size=[100, 64 * 1024], transport="inproc", count=20000, repeat=2, warmup=0).df
    send_cpu_s = df["send_cpu_us_per_msg"] * df["count"] / 1e6
    assert (send_cpu_s <= df["send_elapsed_s"] * 1.05 + 0.005).all()
    # It ran and was timed (how much of the wall time it had is the scheduler's to say:
    # at the high-water mark it waits on the other end, which a busy machine starves).
    assert (send_cpu_s > 0).all()


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_latency_on_each_transport(bench, transport, no_leftovers):
    result = bench("lat", size=[1, 1024], transport=transport, **TINY)
    df = result.df
    assert set(df.columns) >= LAT_COLUMNS
    assert len(df) == 2 * TINY["repeat"]
    assert set(df["benchmark"]) == {"lat"}
    assert (df["min_us"] > 0).all()
    assert (df["min_us"] <= df["sample_p50_us"]).all()
    assert (df["sample_p50_us"] <= df["sample_p90_us"]).all() and (
        df["sample_p90_us"] <= df["sample_p99_us"]
    ).all()
    assert (df["sample_p99_us"] <= df["max_us"]).all()
    assert ((df["min_us"] <= df["sample_mean_us"]) & (df["sample_mean_us"] <= df["max_us"])).all()
    assert list(df["sample_mean_us"] * df["count"]) == pytest.approx(list(df["elapsed_s"] * 1e6))
    _check_cpu(df, transport)


def test_thread_peer_on_tcp_shows_the_in_kernel_pair(bench, no_leftovers):
    df = bench("thr", transport="tcp", peer=["process", "thread"], **TINY).df
    assert list(df["peer"].unique()) == ["process", "thread"]


def test_copy_threshold_is_swept_and_recorded(bench, no_leftovers):
    result = bench("thr", size=1024, copy=False, copy_threshold=[0, 1 << 20], **TINY)
    assert sorted(result.df["copy_threshold"].unique()) == [0, 1 << 20]
    assert result.metadata["zmq_copy_threshold_default"] == 65536


def test_calibrated_samples_last_min_time(no_leftovers):
    from zmqbench_magic import run_throughput

    result = run_throughput(size=100, repeat=2, warmup=0, min_time=0.05)
    df = result.df
    assert (df["count"] > 10).all()  # grown from the starting count
    # A kept sample may come in a little under min_time (the machine is noisy), but
    # the calibrated count was the one whose sample reached it.
    assert df[["elapsed_s", "send_elapsed_s"]].max(axis=1).max() >= 0.05 * 0.5


def test_calibration_with_a_fake_clock_is_deterministic():
    """The loop-count search alone, on a clock where each message costs 10 µs."""
    counts = []

    def sample(count):
        counts.append(count)
        return {}, count * 10e-6

    assert calibrate(sample, min_time=0.2) == counts[-1]
    assert counts[0] == 10
    assert counts[-1] * 10e-6 >= 0.2
    assert counts[-2] * 10e-6 < 0.2
    assert all(b <= 100 * a for a, b in itertools.pairwise(counts))
    # Enough but not wasteful: within 20% spare plus rounding of the needed count.
    assert counts[-1] <= math.ceil(1.2 * 0.2 / 10e-6) + 1


def test_metadata_records_the_environment(no_leftovers):
    from zmqbench_magic import run_latency

    meta = run_latency(**TINY).metadata
    for key in ("python", "pyzmq", "libzmq", "host", "cpu", "date", "zmq_copy_threshold_default"):
        assert meta[key]


def test_progress_is_reported_after_each_sample(no_leftovers):
    from zmqbench_magic import run_latency

    calls = []
    run_latency(
        size=[1, 100, 1000], progress=lambda done, total: calls.append((done, total)), **TINY
    )
    assert calls == [(n, 6) for n in range(1, 7)]


def test_a_sink_that_misses_messages_reports_what_arrived(no_leftovers):
    """What happens when libzmq drops messages (it can over ipc): the sink waits one
    timeout past the last message, then says how many arrived, instead of hanging."""
    from zmqbench_magic.sockets.kernel.link import Link

    with Link("sink", "ipc", "process", "127.0.0.1", timeout=0.5, hwm=1000) as link:
        # 105 expected, 5 of which will never come.
        link.command(PeerOrder(cmd="sink", count=105, copy=True, frames=1, loop="python"))
        link.reply(timeout=5)  # its acknowledgement: a busy machine may be slow to give it
        # Read before the sends: the sink cannot have its last message before it was
        # sent, so its timeout runs out no sooner than this plus the timeout, however
        # long this thread is held up between sending and waiting.
        started = time.monotonic()
        for _ in range(100):
            link.data.send(b"x")
        report = link.reply(timeout=5)
    assert report["received"] == 100
    # It waited out the link's own timeout (less 10 ms: libzmq times a receive in whole
    # milliseconds from a clock it caches, so its wait may end a millisecond early).
    assert time.monotonic() - started >= 0.5 - 0.01


def test_a_far_end_slower_to_start_than_the_timeout_is_waited_for(no_leftovers, python_startup):
    """The timeout is per message; starting an interpreter that imports pyzmq can take
    seconds on a busy machine, and the start has a floor of its own."""
    from zmqbench_magic.params.common import START_FLOOR_S
    from zmqbench_magic.sockets.kernel.link import Link

    python_startup("import time\ntime.sleep(1.5)\n")
    assert START_FLOOR_S > 1.5 + 2  # room for the interpreter's own start
    with Link("echo", "tcp", "process", "127.0.0.1", timeout=0.5, hwm=1000) as link:
        link.command(PeerOrder(cmd="echo", count=1, copy=True, frames=1, loop="python"))
        link.reply(timeout=5)  # its acknowledgement
        link.data.send(b"x")
        assert link.data.recv() == b"x"
        assert link.reply(timeout=5)["echoed"] == 1


def test_lost_messages_are_a_warning_not_hidden():
    from zmqbench_magic.sockets.kernel.measure import _point_warnings

    point = SocketPoint.of({"transport": "ipc", "size": 1, "copy": True, "peer": "process"})
    rows = [
        {"count": 1000, "received": 1000, "msgs_per_s": 1.0},
        {"count": 1000, "received": 993, "msgs_per_s": 1.0},
    ]
    (warning,) = _point_warnings(rows, point)
    assert "7 of 1,000 lost" in warning and "ipc" in warning and "#4660" in warning


def test_a_numbered_loss_says_its_gaps_and_where_it_began():
    from zmqbench_magic.sockets.kernel.measure import _point_warnings

    point = SocketPoint.of({"transport": "tcp", "size": 100, "copy": True, "peer": "process"})
    point = point.where(pattern="pubsub", peers=2)
    numbered = {"count": 3000, "received": 2000, "lost": 4000, "queue_hwm": 1000}
    numbered |= {"gaps": 2, "first_lost": 1000}
    (warning,) = _point_warnings([numbered], point)
    assert "4,000 of 6,000 lost in 2 gap(s), the first missed message no. 1,000)" in warning
    (plain,) = _point_warnings([{**numbered, "gaps": math.nan}], point)
    assert "4,000 of 6,000 lost); rates" in plain
