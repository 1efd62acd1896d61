"""Kernel messages: the tool's execute round trip beside a bare jupyter_client loop,
and beside a ZeroMQ round trip of the same size, in one run.

The bare loop is written as jupyter_client's documentation writes one: a
``BlockingKernelClient`` from ``start_new_kernel``, then per request ``kc.execute``,
``kc.get_shell_msg`` for its reply and ``kc.get_iopub_msg`` until its idle status. Each
round runs both on a fresh kernel, in alternating order (the tool first in even
rounds), with the same number of requests; the tool's rate over the bare loop's is its
own overhead (at least 0.9 is the goal). The tool's rate is one over its mean round trip
(send to idle status), the bare loop's its requests over its loop's whole time. Then
``run_latency`` at the size of an execute request on the wire: how much of a cell's
floor is the ZeroMQ hop.

Then the same empty executes through a Jupyter server the run starts, over the
kernel's websocket (v1 protocol), and from a JupyterLab page of it in headless Chromium
(JupyterLab's own kernel client), stage by stage beside the direct path; and through
that server by a client that acknowledges each TCP segment at once
(``TCP_QUICKACK``): what the usual delayed acknowledgement costs against a server
whose websocket leaves Nagle's algorithm on.

Last, the figures others published for the same path, set beside this machine's.

    python bench/bench_kernel_messages.py            # ~1 min on 2 cores
    python bench/bench_kernel_messages.py --quick    # checks the script, not the figures
"""

from __future__ import annotations

import argparse
import statistics
import time
from subprocess import DEVNULL

from jupyter_client.manager import start_new_kernel
from report import report

from zmqbench_magic import run_kernel_messages, run_latency
from zmqbench_magic.kernel_messages.server import JupyterServer, ServerKernel
from zmqbench_magic.kernel_messages.trips import execute_trip
from zmqbench_magic.params.kernel_messages import STAGE_METRICS

# What others measured on this path (their machines, their years): each with where.
PUBLISHED = [
    ("server", "an execute through kernel_gateway (jupyter_client #266, 2017)", 8000.0),
    ("info", "one message and its reply, the protocol when new (Min RK, 2010)", 1250.0),
]
# An execute request of an empty cell as it crosses the wire: its frames' bytes.
_EXECUTE_BYTES = 700


def bare_loop(count: int) -> float:
    """Requests per second of ``count`` empty executes, the documented way."""
    # Its stderr (a warning that the channels are not encrypted) is not the figures'.
    km, kc = start_new_kernel(kernel_name="python3", startup_timeout=60, stderr=DEVNULL)
    try:
        began = time.perf_counter()
        for _ in range(count):
            msg_id = kc.execute("pass", store_history=False)
            while kc.get_shell_msg(timeout=10)["parent_header"].get("msg_id") != msg_id:
                pass
            while True:
                message = kc.get_iopub_msg(timeout=10)
                if (
                    message["parent_header"].get("msg_id") == msg_id
                    and message["msg_type"] == "status"
                    and message["content"]["execution_state"] == "idle"
                ):
                    break
        return count / (time.perf_counter() - began)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def tool(count: int) -> tuple[float, float]:
    """Requests per second of ``count`` empty executes through the tool, and its mean
    round trip in µs."""
    result = run_kernel_messages(msg=["execute"], count=count, repeat=1, warmup=0)
    mean_us = float(result.df["roundtrip_us"].iloc[0])
    return 1e6 / mean_us, mean_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="one short round")
    args = parser.parse_args()
    rounds, count = (1, 20) if args.quick else (args.rounds, args.count)
    ratios, tool_us = [], []
    print(f"{count} empty executes per sample, python3 kernel, fresh each round")
    print(f"{'round':>5} {'first':<6} {'tool req/s':>11} {'bare req/s':>11} {'tool/bare':>10}")
    for number in range(rounds):
        if number % 2 == 0:
            (ours, mean_us), bare = tool(count), bare_loop(count)
        else:
            bare, (ours, mean_us) = bare_loop(count), tool(count)
        ratios.append(ours / bare)
        tool_us.append(mean_us)
        first = "tool" if number % 2 == 0 else "bare"
        print(f"{number:>5} {first:<6} {ours:>11,.0f} {bare:>11,.0f} {ours / bare:>10.2f}")
    ratio = statistics.median(ratios)
    held = "met" if ratio >= 0.9 else "NOT met"
    print(f"\nmedian tool/bare: {ratio:.2f} (goal: at least 0.9): {held}")

    execute_us = statistics.median(tool_us)
    zmq = run_latency(
        size=[_EXECUTE_BYTES], repeat=max(rounds, 3), min_time=0.1 if not args.quick else 0.02
    )
    zmq_us = float(zmq.summary()["sample_mean_us"].iloc[0])
    print(
        f"\nexecute round trip {execute_us:,.0f} µs; a ZeroMQ REQ/REP round trip of "
        f"{_EXECUTE_BYTES} B over tcp {zmq_us:,.0f} µs: {execute_us / zmq_us:.0f}x"
    )
    served_us = paths(count, rounds)

    info = run_kernel_messages(msg=["info"], count=count, repeat=rounds, warmup=1)
    here = {"server": served_us, "info": float(info.summary()["roundtrip_us"].iloc[0])}
    print(f"kernel_info round trip {here['info']:,.0f} µs")
    print("\npublished figures beside this machine's (their machines and years):")
    for msg, what, published_us in PUBLISHED:
        word = "faster here" if here[msg] < published_us else "slower here"
        print(
            f"  {what}: {published_us:,.0f} µs; here {here[msg]:,.0f} µs, {word} "
            f"({published_us / here[msg]:.1f}x)"
        )


def paths(count: int, rounds: int) -> float:
    """Direct and through a server, stage by stage; then a quick-acking client. The
    median execute round trip through the server."""
    served = run_kernel_messages(
        msg=["execute"], via=["zmq", "server", "browser"], count=count // 5, repeat=rounds, warmup=1
    )
    medians = served.df.groupby("via")[["roundtrip_us", *(m.name for m in STAGE_METRICS)]]
    table = medians.median()
    print(f"\nempty executes, medians over {rounds} round(s) (µs):")
    print(f"{'path':<8} {'round trip':>11}" + "".join(f" {m.title:>14}" for m in STAGE_METRICS))
    for via, row in table.iterrows():
        stages = "".join(f" {row[m.name]:>14,.0f}" for m in STAGE_METRICS)
        print(f"{via:<8} {row['roundtrip_us']:>11,.0f}{stages}")
    print("\nthrough the server, by how the client acknowledges (median round trip, µs):")
    server = JupyterServer(30.0, 1000.0, 1e6)
    try:
        for ack_at_once in (False, True):
            kernel = ServerKernel(server, "python3", "v1", 30.0, ack_at_once=ack_at_once)
            try:
                trips = sorted(
                    execute_trip(kernel, "pass", 30.0).roundtrip for _ in range(count // 5)
                )
            finally:
                kernel.close()
            how = "at once (TCP_QUICKACK)" if ack_at_once else "delayed (the usual)"
            print(f"  {how:<24} {1e6 * trips[len(trips) // 2]:>9,.0f}")
    finally:
        server.close()
    return float(table.loc["server", "roundtrip_us"])


if __name__ == "__main__":
    with report("kernel_messages"):
        main()
