"""A far end on another host (``zmqbench peer --bind`` and ``--remote``): on loopback,
then across a network namespace of the test's own, on a link shaped to 1 Gbit/s; a
wrong secret is refused fast, logged, and the far end keeps serving; ``--curve``
measures encryption's cost; bad settings are named before anything starts."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import wait_until
from hosts import (
    commands_in,
    host,
    namespaces,
    processes_in,
    skip_without_hosts,
    sshd,
    standing_peer,
)
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.parallel.flood.samples import hub_queues
from zmqbench_magic.params.far_end import SSH_COMMAND_ENV
from zmqbench_magic.sockets.kernel.link import PeerError
from zmqbench_magic.sockets.secret import Keys, read_secret, write_secret

# A far end elsewhere: 2,000 messages a sample, one round (a link of 1 Gbit/s).
QUICK = {"count": 2000, "repeat": 1, "warmup": 0}


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.json"
    write_secret(path)
    return path


def test_a_secret_file_is_the_owners_alone_and_checked(tmp_path, secret):
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    read_secret(secret)
    os.chmod(secret, 0o644)
    with pytest.raises(ValueError, match="is readable by others: chmod 600"):
        read_secret(secret)
    with pytest.raises(ValueError, match=r"cannot be read .* make one with `zmqbench peer"):
        read_secret(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text("{}")
    os.chmod(tmp_path / "junk.json", 0o600)
    with pytest.raises(ValueError, match="holds no zmqbench secret"):
        read_secret(tmp_path / "junk.json")


def test_bad_remote_settings_are_named_before_anything_starts():
    with pytest.raises(ValueError, match=r"remote must be tcp://HOST:PORT .* got .ftp:/"):
        run_throughput(remote="ftp://nowhere", **QUICK)
    with pytest.raises(ValueError, match="leave --transport and --peer out, got ipc"):
        run_throughput(remote="tcp://127.0.0.1:5555", transport="ipc", **QUICK)
    with pytest.raises(ValueError, match=r"beyond loopback: give --secret-file"):
        run_throughput(remote="tcp://10.77.9.2:5555", **QUICK)
    with pytest.raises(ValueError, match="curve true needs tcp or ipc"):
        run_throughput(curve=True, transport="inproc", **QUICK)
    with pytest.raises(ValueError, match="curve true with --remote needs --secret-file"):
        run_throughput(remote="tcp://127.0.0.1:5555", curve=True, **QUICK)


def test_a_standing_far_end_on_loopback_serves_runs_one_after_another(no_leftovers):
    with standing_peer(None, "tcp://127.0.0.1:0", None) as (url, log):
        thr = run_throughput(remote=url, size=[100, "64k"], **QUICK)
        lat = run_latency(
            remote=url,
            size=100,
            rate=[0, "2k"],
            loop=["python", "native"],
            count=300,
            repeat=1,
            warmup=0,
        )
        assert set(thr.df["peer"]) == {"remote"} and (thr.df["msgs_per_s"] > 0).all()
        assert (thr.df["received"] == thr.df["count"]).all()
        assert set(lat.df["peer"]) == {"remote"} and (lat.df["achieved_per_s"] > 0).all()
        assert "run 6: done" in log.read_text()  # two thr far ends, four lat ones


def test_nobody_answering_is_named_within_the_timeout():
    with pytest.raises(TimeoutError, match=r"did not answer within 1 s \(not running"):
        run_throughput(remote="tcp://127.0.0.1:9", timeout=1, **QUICK)


def test_curve_is_measured_and_a_wrong_secret_is_refused_fast_and_logged(
    tmp_path, secret, no_leftovers
):
    with standing_peer(None, "tcp://127.0.0.1:0", secret) as (url, log):
        result = run_throughput(
            remote=url, secret_file=str(secret), size=100, curve=[False, True], **QUICK
        )
        by_curve = result.df.set_index("curve")["msgs_per_s"]
        assert by_curve[False] > 0 and by_curve[True] > 0
        wrong = tmp_path / "wrong.json"
        write_secret(wrong)
        # Refused by the handshake, not waited out: a timeout would say so.
        with pytest.raises(PeerError, match="refused this client: the CURVE handshake failed"):
            run_throughput(remote=url, secret_file=str(wrong), **QUICK)
        with pytest.raises(PeerError, match="refused this client"):  # no secret at all
            run_latency(remote=url, **QUICK)
        # The far end's own key, another client key: its ZAP handler says no.
        half = tmp_path / "half.json"
        half.write_text(
            Keys(read_secret(secret).server_secret, Keys.fresh().client_secret).to_json()
        )
        half.chmod(0o600)
        with pytest.raises(PeerError, match="refused this client"):
            run_latency(remote=url, secret_file=str(half), **QUICK)
        again = run_latency(
            remote=url, secret_file=str(secret), size=100, count=200, repeat=1, warmup=0
        )
        assert len(again.df) == 1  # still serving
        wait_until(
            lambda: "refused a client whose CURVE key is not this secret's" in log.read_text(),
            5,
            "the far end's log of the refusal",
        )


def test_curve_on_a_local_far_end_too(no_leftovers):
    for transport in ("tcp", "ipc"):
        df = run_latency(
            transport=transport, curve=[False, True], size=100, count=200, repeat=1, warmup=0
        ).df
        assert list(df["curve"]) == [False, True] and (df["sample_p50_us"] > 0).all()


def test_the_magic_and_the_cli_reach_a_standing_far_end(ip, secret, no_leftovers):
    with standing_peer(None, "tcp://127.0.0.1:0", secret) as (url, _):
        with capture_output() as shown:
            result = ip.run_line_magic(
                "zmqthr",
                f"-o --no-chart -n 2000 -r 1 --warmup 0 --remote {url} "
                f"--secret-file {secret} --curve true false",
            )
        assert set(result.df["curve"]) == {True, False}
        assert "msgs/s delivered" in shown.stdout
    with pytest.raises(UsageError, match="remote must be tcp://HOST:PORT"):
        ip.run_line_magic("zmqthr", "--remote 127.0.0.1")


@pytest.fixture
def test_host():
    skip_without_hosts()
    with host(1, rate="1gbit") as made:
        yield made
    assert namespaces() == []


@pytest.mark.slow  # a host of our own
def test_across_a_1_gbit_link_to_another_host(test_host, secret, no_leftovers):
    with standing_peer(test_host, f"tcp://{test_host.address}:0", secret) as (url, _):
        assert url.startswith(f"tcp://{test_host.address}:")
        big = run_throughput(
            remote=url, secret_file=str(secret), size="64k", count=2000, repeat=3, warmup=1
        )
        # The token bucket holds the link to 1 Gbit/s.
        assert (big.df["mbit_per_s"] < 1000 * 1.05).all(), big.df["mbit_per_s"]
        assert (big.df["received"] == big.df["count"]).all()
        lat = run_latency(
            remote=url,
            secret_file=str(secret),
            size=1,
            count=500,
            repeat=2,
            warmup=0,
            loop=["python", "native"],
        )
        assert (lat.df["sample_p50_us"] > 0).all()


@pytest.mark.slow  # a host of our own
def test_no_round_trip_over_the_shaped_link_beats_its_wire(test_host, secret, no_leftovers):
    """Physics as a test: a message of ``size`` bytes needs ``size * 8 / rate`` on a
    1 Gbit/s link each way, so no round trip can be shorter than twice that. A shaper
    that let a whole message through at once read 546 µs at 64 KiB here (the wire
    needs 1,049 µs): the figure measured the shaper, not the link."""
    with standing_peer(test_host, f"tcp://{test_host.address}:0", secret) as (url, _):
        lat = run_latency(
            remote=url,
            secret_file=str(secret),
            size=["64k", "1M"],
            count=40,
            repeat=2,
            warmup=1,
            min_time=0.001,
        )
    wire_us = lat.df["size"] * 8 / 1e9 * 1e6
    # Every sample's median, and the fastest round trip of all, at least two crossings.
    assert (lat.df["sample_p50_us"] >= 2 * wire_us).all(), lat.df[["size", "sample_p50_us"]]
    fastest = lat.summary().set_index("size")["min_us"]
    assert (fastest >= 2 * fastest.index.to_series() * 8 / 1e3).all(), fastest


def _over_ssh() -> list[psutil.Process]:
    """Far ends started over SSH still running (none should outlive its run)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if "--over-ssh" in (process.info["cmdline"] or []):
            found.append(process)
    return found


