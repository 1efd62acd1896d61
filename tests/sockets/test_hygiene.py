"""Nothing is left behind, whatever happens: errors, a dead or hung peer, a kernel
interrupt, a killed kernel. (What each layer imports: test_layers.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading

import psutil
import pytest
import zmq
from conftest import far_end_child, sampling, wait_until

from zmqbench_magic import run_latency, run_throughput
from zmqbench_magic.sockets.kernel.link import Link, PeerError
from zmqbench_magic.sockets.loops.pair import latency_sample, timed_sample
from zmqbench_magic.sockets.payload import Payload

LONG = {"size": 100, "count": 20_000_000, "repeat": 1, "warmup": 0}


def _mid_sample() -> psutil.Process:
    """The run's far end, once it is in its sample's loop."""
    far_end = wait_until(far_end_child, 10, "a far end")
    wait_until(lambda: sampling(far_end), 20, "a sample under way")
    return far_end


def _in_background(action) -> threading.Thread:
    thread = threading.Thread(target=action, daemon=True)
    thread.start()
    return thread


def test_an_address_that_cannot_be_bound(no_leftovers):
    # 192.0.2.1 (TEST-NET-1, for documentation) is no interface of this machine: the
    # bind fails here, and nothing is sent anywhere (a host name would be looked up).
    with pytest.raises(ValueError, match=r"cannot bind tcp address '192\.0\.2\.1'"):
        run_throughput(address="192.0.2.1", count=10, repeat=1)


def test_a_port_already_in_use(no_leftovers):
    with zmq.Context() as ctx, ctx.socket(zmq.PULL) as holder:
        port = holder.bind_to_random_port("tcp://127.0.0.1")
        with pytest.raises(
            ValueError, match=rf"cannot bind tcp address '127.0.0.1:{port}'.*in use"
        ):
            run_latency(address=f"127.0.0.1:{port}", count=10, repeat=1)


@pytest.mark.parametrize("run", [run_throughput, run_latency])
def test_a_peer_that_dies_is_named_not_waited_out(run, no_leftovers):
    _in_background(lambda: _mid_sample().kill())
    with pytest.raises(PeerError, match=r"tcp 100 B copy \(peer process\).*exited"):
        run(timeout=3, **LONG)


def test_a_request_dropped_with_its_connection_names_the_far_end_that_went():
    """libzmq drops a request whose connection dies between its frames and reports the
    send as done, its REQ socket then refusing the receive (EFSM). Here a sample's loop
    ends its far end and receives with no request sent, the same EFSM: the far end's
    exit is named, as for a reply that never came."""

    def far_end_gone_then_receive() -> None:
        link._process.kill()
        link._process.wait(10)
        link.data.recv()

    link = Link("echo", "tcp", "process", "127.0.0.1", 5.0, 1000)
    try:
        with pytest.raises(PeerError, match=r"the tcp echo peer \(process\) exited") as named:
            timed_sample(
                link, "echo", Payload.blank(64), 10, True, "python", far_end_gone_then_receive, None
            )
        assert isinstance(named.value.__cause__, zmq.ZMQError)
        assert named.value.__cause__.errno == zmq.EFSM
    finally:
        link.close()


@pytest.mark.parametrize("loop", ["python", "asyncio", "native"])
def test_a_req_socket_out_of_step_with_its_far_end_there_is_not_blamed_on_it(loop):
    """The same EFSM while the far end is still there is the loop's fault, and is raised
    as it is: a request already sent, each loop's first send of the sample is refused.
    (The timeout is long enough that the far end does not leave on its own meanwhile.)"""
    link = Link("echo", "tcp", "process", "127.0.0.1", 10.0, 1000)
    try:
        link.data.send(b"a request of no sample's")
        with pytest.raises(zmq.ZMQError) as refused:
            latency_sample(link, Payload.blank(64), 100, True, loop)
        assert refused.value.errno == zmq.EFSM
        assert link.alive()
    finally:
        link.close(hurry=True)  # stopped mid-sample: no clean end to ask of it
    # Busy with the sample it was ordered, it reads no command: terminated at once, not
    # waited out to the kill (which held a Ctrl-C for seconds).
    assert link.exit_code == -signal.SIGTERM


def test_a_peer_that_hangs_times_out_and_is_stopped(no_leftovers):
    _in_background(lambda: _mid_sample().suspend())
    with pytest.raises(
        TimeoutError,
        match=r"tcp 100 B copy \(peer process\): the tcp sink peer \(process\) "
        r"did not answer within 1 s",
    ):
        run_throughput(timeout=1, **LONG)


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_a_kernel_interrupt_leaves_nothing(transport, no_leftovers, kernel_sigint):
    kernel_sigint(0.5)
    with pytest.raises(KeyboardInterrupt):
        run_throughput(transport=transport, **LONG)


def test_a_killed_kernel_leaves_no_peer(tmp_path):
    """SIGKILL skips every cleanup in the process that held the peer; the peer must
    notice its parent is gone and exit by itself."""
    script = textwrap.dedent(
        """
        from zmqbench_magic import run_throughput
        run_throughput(size=100, count=10**9, repeat=1, warmup=0, timeout=600)
        """
    )
    kernel = subprocess.Popen([sys.executable, "-c", script])
    try:
        holder = psutil.Process(kernel.pid)
        peer = wait_until(lambda: far_end_child(holder), 20, "the kernel's far end")
        wait_until(lambda: sampling(peer), 20, "a sample under way")
        kernel.kill()
        kernel.wait(5)
        peer.wait(5)  # raises psutil.TimeoutExpired if the peer outlived its parent
    finally:
        kernel.kill()
        kernel.wait(5)


# The one module that starts the layer's processes (ssh too: its far end then starts on
# the other host, through the same function there).
_STARTS_PROCESSES = {"processes.py"}


def test_every_process_of_the_sockets_layer_starts_through_one_function():
    """Held, pinned and given its environment in one place: no other module of the
    layer calls ``subprocess.Popen`` (a planted one is found)."""
    import ast
    from pathlib import Path

    import zmqbench_magic.sockets as layer

    def popens(tree: ast.AST) -> list[int]:
        return [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "Popen"
        ]

    assert popens(ast.parse("import subprocess\np = subprocess.Popen(['true'])\n")) == [2]
    folder = Path(layer.__file__).parent
    found = {
        path.name: lines
        for path in folder.rglob("*.py")
        if path.name not in _STARTS_PROCESSES and (lines := popens(ast.parse(path.read_text())))
    }
    assert found == {}
    # And in that module, one call: every process is held and pinned the same way.
    assert len(popens(ast.parse((folder / "kernel" / "processes.py").read_text()))) == 1
