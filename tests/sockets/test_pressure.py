"""Queues under pressure (``%zmqthr --rate``, ``--work``, ``--slow-peers``), on real
sockets: a paced sender never runs ahead of its schedule; a consumer slower than its
producer makes a PUB drop and a PUSH wait, and the counts agree with the numbers the
receivers saw; one slow subscriber among fast ones is the one named; ``--nodrop``
turns a PUB's drops into waiting; a conflating subscriber (``--conflate true``) reads
fresher messages than a queue ahead of it gives; bad settings are refused before
anything starts.

The slow consumer's figures are bounded by construction, not by the machine's speed:
a receiver that works 2 ms on each message cannot take more than 500 a second, and
a sample of 1,000 messages of 64 kB offered far faster overflows queues that hold a
hundred or so (the high-water marks of 10, and the kernel's socket buffers).
"""

from __future__ import annotations

import math
import re
import threading
import time
from array import array
from types import SimpleNamespace

import pytest
from conftest import killed_mid_sample, member_processes, sampling, wait_until
from IPython.core.error import UsageError

from zmqbench_magic import run_throughput
from zmqbench_magic.params import PATTERNS, ThroughputParams
from zmqbench_magic.params.pressure import HELD_FRACTION, paced_count
from zmqbench_magic.sockets.far_ends.peer import PeerError
from zmqbench_magic.sockets.loops.numbering import stamp_of
from zmqbench_magic.sockets.loops.pattern_loops import _ages

# A consumer that works 2 ms on each message, fed 1,000 messages of 64 kB offered at
# 10k a second, through queues of 10 messages a side.
SLOW = {"work": "2ms", "rate": 10_000, "hwm": 10, "size": "64k", "count": 1000}
ONCE = {"repeat": 1, "warmup": 0}


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (
            {"work": "0.5s"},
            r"work 500ms per message: a receiver would spend longer on one message than the "
            r"--timeout of 0.5 s",
        ),
        ({"slow_peers": 1}, r"--slow-peers 1: only receivers that work are slow; add --work"),
        (
            {"rate": 1000, "loop": "native", "sequence": True},
            r"--rate paces the sender of numbered messages in the Python loop alone",
        ),
        ({"work": "1ms", "loop": "asyncio"}, r"--work slows the receivers of a pattern's loop"),
        ({"rate": 1000, "driver": "process"}, r"--driver process drives one far end"),
        ({"work": "0.1us"}, r"work must be 0 \(none\) or from 1us to 1s, got 1e-07"),
        ({"rate": 5}, r"rate must be 0 \(unpaced\) or from 10 msgs/s"),
    ],
)
def test_bad_pressure_is_refused_before_anything_starts(settings, named):
    with pytest.raises(ValueError, match=named):
        ThroughputParams(timeout=0.5, **settings)


def test_the_magic_refuses_too_long_a_work(ip):
    with pytest.raises(UsageError, match=r"work 1s per message: a receiver would spend longer"):
        ip.run_line_magic("zmqthr", "--work 1s --timeout 0.5")


