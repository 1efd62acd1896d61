"""A pattern's peers and a server's clients on other hosts (``--remote`` with several
far ends, comma-separated): each host's far end starts the peers dealt to it, bound
there, and the kernel's hub connects to each. On loopback through a standing far
end, then over SSH to two test hosts of the test's own (network namespaces), each on
a link shaped to 1 Gbit/s; bad settings are named before anything starts."""

from __future__ import annotations

import contextlib
import sys

import psutil
import pytest
from conftest import wait_until
from hosts import commands_in, host, namespaces, skip_without_hosts, sshd, standing_peer

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params.far_end import SSH_COMMAND_ENV
from zmqbench_magic.sockets.kernel.crowd import Crowd
from zmqbench_magic.sockets.kernel.link import PeerError
from zmqbench_magic.sockets.kernel.remote import reach_all
from zmqbench_magic.sockets.loops.pattern_loops import pattern_sample
from zmqbench_magic.sockets.payload import Payload

QUICK = {"count": 2000, "repeat": 1, "warmup": 0}


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (
            {"remote": "tcp://127.0.0.1:5555,tcp://127.0.0.2:5555"},
            r"remote names 2 hosts, and one far end runs on one: .* --pattern and --peers",
        ),
        (
            {"remote": "tcp://127.0.0.1:5555", "pattern": ["pubsub", "pairs"], "peers": 2},
            r"--remote spreads the peers of pipeline, pubsub and fanin over hosts; pairs, "
            "proxy, joiner and router run on this machine",
        ),
        (
            {"remote": "tcp://127.0.0.1:5555,tcp://127.0.0.1:5555", "pattern": "pubsub"},
            r"remote names a host twice",
        ),
        (
            {"remote": "tcp://127.0.0.1:5555,ftp://x", "pattern": "pubsub"},
            r"remote must be tcp://HOST:PORT .* got 'ftp://x'",
        ),
    ],
)
def test_bad_spreads_are_named_before_anything_starts(settings, named, no_leftovers):
    with pytest.raises(ValueError, match=named):
        run_throughput(**QUICK, **settings)


def test_two_hosts_for_one_pair_of_latency_are_refused():
    with pytest.raises(ValueError, match=r"remote names 2 hosts.* with --clients"):
        run_latency(remote="tcp://127.0.0.1:5555,tcp://127.0.0.2:5555", **QUICK)


def _children(pid: int) -> list[str]:
    with contextlib.suppress(psutil.Error):
        return [" ".join(c.cmdline()) for c in psutil.Process(pid).children(recursive=True)]
    return []


def _door_pid(log) -> int:
    """The standing far end's process id (a child of this test's, which wrote ``log``)."""
    for process in psutil.Process().children():
        if "--bind" in process.cmdline():
            return process.pid
    raise AssertionError(log.read_text())


def test_a_patterns_peers_and_a_servers_clients_through_a_standing_far_end(no_leftovers):
    with standing_peer(None, "tcp://127.0.0.1:0", None) as (url, log):
        thr = run_throughput(
            remote=url, pattern=["pubsub", "fanin"], peers=3, nodrop=True, size=100, **QUICK
        )
        lat = run_latency(remote=url, clients=[1, 3], size=100, count=300, repeat=1, warmup=0)
        # Every peer named with its host; a publisher that waits, and a PUSH, lose none.
        assert thr.df["slowest_peer"].str.endswith(" on 127.0.0.1").all(), thr.df
        assert (thr.df["lost"] == 0).all() and (thr.df["received"] == 3 * 2000).all()
        assert set(thr.df["peer"]) == {"remote"}
        assert list(lat.df["clients"]) == [1, 3] and (lat.df["round_trips"] == [300, 900]).all()
        said = log.read_text()
        assert said.count("a pattern's subscriber on") == 3, said
        assert said.count("a pattern's source on") == 3 and said.count("client on") == 3
        # Each peer ended with its run (told to quit), not with the far end.
        wait_until(lambda: not _children(_door_pid(log)), 10, "the peers gone after the runs")


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_a_peer_that_dies_on_the_other_host_is_named(no_leftovers):
    with standing_peer(None, "tcp://127.0.0.1:0", None) as (url, log):
        door = _door_pid(log)

        def kill_a_subscriber() -> None:
            wait_until(lambda: len(_children(door)) == 2, 20, "both subscribers started")
            psutil.Process(door).children()[1].kill()

        named, doors = r"subscriber 2 on 127\.0\.0\.1", [(url, None)]
        with (
            pytest.raises((PeerError, TimeoutError), match=named),
            Crowd("pubsub", 2, "tcp", "remote", "127.0.0.1", 3.0, 1000, doors=doors) as crowd,
        ):
            kill_a_subscriber()
            pattern_sample(crowd, Payload.blank(100), 200_000, copy=True)
        wait_until(lambda: not _children(door), 10, "the other peer gone with the run")


