"""zmqbench_magic's patterns (``run_throughput(pattern=...)``) against code no one here
wrote, in one run: ``pubsub`` against a bare pyzmq PUB/SUB loop, the native ``proxy``
against libzmq's own ``perf/proxy_thr``, and ``pairs`` against the pipeline run as
many times one after another.

For each size, both sides measure delivered msgs/s at the same settings, one untimed
warm-up sample each; runs alternate between the two (project, reference, project,
reference, ...) so drift on this shared machine hits both; the tables give the medians
and the ratio project / reference.

- ``pubsub``, one subscriber, python loop, tcp 127.0.0.1, copy=True, against
  ``bare_perf.py pubsub``: pyzmq alone, written as pyzmq's ``examples/pubsub`` write
  it, run as its own script (see its docstring). A PUB drops what its high-water mark
  does not hold, and two rates of whatever survived a burst do not compare: both sides
  set the mark to the sample's count (``--hwm``), so neither drops; *lost* is the
  share of the count that never arrived, for each side, and says so if one did.
- ``proxy``, native loop, against libzmq's ``perf/proxy_thr`` (``--libzmq-perf``). That
  tool's topology is fixed: two XPUB publishers (``ZMQ_XPUB_NODROP``, each sending the
  count, retrying a full queue) into one XSUB/XPUB ``zmq_proxy_steerable``, one SUB
  counting the count and stopping there, high-water mark 10,000 on every socket, 4 I/O
  threads, every connection ``inproc`` between threads of one process; each message is
  a ``zmq_msg_copy`` of one buffer, which above 33 bytes shares it (no byte is copied
  anywhere). It prints the count over the time from starting the publishers (threads
  started, connected, subscription seen) to the count-th receive. The project's run
  matches it: two publishers (``--publishers 2``: this process's PUB and a publisher
  thread beside it, each sending the count), one subscriber (``peers=[1]``), inproc
  (its ends threads of this process), 4 I/O threads, ``copy=False`` sends (pyzmq's
  rule: a copy under 64 kB, none above), high-water mark 10,000 (``--hwm``),
  publishers and a proxy XPUB that wait on a full queue (``--nodrop``, as proxy_thr's
  all do); ``--proxy-transport tcp`` runs it over tcp instead, which is then not like
  for like. What differs still is the window: the project's subscriber times both
  publishers' counts, first to last receive; proxy_thr's stops at the count of one
  publisher, of two sent, and its clock starts before its publishers connect.
- ``pairs``, ``--pairs`` N PUSH/PULL pairs at once, python loop, tcp, against N runs of
  the pipeline one after another (their aggregate: N x count over the sum of the
  runs' times): the ratio is the speed-up of running the pairs at once. No reference
  from outside: on 2 cores the pairs share them.

    python bench/bench_patterns.py --libzmq-perf /tmp/ref     # ~3 minutes on 2 cores
    python bench/bench_patterns.py --quick                    # seconds; checks the script
    python bench/bench_patterns.py --references-only --quick --libzmq-perf /tmp/ref

``--references-only`` runs the references alone (the bare pubsub loop, proxy_thr), with
their own spread, for a project whose ``run_throughput`` has no ``pattern`` yet.

proxy_thr is not part of this project: build it in /tmp from libzmq's repository, at
the tag of the libzmq pyzmq bundles (4.3.5 here), linked to **that libzmq**, as the
native loop is. It includes two of the repository's own files: replace
``"../include/zmq.h"`` with ``<zmq.h>`` and drop ``"platform.hpp"`` (a header the build
generates; on Linux it only leaves ``ZMQ_HAVE_WINDOWS`` undefined):

    git clone --depth 1 --branch v4.3.5 https://github.com/zeromq/libzmq /tmp/libzmq
    cd /tmp/libzmq && sed -i 's|"../include/zmq.h"|<zmq.h>|; /"platform.hpp"/d' \\
        perf/proxy_thr.cpp
    LIBZMQ=$(python -c "import zmqbench_magic.sockets.loops.native as n; print(n.libzmq_path())")
    mkdir -p /tmp/ref && g++ -O2 -I include -o /tmp/ref/proxy_thr perf/proxy_thr.cpp \\
        $LIBZMQ -Wl,-rpath,$(dirname $LIBZMQ)
    /tmp/ref/proxy_thr 100 1000000   # usage: proxy_thr <message-size> <message-count>

The same folder may hold the ``local_thr``/``remote_thr`` tools ``bench_zmq.py`` takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import zmq
from report import report

from zmqbench_magic import ThroughputParams, run_throughput
from zmqbench_magic.params.units import format_size

SIZES = (100, 64 * 1024)
# Messages per sample: each sample lasts roughly 0.2-0.5 s here.
PUBSUB_COUNT = {100: 200_000, 64 * 1024: 8_000}
PAIRS_COUNT = PUBSUB_COUNT
# proxy_thr's inproc hands over a shared buffer: its rate hardly depends on the size.
PROXY_COUNT = {100: 1_000_000, 64 * 1024: 500_000}
# What proxy_thr fixes: two publishers into the proxy, one subscriber, 4 I/O threads.
PROXY_THR_PUBLISHERS = 2
PROXY_THR_SUBSCRIBERS = 1
PROXY_THR_IO_THREADS = 4
PROXY_THR_HWM = 10_000
BARE = Path(__file__).with_name("bare_perf.py")

# A figure: (count, size) -> (delivered msgs/s, messages of the count lost).
Figure = Callable[[int, int], tuple[float, float]]


def bare_pubsub(count: int, size: int) -> tuple[float, float]:
    """The bare PUB/SUB loop in a fresh interpreter: msgs/s and messages lost."""
    done = subprocess.run(
        [
            sys.executable,
            str(BARE),
            "pubsub",
            "--count",
            str(count),
            "--size",
            str(size),
            "--hwm",
            str(_no_drop_hwm(count)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rate, lost = done.stdout.split()
    return float(rate), float(lost)


def _no_drop_hwm(count: int) -> int:
    """A high-water mark that holds a whole sample: a PUB then drops nothing, on either
    side, so both rates count every message (at the usual mark a PUB drops most of a
    burst, and two rates of what happened to survive do not compare)."""
    return count


def proxy_thr(folder: str, size: int, count: int, timeout: float = 300) -> float:
    """libzmq's ``perf/proxy_thr SIZE COUNT``: two publishers each send ``count``
    messages through a proxy, all inproc; the count over the time until the one
    subscriber received that many, in msgs/s (it prints a whole number)."""
    done = subprocess.run(
        [f"{folder}/proxy_thr", str(size), str(count)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    line = next(ln for ln in done.stdout.splitlines() if ln.endswith("[msg/s]"))
    return float(line.split(":", 1)[1].split()[0])


def _project(**values: Any) -> dict[str, Any]:
    """One point of ``run_throughput``: its summary row, checked to be the point asked."""
    summary = run_throughput(repeat=1, warmup=1, **values).summary()
    assert len(summary) == 1, summary
    row = summary.iloc[0].to_dict()
    for name in ("pattern", "peers"):
        assert row[name] == values[name][0], (name, row[name], values[name])
    return row


def project_pubsub(count: int, size: int) -> tuple[float, float]:
    """pubsub, one subscriber, as the bare loop: msgs/s and messages lost."""
    row = _project(
        pattern=["pubsub"],
        peers=[1],
        size=[size],
        count=count,
        hwm=_no_drop_hwm(count),
        copy=[True],
        transport=["tcp"],
        loop=["python"],
    )
    return float(row["msgs_per_s"]), float(row["lost"])


def project_proxy(count: int, size: int, transport: str = "inproc") -> tuple[float, float]:
    """The native proxy, with what proxy_thr fixes: two publishers (this process's PUB
    and one far end beside it), one subscriber, 4 I/O threads, its high-water mark."""
    row = _project(
        pattern=["proxy"],
        peers=[PROXY_THR_SUBSCRIBERS],
        publishers=PROXY_THR_PUBLISHERS,
        io_threads=[PROXY_THR_IO_THREADS],
        # As proxy_thr's publishers: a full queue is waited on (ZMQ_XPUB_NODROP), at
        # its high-water mark.
        hwm=PROXY_THR_HWM,
        nodrop=True,
        size=[size],
        count=count,
        copy=[False],
        transport=[transport],
        loop=["native"],
    )
    return float(row["msgs_per_s"]), float(row["lost"])


def project_pairs(pairs: int, count: int, size: int) -> tuple[float, float]:
    """``pairs`` pairs at once: their aggregate msgs/s."""
    row = _project(
        pattern=["pairs"],
        peers=[pairs],
        size=[size],
        count=count,
        transport=["tcp"],
        loop=["python"],
    )
    return float(row["msgs_per_s"]), float(row["lost"])


def pipelines_in_turn(pairs: int, count: int, size: int) -> tuple[float, float]:
    """The existing pipeline run ``pairs`` times one after another: ``pairs`` x count
    over the sum of the runs' times, in msgs/s (PUSH/PULL loses nothing)."""
    rates = []
    for _ in range(pairs):
        result = run_throughput(
            size=[size], count=count, repeat=1, warmup=1, transport=["tcp"], loop=["python"]
        )
        rates.append(float(result.summary()["msgs_per_s"].iloc[0]))
    return pairs / sum(1 / rate for rate in rates), 0.0