def test_a_paced_sender_never_runs_ahead_of_its_schedule(no_leftovers):
    """Message i goes at its intended time, never before: 200 messages at 2,000 a
    second span at least 199 intervals, so the sender's rate over them never reads
    above the offer. At that pace nothing fills a queue."""
    r = run_throughput(rate=[2000], size=100, count=200, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["sent_per_s"] <= 2000, row["sent_per_s"]
    assert row["blocked_share"] == 0.0 and row["lost"] == 0 and row["received"] == 200
    assert math.isnan(row["age_ms"])  # unnumbered: no read's age is known
    # A busy machine may hold the sender back (never ahead): the words then say so, and
    # the longer line wraps (the words are compared with the wrapping undone).
    assert re.search(
        r"^tcp 100 B copy at 2k msgs/s: .* sent [\d,]+ of 2k offered( \(rate NOT held\))?, "
        r"blocked 0%",
        " ".join(str(r).split()),
    )


def test_a_native_paced_sender_never_runs_ahead_and_a_queue_that_fills_blocks_it(
    no_leftovers,
):
    """The native loop keeps the same schedule in C: 200 messages at 2,000 a second span
    at least 199 intervals (a rate never above the offer), from the kernel's PUSH and
    from a fan-in's senders; and fed
    to a receiver working 2 ms a message through queues of 10, its PUSH waits for room
    (blocked) and loses nothing."""
    r = run_throughput(rate=[2000], size=100, count=200, loop="native", **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["loop"] == "native" and row["received"] == 200 and row["lost"] == 0
    assert row["sent_per_s"] <= 2000, row["sent_per_s"]
    assert row["blocked_share"] == 0.0
    slow = run_throughput(loop="native", **{**SLOW, "count": 200}, **ONCE)
    (row,) = slow.df.to_dict("records")
    assert row["lost"] == 0 and row["received"] == 200 and row["blocked_share"] > 0, row
    # Senders that are far ends of their own (a fan-in's) pace in C too.
    fanin = run_throughput(
        pattern="fanin", peers=2, rate=[2000], size=100, count=200, loop="native", **ONCE
    )
    (row,) = fanin.df.to_dict("records")
    assert row["received"] == 2 * 200 and row["sent_per_s"] <= 2000, row


def test_a_native_sender_offered_a_million_a_second_says_what_it_held(no_leftovers):
    """1M msgs/s of 100 B, past what the Python pacer sends: the row's achieved rate is
    the sends over their own time, the summary line says whether the offer held, and
    a rate never reads above what was offered (the sender cannot run ahead)."""
    r = run_throughput(rate=["1M"], size=100, loop="native", min_time=0.2, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["received"] == row["count"] >= 200_000 and row["lost"] == 0
    assert 0 < row["sent_per_s"] <= 1e6, row
    held = row["sent_per_s"] >= HELD_FRACTION * 1e6
    line = " ".join(str(r).split())
    assert ("(rate NOT held)" in line) is not held, line


def test_a_slow_consumer_makes_a_pub_drop_and_a_push_wait(no_leftovers):
    r = run_throughput(pattern=["pubsub", "pipeline"], sequence=True, **SLOW, **ONCE)
    rows = {row["pattern"]: row for row in r.df.to_dict("records")}
    pub, push = rows["pubsub"], rows["pipeline"]
    # The PUB dropped, and the numbers the subscriber saw say the same as the counts.
    assert pub["lost"] > 0 and pub["gaps"] >= 1 and pub["first_lost"] >= 10
    assert pub["lost"] == 1000 - pub["received"]
    # The PUSH waited for room instead, and lost nothing.
    assert push["lost"] == 0 and push["gaps"] == 0 and push["received"] == 1000
    assert push["blocked_share"] > 0 and pub["blocked_share"] == 0.0
    # A receiver working 2 ms on each message takes at most 500 a second.
    assert pub["slowest_peer_msgs_per_s"] <= 500 and push["slowest_peer_msgs_per_s"] <= 500
    # Its summary line says the loss beside the rate it flatters, and the wait.
    lines = " ".join(str(r).split()).split(" tcp 64k B copy ")  # unwrapped, one a point
    pub_line, push_line = sorted(lines[:2], key=lambda line: "pubsub" not in line)
    assert f"delivered, {pub['lost']:,.0f} lost, sent" in pub_line, str(r)
    assert " lost" not in push_line and "(rate NOT held), blocked" in push_line, str(r)


def test_one_slow_subscriber_among_fast_ones_is_named(no_leftovers):
    r = run_throughput(pattern="pubsub", peers=3, slow_peers=1, sequence=True, **SLOW, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["slowest_peer"] == "subscriber 1", row
    assert row["most_lost_by_one_peer"] > 0 and row["slowest_peer_msgs_per_s"] <= 500


def test_nodrop_turns_a_pubs_drops_into_waiting(no_leftovers):
    r = run_throughput(pattern="pubsub", nodrop=True, sequence=True, **SLOW, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["lost"] == 0 and row["received"] == 1000 and row["blocked_share"] > 0


def test_nodrop_waits_out_a_subscriber_held_off_the_cpu(no_leftovers):
    """The subscriber stopped for a second mid-sample (SIGSTOP: a starved process),
    four times the hub's quarter-second send timeout: with --nodrop the PUB waits it
    out and loses nothing. A PUB's POLLOUT says nothing of a NODROP queue's room, and a
    blocking send that timed out once escaped as zmq.Again, failing the run."""
    stopped = []

    def freeze() -> None:
        victim = wait_until(lambda: next(iter(member_processes()), None), 30, "the subscriber")
        wait_until(lambda: sampling(victim), 60, "the subscriber in its sample", every=0.005)
        victim.suspend()
        stopped.append(victim.pid)
        try:
            time.sleep(1.0)  # the stall itself: what is asserted is what the run lost
        finally:
            victim.resume()

    thread = threading.Thread(target=freeze, daemon=True)
    thread.start()
    r = run_throughput(pattern="pubsub", nodrop=True, sequence=True, **SLOW, **ONCE)
    thread.join(30)
    assert stopped, "the subscriber was never stopped"
    (row,) = r.df.to_dict("records")
    assert row["lost"] == 0 and row["received"] == 1000


def test_paced_senders_of_a_fanin(no_leftovers):
    r = run_throughput(pattern="fanin", peers=2, rate=[2000], size=100, count=200, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["sent_per_s"] <= 2000 and row["received"] == 400
    assert row["lost"] == 0


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"pattern": "joiner"}, r"--pattern joiner: .* give every --rate above 0"),
        ({"pattern": "joiner", "rate": [0, 1000]}, r"give every --rate above 0"),
        ({"pattern": "joiner", "rate": 1000, "peers": 2}, r"joins one subscriber"),
        (
            {"pattern": "joiner", "rate": 1000, "sequence": True},
            r"leave out --peers and --sequence",
        ),
        (
            {"pattern": "joiner", "rate": 1000, "remote": "tcp://127.0.0.1:5555"},
            r"pairs, proxy, joiner and router run on this machine",
        ),
        (
            {"pattern": "joiner", "rate": [1000, 50_000], "count": 5000},
            r"--pattern joiner at --rate 50k: count 5,000 leaves the subscriber 75 ms after "
            r"it joins; give at least 33,334 \(0.5 s\), or leave the count out",
        ),
    ],
)
def test_a_slow_joiner_needs_a_publisher_already_sending(settings, named):
    with pytest.raises(ValueError, match=named):
        ThroughputParams(**settings)


def test_a_slow_joiner_says_how_long_until_its_first_message_and_what_it_missed(no_leftovers):
    """A subscriber connects a quarter of the way into a sample, while the PUB sends:
    it never sees the messages sent before its connect, and what was sent after it
    and before its first message is what it missed."""
    r = run_throughput(pattern="joiner", rate=[2000], transport=["tcp", "ipc"], **ONCE)
    df = r.df
    # Its count set by the rate: half a second after the join, however busy the machine.
    assert (df["count"] == paced_count(2000, 0.1, PATTERNS["joiner"])).all()
    assert paced_count(2000, 0.1, PATTERNS["joiner"]) == 1334 and paced_count(2000, 0.1) == 200
    assert (df["join_ms"] > 0).all() and (df["missed_at_join"] >= 0).all(), df
    assert (df["received"] >= 2).all()
    # From its connect on: received, lost after its first message, missed before it.
    seen_or_missed = df["received"] + df["lost"] + df["missed_at_join"]
    assert (seen_or_missed < df["count"]).all(), df
    assert (df["slowest_peer"] == "joining subscriber").all()
    line = " ".join(str(r).split())
    for transport in ("tcp", "ipc"):
        point = rf"{transport} 1k B copy joiner at 2k msgs/s: [\d,.]+ msgs/s delivered, "
        assert re.search(
            point + r"its first message [\d.]+ ms after connecting, [\d,]+ missed", line
        )


def test_a_slow_joiner_on_its_defaults_hears_the_publisher_in_every_sample(no_leftovers):
    """``--pattern joiner --rate 10k --size 100 -r 3`` on its defaults: each sample's
    count comes from the rate, not from trial samples of ten messages, and leaves the
    subscriber its half second after joining (it once got 0 messages, three runs in
    three)."""
    r = run_throughput(pattern="joiner", rate=[10_000], size=100, repeat=3)
    assert len(r.df) == 3 and (r.df["received"] >= 2).all(), r.df
    assert (r.df["count"] == paced_count(10_000, 0.1, PATTERNS["joiner"])).all()


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"hwm": ["auto", 100]}, r"hwm auto sets the mark by the message size: sweep numbers only"),
        ({"hwm": -1}, r"hwm must be auto \(set by the message size\) or from 0 msgs .*, got -1"),
        ({"hwm": "lots"}, r"hwm: expected a count of messages such as 0, 100 or 10k, got 'lots'"),
        (
            {"hwm": "20M"},
            r"hwm must be auto \(set by the message size\) or from 0 msgs .*, got 20M",
        ),
        ({"hwm": "1.5"}, r"hwm: expected a whole number of messages, got '1.5'"),
    ],
)
def test_a_bad_high_water_mark_is_refused(settings, named):
    with pytest.raises(ValueError, match=named):
        ThroughputParams(**settings)