@pytest.mark.slow  # a host of our own with an sshd
def test_a_far_end_started_over_ssh_runs_and_is_gone_after_the_run(
    test_host, tmp_path, monkeypatch, no_leftovers
):
    with sshd(test_host, tmp_path / "ssh") as ssh:
        monkeypatch.setenv(SSH_COMMAND_ENV, ssh)
        url = f"ssh://root@{test_host.address}"
        thr = run_throughput(remote=url, remote_python=sys.executable, size="1k", **QUICK)
        lat = run_latency(
            remote=url,
            remote_python=sys.executable,
            size=1,
            curve=[False, True],
            count=300,
            repeat=1,
            warmup=0,
        )
        assert set(thr.df["peer"]) == {"remote"} and (thr.df["msgs_per_s"] > 0).all()
        assert list(lat.df["curve"]) == [False, True]
        assert _over_ssh() == []
        with pytest.raises(
            PeerError, match=r"could not start a far end over .* \(--remote-python\)"
        ):
            run_throughput(remote=url, remote_python="/nonexistent/python", **QUICK)
        assert _over_ssh() == []


@pytest.mark.slow  # a host of our own with an sshd
def test_a_killed_kernel_leaves_no_far_end_on_the_other_host(test_host, tmp_path):
    """The driver (a kernel, here a plain Python) is killed mid-run: its SSH session
    dies with it and the far end goes at once, not after its timeout."""
    with sshd(test_host, tmp_path / "ssh") as ssh:
        driver = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from zmqbench_magic import run_throughput as r; "
                f"r(remote='ssh://root@{test_host.address}', remote_python={sys.executable!r}, "
                "count=50_000_000, repeat=1, warmup=0, timeout=60)",
            ],
            env={**os.environ, SSH_COMMAND_ENV: ssh},
        )
        (far_end,) = wait_until(lambda: driver.poll() is None and _over_ssh(), 20, "a far end")
        wait_until(lambda: _busy(far_end), 20, "a sample under way")
        driver.kill()
        driver.wait()
        # Well before its 60 s timeout (a busy machine may take a few seconds).
        wait_until(lambda: not _over_ssh(), 30, "the far end gone with its kernel")
        # Nor the SSH session: its client here, its sshd process there.
        wait_until(
            lambda: not _ssh_sessions(ssh) + _left_on(test_host),
            30,
            "the SSH session gone with its kernel",
        )


