"""A run of kernel messages: interleaved rounds over the sweep's points, each round on
a fresh kernel of each kernelspec, each sample ``count`` requests back to back (or a
count calibrated to ``--min-time``), its row the requests' mean round trip and the
mean of each stage, which add up to it.

The cell form's code is the execute test's cell; the comm test opens one comm per
kernel and size (the echo registered outside the timing); the start test starts its
own kernels, one a request.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jupyter_core.utils import ensure_event_loop

from ..method.assembly import RunAssembly
from ..method.calibrate import calibrate
from ..method.control import Progress, StopFlag, say_phase
from ..method.schedule import Interrupted
from ..params.columns import Row
from ..params.kernel_messages import (
    STAGE_METRICS,
    STAMP_SLACK_S,
    STREAM_METRICS,
    KernelMsgParams,
    KernelMsgPoint,
)
from ..results import ResultSet
from .browser import BrowserKernel, browser_kernel
from .kernel import Channels, check_kernel, kernel_under_test
from .server import ExistingServer, JupyterServer, server_kernel
from .trips import (
    Comm,
    Trip,
    execute_trip,
    info_trip,
    start_trip,
    stream_trip,
)

# An execute with no cell of the user's: an empty one, the protocol and IPython's cost.
EMPTY_CELL = "pass"
# The stream test's chunks when --count calibrates: enough to fill a batch many times.
_STREAM_START = 100
# The implementation an ipykernel names in its kernel_info_reply.
IPYKERNEL = "ipython"


def run_kernel_messages(
    params: KernelMsgParams | None = None,
    *,
    code: str | None = None,
    progress: Progress | None = None,
    stop: StopFlag | None = None,
    **values: Any,
) -> ResultSet:
    """Time Jupyter's own messages on fresh kernels over every point of the sweep.

    ``code`` is the execute test's cell (an empty one by default).

    Example
    -------
    >>> r = run_kernel_messages(msg=["execute", "info"], repeat=6)  # doctest: +SKIP
    >>> r.summary()[["msg", "roundtrip_us", "to_kernel_us", "in_kernel_us"]]  # doctest: +SKIP
    """
    params = params or KernelMsgParams(**values)
    points = list(params.points())
    served = {p.kernel for p in points if p.via != "zmq"}
    # A running server's kernelspecs are its own: asked of it once it is reached.
    for name in sorted({p.kernel for p in points} - (served if params.server_url else set())):
        check_kernel(name)
    assembly = RunAssembly(params)
    schedule = assembly.schedule(
        points, group_of=lambda p: (p.kernel, p.via, p.ws_protocol, p.signing, p.packer)
    )
    sessions = _Sessions(params, code if code is not None else EMPTY_CELL, progress)
    try:
        with _thread_loop_closed(), contextlib.ExitStack() as ends:
            if served:
                where = params.server_url
                say_phase(progress, f"reaching {where}" if where else "starting a Jupyter server")
                sessions.server = _server(params, any(p.via == "browser" for p in points))
                ends.callback(sessions.server.close)
                for name in sorted(served):
                    sessions.server.check_kernel(name)
            with schedule.whole_rounds(stop):
                for turn in schedule.turns(stop, progress):
                    with sessions.open(turn.points) as session:
                        for point in turn:
                            turn.keep(point, session.sample(point))
    except Interrupted as interrupt:
        interrupt.result = _result(assembly, schedule.kept, points)
        raise
    assembly.notes[:] = [*schedule.notes]
    return _result(assembly, schedule.kept, points)


def _server(params: KernelMsgParams, lab: bool) -> JupyterServer | ExistingServer:
    """The server the run goes through: the one the user named, or its own."""
    if params.server_url:
        return ExistingServer(params.server_url, params.timeout)
    return JupyterServer(
        params.timeout, params.iopub_msg_rate_limit, params.iopub_data_rate_limit, lab=lab
    )


@contextlib.contextmanager
def _thread_loop_closed() -> Iterator[None]:
    """jupyter_client's blocking calls run on an event loop that jupyter_core keeps for
    the thread. Off the main thread (a panel's run) the thread ends with the run, so
    its loop is closed with it, not left to the garbage collector with its file
    descriptors; the main thread's is kept, as jupyter_client keeps it."""
    try:
        yield
    finally:
        if threading.current_thread() is not threading.main_thread():
            ensure_event_loop().close()


def describe(point: KernelMsgPoint) -> str:
    """``execute on python3``, ``comm 64k B binary buffer on python3``: a point, in words."""
    return f"{KernelMsgParams.words(point, [n for n in point if n != 'kernel'])} on {point.kernel}"


def _result(assembly: RunAssembly, rows: list[Row], points: list[KernelMsgPoint]) -> ResultSet:
    return assembly.result(
        rows,
        points,
        describe,
        "on in the kernel and the client (as a notebook runs)",
        point_warnings=_unordered_warnings,
        metadata={"kernels": sorted({p.kernel for p in points})},
    )


def _mean_us(seconds: Iterable[float]) -> float:
    values = list(seconds)
    return 1e6 * sum(values) / len(values) if values else math.nan


def _unordered_warnings(rows: list[Row], point: KernelMsgPoint) -> list[str]:
    """A point some of whose requests the kernel stamped outside the client's own
    instants: how many were left out of its stages, and why."""
    unordered = sum(int(r.get("unordered_stamps") or 0) for r in rows)
    if not unordered:
        return []
    requests = sum(int(r["count"]) for r in rows)
    return [
        f"{describe(point)}: {unordered:,} of {requests:,} requests came back with kernel "
        f"stamps before the client sent them, after they arrived or out of their order, by "
        f"more than {STAMP_SLACK_S * 1000:g} ms (the kernel's clock or its date format is "
        "off): they are left out of the stages, not of the round trip"
    ]


@dataclass
class _Sessions:
    """Opens one round's kernel for a group of points (one kernelspec, reached one way:
    straight, or through the run's server in one websocket protocol)."""

    params: KernelMsgParams
    code: str
    progress: Progress | None
    counts: dict[KernelMsgPoint, int] = field(default_factory=dict)
    server: JupyterServer | ExistingServer | None = None

    @contextlib.contextmanager
    def open(self, group: list[KernelMsgPoint]) -> Iterator[_Round]:
        first = group[0]
        say_phase(self.progress, f"starting a {first.kernel} kernel")
        if all(p.msg == "start" for p in group):
            yield _Round(self, None)  # each start sample starts its own
            return
        timeout = self.params.timeout
        if first.via == "server":
            assert self.server is not None
            with server_kernel(self.server, first.kernel, first.ws_protocol, timeout) as kernel:
                yield _Round(self, kernel)
            return
        if first.via == "browser":
            assert isinstance(self.server, JupyterServer)  # a page needs the run's own
            with browser_kernel(self.server, first.kernel, timeout) as page:
                yield _Round(self, None, page)
            return
        with kernel_under_test(first.kernel, timeout, first.signing, first.packer) as direct:
            yield _Round(self, direct)


@dataclass
class _Round:
    """One kernel's samples in one round: each point's ``count`` requests."""

    sessions: _Sessions
    kernel: Channels | None
    page: BrowserKernel | None = None  # a browser's page makes the requests
    comms: dict[tuple[int, bool], Comm] = field(default_factory=dict)

    def sample(self, point: KernelMsgPoint) -> Row:
        params = self.sessions.params
        count = self._count(point)
        for _ in range(params.warmup if point.msg != "start" else 0):
            self._trips(point, count)
        trips = self._trips(point, count)
        return _row(point, count, trips, self.handler_stamped)

    @property
    def handler_stamped(self) -> bool:
        """Whether the kernel stamps an execute reply's ``started`` as its handler
        starts: ipykernel does; xeus 6 stamps it as the reply is made, after the cell
        ran (its reply callback's metadata), which bounds no handler."""
        door = self.page if self.page is not None else self.kernel
        return door is not None and door.implementation == IPYKERNEL

    def _count(self, point: KernelMsgPoint) -> int:
        """The sample's count: --count, or calibrated once per point to --min-time."""
        params = self.sessions.params
        if point.msg == "start":
            return max(params.count, 1)
        if params.count:
            return params.count
        known = self.sessions.counts.get(point)
        if known is None:
            start = _STREAM_START if point.msg == "stream" else 10

            def timed(count: int) -> tuple[None, float]:
                trips = self._trips(point, count)
                return None, trips[-1].ended - trips[0].sent

            known = self.sessions.counts[point] = calibrate(timed, params.min_time, start)
        return known

    def _trips(self, point: KernelMsgPoint, count: int) -> list[Trip]:
        params = self.sessions.params
        if point.msg == "start":
            return [
                start_trip(point.kernel, params.timeout, point.signing, point.packer)
                for _ in range(count)
            ]
        if self.page is not None:
            return self.page.trips(point.msg, count, self.sessions.code, point.size, point.buffers)
        kernel, timeout = self.kernel, params.timeout
        assert kernel is not None
        if point.msg == "stream":
            return [stream_trip(kernel, count, point.size, timeout)]
        if point.msg == "info":
            return [info_trip(kernel, timeout) for _ in range(count)]
        if point.msg == "comm":
            key = (point.size, point.buffers)
            if key not in self.comms:
                self.comms[key] = Comm(kernel, point.size, point.buffers, timeout)
            return [self.comms[key].trip() for _ in range(count)]
        return [execute_trip(kernel, self.sessions.code, timeout) for _ in range(count)]


def _row(point: KernelMsgPoint, count: int, trips: list[Trip], handler: bool = True) -> Row:
    """The sample's row: the mean round trip and stages (in µs). The stages are the
    means over the requests whose kernel stamps lie within the client's own instants,
    and add up to the mean round trip of those (``staged_roundtrip_us``); a request
    stamped outside them is counted in ``unordered_stamps`` and left out of the stages
    alone. ``handler``: the kernel's ``started`` stamp bounds its execute handler."""
    row: Row = {"count": count}
    row["roundtrip_us"] = 1e6 * sum(t.roundtrip for t in trips) / len(trips)
    # A start is one stage: nothing stamps inside it.
    staged = [t for t in trips if t.stamps_in_order()] if point.msg != "start" else []
    row["unordered_stamps"] = len(trips) - len(staged) if point.msg != "start" else 0
    row["staged_roundtrip_us"] = _mean_us(t.roundtrip for t in staged)
    # Each stage's values, request by request (none where no request is staged).
    by_stage = list(zip(*(t.stages() for t in staged), strict=True)) or [()] * len(STAGE_METRICS)
    for metric, per_trip in zip(STAGE_METRICS, by_stage, strict=True):
        row[metric.name] = _mean_us(per_trip)
    hops = [t.server_hop for t in trips if t.server_hop is not None]
    row["server_hop_us"] = _mean_us(hops)
    row["handler_us"] = _mean_us(
        t.replied - t.started for t in staged if handler and t.started is not None
    )
    stream = {metric.name: math.nan for metric in STREAM_METRICS} | {"output_msgs": math.nan}
    if point.msg == "stream":
        trip = trips[0]
        seconds, written = trip.roundtrip, count * point.size
        stream = {
            "output_msgs": trip.outputs,
            "chunks_per_msg": count / trip.outputs if trip.outputs else math.nan,
            "output_msgs_per_s": trip.outputs / seconds,
            "output_mb_per_s": trip.output_bytes / seconds / 1e6,
            "output_lost_fraction": max(0, written - trip.output_bytes) / written,
            "msg_limit_hits": trip.limits_hit.count("messages"),
            "data_limit_hits": trip.limits_hit.count("data"),
        }
    row |= stream
    return row


__all__ = ["EMPTY_CELL", "describe", "run_kernel_messages"]
