"""The patterns (``--pattern``, ``--peers``, ``--io-threads``): real sockets between real
processes and threads, every message counted, each peer's own rate, a far end killed
mid-run named, nothing left behind."""

from __future__ import annotations

import itertools
import json
import os
import threading
from typing import Any

import pytest
import zmq
from conftest import killed_mid_sample, member_processes

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import PATTERN, PATTERNS, ThroughputParams
from zmqbench_magic.sockets.far_ends import member
from zmqbench_magic.sockets.far_ends.peer import PeerError
from zmqbench_magic.sockets.kernel.crowd import Crowd
from zmqbench_magic.sockets.kernel.link import Link
from zmqbench_magic.sockets.loops import member_loops, numbering
from zmqbench_magic.sockets.loops.numbering import STAMP, missing, stamp_of, union
from zmqbench_magic.sockets.loops.pattern_loops import pattern_sample
from zmqbench_magic.sockets.payload import Payload

QUICK = {"size": [100], "repeat": 2, "warmup": 0, "count": 3000}
# PUSH/PULL and a proxy-free pipeline never drop a message over tcp.
NEVER_DROP = ("pipeline", "fanin", "pairs")


# Every pattern of many ends, each sender flat out (a slow joiner joins one publishing
# at a rate: tests/sockets/test_pressure.py).
FLAT_OUT = [p for p in PATTERN.choices if not PATTERNS[p].joins_late]


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_every_pattern_runs_and_counts_every_message(no_leftovers):
    result = run_throughput(pattern=FLAT_OUT, peers=[1, 2], **QUICK)
    df = result.df
    assert set(df["pattern"]) == set(FLAT_OUT)
    assert set(df["peers"]) == {1, 2}
    for column in ("lost", "slowest_peer_msgs_per_s", "fastest_peer_msgs_per_s", "peer_fairness"):
        assert column in df.columns
    # What should have come, came or was counted lost: per sample, nothing unaccounted.
    dealt = df["pattern"].map(lambda name: PATTERNS[name].dealt)  # each message to one
    expected = df["count"] * df["peers"].where(~dealt, 1)
    assert list(df["received"] + df["lost"]) == list(expected)
    assert (df.loc[df["pattern"].isin(NEVER_DROP), "lost"] == 0).all()
    assert (df["slowest_peer_msgs_per_s"] <= df["fastest_peer_msgs_per_s"]).all()
    assert df["peer_fairness"].between(0, 1).all()
    one = df[df["peers"] == 1]
    assert (one["peer_fairness"] == 1).all()  # one peer is the slowest and the fastest
    lines = str(result)
    assert "pubsub 2 peers" in lines and "fanin 1 peer " in lines


def test_the_pipeline_of_one_is_the_earlier_run_and_reads_as_before():
    df = run_throughput(**QUICK).df
    assert set(df["pattern"]) == {"pipeline"} and set(df["peers"]) == {1}
    assert (df["lost"] == df["count"] - df["received"]).all()
    assert (df["slowest_peer_msgs_per_s"] == df["msgs_per_s"]).all()


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_threads_over_inproc_and_the_native_loop(no_leftovers):
    df = run_throughput(
        pattern=["pubsub", "fanin", "pairs", "proxy"],
        peers=[2],
        transport=["inproc"],
        loop=["python", "native"],
        **QUICK,
    ).df
    assert set(df["peer"]) == {"thread"}
    assert set(df["loop"]) == {"python", "native"}
    assert (df.loc[df["pattern"].isin(NEVER_DROP), "lost"] == 0).all()
    assert (df["msgs_per_s"] > 0).all()


def _pull_push(ctx: zmq.Context) -> tuple[zmq.Socket, zmq.Socket]:
    """A receiver's PULL, waiting as a member's does, and a PUSH connected to it."""
    pull, push = ctx.socket(zmq.PULL), ctx.socket(zmq.PUSH)
    for sock in (pull, push):
        sock.linger = 0
    pull.rcvtimeo = int(member.QUIET_S * 1000)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push.connect(f"tcp://127.0.0.1:{port}")
    return pull, push


