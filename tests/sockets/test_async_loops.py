"""``--loop asyncio``: the driver awaits each send and receive on zmq.asyncio sockets,
measured in the same rounds as the python loop with a paired verdict; a far end that
dies mid-sample is named as in the other loops; no loop or thread outlives a run."""

from __future__ import annotations

import threading

import pytest
from conftest import sampling
from far_ends import LONG, find_far_end, kill_later

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.params import LatencyParams
from zmqbench_magic.sockets.kernel.link import PeerError

ROUNDS = {"repeat": 2, "warmup": 1, "min_time": 0.02}


@pytest.mark.parametrize("driver", ["kernel", "process"])
@pytest.mark.parametrize("run", [run_throughput, run_latency])
def test_asyncio_runs_beside_python_in_the_same_rounds(run, driver, no_leftovers):
    result = run(
        size=[100], loop=["python", "asyncio"], transport=["tcp", "inproc"], driver=driver, **ROUNDS
    )
    df = result.df
    assert set(df["loop"]) == {"python", "asyncio"}
    # Paired: each round measured both loops of a point on the same far end.
    assert (df.groupby(["transport", "sample"])["loop"].nunique() == 2).all()
    assert "asyncio loop vs python, " in str(result)
    assert not [t for t in threading.enumerate() if t.name == "zmqbench-asyncio"]


def test_a_multipart_payload_is_awaited_whole(ip, no_leftovers):
    ip.run_cell("parts = [b'header', b'x' * 1000]")
    result = ip.run_cell_magic("zmqlat", "-o -q --no-chart --loop asyncio -r 2 -n 50", "parts")
    assert set(result.df["frames"]) == {2} and set(result.df["loop"]) == {"asyncio"}


@pytest.mark.parametrize("run", [run_throughput, run_latency])
def test_a_far_end_killed_mid_sample_is_named(run, no_leftovers):
    kill_later(find_far_end, sampling)
    with pytest.raises(PeerError, match=r"exited \(killed by signal 9 \(SIGKILL\)\)"):
        run(**{**LONG, "loop": ["asyncio"]})


def test_an_offered_rate_is_no_asyncio_loop():
    with pytest.raises(ValueError, match="--loop asyncio runs closed loops: leave out --rate"):
        LatencyParams(loop=["asyncio"], rate=[1000])