def test_a_high_water_mark_of_0_is_zeromqs_no_limit_and_said_so():
    params = ThroughputParams(hwm=[0, "10k"])
    assert params.hwm == (0, 10_000)
    assert [p["hwm"] for p in params.points()] == [0, 10_000]
    (caution,) = params.cautions()
    assert caution.startswith("hwm 0: ZeroMQ's queues have no limit, so a sender never waits")
    # By the size, the default, it is no point column: the mark the sockets had is.
    assert "hwm" not in next(ThroughputParams().points())


def test_the_mark_is_swept_in_one_call_and_a_queue_that_holds_the_sample_drops_nothing(
    ip, no_leftovers
):
    """A PUB and a PUSH at two high-water marks, one call: queues of 10k messages a
    side hold the whole sample of 400, so there even the PUB drops nothing; at 10 the
    PUB drops (400 offered in 40 ms overflow queues and kernel buffers that hold under
    200, while the subscriber takes 20); the PUSH never drops."""
    r = ip.run_line_magic(
        "zmqthr",
        "--pattern pubsub pipeline --rate 10k --work 2ms --hwm 10 10k --size 64k -n 400 "
        "-r 1 --warmup 0 --no-chart -q -o",
    )
    rows = {(row["pattern"], row["hwm"]): row for row in r.df.to_dict("records")}
    assert set(rows) == {(p, m) for p in ("pubsub", "pipeline") for m in (10, 10_000)}
    assert all(row["queue_hwm"] == row["hwm"] for row in rows.values())
    assert rows["pubsub", 10]["lost"] > 0 and rows["pubsub", 10_000]["lost"] == 0
    assert rows["pipeline", 10]["lost"] == rows["pipeline", 10_000]["lost"] == 0
    assert rows["pipeline", 10]["blocked_share"] > 0
    line = " ".join(str(r).split())
    for mark in ("10", "10k"):
        point = rf"pubsub 1 peer at 10k msgs/s 2ms of work per message high-water mark {mark} ?:"
        assert re.search(point, line), line