def test_a_planted_loss_is_counted_exactly(no_leftovers):
    # A receiver told to expect 500 messages, of which its sender sends 493: it
    # reports the 493 once the senders are done and a silence follows, never waits
    # for the 7 that will not come, and they are what the sample counts lost.
    with zmq.Context() as ctx:
        pull, push = _pull_push(ctx)
        done = threading.Event()

        def send() -> None:
            for _ in range(493):
                push.send(b"x" * 100)
            done.set()

        sender = threading.Thread(target=send)
        sender.start()
        got = member_loops.receive(
            pull,
            {"expect": 500, "copy": True, "frames": 1, "loop": "python"},
            notice=done.is_set,
            timeout=10.0,
        )
        sender.join()
        pull.close()
        push.close()
    assert got["received"] == 493
    assert 500 - got["received"] == 7
    assert got["last"] >= got["first"] > 0


def test_a_pubsub_loss_is_the_publishers_count_less_what_each_subscriber_got(no_leftovers):
    # A PUB drops what a subscriber's queue cannot hold: whatever it dropped, each
    # subscriber's report and the sample's lost add up to what was published to each.
    with Crowd("pubsub", 3, "tcp", "process", "127.0.0.1", 10.0, 10) as crowd:
        row, _ = pattern_sample(crowd, Payload.blank(1000), 20_000, copy=True)
        got = [m.report["received"] for m in crowd.receivers if m.report]
    assert len(got) == 3
    assert row["received"] == sum(got)
    assert row["lost"] == 3 * 20_000 - sum(got)


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_a_subscriber_killed_mid_run_is_named_and_nothing_is_left(no_leftovers):
    error = killed_mid_sample(
        lambda: run_throughput(
            pattern=["pubsub"], peers=[3], size=[100], count=50_000_000, repeat=1
        ),
        members=3,
    )
    assert isinstance(error, PeerError)
    assert "subscriber" in str(error) and "exited" in str(error)
    assert "killed by signal 9" in str(error)
    assert member_processes() == []


def test_sixteen_peers_leave_nothing_behind(no_leftovers):
    with Crowd("pairs", 8, "ipc", "process", "127.0.0.1", 10.0, 1000) as crowd:
        assert len(crowd.members) == 16
        assert len(member_processes()) == 16
        ipc_dir = crowd.ipc_dir
        row, _ = pattern_sample(crowd, Payload.blank(100), 1000, copy=True)
    assert row["lost"] == 0
    assert member_processes() == []
    assert ipc_dir is not None and not os.path.exists(ipc_dir)


def _threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_io_threads_are_the_far_ends_context_threads(no_leftovers):
    # A context starts its I/O threads (and a reaper) as its first socket opens: a far
    # end asked for three has two more threads than one asked for one.
    counts = {}
    for io_threads in (1, 3):
        with Link("sink", "tcp", "process", "127.0.0.1", 10.0, 1000, io_threads=io_threads) as link:
            (pid,) = link.pids()
            counts[io_threads] = _threads_of(pid)
    assert counts[3] - counts[1] == 2
    with Crowd("fanin", 1, "tcp", "process", "127.0.0.1", 10.0, 1000, io_threads=3) as crowd:
        (pid,) = crowd.pids()
        assert _threads_of(pid) == counts[3]