def _peers_on(where) -> list[str]:
    """The pattern's peers running on a test host."""
    return [c for c in commands_in(where) if "zmqbench_magic.sockets.far_ends.member" in c]


def _far_ends_on(where) -> list[str]:
    """Whatever of the project's runs on a test host: its far end or a peer."""
    return [c for c in commands_in(where) if "zmqbench_magic" in c]


@pytest.mark.slow  # two hosts of our own, each with an sshd
def test_subscribers_dealt_over_two_hosts_over_ssh(tmp_path, monkeypatch, no_leftovers):
    skip_without_hosts()
    with (
        host(1, rate="1gbit") as one,
        host(2, rate="1gbit") as two,
        sshd(one, tmp_path / "ssh") as ssh,
        sshd(two, tmp_path / "ssh"),
    ):
        monkeypatch.setenv(SSH_COMMAND_ENV, ssh)
        remote = f"ssh://root@{one.address},ssh://root@{two.address}"
        # The four subscribers are dealt in turn: two on each host, in each host's
        # namespace, named with it.
        with (
            reach_all(remote, "", sys.executable, 10.0) as doors,
            Crowd("pubsub", 4, "tcp", "remote", "127.0.0.1", 10.0, 1000, doors=doors) as crowd,
        ):
            names = [m.name for m in crowd.members]
            assert names == [
                f"subscriber 1 on {one.address}",
                f"subscriber 2 on {two.address}",
                f"subscriber 3 on {one.address}",
                f"subscriber 4 on {two.address}",
            ]
            assert len(_peers_on(one)) == len(_peers_on(two)) == 2
        wait_until(lambda: not _far_ends_on(one) + _far_ends_on(two), 20, "nothing left there")
        # Through the API: a publisher that waits for room loses nothing, and two
        # subscribers share each host's link of 1 Gbit/s (a bucket of two frames).
        thr = run_throughput(
            remote=remote,
            remote_python=sys.executable,
            pattern="pubsub",
            peers=4,
            nodrop=True,
            size="64k",
            count=500,
            repeat=2,
            warmup=0,
        )
        assert (thr.df["lost"] == 0).all() and (thr.df["received"] == 4 * 500).all()
        slowest_mbit = thr.df["slowest_peer_msgs_per_s"] * 65536 * 8 / 1e6
        assert (slowest_mbit < 500 * 1.05).all(), slowest_mbit
        hosts = {name.rsplit(" on ", 1)[1] for name in thr.df["slowest_peer"]}
        assert hosts <= {one.address, two.address}, thr.df["slowest_peer"]
        wait_until(lambda: not _far_ends_on(one) + _far_ends_on(two), 20, "nothing left there")
    assert namespaces() == []


def test_numbered_messages_to_peers_elsewhere(no_leftovers):
    with standing_peer(None, "tcp://127.0.0.1:0", None) as (url, _):
        thr = run_throughput(
            remote=url,
            pattern=["pipeline", "pubsub"],
            peers=[1, 2],
            nodrop=True,
            sequence=True,
            size=100,
            **QUICK,
        )
    assert (thr.df["lost"] == 0).all() and (thr.df["gaps"] == 0).all(), thr.df
    assert thr.df["slowest_peer"].str.endswith(" on 127.0.0.1").all()
