"""The topologies' parameters (``--pattern``, ``--peers``; latency's ``--clients``),
their metrics, and the rules they obey: which settings a pattern of many far ends
refuses, and when its ends outnumber the machine's cores.

The pipeline with one peer is the one-to-one PUSH/PULL run every earlier result is;
the other patterns have a side of N far ends (:mod:`zmqbench_magic.sockets.crowd`).
One client is the one REQ/REP pair every earlier latency result is; N clients are N
REQ far ends on this process's one ROUTER.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .columns import Column
from .declare import Metric, Param
from .far_end import remote_hosts

# The stamp a numbered message carries first (sockets/numbering.py writes and reads it).
STAMP_BYTES = 8

PATTERNS = ("pipeline", "pubsub", "fanin", "pairs", "proxy", "joiner", "router")
# The patterns whose N far ends may be on other hosts (--remote): each is one socket
# the kernel's hub reaches. A proxy's subscribers reach the proxy, and a pair's ends
# each other, not the kernel.
SPREAD_PATTERNS = {"pipeline", "pubsub", "fanin"}

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
PATTERN = Param(
    "pattern", "pipeline",
    "the sockets' topology: pipeline (this process's PUSH to PULL, load-balanced over N "
    "PULLs with --peers N), pubsub (this process's PUB to N SUB), fanin (N PUSH into "
    "this process's PULL), pairs (N PUSH/PULL pairs at once, every end a far end), "
    "proxy (this process's PUB through an XSUB/XPUB zmq proxy to N SUB), joiner (a SUB "
    "that connects while this process's PUB publishes at --rate: the time to its first "
    "message, and what it missed, ZeroMQ's slow joiner) or router (this process's ROUTER "
    "addressing each message to N DEALERs in turn: it drops a message whose receiver's "
    "queue is full, unless --mandatory true)",
    "pattern", "choice", choices=PATTERNS, sweep=True,
)
PEERS = Param(
    "peers", 1,
    "the pattern's N: receivers (pipeline, router), subscribers (pubsub, proxy), senders "
    "(fanin) or pairs (pairs), each a far end of its own",
    "peers", "int", low=1, high=256, sweep=True, phrase="{} peer|{} peers",
)
PUBLISHERS = Param(
    "publishers", 1,
    "publishers into the proxy (--pattern proxy): this process's PUB and N - 1 far ends "
    "publishing alongside it, each its own --count, as libzmq's proxy_thr has two; each "
    "subscriber then gets N x --count",
    "publishers", "int", low=1, high=64, phrase="{} publisher|{} publishers",
)
NODROP = Param(
    "nodrop", False,
    "a publisher whose subscriber's queue is full waits for room (ZMQ_XPUB_NODROP), as "
    "a PUSH does, instead of dropping the message (false, ZeroMQ's way); pubsub and "
    "proxy (this process's PUB and the proxy's XPUB alike, as libzmq's proxy_thr has them)",
    "publisher waits when full", "bool", choices=(False, True),
)
SEQUENCE = Param(
    "sequence", False,
    "number every message, so each receiver knows which it missed: the sender writes "
    "each message's number into its first 8 bytes (so each message is built fresh, a "
    "copy per message even with --copy false) and each receiver reads it, which costs "
    "both loops time; gives gaps, first_lost and the most one receiver lost beside lost; "
    "needs --size 8 or more and a message of one frame",
    "numbered messages", "bool", choices=(False, True),
)
CLIENTS = Param(
    "clients", 1,
    "REQ clients at once on one server, this process's ROUTER echoing every request "
    "(libzmq #3830's question): each client a far end of its own running its own closed "
    "loop of --count round trips, every round trip timed and pooled into the point's "
    "percentiles; 1: the one REQ/REP pair",
    "clients", "int", low=1, high=256, sweep=True, phrase="{} client|{} clients",
)
# A latency sample's spread between its clients (one client: its own median).
CLIENT_METRICS = (
    Metric("slowest_client_p50_us", "slowest client's median",
           "the highest of the clients' own median round trips in the sample (one client: "
           "the sample's median): a client the server serves last shows here, where the "
           "pooled percentiles mix it with the others", "lower", unit="µs"),
)
PATTERN_METRICS = (
    Metric("lost", "lost",
           "messages that should have arrived and did not, all receivers together "
           "(a PUB drops a subscriber's messages once its queue is full; PUSH never drops)",
           "lower", unit="msgs"),
    Metric("slowest_peer_msgs_per_s", "slowest peer",
           "the slowest far end's own rate: a receiver's deliveries over its own first to "
           "last receive (fanin: a sender's sends over its own sending time)", "higher",
           unit="msgs/s"),
    Metric("fastest_peer_msgs_per_s", "fastest peer",
           "the fastest far end's own rate, as the slowest's", "higher", unit="msgs/s"),
    Metric("peer_fairness", "fairness",
           "the slowest peer's rate over the fastest's: 1 when every peer is served alike",
           "higher"),
)
# What numbered messages (--sequence true) tell beyond the count of lost ones; NaN
# without them (unknown, not none).
SEQUENCE_METRICS = (
    Metric("gaps", "gaps",
           "runs of consecutive messages missing, every receiver's and sender's together: "
           "one burst dropped is one gap (NaN without --sequence)", "lower"),
    Metric("first_lost", "first lost",
           "the lowest message number any receiver missed, counted from 0 in each sample "
           "(NaN when none was missed, or without --sequence)"),
    Metric("most_lost_by_one_peer", "most lost by one receiver",
           "the most messages any one receiver missed: which receiver's queue overflowed "
           "(NaN without --sequence, and in a pipeline of N receivers, whose shares "
           "are unknown)", "lower", unit="msgs"),
    Metric("reordered", "reordered",
           "numbered messages that came with a number lower than the next one expected "
           "from their sender: duplicated or out of order (NaN without --sequence)",
           "lower", unit="msgs"),
)
MANDATORY = Param(
    "mandatory", False,
    "the router's ROUTER waits for room in a full receiver's queue (ZMQ_ROUTER_MANDATORY: "
    "EAGAIN without waiting), as a PUSH does, instead of dropping the message (false, "
    "ZeroMQ's way), and a receiver that has gone is an error (EHOSTUNREACH) rather than "
    "a silent drop; --pattern router",
    "ROUTER waits when full", "bool", choices=(False, True),
)
# fmt: on
PATTERN_COLUMNS = (
    Column(
        "slowest_peer",
        "which far end was the slowest peer, and its host where it ran on another one "
        "(--remote): subscriber 3 on 10.0.0.2",
    ),
)


def many_ends(point: Mapping[str, Any]) -> bool:
    """Whether a point's far ends are a pattern's many, not the one-to-one pipeline's."""
    return point.get("pattern", "pipeline") != "pipeline" or point.get("peers", 1) > 1