def _ssh_sessions(ssh: str) -> list[str]:
    """This side's ssh clients of the test's own ssh command."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        words = " ".join(process.info["cmdline"] or [])
        if words.startswith(ssh):
            found.append(words)
    return found


def _minor_faults(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def test_a_standing_far_end_reuses_its_large_buffers(no_leftovers):
    """Started by hand, not by a driver, it sets its own allocator as the driver sets
    a far end's: 1 MB messages reuse heap buffers instead of faulting in fresh pages
    (without it: ~480 minor faults per 1 MB round trip, measured)."""
    with standing_peer(None, "tcp://127.0.0.1:0", None) as (url, _):
        first = run_latency(remote=url, size="1M", count=20, repeat=1, warmup=0)
        pid = int(first.df["far_end"].iloc[0])
        before = _minor_faults(pid)
        run_latency(remote=url, size="1M", count=200, repeat=1, warmup=0)
        assert (_minor_faults(pid) - before) / 200 < 50


@pytest.mark.slow  # two hosts of our own with an sshd each, and a cluster
def test_a_flood_with_engines_on_two_hosts(tmp_path, monkeypatch, capfd):
    from conftest import cluster_processes

    from zmqbench_magic import run_taskflood
    from zmqbench_magic.parallel.clusters import own as own_cluster

    skip_without_hosts()
    with host(2) as b, host(3) as c, sshd(b, tmp_path / "ssh") as ssh, sshd(c, tmp_path / "ssh"):
        monkeypatch.setenv(SSH_COMMAND_ENV, ssh)
        hosts = f"root@{b.address}, root@{c.address}"
        try:
            result = run_taskflood(
                tasks=32,
                engines=1,
                ssh_hosts=hosts,
                remote_python=sys.executable,
                repeat=2,
                warmup=0,
            )
            handle = own_cluster.current()
            assert handle is not None and len(handle.engine_ids()) == 2
            # Each engine says which address it reaches the controller's network from.
            engines = handle.client[:]
            engines.execute(
                "import socket\nwith socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:\n"
                f"    s.connect(({b.our_address!r}, 9))\n    address = s.getsockname()[0]",
                block=True,
            )
            where = engines.pull("address", block=True)
            assert sorted(where) == sorted([b.address, c.address])  # one engine on each
            assert (result.df["tasks_per_s"] > 0).all()
            # The flood used the engines of both hosts (--engines counts per host).
            completed = hub_queues(handle.client, 30)
            assert all(completed[i]["completed"] > 0 for i in handle.engine_ids()), completed
            assert (
                "on root@10.77.2.2, root@10.77.3.2 (controller on 10.77.2.1)"
                in (result.metadata["notes"][0])
            )
            # What the engines' start says over SSH (it reaches a notebook cell) is
            # not ipython's "Generating default config file" for each host.
            assert "Generating default config" not in capfd.readouterr().err
        finally:
            own_cluster.stop()
        assert cluster_processes() == []
        # An SSH session's sshd process there ends a moment after its client here.
        wait_until(lambda: not _left_on(b) + _left_on(c), 30, "the hosts left empty")
    assert namespaces() == []


@pytest.mark.slow  # a gateway host of our own with an sshd, and a cluster
def test_a_flood_through_an_ssh_tunnel_and_a_gateway_that_is_not_there(tmp_path, monkeypatch):
    import socket

    from conftest import cluster_processes

    from zmqbench_magic import run_taskflood
    from zmqbench_magic.parallel.clusters import own as own_cluster
    from zmqbench_magic.parallel.clusters import tunnel

    skip_without_hosts()
    with host(5) as b, sshd(b, tmp_path / "ssh") as ssh:
        monkeypatch.setenv(SSH_COMMAND_ENV, ssh)
        gateway = f"root@{b.address}"
        # One of the first local ports it is given was taken by another process before
        # ssh bound it (a race a busy machine runs): the tunnel opens on fresh ones.
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        asked, fresh = [], tunnel._free_ports

        def ports(count):
            asked.append(count)
            return fresh(count) if len(asked) > 1 else [holder.getsockname()[1], *fresh(count - 1)]

        monkeypatch.setattr(tunnel, "_free_ports", ports)
        try:
            result = run_taskflood(tasks=32, engines=1, ssh_tunnel=gateway, repeat=2, warmup=0)
            assert len(asked) == 2  # opened on its second try
            handle = own_cluster.current()
            assert handle is not None and handle.tunnel is not None
            # The client's sockets go to our end of the tunnel, and the gateway carries
            # them: its sshd runs the tunnel's session.
            assert handle.client._config["registration"].startswith("tcp://127.0.0.1:")
            assert any("cat" in words for words in _left_on(b)), _left_on(b)
            assert (result.df["tasks_per_s"] > 0).all()
            assert (
                f"through an SSH tunnel via {gateway} (controller on {b.our_address})"
                in result.metadata["notes"][0]
            )
            # A running cluster (here, the same one) named by its url file, through
            # the tunnel: the Performance page's setting.
            url_file = next(Path(handle.profile_dir, "security").glob("*-client.json"))
            named = run_taskflood(
                tasks=32, engines=1, url_file=str(url_file), ssh_tunnel=gateway, repeat=2, warmup=0
            )
            assert (named.df["tasks_per_s"] > 0).all()
        finally:
            holder.close()
            own_cluster.stop()
        assert cluster_processes() == []
        wait_until(
            lambda: not _left_on(b) + _ssh_sessions(ssh),
            10,
            "the tunnel gone with its cluster",
            every=0.2,
        )
        # A gateway that is not there: named fast, and nothing is left.
        nowhere = r"could not open an SSH tunnel through root@10\.77\.5\.9"
        with pytest.raises(ConnectionError, match=nowhere):
            run_taskflood(tasks=8, engines=1, ssh_tunnel="root@10.77.5.9", repeat=1, warmup=0)
        assert own_cluster.current() is None and cluster_processes() == []
        assert _ssh_sessions(ssh) == []
    assert namespaces() == []


def _left_on(where) -> list[str]:
    """What runs on a test host besides its sshd: engines started there over SSH
    descend from its sshd, not from this run, so they are found by their namespace."""
    return [
        words
        for words in commands_in(where)
        if "[listener]" not in words and not words.startswith("/usr/sbin/sshd")
    ]


def _engines_on(where) -> list[psutil.Process]:
    """The engine processes on a test host."""
    found = []
    for process in processes_in(where):
        with contextlib.suppress(psutil.Error):
            if "ipyparallel.engine" in " ".join(process.cmdline()):
                found.append(process)
    return found


def _busy(process: psutil.Process) -> bool:
    """In a sample's loop (or running tasks): using a good share of a core."""
    with contextlib.suppress(psutil.Error):
        return process.cpu_percent(interval=0.1) > 20
    return False