def test_with_no_limit_a_pub_queues_all_a_slow_consumer_has_not_taken(no_leftovers):
    """``--hwm 0``: ZeroMQ's queues have no limit, so the PUB that drops at a mark of 10
    (above) drops nothing: the whole sample waits in memory for the slow subscriber."""
    r = run_throughput(pattern="pubsub", sequence=True, **{**SLOW, "hwm": 0}, **ONCE)
    (row,) = r.df.to_dict("records")
    assert row["lost"] == 0 and row["gaps"] == 0 and row["received"] == 1000
    assert row["queue_hwm"] == 0 and math.isnan(row["queue_capacity"])
    # All 1,000 were sent in about 0.1 s, when the subscriber had taken 50 at most and
    # the kernel's buffers hold a few hundred of 64 kB: the rest, over 30 MB, was queued
    # in the two processes (its numbers are the meter's, not the machine's speed).
    assert row["driver_growth_mb"] + row["far_growth_mb"] > 30, row
    assert any(w.startswith("hwm 0: ZeroMQ's queues have no limit") for w in r.warnings)


# The same slow subscriber, fed numbered messages at 2k a second: four times what it
# takes, so its queue is full from the first few messages on.
AGED = {**SLOW, "rate": 2000, "sequence": True}


def test_a_conflating_subscriber_reads_fresher_messages_than_its_queue_gives(no_leftovers):
    """Queued, every message the subscriber reads waited behind those ahead of it, each
    2 ms of work: once the queue is full (past its first few messages, as the offer is
    four times what the subscriber takes), at least the subscriber's own queue is ahead
    of a message the PUB takes (libzmq gives a full pipe's writer room again once its
    reader has taken half of it: 5 of the 10 are left), so the median age is at least
    5 x 2 ms. Conflated, the subscriber reads the newest message instead, and the rest
    are replaced: lost, and counted as the numbers say."""
    r = run_throughput(pattern="pubsub", conflate=[False, True], **AGED, **ONCE)
    rows = {row["conflate"]: row for row in r.df.to_dict("records")}
    queued, conflated = rows[False], rows[True]
    assert queued["age_ms"] >= 5 * 2, queued
    assert conflated["age_ms"] < queued["age_ms"], (conflated, queued)
    assert conflated["lost"] > 0 and conflated["gaps"] >= 1, conflated
    assert conflated["lost"] == 1000 - conflated["received"]
    line = " ".join(str(r).split())
    assert re.search(
        r"2ms of work per message high-water mark 10 conflated: .* reads [\d.,]+ ms old", line
    ), line
    assert "A conflating receiver keeps only its newest message" in line


