"""Each engine's %taskflood against its own bare loop, in one run: ipyparallel, Dask,
Ray and the standard library's process pool, 2 single-threaded workers each.

For every backend, alternating project / bare runs (the order flipped each round):

* the project: ``run_taskflood(backend=..., tasks=256, engines=2)``, a warm-up flood
  then ``--samples`` timed floods on one freshly started engine;
* the bare loop a user would write, on an engine started the same way (2 workers,
  one thread each, 127.0.0.1), one untimed warm-up flood, then as many timed floods:
  ipyparallel ``view.apply_async`` + ``get`` on the project's cluster; Dask
  ``client.map(pure=False)`` + ``client.gather`` on a ``LocalCluster``; Ray
  ``ray.get([f.remote() ...])`` on a local ``ray.init``; the pool
  ``executor.submit`` + ``result`` on a ``ProcessPoolExecutor`` (spawn), and again
  waiting for all futures at once (``concurrent.futures.wait``) before reading them,
  as the project does.

Printed: per backend the median tasks/s of each and the ratio project / bare (1.0:
the project adds nothing), which stages of a task's time the project's samples
measured, and each project's own published figure beside it for scale, measured on
other hardware with other methods.

    python bench/bench_engines.py            # ~4 minutes on 2 cores
    python bench/bench_engines.py --quick    # checks the script, not the figures
"""

from __future__ import annotations

import argparse
import concurrent.futures
import logging
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from bench_flood import bare_flood
from report import report

from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.engines.ray_engine import OBJECT_STORE_BYTES
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.parallel.tasks import echo
from zmqbench_magic.params.taskflood import STAGE_COLUMNS, STAGES

TASKS = 256
WORKERS = 2
TIMEOUT = 120.0
# The pool twice: its bare loop reading results one by one, then waiting for all at once.
BACKENDS = ("ipyparallel", "dask", "ray", "processpool", "processpool-wait")
# Each project's own figure, for scale only: other hardware, other methods.
PUBLISHED = {
    "ipyparallel": "800-1,500 tasks/s (its 2011 Performance docs page)",
    "dask": "about 1 ms of overhead per task (Dask distributed's docs, read 2026-11)",
    "ray": "7,175 tasks/s async from one client (Ray 2.58's release microbenchmark)",
    "processpool": "none published",
    "processpool-wait": "(bare loop waits for all results at once)",
}


def project(backend: str, tasks: int, samples: int, stages: set[str]) -> list[float]:
    """The project's rates; the stages its samples measured are added to ``stages``."""
    df = run_taskflood(
        backend=backend.removesuffix("-wait"),
        tasks=tasks,
        engines=WORKERS,
        repeat=samples,
        warmup=1,
        timeout=TIMEOUT,
    ).df
    stages.update(s for s, c in zip(STAGES, STAGE_COLUMNS, strict=True) if df[c].notna().all())
    return [float(rate) for rate in df["tasks_per_s"]]


def _timed(flood: Callable[[], object], tasks: int, samples: int) -> list[float]:
    flood()  # the untimed warm-up, as the project's
    rates = []
    for _ in range(samples):
        start = time.perf_counter()
        flood()
        rates.append(tasks / (time.perf_counter() - start))
    return rates


def bare_ipyparallel(tasks: int, samples: int) -> list[float]:
    own_cluster.managed(WORKERS, "leastload", TIMEOUT)
    return [bare_flood(tasks)[0] for _ in range(samples)]  # each with its own warm-up


def bare_dask(tasks: int, samples: int) -> list[float]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=WORKERS,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as local,
        Client(local) as client,
    ):
        return _timed(
            lambda: client.gather(client.map(echo, [""] * tasks, pure=False)), tasks, samples
        )


def bare_ray(tasks: int, samples: int) -> list[float]:
    import ray

    with tempfile.TemporaryDirectory(prefix="zmqbench-bench-ray-") as folder:
        ray.init(
            num_cpus=WORKERS,
            include_dashboard=False,
            log_to_driver=False,
            object_store_memory=OBJECT_STORE_BYTES,
            _temp_dir=folder,
            _node_ip_address="127.0.0.1",
            configure_logging=False,
        )
        try:
            remote = ray.remote(num_cpus=1)(echo)
            ray.get([remote.remote("") for _ in range(WORKERS)])  # start the workers
            return _timed(
                lambda: ray.get([remote.remote("") for _ in range(tasks)]), tasks, samples
            )
        finally:
            ray.shutdown()


def bare_processpool(tasks: int, samples: int, at_once: bool = False) -> list[float]:
    """``at_once``: wait for every future with ``concurrent.futures.wait`` before
    reading the results, as the project does, rather than for each in turn (each
    ``result()`` then waits on its own future: a thread hand-off per result)."""
    context = multiprocessing.get_context("spawn")

    def flood(pool: concurrent.futures.ProcessPoolExecutor) -> list[object]:
        futures = [pool.submit(echo, "") for _ in range(tasks)]
        if at_once:
            concurrent.futures.wait(futures)
        return [future.result() for future in futures]

    with concurrent.futures.ProcessPoolExecutor(WORKERS, mp_context=context) as pool:
        concurrent.futures.wait([pool.submit(time.sleep, 0.2) for _ in range(WORKERS)])
        return _timed(lambda: flood(pool), tasks, samples)


BARE = {
    "ipyparallel": bare_ipyparallel,
    "dask": bare_dask,
    "ray": bare_ray,
    "processpool": bare_processpool,
    "processpool-wait": lambda tasks, samples: bare_processpool(tasks, samples, True),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="alternating runs per backend")
    parser.add_argument("--samples", type=int, default=5, help="timed floods per run")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=BACKENDS)
    parser.add_argument("--quick", action="store_true", help="16 tasks, 1 round, 1 sample")
    args = parser.parse_args(argv)
    rounds, samples, tasks = (1, 1, 16) if args.quick else (args.rounds, args.samples, TASKS)
    print(
        f"{tasks} tiny tasks (echo of ''), {WORKERS} single-threaded workers per engine, "
        f"{rounds} alternating runs x {samples} floods each"
    )
    print(
        f"{'backend':<16} {'project tasks/s':>15} {'bare tasks/s':>13} {'ratio':>6}  "
        f"{'stages measured':<24} published (other hardware)"
    )
    try:
        for backend in args.backends:
            ours: list[float] = []
            bare: list[float] = []
            stages: set[str] = set()
            for number in range(rounds):
                steps = [
                    (ours, lambda b=backend, s=stages: project(b, tasks, samples, s)),
                    (bare, lambda b=backend: BARE[b](tasks, samples)),
                ]
                for rates, run in steps if number % 2 == 0 else steps[::-1]:
                    rates += run()
            mine, theirs = statistics.median(ours), statistics.median(bare)
            measured = "/".join(s for s in STAGES if s in stages) or "none"
            print(
                f"{backend:<16} {mine:>15,.0f} {theirs:>13,.0f} {mine / theirs:>6.2f}  "
                f"{measured:<24} {PUBLISHED[backend]}"
            )
    finally:
        own_cluster.stop()
    return 0


if __name__ == "__main__":
    with report("engines"):
        status = main()
    sys.exit(status)