def test_io_threads_sweep_on_both_benchmarks():
    thr = run_throughput(io_threads=[1, 2], **QUICK)
    lat = run_latency(io_threads=[1, 2], size=[100], repeat=2, warmup=0, count=300)
    for result in (thr, lat):
        assert set(result.df["io_threads"]) == {1, 2}
    assert "2 I/O threads" in str(thr)


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"peers": 0}, "peers must be from 1 to 256, got 0"),
        ({"peers": 10_000}, "peers must be from 1 to 256, got 10000"),
        ({"pattern": "mesh"}, "pattern must be one of pipeline, pubsub, fanin, pairs, proxy"),
        ({"io_threads": 0}, "io_threads must be from 1 to 64, got 0"),
        ({"pattern": "pubsub", "loop": "asyncio"}, "--loop asyncio drives one socket"),
        ({"pattern": "fanin", "curve": True}, "--curve true encrypts one far end's path"),
        ({"peers": 2, "driver": "process"}, "--driver process drives one far end"),
        (
            {"pattern": "pairs", "remote": "tcp://127.0.0.1:5555"},
            "pairs, proxy, joiner and router run on",
        ),
        ({"pattern": "pubsub", "transport": "inproc", "peer": "process"}, "inproc only connects"),
    ],
)
def test_bad_settings_are_refused_in_one_sentence(values, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        ThroughputParams(**values)


def test_ends_past_the_cores_are_said_before_the_run():
    cores = os.cpu_count() or 1
    crowded = ThroughputParams(pattern="pairs", peers=cores)  # 2N + 1 ends
    (caution,) = [c for c in crowded.cautions() if "scheduler" in c]
    assert f"keeps {PATTERNS['pairs'].ends(cores)} ends busy on {cores} cores" in caution
    assert not [c for c in ThroughputParams().cautions() if "scheduler" in c]


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_versus_compares_patterns_and_peers():
    result = run_throughput(pattern=["pipeline", "pubsub"], peers=[1, 2], **QUICK)
    by_pattern = result.versus("pattern", "pipeline", "pubsub")
    by_peers = result.versus("peers", 1, 2)
    assert len(by_pattern) == 2 and len(by_peers) == 2


def test_a_proxy_told_nothing_for_longer_than_the_timeout_still_forwards(no_leftovers):
    # A proxy takes no command while it forwards, however long a run: its control
    # loop has no timeout to run out (the other far ends hear a command every sample).
    with zmq.Context() as ctx:
        ctrl, pub, sub = ctx.socket(zmq.PAIR), ctx.socket(zmq.XPUB), ctx.socket(zmq.SUB)
        for sock in (ctrl, pub, sub):
            sock.linger = 0
            sock.rcvtimeo = 10_000
        ctrl.bind("inproc://test-proxy-ctrl")
        pub.bind("inproc://test-proxy-in")
        proxy = threading.Thread(
            target=member.serve,
            args=(ctx, "proxy", "inproc://test-proxy-ctrl", "inproc://test-proxy-in"),
            kwargs={"bind": False, "timeout": 0.5, "hwm": 1000, "proxy_url": "inproc://test-out"},
        )
        proxy.start()
        ready = json.loads(ctrl.recv())
        sub.connect(ready["endpoint"])
        sub.subscribe(b"")
        assert pub.recv() == b"\x01"  # the subscription came through the proxy
        threading.Event().wait(1.5)  # three of its timeouts with nothing said to it
        assert proxy.is_alive()
        pub.send(b"through")
        assert sub.recv() == b"through"
        ctrl.send(b'{"cmd": "quit"}')
        proxy.join(10)
        assert not proxy.is_alive()
        for sock in (ctrl, pub, sub):
            sock.close()


@pytest.mark.parametrize(("transport", "pattern"), [("tcp", "pubsub"), ("inproc", "proxy")])
def test_a_kernel_interrupt_mid_pattern_leaves_nothing(
    transport, pattern, no_leftovers, kernel_sigint
):
    # Far ends in processes (tcp) and in threads of this one (inproc), mid-sample.
    kernel_sigint(0.5, when=lambda: transport == "inproc" or len(member_processes()) == 4)
    with pytest.raises(KeyboardInterrupt):
        run_throughput(
            pattern=[pattern], peers=[4], transport=[transport], size=[100], count=50_000_000
        )
    assert member_processes() == []


@pytest.mark.parametrize(("transport", "peer"), [("inproc", "thread"), ("tcp", "process")])
def test_nodrop_makes_the_publisher_and_the_proxy_wait_and_nothing_is_lost(
    transport, peer, no_leftovers
):
    # Queues of 10 messages that a burst of 20,000 overflows at once: with --nodrop the
    # kernel's PUB and the proxy's XPUB both wait for room, as libzmq's proxy_thr has them.
    with Crowd("proxy", 2, transport, peer, "127.0.0.1", 10.0, 10, nodrop=True) as crowd:
        row, _ = pattern_sample(crowd, Payload.blank(100), 20_000, copy=True)
    assert row["lost"] == 0 and row["received"] == 2 * 20_000


@pytest.mark.parametrize(
    ("transport", "peer", "loop"),
    [("inproc", "thread", "native"), ("tcp", "process", "python"), ("ipc", "process", "native")],
)
def test_a_proxy_of_two_publishers_delivers_each_ones_count_to_every_subscriber(
    transport, peer, loop, no_leftovers
):
    """As libzmq's proxy_thr: this process's PUB and a publisher far end beside it, both
    into one proxy. Every subscriber gets both counts; with --nodrop over queues a burst
    overflows at once, nothing is lost, and both publishers' sends are counted."""
    with Crowd(
        "proxy", 2, transport, peer, "127.0.0.1", 10.0, 10, nodrop=True, publishers=2
    ) as crowd:
        assert [m.name for m in crowd.senders] == ["publisher 2"]
        assert "from 2 publishers" in crowd.describe()
        row, _ = pattern_sample(crowd, Payload.blank(100), 5_000, copy=False, loop=loop)
    assert row["received"] == 2 * 2 * 5_000 and row["lost"] == 0, row
    assert row["send_elapsed_s"] > 0 and row["msgs_per_s"] > 0


def test_publishers_through_the_magic_and_refused_elsewhere(no_leftovers):
    r = run_throughput(
        pattern="proxy", publishers=2, transport="inproc", nodrop=True, hwm=1000, **QUICK
    )
    df = r.df
    assert (df["received"] == 2 * df["count"]).all() and (df["lost"] == 0).all()
    assert r.settings["publishers"] == 2
    with pytest.raises(ValueError, match="--publishers 2: publishers feed a proxy"):
        run_throughput(pattern="pubsub", publishers=2)
    with pytest.raises(ValueError, match="--sequence true numbers one publisher's"):
        run_throughput(pattern="proxy", publishers=2, sequence=True)
    with pytest.raises(ValueError, match="publishers must be from 1 to 64, got 0"):
        run_throughput(pattern="proxy", publishers=0)


# Numbered messages (--sequence true) ------------------------------------------------
NUMBERED_COLUMNS = ("gaps", "first_lost", "most_lost_by_one_peer", "reordered", "age_ms")


def _planted_numbers(numbers: list[int], loop: str, expect: int = 500) -> dict[str, Any]:
    """What a receiver of 500 numbered messages (told to expect ``expect``: 0, a share
    unknown) reports when its sender sends only ``numbers`` (the planted loss of the
    test above, by number)."""
    with zmq.Context() as ctx:
        pull, push = _pull_push(ctx)
        done = threading.Event()

        def send() -> None:
            for number in numbers:
                push.send(stamp_of(0, number).to_bytes(8, "little") + b"x" * 92)
            done.set()

        order = {"expect": expect, "copy": True, "frames": 1, "loop": loop}
        order["numbered"] = {"senders": [0], "count": 500}
        sending = threading.Thread(target=send)
        sending.start()
        got = member_loops.receive(pull, order, notice=done.is_set, timeout=10.0)
        sending.join()
        pull.close()
        push.close()
    return got


@pytest.mark.parametrize("loop", ["python", "native"])
def test_numbered_messages_say_which_went_missing(loop, no_leftovers):
    # 7 numbers missing from 100 on, 3 more at the tail after the last that came, and
    # one number sent twice: two gaps, ten missed, the first at 100, one reordered.
    numbers = [n for n in range(497) if not 100 <= n < 107]
    numbers.insert(200, 150)
    got = _planted_numbers(numbers, loop)
    assert got["received"] == len(numbers) == 491
    assert (got["gaps"], got["missed"], got["first_lost"], got["reordered"]) == (2, 10, 100, 1)
    assert "bitmap" not in got  # its share was known: the figures are its own


@pytest.mark.parametrize("loop", ["python", "native"])
def test_receivers_whose_shares_are_unknown_are_read_together(loop, no_leftovers):
    # A pipeline's receivers (expect 0) share its messages: each one's own gaps are
    # the others' messages, so each sends its bitmap and only their union is read.
    evens = _planted_numbers(list(range(0, 500, 2)), loop, expect=0)
    odds = _planted_numbers([n for n in range(1, 500, 2) if n != 301], loop, expect=0)
    assert evens["received"] + odds["received"] == 499
    assert missing(union([evens["bitmap"], odds["bitmap"]]), 500) == (1, 1, 301)


def _slowed_stamps(every: int, pause: float) -> Any:
    """A stamp reader that pauses every ``every`` messages: a subscriber that falls
    behind its publisher."""
    seen = itertools.count()

    class Slow:
        size, pack_into = STAMP.size, STAMP.pack_into  # the hub's sends: as ever

        @staticmethod
        def unpack_from(message: Any) -> tuple[int, ...]:
            if next(seen) % every == 0:
                threading.Event().wait(pause)
            return STAMP.unpack_from(message)

    return Slow


def test_a_publisher_that_drops_is_numbered_gap_by_gap(monkeypatch, no_leftovers):
    # Queues of 10 messages and subscribers that fall behind (in threads, each pausing
    # every 50 messages): the PUB drops, and the numbers say where, agreeing with the
    # count (pattern_sample raises where they do not).
    monkeypatch.setattr(numbering, "STAMP", _slowed_stamps(50, 0.002))
    with Crowd("pubsub", 2, "tcp", "thread", "127.0.0.1", 10.0, 10) as crowd:
        row, _ = pattern_sample(crowd, Payload.blank(1000), 5000, copy=True, sequence=True)
        reports = [m.report for m in crowd.receivers if m.report]
    assert row["lost"] == 2 * 5000 - row["received"] > 0
    assert row["gaps"] >= 1 and row["reordered"] == 0
    assert 0 <= row["first_lost"] < 5000
    assert row["most_lost_by_one_peer"] == max(r["missed"] for r in reports)
    assert [r["missed"] for r in reports] == [5000 - r["received"] for r in reports]


@pytest.mark.parametrize("loop", ["python", "native"])
def test_numbered_push_pull_and_fanin_lose_nothing(loop, no_leftovers):
    df = run_throughput(
        pattern=["pipeline", "fanin", "pairs"], peers=[1, 3], loop=[loop], sequence=True, **QUICK
    ).df
    assert (df["lost"] == 0).all() and (df["gaps"] == 0).all() and (df["reordered"] == 0).all()
    assert df["first_lost"].isna().all()  # none missed
    shared = (df["pattern"] == "pipeline") & (df["peers"] == 3)
    assert df.loc[shared, "most_lost_by_one_peer"].isna().all()  # shares unknown
    assert (df.loc[~shared, "most_lost_by_one_peer"] == 0).all()
    # Every sender's numbers tracked on their own: fanin's three interleave at the hub.
    assert list(df["received"]) == list(df["count"] * df["peers"].where(~shared, 1))


def test_without_sequence_the_numbered_columns_are_unknown():
    df = run_throughput(pattern=["pipeline", "pubsub"], **QUICK).df
    for column in NUMBERED_COLUMNS:
        assert df[column].isna().all(), column


@pytest.mark.parametrize(
    ("values", "words"),
    [
        (
            {"size": [4, 100]},
            "--sequence true writes each message's number into its first 8 "
            "bytes: --size must be from 8 B, got 4 B",
        ),
        ({"loop": "asyncio"}, "--sequence true: --loop asyncio drives one socket"),
        ({"driver": "process"}, "--sequence true: --driver process drives one far end"),
    ],
)
def test_what_sequence_cannot_number_is_refused(values, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        ThroughputParams(sequence=True, **values)


def test_a_multipart_message_is_refused_numbered():
    with pytest.raises(ValueError, match="one frame of 8 bytes or more, got 2 frames of 12 B"):
        run_throughput(payload=[b"head", b"bodybody"], sequence=True, count=100, repeat=1)


def test_numbers_that_disagree_with_the_counts_are_named(monkeypatch, no_leftovers):
    # A receiver whose numbers say one more went missing than its count says: the
    # sample names both figures rather than report either.
    figures = numbering.Tally.figures
    monkeypatch.setattr(
        numbering.Tally, "figures", lambda self: {**figures(self), "missed": 1, "gaps": 1}
    )
    with (
        Crowd("fanin", 2, "inproc", "thread", "127.0.0.1", 10.0, 1000) as crowd,
        pytest.raises(PeerError, match="numbered messages say 1 went missing, its counts 0"),
    ):
        pattern_sample(crowd, Payload.blank(100), 500, copy=True, sequence=True)