def test_conflating_receivers_of_a_push_share_its_messages_as_the_numbers_say(no_leftovers):
    """Two conflating PULLs, threads of this process: each read's stamp and time travel
    beside the bitmap of a share unknown, and the numbers agree with the counts (the
    sample raises where they do not)."""
    r = run_throughput(
        pattern="pipeline",
        peers=2,
        transport="inproc",
        conflate=True,
        **{**AGED, "count": 400},
        **ONCE,
    )
    (row,) = r.df.to_dict("records")
    assert row["lost"] == 400 - row["received"] and row["age_ms"] > 0, row


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"rate": 1000}, r"--conflate true: each read's age comes from its number: add --sequence"),
        ({"sequence": True}, r"--conflate true: .* give every --rate above 0"),
        ({"sequence": True, "rate": [0, 1000]}, r"give every --rate above 0"),
        (
            {"sequence": True, "rate": 1000, "pattern": "fanin"},
            r"--conflate true: .*pipeline, pubsub, proxy, not fanin",
        ),
        ({"sequence": True, "rate": 1000, "loop": "native"}, r"--conflate true: .*--loop python"),
        (
            {"sequence": True, "rate": 1000, "remote": "tcp://127.0.0.1:5555"},
            r"--conflate true: .*leave out --remote",
        ),
    ],
)
def test_conflate_without_a_known_age_is_refused(settings, named):
    with pytest.raises(ValueError, match=named):
        ThroughputParams(conflate=[False, True], **settings)


def test_the_magic_refuses_conflate_without_sequence(ip):
    with pytest.raises(UsageError, match=r"--conflate true: .* add --sequence true"):
        ip.run_line_magic("zmqthr", "--pattern pubsub --rate 1k --conflate true")


def test_a_router_drops_for_a_full_receiver_and_with_mandatory_waits(no_leftovers):
    """A ROUTER addressing a slow DEALER drops as a PUB does (the same construction:
    1,000 messages of 64 kB at 10k a second, queues of 10, 2 ms of work a message);
    ZMQ_ROUTER_MANDATORY turns the drops into waiting, and nothing is lost."""
    settings = {**SLOW, "pattern": "router", "sequence": True, **ONCE}
    dropping = run_throughput(**settings).df.to_dict("records")[0]
    assert dropping["lost"] > 0 and dropping["gaps"] >= 1
    assert dropping["lost"] == 1000 - dropping["received"] and dropping["blocked_share"] == 0.0
    waiting = run_throughput(**settings, mandatory=True).df.to_dict("records")[0]
    assert waiting["lost"] == 0 and waiting["received"] == 1000
    assert waiting["blocked_share"] > 0


def test_a_router_deals_its_messages_to_its_receivers_in_turn(no_leftovers):
    """Three receivers of one ROUTER, unhurried: 3,000 messages, none lost, each its
    third (their fastest and slowest rates both measured)."""
    r = run_throughput(
        pattern="router", peers=3, mandatory=True, rate=[5000], size=100, count=3000, **ONCE
    )
    (row,) = r.df.to_dict("records")
    assert row["received"] == 3000 and row["lost"] == 0
    assert row["slowest_peer_msgs_per_s"] <= row["fastest_peer_msgs_per_s"]


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"mandatory": True}, r"--mandatory true: only a ROUTER routes; add --pattern router"),
        (
            {"pattern": "router", "loop": "native"},
            r"--pattern router --peers 1: a router's messages each carry their receiver's "
            r"routing id, which the native loop does not send: use --loop python",
        ),
    ],
)
def test_a_router_refuses_what_it_cannot_do(settings, named):
    with pytest.raises(ValueError, match=named):
        ThroughputParams(**settings)


