"""``%zmqlat --clients N``: N REQ clients at once on the kernel's ROUTER, every round
trip of every client pooled into the sample's row and the point's distribution; one
client is the REQ/REP pair it always was; a client killed mid-sample is named, and
nothing is left; what N closed loops cannot take is refused."""

from __future__ import annotations

import contextlib
import threading
from typing import ClassVar

import psutil
import pytest
from conftest import sampling, wait_until
from IPython.core.error import UsageError

from zmqbench_magic import run_latency
from zmqbench_magic.params import LatencyParams
from zmqbench_magic.results.statistics.histogram import LogHistogram
from zmqbench_magic.sockets.kernel import rounds
from zmqbench_magic.sockets.kernel.crowd import Crowd
from zmqbench_magic.sockets.kernel.link import PeerError


def test_every_clients_round_trips_are_pooled_into_one_row(bench, no_leftovers):
    result = bench("lat", clients=[1, 3], size=[100], repeat=2, min_time=0.02)
    df = result.df
    assert sorted(df["clients"].unique()) == [1, 3]
    assert (df.groupby("clients").size() == 2).all()  # two rounds each
    for clients, rows in df.groupby("clients"):
        assert (rows["round_trips"] == rows["count"] * clients).all()
        # A client's median lies among the round trips pooled with it.
        assert (rows["slowest_client_p50_us"] >= rows["min_us"]).all()
        assert (rows["slowest_client_p50_us"] <= rows["max_us"]).all()
    one = df[df["clients"] == 1]
    assert (one["slowest_client_p50_us"] == one["sample_p50_us"]).all()
    assert (df["achieved_per_s"] > 0).all()
    # Each sample's distribution holds every round trip of all its clients.
    for entry in result.distributions:
        row = df[(df["clients"] == entry["clients"]) & (df["sample"] == entry["sample"])]
        (expected,) = row["count"] * entry["clients"]
        assert LogHistogram.from_json(entry["rtt_hist"]).total == expected
    assert result.histogram({"clients": 3}).total == df[df["clients"] == 3]["round_trips"].sum()
    lines = str(result).splitlines()
    assert any(line.startswith("tcp 100 B copy 3 clients: mean ") for line in lines)
    assert any(line.startswith("tcp 100 B copy          : mean ") for line in lines)


def test_one_client_is_the_pair_it_always_was(no_leftovers):
    row = run_latency(size=[100], count=200, repeat=1, warmup=0).df.iloc[0]
    assert row["clients"] == 1
    assert row["round_trips"] == 200
    assert row["first_us"] > 0  # one pair's first round trip, as before


@pytest.mark.parametrize(
    ("transport", "loop"), [("inproc", "python"), ("inproc", "native"), ("tcp", "native")]
)
def test_clients_in_threads_over_inproc_and_in_c(transport, loop, no_leftovers):
    df = run_latency(
        clients=[2],
        transport=transport,
        loop=loop,
        copy=[True, False],
        count=300,
        repeat=2,
        warmup=0,
    ).df
    assert len(df) == 4
    assert (df["round_trips"] == 600).all()
    where = "thread" if transport == "inproc" else "process"
    assert set(df["peer"]) == {where}
    assert set(df["cpu_clock"]) == {where}
    assert "first_us" not in df.columns  # each client's first round trip is its own


class _Recorded(Crowd):
    """A Crowd that keeps a list of those made (each test sets its own list)."""

    made: ClassVar[list[Crowd]] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made.append(self)


def test_a_client_killed_mid_sample_is_named_and_nothing_is_left(monkeypatch, no_leftovers):
    monkeypatch.setattr(rounds, "Crowd", _Recorded)
    monkeypatch.setattr(_Recorded, "made", [])

    def kill_client_2() -> None:
        crowd = wait_until(lambda: _Recorded.made and _Recorded.made[0], 30, "the clients")
        victim = psutil.Process(wait_until(lambda: crowd.members[1].pid, 30, "client 2"))
        wait_until(lambda: sampling(victim), 60, "client 2 sampling", every=0.005)
        victim.kill()

    killer = threading.Thread(target=kill_client_2, daemon=True)
    killer.start()
    with pytest.raises(PeerError, match=r"client 2 exited \(killed by signal 9") as caught:
        run_latency(clients=[3], size=[100], count=20_000_000, repeat=1, warmup=0, timeout=10)
    killer.join(10)
    assert "3 clients tcp 100 B copy (peer process)" in str(caught.value)
    (crowd,) = _Recorded.made
    assert [m.name for m in crowd.members] == ["client 1", "client 2", "client 3"]
    assert all(m.process is not None and m.process.poll() is not None for m in crowd.members)


def _clients() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if "--role client" in " ".join(child.cmdline()):
                found.append(child)
    return found


@pytest.mark.parametrize("transport", ["tcp", "inproc"])
def test_a_kernel_interrupt_mid_sample_leaves_nothing(transport, no_leftovers, kernel_sigint):
    # Clients in processes (tcp) and in threads of this one (inproc), mid-sample.
    kernel_sigint(0.5, when=lambda: transport == "inproc" or len(_clients()) == 3)
    with pytest.raises(KeyboardInterrupt):
        run_latency(clients=[3], transport=[transport], size=[100], count=20_000_000)
    assert _clients() == []


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"rate": [1000]}, "--rate offers one DEALER's open loop"),
        ({"idle": [0.1]}, "--idle pauses one pair's loop"),
        ({"loop": ["asyncio"]}, "--loop asyncio drives one socket"),
        ({"curve": [True]}, "--curve true encrypts one pair's path"),
        ({"driver": "process"}, "--driver process"),
    ],
)
def test_what_n_closed_loops_cannot_take_is_refused(settings, words):
    with pytest.raises(ValueError, match=rf"^--clients 1 4: {words}.*\(or use --clients 1\)$"):
        LatencyParams(clients=[1, 4], **settings)
    LatencyParams(clients=[1], **settings)  # one client: the pair, which takes them


def test_the_magic_names_the_range_of_clients(ip):
    with pytest.raises(UsageError, match="clients must be from 1 to 256, got 0"):
        ip.run_line_magic("zmqlat", "--clients 0")


def test_more_ends_than_cores_is_said_before_the_run(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert LatencyParams(clients=[1, 4]).cautions() == [
        "4 clients and their server keep 5 ends busy on 2 cores: their round trips include "
        "waiting for a core"
    ]
    assert LatencyParams(clients=[1]).cautions() == []