def has_patterns() -> bool:
    """Whether this project's ``run_throughput`` takes ``pattern``, ``peers``, ``io_threads``."""
    names = {field.name for field in dataclasses.fields(ThroughputParams)}
    return {"pattern", "peers", "io_threads"} <= names


def measure(figures: dict[str, Figure], count: int, size: int, rounds: int) -> dict:
    """Each figure's (msgs/s, lost) over alternating rounds (all of them once per round)."""
    values: dict[str, list[tuple[float, float]]] = {name: [] for name in figures}
    for _ in range(rounds):
        for name, run in figures.items():
            values[name].append(run(count, size))
    return values


def _spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0


def compare(
    title: str,
    project: Figure | None,
    reference: Figure,
    names: tuple[str, str],
    counts: dict[int, int],
    rounds: int,
    scale: int,
    lost: bool = False,
) -> None:
    """One table: per size, the medians of both sides, their ratio and its spread (the
    reference's own spread where the project is not run), and, with ``lost``, each
    side's median loss as a share of the count."""
    figures = {names[1]: reference} if project is None else {names[0]: project, names[1]: reference}
    losses = f"{'lost':>8}{names[1] + ' lost':>16}" if lost else ""
    print(f"{title:<24}{'size':>6}{names[0]:>14}{names[1]:>14}{'ratio':>8}{'spread':>8}{losses}")
    for size in SIZES:
        count = max(counts[size] // scale, 10)
        values = measure(figures, count, size, rounds)
        rates = {name: [rate for rate, _ in v] for name, v in values.items()}
        medians = {name: statistics.median(v) for name, v in rates.items()}
        reference_cell = f"{medians[names[1]]:>14,.0f}"
        if project is None:
            cells = f"{'-':>14}{reference_cell}{'-':>8}{_spread(rates[names[1]]):>8.0%}"
        else:
            ratios = [a / b for a, b in zip(rates[names[0]], rates[names[1]], strict=True)]
            ratio = medians[names[0]] / medians[names[1]]
            cells = (
                f"{medians[names[0]]:>14,.0f}{reference_cell}{ratio:>8.2f}{_spread(ratios):>8.0%}"
            )
        if lost:
            shares = {
                name: statistics.median(gone for _, gone in v) / count for name, v in values.items()
            }
            mine = f"{shares[names[0]]:>8.0%}" if project else f"{'-':>8}"
            cells += f"{mine}{shares[names[1]]:>16.0%}"
        print(f"{'delivered (msgs/s)':<24}{format_size(size):>6}{cells}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating runs per figure")
    parser.add_argument("--quick", action="store_true", help="tiny counts, 2 rounds")
    parser.add_argument(
        "--libzmq-perf", metavar="DIR", help="a folder with libzmq's built perf/proxy_thr"
    )
    parser.add_argument("--pairs", type=int, default=2, help="pairs at once (default 2)")
    parser.add_argument(
        "--proxy-transport",
        choices=("inproc", "tcp"),
        default="inproc",
        help="the project's proxy transport (proxy_thr's is inproc)",
    )
    parser.add_argument(
        "--references-only",
        action="store_true",
        help="run the references alone (the bare pubsub loop, proxy_thr)",
    )
    args = parser.parse_args(argv)
    if not args.references_only and not has_patterns():
        parser.error(
            "this zmqbench_magic's run_throughput takes no pattern/peers/io_threads yet: "
            "run with --references-only"
        )
    rounds = 2 if args.quick else args.rounds
    scale = 100 if args.quick else 1
    project = not args.references_only
    print(
        f"pyzmq {zmq.pyzmq_version()}, libzmq {zmq.zmq_version()}, "
        f"medians of {rounds} alternating runs, one warm-up sample each"
        + ("" if project else "; references only")
    )
    print(
        "pubsub: 1 subscriber, python loop, tcp 127.0.0.1, copy=True, both sides' hwm the "
        "sample's count (no PUB drops)"
    )
    compare(
        "pubsub, 1 subscriber",
        project_pubsub if project else None,
        bare_pubsub,
        ("project", "bare pyzmq"),
        PUBSUB_COUNT,
        rounds,
        scale,
        lost=True,
    )
    if not args.libzmq_perf:
        print("proxy: not run (no --libzmq-perf)")
    else:
        print(
            "proxy: proxy_thr 2 publishers -> proxy -> 1 subscriber, inproc threads, hwm "
            f"{PROXY_THR_HWM:,}, nodrop publishers, shared buffers; project native "
            f"{PROXY_THR_PUBLISHERS} publishers -> proxy -> 1 subscriber, "
            f"{args.proxy_transport}, copy=False, hwm {PROXY_THR_HWM:,}, --nodrop, "
            f"{PROXY_THR_IO_THREADS} I/O threads"
        )
        compare(
            "proxy",
            partial(project_proxy, transport=args.proxy_transport) if project else None,
            lambda count, size: (proxy_thr(args.libzmq_perf, size, count), 0.0),
            ("native", "proxy_thr"),
            PROXY_COUNT,
            rounds,
            scale,
        )
    if project:
        print(f"pairs: {args.pairs} PUSH/PULL pairs at once, and the pipeline run as often in turn")
        compare(
            f"{args.pairs} pairs",
            partial(project_pairs, args.pairs),
            partial(pipelines_in_turn, args.pairs),
            ("at once", "in turn"),
            PAIRS_COUNT,
            rounds,
            scale,
        )
    return 0


if __name__ == "__main__":
    # The references alone are a check of what was built, not the page's table.
    with report("patterns", quick="--references-only" in sys.argv[1:]):
        status = main()
    sys.exit(status)