def test_a_receiver_killed_under_an_offered_rate_is_named_and_nothing_is_left(no_leftovers):
    """A ROUTER pacing its sends to two DEALERs that work on each message; one is
    killed mid-sample: the run fails naming it, and no far end is left."""
    error = killed_mid_sample(
        lambda: run_throughput(
            pattern="router",
            peers=2,
            mandatory=True,
            rate=[1000],
            work="1ms",
            size=100,
            count=10_000_000,
            **ONCE,
        ),
        members=2,
    )
    assert isinstance(error, PeerError), error
    assert re.search(r"receiver \d (exited|is gone)", str(error)), str(error)
    assert member_processes() == []


def test_a_mandatory_router_names_a_receiver_that_has_gone():
    """ZMQ_ROUTER_MANDATORY's EHOSTUNREACH, for a routing id no peer has (a receiver
    gone), is an error naming that receiver, not a silent drop."""
    import zmq

    from zmqbench_magic.sockets.kernel.hub import RoutedSocket

    with zmq.Context() as ctx, ctx.socket(zmq.ROUTER, RoutedSocket) as router:
        router.linger = 0
        router.router_mandatory = 1
        router.routes, router.turn = [b"4242"], 0
        router.names = {b"4242": "receiver 2"}
        with pytest.raises(PeerError, match=r"^receiver 2 is gone \(ZMQ_ROUTER_MANDATORY: "):
            router.send(b"message")
        assert router.turn == 0  # the turn moves on only once a message went


def test_the_least_late_receivers_age_is_its_own_median_beside_a_slow_one():
    """Known ages, as two receivers' reports carry them (each read's stamp, then its
    read time): one reads every message 1 ms after the hub sent it, one 30 ms after.
    The pooled median is the slow one's (it read more), the least late receiver's is
    its own 1 ms: a slow subscriber cannot hide how late the others' messages are."""
    sent_at = array("d", [10.0 + i / 1000 for i in range(300)])

    def receiver(numbers: range, late_s: float) -> SimpleNamespace:
        stamps = array("Q", [stamp_of(0, n) for n in numbers])
        read_at = array("d", [sent_at[n] + late_s for n in numbers])
        return SimpleNamespace(attached=[stamps.tobytes(), read_at.tobytes()])

    fast, slow = receiver(range(0, 300, 3), 0.001), receiver(range(300), 0.030)
    ages = _ages([fast, slow], {"sent_at": sent_at})
    assert ages["freshest_peer_age_ms"] == pytest.approx(1.0)
    assert ages["age_ms"] == pytest.approx(30.0)
    assert _ages([fast, slow], {}) == {}  # no send times kept: no age known


def test_a_slow_subscriber_beside_a_fast_one_reads_older_messages(no_leftovers):
    """One of two subscribers works 2 ms a message at 2k offered: its queue stays full,
    so its reads are at least 5 x 2 ms old (as above), while the least late receiver's
    own median is below the pooled one."""
    r = run_throughput(pattern="pubsub", peers=2, slow_peers=1, **AGED, **ONCE)
    (row,) = r.df.to_dict("records")
    assert 0 < row["freshest_peer_age_ms"] <= row["age_ms"], row


def test_a_senders_rate_counts_the_intervals_its_pace_spans():
    """Known answers: 201 paced sends 0.1 s apart from first to last are 200 intervals
    (2,000 a second, not 2,010); 200 unpaced sends that took 0.1 s in all are 2,000 a
    second; a sender with no time has no rate."""
    from zmqbench_magic.sockets.loops.timing import send_rate

    assert send_rate({"sent": 201, "elapsed": 0.1, "blocked_s": 0.0}) == pytest.approx(2000)
    assert send_rate({"sent": 200, "elapsed": 0.1}) == pytest.approx(2000)
    assert math.isnan(send_rate({"sent": 5, "elapsed": 0.0, "blocked_s": 0.0}))
