"""``%taskflood --backend ray``: a local Ray instance (``ray.init``) with
``num_cpus=--engines``, every task asking one CPU, so ``--engines`` tasks run at once,
each in its own worker process. The dashboard, usage stats and log forwarding are off,
the object store is capped (:data:`OBJECT_STORE_BYTES`), and its files go to a folder
of its own, removed after. Started for a block of points and shut down after it, its
processes tagged for the reaper. Or, with ``--address``, an existing cluster:
connected to, and left as it was.

Tasks go by ``f.remote()`` and come back by ``ray.get`` of the list, as Ray's own
``ray.get([f.remote() ...])`` loop does. Ray stamps no per-task stages that a sample
can read back at once (its timeline is gathered asynchronously), so each task times
its own run on its worker and hands that back with its value (:func:`timed_call`,
two clock reads); submit, queue and return are NaN.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ...params.address import split_url
from ...params.backends import RAY
from ..anatomy import run_stage
from ..celltask import UserTask
from ..clusters.reaper import TAG_VARIABLE, processes_with
from ..tasks import pid_after, run_cell_boxed, timed_call
from .futures import START_TIMEOUT_S, FuturesSession, quiet_loggers, restore_loggers
from .reach import Deadline, Target, answers_grpc
from .tagged import end, start_reaper, tagged

# The smallest store Ray accepts is about 75 MiB; a flood's objects are tiny.
OBJECT_STORE_BYTES = 128 * 2**20
STAGES_NOTE = (
    "stages, ray: each task times its own run on its worker (run); submit, queue and "
    "return are not stamped apart (NaN: Ray's task timeline is gathered asynchronously)"
)
# Ray's own setting for an offline instance: it sends no usage statistics.
_OFFLINE = {"RAY_USAGE_STATS_ENABLED": "0"}
# On Linux Ray turns a node address of 127.0.0.1 into the host's own, and its servers
# then listen on every interface. As on macOS (Ray's RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER
# off), the node is then loopback's: its servers listen on 127.0.0.1 alone.
_LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


# What a user checks when a cluster does not answer.
_CHECK = (
    "the cluster is running (`ray status`) and that the port is its head's GCS port "
    "(6379 by default, the one `ray start --head` prints)"
)


def reach_cluster(address: str, timeout: float) -> None:
    """Raise :class:`NoAnswer` unless a gRPC server (a Ray head's GCS is one) answers at
    ``address`` within ``timeout`` seconds; ``ray.init`` is not tried before: where
    nothing answers, Ray waits about 40 s and warns on the terminal in C++."""
    _, where = split_url(address, RAY.address_schemes, RAY.address_example)
    target = Target("a Ray cluster", address, where.host, where.port or 0, _CHECK)
    answers_grpc(target, Deadline(timeout))


@contextlib.contextmanager
def _loopback() -> Iterator[None]:
    """The same setting for this process, whose Ray read it at import: only while it
    starts its own local instance."""
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


class RaySession(FuturesSession):
    backend = RAY.name
    folder: str = ""
    reaper: subprocess.Popen[bytes] | None = None
    remotes: dict[Any, Any]
    boxed: list[Any]
    loud: dict[str, int] | None = None  # the loggers' levels before the session
    own: list[int] | None = None  # Ray's own processes, found at the first sample
    runs: list[float]  # each task's run time since the sample began, from its worker

    def _start(self) -> None:
        if self.address:  # before Ray is imported: an address that does not answer is quick
            reach_cluster(self.address, self.connect_timeout)
        import ray

        self.loud = quiet_loggers(RAY.logger)  # its token notice, among others
        if ray.is_initialized():
            msg = "backend ray: this Python is already connected to Ray (ray.shutdown() first)"
            raise ValueError(msg)
        self.remotes, self.runs = {}, []
        if self.address:  # someone else's: connected to, never started or stopped
            # A cluster on this host's loopback: this driver is loopback's too.
            on_loopback = self.address.split(":")[0] in ("127.0.0.1", "localhost")
            with _loopback() if on_loopback else contextlib.nullcontext():
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            self._check_workers(int(ray.cluster_resources().get("CPU", 0)))
        else:
            self.folder = tempfile.mkdtemp(prefix="zmqbench-ray-")
            self.reaper = start_reaper(self.token, remove=self.folder)
            with tagged(self.token, **_OFFLINE, **_LOOPBACK), _loopback():
                ray.init(
                    # Not ray.init()'s default, which joins the cluster RAY_ADDRESS or
                    # the machine's last `ray start` names: the run's own is asked for.
                    address="local",
                    num_cpus=self.workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    object_store_memory=OBJECT_STORE_BYTES,
                    _temp_dir=self.folder,
                    configure_logging=False,
                    _node_ip_address="127.0.0.1",
                )
        # Busy every worker at once, so Ray starts all of them now.
        pid_of = self._remote(pid_after)
        self.started = ray.get(
            [pid_of.remote(0.2) for _ in range(self.workers)], timeout=START_TIMEOUT_S
        )
        self.local = self.address == "" or all(
            host == socket.gethostname() for _, host in self.started
        )
        if STAGES_NOTE not in self.notes:
            self.notes.append(STAGES_NOTE)

    def _controller_pids(self) -> list[int]:
        """Ray's own processes this run started (its GCS, raylet and their
        helpers, all tagged), but its workers and the reaper."""
        if self.address:
            return []
        if self.own is None:  # found once: every process's environment is read
            skip = {*self.pids, *([self.reaper.pid] if self.reaper is not None else [])}
            tagged_now = processes_with(TAG_VARIABLE, self.token)
            self.own = [p.pid for p in tagged_now if p.pid not in skip]
        return self.own

    def _remote(self, task: Callable[..., Any], timed: bool = False) -> Any:
        """Ray's remote function of ``task``, exported once; ``timed``: one that hands
        back the task's own run time with its value."""
        if (task, timed) not in self.remotes:
            import ray

            run = task
            if timed:

                def run(*args: Any) -> tuple[Any, float]:
                    return timed_call(task, *args)

                run.__name__ = run.__qualname__ = f"timed_{task.__name__}"
            self.remotes[task, timed] = ray.remote(num_cpus=1, max_retries=0)(run)
        return self.remotes[task, timed]

    def _worker_pids(self) -> list[int]:
        """The workers' processes, when they run on this host (only those can be watched)."""
        return sorted({pid for pid, _ in self.started}) if self.local else []

    def _install(self, cell: UserTask) -> None:
        import ray

        # Fetched once per worker, by the first task it runs.
        self.boxed = [ray.put(self._cell_args(cell)[1:])]

    def _cell_call(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return run_cell_boxed, (self.token, self.boxed)

    def _submit(self, task: Callable[..., Any], *args: Any) -> Any:
        return self._remote(task, timed=True).remote(*args)

    def _wait(self, futures: Sequence[Any], timeout: float) -> int:
        import ray

        done, _ = ray.wait(
            list(futures), num_returns=len(futures), timeout=timeout, fetch_local=False
        )
        return len(done)

    def _gather(self, futures: Sequence[Any]) -> list[Any]:
        import ray

        timed = ray.get(list(futures))
        self.runs += [run for _, run in timed]
        return [value for value, _ in timed]

    def _stages_mark(self) -> None:
        self.runs.clear()  # the warm-up's runs are not the sample's

    def _stages(self, mark: Any) -> dict[str, float]:
        return run_stage(self.runs)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            import ray

            if ray.is_initialized():
                ray.shutdown()
        if not self.address:
            end(self.token, self.reaper)
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
        restore_loggers(self.loud)
