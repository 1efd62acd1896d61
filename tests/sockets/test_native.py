"""The native loop (``--loop native``): C over pyzmq's own libzmq, on real sockets over
all three transports, through the function and the magic; a native far end killed
mid-sample is named within a second and leaves nothing; no C compiler is a clear
error."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import TINY, sampling
from far_ends import LONG, find_far_end, kill_later
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.sockets.kernel.link import PeerError
from zmqbench_magic.sockets.loops import native

BOTH = ["python", "native"]


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_native_throughput_on_each_transport(transport, no_leftovers):
    df = run_throughput(
        size=[100, 64 * 1024],
        copy=[True, False],
        transport=transport,
        loop=BOTH,
        count=2000,
        repeat=2,
        warmup=0,
    ).df
    assert list(df["loop"].unique()) == BOTH
    native_rows = df[df["loop"] == "native"]
    assert len(native_rows) == 2 * 2 * 2
    if transport != "ipc":  # libzmq may drop over ipc; the row then says so
        assert (native_rows["received"] == native_rows["count"]).all()
    assert (native_rows["msgs_per_s"] > 0).all()
    # Timed first to last receive, as the Python loop is.
    assert list(native_rows["msgs_per_s"] * native_rows["elapsed_s"]) == pytest.approx(
        list(native_rows["received"] - 1)
    )
    assert (native_rows["send_cpu_us_per_msg"] > 0).all()


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_native_latency_on_each_transport(transport, no_leftovers):
    result = run_latency(size=[1, 1024], copy=[True, False], transport=transport, loop=BOTH, **TINY)
    df = result.df[result.df["loop"] == "native"]
    assert len(df) == 2 * 2 * TINY["repeat"]
    assert (df["min_us"] > 0).all() and (df["sample_p50_us"] <= df["sample_p99_us"]).all()
    assert (df["sample_p99_us"] <= df["max_us"]).all()
    assert list(df["sample_mean_us"] * df["count"]) == pytest.approx(list(df["elapsed_s"] * 1e6))
    # Every round trip of both loops is kept in the point's distribution.
    loops = {d["loop"] for d in result.distributions}
    assert loops == set(BOTH)


def test_the_magic_sweeps_the_loop(ip, no_leftovers):
    with capture_output():
        result = ip.run_line_magic(
            "zmqthr", "-q -o --no-chart -n 2000 -r 2 --warmup 0 --loop python native --size 1k"
        )
    assert list(result.df["loop"].unique()) == BOTH
    with capture_output():
        result = ip.run_line_magic(
            "zmqlat", "-q -o --no-chart -n 200 -r 2 --warmup 0 --loop native -t inproc"
        )
    assert set(result.df["loop"]) == {"native"}
    with pytest.raises(UsageError, match="loop must be one of python, asyncio, native, got rust"):
        ip.run_line_magic("zmqthr", "--loop rust")


@pytest.mark.parametrize("run", [run_throughput, run_latency])
def test_a_native_far_end_killed_mid_sample_is_named_with_how_it_ended(run, no_leftovers):
    kill_later(find_far_end, sampling)
    with pytest.raises(PeerError, match=r"exited \(killed by signal 9 \(SIGKILL\)\)"):
        run(**LONG, loop="native")


def test_a_multipart_payload_is_refused_by_the_native_loop():
    with pytest.raises(ValueError, match="native loop sends one frame"):
        run_throughput(payload=[b"head", b"body"], loop="native", count=10, repeat=1)


def test_without_a_c_compiler_native_says_what_to_install(tmp_path):
    """A fresh cache and no compiler on PATH: the build is refused with the remedy."""
    code = textwrap.dedent("""
        from zmqbench_magic import run_throughput
        try:
            run_throughput(loop="native", count=10, repeat=1)
        except ValueError as exc:
            print(exc)
    """)
    env = {**os.environ, "PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CC", None)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "--loop native needs a C compiler" in done.stdout
    assert "apt-get install gcc" in done.stdout
    assert not (tmp_path / "cache" / "zmqbench_magic").exists() or not any(
        (tmp_path / "cache" / "zmqbench_magic").glob("*.so")
    )


def test_the_loops_are_built_against_the_libzmq_pyzmq_loaded():
    lib = native.library()
    assert "libzmq" in native.libzmq_path().name
    done = subprocess.run(["ldd", lib._name], capture_output=True, text=True, check=True)
    assert str(native.libzmq_path()) in done.stdout


def test_the_python_tax_is_above_one_when_python_is_slower_for_rates_and_times():
    """Native / Python for a rate, Python / native for a time: above 1 = Python slower.
    (A frame built by hand: this checks the arithmetic, not a measurement.)"""
    import pandas as pd

    from zmqbench_magic.results.statistics.analysis import python_tax

    rows = [
        {
            "size": 1,
            "copy": True,
            "transport": "tcp",
            "peer": "process",
            "loop": loop,
            "copy_threshold": 65536,
            "msgs_per_s": rate * (1 + k / 100),
            "sample_p50_us": time,
            "sample": k,
        }
        for loop, rate, time in (("python", 100.0, 30.0), ("native", 300.0, 10.0))
        for k in range(10)
    ]
    df = pd.DataFrame(rows)
    throughput, latency = python_tax(df, "msgs_per_s"), python_tax(df, "sample_p50_us")
    assert throughput["tax"].iloc[0] == pytest.approx(3.0)
    assert latency["tax"].iloc[0] == pytest.approx(3.0)
    # The verdict is native's against Python, whichever way the metric reads.
    assert throughput["verdict"].iloc[0] == latency["verdict"].iloc[0] == "faster"
    assert latency[["ci_low", "ci_high"]].iloc[0].tolist() == pytest.approx([3.0, 3.0], rel=0.01)
    low, high = throughput[["ci_low", "ci_high"]].iloc[0]
    assert low <= 3.0 <= high


def test_the_native_loop_sends_without_a_copy_by_pyzmqs_own_rule():
    """copy=False copies what pyzmq copies: a message under the socket's
    copy_threshold, so the two loops send a size alike."""
    import zmq

    with zmq.Context() as ctx, ctx.socket(zmq.PUSH) as sock:
        threshold = sock.copy_threshold
        assert threshold == zmq.COPY_THRESHOLD
        under, at = b" " * (threshold - 1), b" " * threshold
        assert native.zero_copy(False, under, sock) == 0
        assert native.zero_copy(False, at, sock) == 1
        assert native.zero_copy(True, at, sock) == 0
        sock.copy_threshold = 0  # nothing copied at any size: the crossover sweeps' setting
        assert native.zero_copy(False, b" ", sock) == 1