def _ours_here(where) -> list[str]:
    """This side of a cluster for ``where``: its controller (listening on our end of
    the link) and its reaper (naming the host)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        words = " ".join(process.info["cmdline"] or [])
        if f"--ip={where.our_address}" in words or (
            "zmqbench_magic.parallel.clusters.reaper" in words and where.address in words
        ):
            found.append(words)
    return found


@pytest.mark.slow  # a host of our own with an sshd, and a cluster
def test_a_killed_kernel_leaves_no_engine_or_tunnel_on_the_other_host(tmp_path):
    skip_without_hosts()
    before = set(Path(tempfile.gettempdir()).glob("zmqbench-ipp-*"))
    with host(4) as b, sshd(b, tmp_path / "ssh") as ssh:
        driver = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from zmqbench_magic import run_taskflood as r; "
                f"r(tasks=64, engines=2, ssh_hosts='root@{b.address}', "
                f"ssh_tunnel='root@{b.address}', remote_python={sys.executable!r}, "
                "repeat=1000, warmup=0)",
            ],
            env={**os.environ, SSH_COMMAND_ENV: ssh},
        )

        def engines_there() -> int:
            assert driver.poll() is None, "the driver ended before its engines started"
            return sum("ipyparallel.engine" in w for w in _left_on(b)) >= 2

        wait_until(engines_there, 60, "two engines on the host", every=0.2)
        # Mid-run: the flood keeps the engines there busy.
        wait_until(lambda: any(_busy(p) for p in _engines_on(b)), 60, "a flood under way")
        driver.kill()
        driver.wait()
        wait_until(
            lambda: not _left_on(b) + _ours_here(b),
            30,
            "no engine, controller or reaper left",
            every=0.2,
        )
        # The reaper removes the cluster's files last, here and (over SSH) there.
        wait_until(
            lambda: not set(Path(tempfile.gettempdir()).glob("zmqbench-ipp-*")) - before,
            30,
            "the cluster's files removed",
            every=0.2,
        )
        wait_until(
            lambda: not _ssh_sessions(ssh) + _left_on(b),
            30,
            "the SSH sessions gone with the kernel",
            every=0.2,
        )
