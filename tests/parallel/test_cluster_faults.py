"""A cluster's faults, named, and floods that finish: an engine killed while the
cluster starts, resizes or floods, or the controller killed, is named by the watch
with how it ended, not waited out (how soon: bench/bench_faults.py); ``--timeout`` is
a stall, never a healthy flood's length; ``--max-time`` and Ctrl-C end a flood
mid-sample and leave the cluster ready for the next run. Every test ends with nothing
of the cluster left running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from conftest import ONE_ROUND, cluster_processes, wait_until

from zmqbench_magic.parallel.clusters import own as own_cluster
from zmqbench_magic.parallel.flood import run_taskflood
from zmqbench_magic.parallel.flood.samples import hub_queues, settle

SIGKILLED = "killed by signal 9 (SIGKILL)"
SIGKILLED_RE = re.escape(SIGKILLED)


def _left_nothing() -> None:
    own_cluster.stop()  # also waits for a broken cluster's teardown
    assert own_cluster.current() is None
    assert cluster_processes() == []


def _new_process(kind: str, besides: set[int]) -> Callable[[], psutil.Process | None]:
    """A finder for a process of the project's clusters (``engine`` or
    ``controller``, not an engine's nanny) not in ``besides``. The controller's
    schedulers are forks of it, with its command line: the controller is the one whose
    parent is not one of them (process ids wrap, so the lowest is not always it)."""

    def find() -> psutil.Process | None:
        for process in cluster_processes():
            try:
                command = " ".join(process.cmdline()).split(" --")[0].rstrip()
                parent = process.parent()
                forked = parent is not None and parent.cmdline() == process.cmdline()
            except psutil.Error:
                continue
            ours = command.endswith(f"-m ipyparallel.{kind}") and not forked
            if ours and process.pid not in besides:
                return process
        return None

    return find


class _Killer:
    """SIGKILLs what ``find`` finds once ``ready()``, from a thread; ``killed_at`` keeps
    the moment. ``finish()`` joins it, and calls off a kill whose moment never came, so
    that it cannot land in a later test's cluster."""

    def __init__(
        self,
        find: Callable[[], psutil.Process | None],
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        self.killed_at: list[float] = []
        self._called_off = threading.Event()
        self._thread = threading.Thread(target=self._kill, args=(find, ready), daemon=True)
        self._thread.start()

    def _kill(self, find: Callable[[], psutil.Process | None], ready: Callable[[], bool]) -> None:
        victim = None
        while victim is None and not self._called_off.wait(0.005):
            victim = find()
        while victim is not None and not ready():
            if self._called_off.wait(0.005):
                return
        if victim is not None:
            self.killed_at.append(time.monotonic())
            victim.kill()

    def __enter__(self) -> _Killer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._called_off.set()
        self._thread.join(5)


def _completed() -> int:
    """Tasks the project's cluster has completed, all engines together."""
    queues = hub_queues(own_cluster.current().client, 30).values()
    return sum(q["completed"] for q in queues if isinstance(q, dict))


def _held() -> int:
    """Tasks the hub holds: queued or running on an engine, or unassigned (where the
    pure scheduler's running tasks are: the hub never learns their engine)."""
    status = hub_queues(own_cluster.current().client, 30)
    held = status.pop("unassigned")
    return held + sum(s["queue"] + s["tasks"] for s in status.values())


def _noticed(err: BaseException) -> float:
    """When the watch found the process gone: the moment its error carries (the error
    itself reaches the caller only after the cluster is stopped, which takes longer on a
    busy machine)."""
    cause: BaseException | None = err
    while cause is not None and not hasattr(cause, "noticed_at"):
        cause = cause.__cause__
    assert cause is not None, f"no lost-process error behind {err!r}"
    return cause.noticed_at


def _mid_submission() -> bool:
    """The flood is under way: more than a thousand of its tasks submitted (the
    client's history, emptied after each sample), not all answered. Counted by what was
    sent rather than what is outstanding, which a fast cluster keeps below a thousand
    by answering as fast as tasks come."""
    handle = own_cluster.current()
    if handle is None:
        return False
    client = handle.client
    return len(client.history) > 1000 and bool(client.outstanding)


@pytest.mark.slow  # a real cluster
def test_an_engine_killed_mid_submission_of_20000_tasks_is_named_at_once():
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    engine_ids = dict(own_cluster.current().engine_of_pid)
    victim = next(iter(engine_ids))
    with (
        _Killer(lambda: psutil.Process(victim), _mid_submission) as killer,
        pytest.raises(RuntimeError) as err,
    ):
        run_taskflood(tasks=20_000, engines=2, **ONE_ROUND)
    killed_at = killer.killed_at
    said = str(err.value)
    assert _noticed(err.value) >= killed_at[0], f"noticed before the kill: {said}"
    who = f"engine {engine_ids[victim]} (pid {victim}, on this machine)"
    assert f"{who} exited: {SIGKILLED}" in said
    assert "its last lines: " in said  # what the engine wrote (its nanny's word of the exit)
    submitted = re.search(r"([\d,]+) of the sample's ([\d,]+) submissions had no result", said)
    assert submitted, said
    assert int(submitted[2].replace(",", "")) < 20_000, "named only after the submission"
    assert "the cluster was stopped" in said
    _left_nothing()


@pytest.mark.slow  # a real cluster
@pytest.mark.parametrize("when", ["start", "resize"])
def test_an_engine_killed_while_the_cluster_starts_or_resizes_is_named_with_its_status(when):
    own_cluster.stop()
    before: set[int] = set()
    if when == "resize":
        run_taskflood(tasks=4, engines=1, **ONE_ROUND)
        before = {p.pid for p in cluster_processes()}
    with _Killer(_new_process("engine", before)) as killer, pytest.raises(RuntimeError) as err:
        run_taskflood(tasks=4, engines=2, **ONE_ROUND)
    killed_at = killer.killed_at
    said = str(err.value)
    assert killed_at, f"no engine was killed: {said}"
    # The watch named it (not the cluster's start-up timeout, which says otherwise).
    assert _noticed(err.value) >= killed_at[0], said
    phase = "while the cluster started" if when == "start" else "while the cluster was resized"
    assert re.search(rf"an engine \(pid \d+, on this machine\) exited: {SIGKILLED_RE}", said)
    assert f"({phase})" in said
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_a_controller_killed_mid_flood_is_named_at_once():
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    with (
        _Killer(_new_process("controller", set()), _mid_submission) as killer,
        pytest.raises(RuntimeError, match=r"the controller \(pid \d+\) exited: ") as err,
    ):
        run_taskflood(tasks=20_000, engines=2, **ONE_ROUND)
    killed_at = killer.killed_at
    assert _noticed(err.value) >= killed_at[0], str(err.value)
    assert SIGKILLED in str(err.value) and "the cluster was stopped" in str(err.value)
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_a_scheduler_of_the_controller_killed_mid_flood_is_named_at_once():
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    controller = psutil.Process(own_cluster.current().cluster.controller.pid)
    named = r"a scheduler of the controller \(pid \d+\) exited"
    with (
        _Killer(lambda: controller.children()[-1], _mid_submission) as killer,
        pytest.raises(RuntimeError, match=named) as err,
    ):
        run_taskflood(tasks=20_000, engines=2, **ONE_ROUND)
    killed_at = killer.killed_at
    assert _noticed(err.value) >= killed_at[0], str(err.value)
    assert "the cluster was stopped" in str(err.value)
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_with_continue_a_lost_engine_is_replaced_and_the_run_goes_on():
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    victim = next(iter(own_cluster.current().engine_of_pid))
    with _Killer(lambda: psutil.Process(victim), _mid_submission) as killer:
        result = run_taskflood(tasks=2000, engines=2, repeat=2, warmup=0, on_engine_loss="continue")
    killed_at = killer.killed_at
    assert killed_at, "the engine was never killed"
    assert len(result.df) == 2  # the lost sample was taken again
    (note,) = [n for n in result.metadata["notes"] if SIGKILLED in n]
    assert "replaced it and took the sample again" in note
    assert len(own_cluster.current().engine_ids()) == 2
    assert victim not in own_cluster.current().engine_of_pid
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_an_engine_silent_for_seconds_is_kept_by_the_hub():
    """An engine held still for 5 s (SIGSTOP: as a machine busy enough starves one)
    misses 20 heartbeats of 250 ms; ipyparallel's 10 allowed would have unregistered it
    from a healthy cluster. Set to 40, it is still there when it wakes, and floods."""
    run_taskflood(tasks=4, engines=2, **ONE_ROUND)
    handle = own_cluster.current()
    victim = next(iter(handle.engine_of_pid))
    os.kill(victim, signal.SIGSTOP)
    try:
        time.sleep(5)  # the silence itself: what is asserted follows it
    finally:
        os.kill(victim, signal.SIGCONT)
    result = run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    assert len(result.df) == 1 and victim in own_cluster.current().engine_of_pid
    assert len(own_cluster.current().engine_ids()) == 2
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_a_flood_longer_than_the_timeout_finishes():
    """A healthy flood runs well past --timeout: it bounds a stall (test_flood.py has
    one named), not the flood. 40 sleeps of 0.1 s on 2 engines last 2 s or more on any
    machine, twice the 1 s timeout, with a task answered about every 0.05 s. The
    cluster is started first with the default timeout: on a busy machine an engine may
    take more than 1 s to register."""
    run_taskflood(tasks=4, engines=2, **ONE_ROUND)
    healthy = run_taskflood(test="map", duration=0.1, tasks=40, engines=2, timeout=1, **ONE_ROUND)
    (row,) = healthy.df.to_dict("records")
    assert row["tasks"] == 40 and row["roundtrip_s"] >= 40 * 0.1 / 2, row
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_max_time_ends_a_flood_mid_sample_and_keeps_the_cluster_ready():
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    before = _completed()
    result = run_taskflood(tasks=50_000, engines=2, repeat=3, warmup=0, max_time=2)
    # The tasks still queued were aborted, not run to the end.
    assert _completed() - before < 50_000
    assert len(result.df) == 0
    assert any(
        n.startswith("max-time (2 s) reached after 0 whole round(s)")
        for n in result.metadata["notes"]
    )
    handle = own_cluster.current()
    assert handle is not None and handle.settled and not handle.client.outstanding
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_ctrl_c_mid_flood_keeps_the_cluster_and_leaves_no_backlog_for_the_next_run(
    ip, kernel_sigint
):
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    handle = own_cluster.current()
    kernel_sigint(0, when=_mid_submission)
    result = ip.run_line_magic("taskflood", "-o -q --no-chart -n 20000 -e 2 -r 2 --warmup 0")
    assert result is not None and len(result.df) == 0  # the magic returns the whole rounds
    assert own_cluster.current() is handle, "the cluster was not kept"
    assert handle.settled and not handle.client.outstanding
    # Nothing of the 20,000 is left queued or running, so the next run has no backlog
    # to wait behind: the hub completes its 256 tasks and not one more.
    assert _held() == 0
    before = _completed()
    after = run_taskflood(tasks=256, engines=2, **ONE_ROUND)
    assert len(after.df) == 1
    # The hub counts a completion once its result is in: wait for the 256 to be counted.
    done = wait_until(lambda: (n := _completed() - before) >= 256 and n, 60, "the 256 counted")
    assert done == 256, f"{done - 256} tasks of the interrupted flood ran after it"
    assert _held() == 0
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_a_task_counted_but_never_sent_is_forgotten_and_the_cluster_kept():
    """ipyparallel counts a task as outstanding before its IO thread sends it; a Ctrl-C
    between the two leaves an id no engine will answer, which the test above meets
    about once in twenty runs. Here that state is made at once, in a real client."""
    run_taskflood(tasks=16, engines=2, **ONE_ROUND)
    handle = own_cluster.current()
    handle.client.outstanding.add("never-sent")
    settle(handle, timeout=600)  # without the hub's word this waits out the 600 s
    assert handle.settled and not handle.client.outstanding
    assert own_cluster.current() is handle
    _left_nothing()


def _held_until(release: Path, limit_s: int = 300) -> list[str]:
    """A task that runs until ``release`` exists (``limit_s`` at most, so that a test
    that failed leaves nothing running for long): a command for subprocess.call, which
    an engine imports by name, as it cannot a function of this test module."""
    loop = f'i=0; while [ ! -e "$0" ] && [ $i -lt {limit_s * 20} ]; do sleep 0.05; i=$((i+1)); done'
    return ["sh", "-c", loop, str(release)]


@pytest.mark.slow  # a real cluster
@pytest.mark.parametrize("scheme", ["leastload", "pure"])
def test_a_task_still_running_is_waited_out_not_forgotten(scheme, tmp_path):
    """Running tasks cannot be aborted and send nothing until they end: while they run
    the hub holds them, in either scheduler, and the cluster is settled only once they
    have answered. They run until the test releases them, so no machine is too slow to
    see them held, nor too slow for settle to be seen waiting."""
    run_taskflood(tasks=16, engines=2, scheme=scheme, **ONE_ROUND)
    handle = own_cluster.current()
    release = tmp_path / "release"
    view = handle.client.load_balanced_view()
    running = view.map_async(subprocess.call, [_held_until(release)] * 2)
    settled_with: list[bool] = []  # whether both had answered when settle returned

    def settling() -> None:
        settle(handle, timeout=60)
        settled_with.append(running.ready())

    settler = threading.Thread(target=settling, daemon=True)
    try:
        wait_until(lambda: _held() == 2, 60, "both tasks held by the hub")
        settler.start()
        settler.join(1)
        assert settler.is_alive(), "settled while both tasks still ran"
    finally:
        release.touch()
    settler.join(120)
    assert settled_with == [True], "settle did not return after the running tasks ended"
    assert running.get(timeout=30) == [0, 0]
    assert handle.settled and not handle.client.outstanding
    _left_nothing()


@pytest.mark.slow  # a real cluster
def test_a_long_flood_says_how_far_it_has_got():
    from zmqbench_magic.ui.progress import ProgressLine

    class Lines:
        in_place = True

        def __init__(self) -> None:
            self.shown: list[str] = []

        def show(self, text: str) -> None:
            self.shown.append(text)

        def clear(self) -> None:
            pass

    lines = Lines()
    run_taskflood(tasks=2000, engines=2, progress=ProgressLine(lines), **ONE_ROUND)
    said = r"([\d,]+) of 2,000 tasks sent, ([\d,]+) answered"
    during = [
        tuple(int(n.replace(",", "")) for n in m.groups())
        for t in lines.shown
        if (m := re.search(said, t))
    ]
    assert during, lines.shown
    assert during == sorted(during), "counts that go back"
    assert all(answered <= submitted <= 2000 for submitted, answered in during)
    own_cluster.stop()


def test_an_engine_death_reported_as_a_tasks_result_counts_as_a_lost_engine():
    """The controller reports a death as each stranded task's result: the client wraps
    an EngineError in a RemoteError, as ipyparallel's own stranded-message handler does,
    which must not read as the task's own failure."""
    from ipyparallel import error

    from zmqbench_magic.parallel.flood.samples import _engine_died

    try:
        raise error.EngineError("Engine 'e' died while running task 't'")
    except error.EngineError:
        as_delivered = error.unwrap_exception(error.wrap_exception())
    assert isinstance(as_delivered, error.RemoteError) and _engine_died(as_delivered)
    try:
        raise ValueError("the task's own")
    except ValueError:
        own = error.unwrap_exception(error.wrap_exception())
    assert not _engine_died(own)


def test_the_wait_for_the_hub_after_an_abort_ends_when_it_empties_or_stops_falling(monkeypatch):
    """The rule alone, on the hub's answers given in turn: it follows a count that falls
    to nothing, and leaves a count that stays (someone else's tasks on a shared
    cluster) once it has stood still for the allowed time, not the stall timeout."""
    from zmqbench_magic.parallel.flood import samples

    monkeypatch.setattr(samples, "LOOK_S", 0.01)
    monkeypatch.setattr(samples, "_HUB_STILL_S", 0.2)

    def hub_answering(counts: list[int]) -> list[int]:
        asked: list[int] = []

        def queues(client: object, timeout: float) -> dict[object, object]:
            held = counts[min(len(asked), len(counts) - 1)]
            asked.append(held)
            return {"unassigned": 0, 0: {"queue": held, "tasks": 0, "completed": 0}}

        monkeypatch.setattr(samples, "hub_queues", queues)
        return asked

    asked = hub_answering([245, 120, 3, 0])
    samples._wait_for_the_hub(None, timeout=60)
    assert asked == [245, 120, 3, 0]
    asked = hub_answering([7])
    started = time.monotonic()
    samples._wait_for_the_hub(None, timeout=60)
    assert 0.2 <= time.monotonic() - started < 60 and set(asked) == {7} and len(asked) > 2