def check_sequence(params: Any) -> None:
    """A ValueError for ``--sequence true`` with a message it cannot number, or a loop
    that runs no pattern (a numbered one-to-one pipeline runs as a pattern of one)."""
    if not params.sequence:
        return
    smallest = min(params.size)
    if smallest < STAMP_BYTES:
        msg = (
            f"{SEQUENCE.option} true writes each message's number into its first "
            f"{STAMP_BYTES} bytes: --size must be from {STAMP_BYTES} B, got {smallest} B"
        )
        raise ValueError(msg)
    refusals = [
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (True in params.curve, "--curve true encrypts one far end's path: leave it out"),
        (params.driver == "process", "--driver process drives one far end: leave it out"),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{SEQUENCE.option} true: {why}")


def check_sequenced_message(frames: int, size: int) -> None:
    """A ValueError for a message of the cell form (or ``payload=``) that
    ``--sequence true`` cannot number: one frame of 8 bytes or more."""
    if frames != 1 or size < STAMP_BYTES:
        msg = (
            f"{SEQUENCE.option} true numbers a message of one frame of {STAMP_BYTES} bytes "
            f"or more, got {frames} frame{'s' * (frames != 1)} of {size} B in all"
        )
        raise ValueError(msg)


def many_clients(point: Mapping[str, Any]) -> bool:
    """Whether a latency point has N clients on one server, not the one REQ/REP pair."""
    return point.get("clients", 1) > 1


def crowd_shape(point: Mapping[str, Any], as_pattern: bool = False) -> tuple[str, int] | None:
    """A point's many far ends as a :class:`..sockets.crowd.Crowd` takes them (its
    pattern, or ``"clients"``, and their N); None for the one far end of a pair. With
    ``as_pattern`` (numbered messages, an offered rate or working receivers of a
    throughput run) the one-to-one pipeline too is a pattern, of one receiver, so that
    one loop numbers, paces and works for every pattern."""
    if many_clients(point):
        return "clients", point["clients"]
    if many_ends(point) or as_pattern:
        return point.get("pattern", "pipeline"), point.get("peers", 1)
    return None


def crowd_words(point: Mapping[str, Any]) -> str:
    """``pubsub 4 peers``, ``16 clients``; "" for a pair."""
    if many_clients(point):
        return CLIENTS.words(point["clients"])
    if point.get("pattern") == "joiner":
        return "joiner"  # one subscriber, always
    if many_ends(point):
        return f"{point['pattern']} {PEERS.words(point['peers'])}"
    return ""


def check_pattern(params: Any) -> None:
    """A ValueError for a setting that drives one far end, where a pattern has many,
    or one that no pattern of the sweep has a use for."""
    if params.nodrop and not {"pubsub", "proxy"} & set(params.pattern):
        msg = f"{NODROP.option} true: only a publisher drops; add {PATTERN.option} pubsub or proxy"
        raise ValueError(msg)
    if params.publishers > 1 and params.pattern != ("proxy",):
        msg = (
            f"{PUBLISHERS.option} {params.publishers}: publishers feed a proxy; give "
            f"{PATTERN.option} proxy alone"
        )
        raise ValueError(msg)
    if params.publishers > 1 and params.sequence:
        msg = (
            f"{PUBLISHERS.option} {params.publishers}: {SEQUENCE.option} true numbers one "
            "publisher's messages through a proxy: leave one of them out"
        )
        raise ValueError(msg)
    if params.mandatory and "router" not in params.pattern:
        msg = f"{MANDATORY.option} true: only a ROUTER routes; add {PATTERN.option} router"
        raise ValueError(msg)
    if params.pattern == ("pipeline",) and params.peers == (1,):
        _one_far_end_one_host(params.remote, f"{PATTERN.option} and {PEERS.option}")
        return
    what = f"{PATTERN.option} {' '.join(params.pattern)} {PEERS.option} "
    what += " ".join(str(n) for n in params.peers)
    refusals = [
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (
            bool(params.remote) and bool(set(params.pattern) - SPREAD_PATTERNS),
            "--remote spreads the peers of pipeline, pubsub and fanin over hosts; pairs, "
            "proxy, joiner and router run on this machine: leave out --remote",
        ),
        (True in params.curve, "--curve true encrypts one far end's path: leave it out"),
        (params.driver == "process", "--driver process drives one far end: leave it out"),
        (
            "router" in params.pattern and "native" in params.loop,
            "a router's messages each carry their receiver's routing id, which the native "
            "loop does not send: use --loop python",
        ),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what}: {why}")


def _one_far_end_one_host(remote: str, spread_by: str) -> None:
    hosts = remote_hosts(remote)
    if len(hosts) > 1:
        msg = (
            f"remote names {len(hosts)} hosts, and one far end runs on one: give one, or "
            f"spread a pattern's peers over them with {spread_by}"
        )
        raise ValueError(msg)


def check_clients(params: Any) -> None:
    """A ValueError for a setting that N clients' closed loops cannot take."""
    if params.clients == (1,):
        _one_far_end_one_host(params.remote, CLIENTS.option)
        return
    what = f"{CLIENTS.option} {' '.join(str(n) for n in params.clients)}"
    refusals = [
        (
            any(params.rate),
            "--rate offers one DEALER's open loop, clients run closed loops: leave out --rate",
        ),
        (
            any(params.idle),
            "--idle pauses one pair's loop, clients run back to back: leave out --idle",
        ),
        ("asyncio" in params.loop, "--loop asyncio drives one socket: use python or native"),
        (True in params.curve, "--curve true encrypts one pair's path: leave it out"),
        (
            params.driver == "process",
            "--driver process (or --python) drives one far end: leave it out",
        ),
    ]
    for refused, why in refusals:
        if refused:
            raise ValueError(f"{what}: {why} (or use {CLIENTS.option} 1)")


def crowded_clients(clients: tuple[int, ...]) -> list[str]:
    """Clients and their server outnumbering the cores: said before the run."""
    cores, most = os.cpu_count() or 1, max(clients)
    if most == 1 or most + 1 <= cores:
        return []
    return [
        f"{CLIENTS.words(most)} and their server keep {most + 1} ends busy on {cores} "
        "cores: their round trips include waiting for a core"
    ]


def ends_of(pattern: str, peers: int, publishers: int = 1) -> int:
    """The processes (or threads) a pattern keeps busy: this one and its far ends (a
    proxy's, and the publishers beside this process's PUB)."""
    proxy = publishers if pattern == "proxy" else 0  # the proxy and N - 1 publishers
    return 1 + (2 * peers if pattern == "pairs" else peers) + proxy


def crowded_cores(
    patterns: tuple[str, ...], peers: tuple[int, ...], publishers: int = 1
) -> list[str]:
    """Ends that outnumber the cores share them: said before the run."""
    cores = os.cpu_count() or 1
    ends, pattern, n = max((ends_of(p, n, publishers), p, n) for p in patterns for n in peers)
    if ends <= cores:
        return []
    return [
        f"{pattern} with {PEERS.words(n)} keeps {ends} ends busy on {cores} cores: its "
        "figures measure the OS scheduler as much as ZeroMQ"
    ]
