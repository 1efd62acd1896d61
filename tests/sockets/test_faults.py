"""Faults named: a far end killed at start, mid-sample or between samples is reported
with how it ended, not waited out (how soon: bench/bench_faults.py); bad addresses
are refused up front with the reason. Every test also checks that nothing is left
behind. (A cluster's faults are in tests/parallel/test_cluster_faults.py.)"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys

import psutil
import pytest
from conftest import sampling
from far_ends import LONG, find_far_end, kill_later
from IPython.core.error import UsageError

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import ThroughputParams
from zmqbench_magic.sockets.kernel.link import Link, PeerError
from zmqbench_magic.sockets.protocol import PeerOrder


def _at_once(_process: psutil.Process) -> bool:
    return True


def _busy(process: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return process.cpu_percent(interval=0.05) > 20
    return False


@pytest.mark.parametrize(
    ("run", "phase"),
    [
        (run_throughput, _at_once),
        (run_throughput, sampling),
        (run_latency, _at_once),
        (run_latency, sampling),
    ],
)
def test_a_far_end_killed_at_start_or_mid_sample_is_named_with_how_it_ended(
    run, phase, no_leftovers
):
    """Named as the death it was, not waited out as a stall (its timeout would read
    otherwise); how soon: bench/bench_faults.py."""
    kill_later(find_far_end, phase)
    with pytest.raises(PeerError, match=r"exited \(killed by signal 9 \(SIGKILL\)\)") as caught:
        run(**LONG)
    assert "tcp 100 B copy (peer process)" in str(caught.value)


def test_a_far_end_killed_between_samples_is_named_with_how_it_ended(no_leftovers):
    def kill_after_the_first_sample(done: int, _total: int) -> None:
        if done == 1:
            find_far_end().kill()

    with pytest.raises(PeerError, match=r"killed by signal 9 \(SIGKILL\)"):
        run_latency(
            size=[1, 2],
            count=200,
            repeat=1,
            warmup=0,
            timeout=10,
            progress=kill_after_the_first_sample,
        )


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("127.0.0.1:99999", "port must be from 1 to 65535, or left out for a free one"),
        ("127.0.0.1:0", "port must be from 1 to 65535"),
        ("::1", "an IPv6 address goes in brackets, e.g. [::1]"),
        ("[::1]:http", "port must be from 1 to 65535"),
        ("[not-ipv6]", "'not-ipv6' in '[not-ipv6]' is not an IPv6 address"),
        ("", "expected a tcp interface address"),
    ],
)
def test_bad_addresses_are_refused_before_anything_starts(address, words):
    with pytest.raises(ValueError) as caught:
        ThroughputParams(address=address)
    assert words in str(caught.value) and str(caught.value).startswith("address")


def test_a_host_name_that_does_not_resolve_says_so(monkeypatch):
    def no_such_host(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    # The resolver itself is not the subject here, and tests send nothing off-host.
    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    with pytest.raises(ValueError, match=r"cannot resolve the host name 'db7\.example' in"):
        ThroughputParams(address="db7.example:5555")


def test_ipv6_loopback_and_a_resolved_name_work(no_leftovers):
    six = run_latency(address="[::1]", size=1, count=100, repeat=1, warmup=0)
    assert len(six.df) == 1 and (six.df["sample_mean_us"] > 0).all()
    named = run_throughput(address="localhost", size=100, count=200, repeat=1, warmup=0)
    assert len(named.df) == 1


def test_a_bad_address_is_a_usage_error_in_the_magic_and_status_2_in_the_cli(ip):
    with pytest.raises(UsageError, match="port must be from 1 to 65535"):
        ip.run_line_magic("zmqthr", "-q --no-chart --address 127.0.0.1:99999")
    done = subprocess.run(
        [sys.executable, "-m", "zmqbench_magic.cli", "lat", "--address", "::1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "an IPv6 address goes in brackets" in done.stderr


@pytest.mark.parametrize(
    ("magic", "loop"), [("zmqthr", "python"), ("zmqthr", "asyncio"), ("zmqlat", "asyncio")]
)
def test_an_interrupt_in_an_endless_sample_is_one_line(
    ip, magic, loop, no_leftovers, kernel_sigint
):
    """Also where the sample runs on an event loop's own thread (sends that never wait,
    round trips that always do): that loop and its thread end with the sample
    (no_leftovers counts threads)."""
    from IPython.utils.capture import capture_output

    kernel_sigint(1.0)
    with capture_output() as captured:
        result = ip.run_line_magic(
            magic, f"-o --no-chart -n 1000000000 -r 1 --warmup 0 --loop {loop}"
        )
    assert result is not None and len(result.df) == 0  # no sample was whole
    lines = [ln for ln in captured.stdout.splitlines() if ln.strip()]
    assert lines == [
        "note: interrupted after 0 whole round(s) of 1: 0 samples kept, the round in "
        "progress was dropped"
    ]
    assert "Traceback" not in captured.stderr


def test_a_far_end_left_without_commands_ends_and_says_why(no_leftovers):
    """A process far end whose driver says nothing for its timeout leaves on its own,
    and the driver's next command is refused at once with that far end's reason, not
    after a timeout of its own."""
    with Link("sink", "tcp", "process", "127.0.0.1", 0.5, 1000) as link:
        assert link._process is not None
        assert link._process.wait(timeout=30) == 0
        with pytest.raises(PeerError, match="ended before it took a command") as caught:
            link.command(PeerOrder(cmd="sink", count=1, copy=True, frames=1, loop="python"))
    assert "(exit code 0: no command within 0.5 s)" in str(caught.value)


def test_a_thread_far_end_left_without_commands_ends_silently(no_leftovers, capfd):
    """The same silence in a thread far end (the kernel's own process) ends it without
    a word on stderr: that stream is the user's cell."""
    with Link("sink", "tcp", "thread", "127.0.0.1", 0.5, 1000) as link:
        assert link._thread is not None
        link._thread.join(timeout=30)
        assert not link._thread.is_alive()
    assert "within" not in capfd.readouterr().err
