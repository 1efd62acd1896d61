"""Jupyter's own messages (``%kernelmsg``): how fast a kernel answers an execute, a
``kernel_info`` and a comm message, how fast it streams output, and how long it takes to
start; each round trip split into the stages its messages' own stamps bound.

A Jupyter kernel speaks five ZeroMQ channels of signed JSON messages
(jupyter_client's ``Session``). Every message's header carries the time it was made, and
ipykernel's execute reply the time the cell started; with the client's own clock on the
same machine they cut a round trip into stages that add up to it:

- ``to_kernel``: from the client's send to the kernel's ``busy`` status (the client
  serialises and signs, the ZeroMQ hop, the kernel receives, verifies and dispatches);
- ``in_kernel``: from ``busy`` to the reply's making (the handler: for an execute the
  cell with IPython's machinery around it, of which ``handler`` is ipykernel's execute
  handler from its ``started`` stamp: publishing the input, IPython's ``run_cell``, the
  output's flush);
- ``reply``: from the reply's making to its arrival (the kernel serialises and signs, the
  hop back, the client receives and verifies);
- ``idle``: from the reply's arrival to the ``idle`` status's, which ends the request.
"""

from __future__ import annotations

import importlib.util
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from .common import (
    LABEL,
    MAX_TIME,
    MIN_TIME,
    PRECISION,
    REPEAT,
    SEED,
    SIZE,
    TIMEOUT,
    TOLERANCE,
    UNTIL,
    WARMUP,
)
from .declare import BenchParams, Column, Metric, Param, param_field
from .kinds import Kind
from .point_record import PointRecord, Settings
from .sockets import COUNT

# What a sample times, and what each reads: an execute's cell, a comm message's
# payload (--size, --buffers), a stream's chunks (--size each, --count of them).
MESSAGES = ("execute", "info", "comm", "stream", "start")
_SIZED = ("comm", "stream")

# The declarations read as a table; keep the formatter from spreading them out.
# fmt: off
MSG = Param(
    "msg", "execute",
    "what each sample times: execute (an execute_request to its reply and the idle "
    "status; the cell form's cell, else an empty one), info (kernel_info_request, "
    "answered with nothing executed), comm (a comm message echoed by the kernel, as a "
    "widget's sync), "
    "stream (a cell writing --count chunks of --size bytes to stdout: the output's rate), "
    "start (a fresh kernel to its first kernel_info_reply)",
    "kernel message", "choice", choices=MESSAGES, sweep=True, short="m",
)
KERNEL = Param(
    "kernel", "python3",
    "the kernelspec to start (jupyter kernelspec list): python3 is ipykernel; several "
    "compare kernels in one run, in interleaved rounds",
    "kernel", "str", sweep=True, short="k",
)
VIA = Param(
    "via", "zmq",
    "how the client reaches the kernel: zmq (straight over its ZeroMQ channels, as a "
    "console or a server's kernel manager does), server (through a jupyter_server the "
    "run starts, over the kernel's websocket, as a notebook page does) or browser (from "
    "a JupyterLab page of that server in headless Chromium, by JupyterLab's own kernel "
    "client: the whole path a person's cell takes, bar drawing its output)",
    "path to the kernel", "choice", choices=("zmq", "server", "browser"), sweep=True,
    labels=("direct", "through a server", "from a JupyterLab page"),
)
WS_PROTOCOL = Param(
    "ws_protocol", "v1",
    "the server's websocket protocol, with --via server: v1 "
    "(v1.kernel.websocket.jupyter.org, binary frames, as JupyterLab speaks it) or legacy "
    "(JSON text)",
    "websocket protocol", "choice", choices=("v1", "legacy"), sweep=True,
)
# How far two instants of a request may seem out of order before its kernel stamps are
# disbelieved: a page's clock (performance.timeOrigin + now) is coarsened and may drift
# from the system's by a little; a misprinted stamp is out by far more.
STAMP_SLACK_S = 0.002

SERVER_URL = Param(
    "server_url", "",
    "a running Jupyter server for --via server to go through, by its URL as `jupyter "
    "server list` prints it, less its token: the token is read from the server's runtime "
    "file on this machine, else from JUPYTER_TOKEN, so that it is never saved with the "
    "results; the run makes its kernels there, deletes them after, and leaves the "
    "server running; empty: a server the run starts and stops",
    "Jupyter server", "str",
)
IOPUB_MSG_RATE_LIMIT = Param(
    "iopub_msg_rate_limit", 1000.0,
    "the server's IOPub message rate limit, msgs/s over its window (jupyter_server's "
    "ZMQChannelsWebsocketConnection.iopub_msg_rate_limit; 1000 is its default; 0: none)",
    "IOPub message rate limit", "float", unit="msgs/s", low=0.0, high=1e12,
)
IOPUB_DATA_RATE_LIMIT = Param(
    "iopub_data_rate_limit", 1e6,
    "the server's IOPub data rate limit, bytes/s over its window (jupyter_server's "
    "iopub_data_rate_limit; 1M is its default; 0: none)",
    "IOPub data rate limit", "float", unit="B/s", low=0.0, high=1e15,
)
SIGNING = Param(
    "signing", True,
    "sign every message with HMAC-SHA256 (true, as jupyter_client does with the key in "
    "the kernel's connection file) or not (false: an empty key); straight to the kernel "
    "only, as through a server its own key decides",
    "message signing", "bool", choices=(True, False), sweep=True,
    labels=("signed", "unsigned"),
)
PACKER = Param(
    "packer", "auto",
    "how jupyter_client's Session packs each message, on the client and in the kernel "
    "alike: auto (each side's own choice, jupyter_client's default: orjson where it is "
    "installed, else json), json (the standard library), orjson, or msgpack (binary, "
    "not JSON); straight to an ipykernel only, as a server packs with its own Session",
    "message packer", "choice", choices=("auto", "json", "orjson", "msgpack"), sweep=True,
    labels=("packed as jupyter_client chooses", "packed by json", "packed by orjson",
            "packed by msgpack"),
)
BUFFERS = Param(
    "buffers", False,
    "a comm message's payload as a binary buffer beside the JSON (true) or as a string "
    "inside it (false), as a widget's binary traits go or not",
    "comm payload", "bool", choices=(False, True), sweep=True,
    labels=("in the JSON", "binary buffer"),
)

ROUNDTRIP = Metric(
    "roundtrip_us", "round trip",
    "mean time of one request, from the client's send to the kernel's idle status on "
    "IOPub (stream: the whole cell's; start: kernel start to its first "
    "kernel_info_reply)", "lower", unit="µs")
STAGE_METRICS = (
    Metric("to_kernel_us", "to the kernel",
           "send to the kernel's busy status: the client serialises and signs, the ZeroMQ "
           "hop, the kernel receives, verifies and dispatches", "lower", unit="µs"),
    Metric("in_kernel_us", "in the kernel",
           "busy status to the reply's making: the kernel's handler (an execute's cell "
           "with IPython's machinery around it)", "lower", unit="µs"),
    Metric("reply_us", "reply",
           "the reply's making to its arrival: the kernel serialises and signs, the hop "
           "back, the client receives and verifies", "lower", unit="µs"),
    Metric("idle_us", "idle status",
           "the reply's arrival to the idle status's, which ends the request", "lower",
           unit="µs"),
)
HANDLER = Metric(
    "handler_us", "execute handler",
    "an execute's time in ipykernel's execute handler, from its started stamp (taken as "
    "the handler begins) to the reply's making: publishing execute_input, IPython's "
    "run_cell of the cell, flushing its output, and the pause ipykernel then takes "
    "before it replies (its Kernel._execute_sleep) (part of in_kernel); NaN for the "
    "other messages", "lower", unit="µs")
SERVER_HOP = Metric(
    "server_hop_us", "server's hop back",
    "through a server: an idle status's arrival over the websocket less its arrival at a "
    "ZeroMQ subscriber beside the server, which hears the kernel as the server does: "
    "what the server and its websocket add on the way back (within the reply and idle "
    "stages); NaN on the other paths", "lower", unit="µs")
STREAM_METRICS = (
    Metric("output_msgs_per_s", "output messages",
           "stream messages delivered to the client per second of the cell", "higher",
           unit="msgs/s"),
    Metric("output_mb_per_s", "output bandwidth",
           "stream bytes delivered to the client per second of the cell, in MB (10^6)",
           "higher", unit="MB/s"),
    Metric("chunks_per_msg", "chunks per message",
           "chunks written per stream message received: how ipykernel's output batching "
           "grouped them", unit="chunks"),
    Metric("output_lost_fraction", "output lost",
           "the share of the bytes a stream's cell wrote that never reached the client "
           "(a Jupyter server's IOPub rate limits drop output)", "lower"),
    Metric("msg_limit_hits", "message limit notices",
           "times the server said its IOPub message rate limit fired during the cell"),
    Metric("data_limit_hits", "data limit notices",
           "times the server said its IOPub data rate limit fired during the cell"),
)
KERNEL_MSG_METRICS: tuple[Metric, ...] = (
    ROUNDTRIP,
    *STAGE_METRICS,
    HANDLER,
    SERVER_HOP,
    *STREAM_METRICS,
)
# fmt: on


@dataclass(frozen=True, eq=False)
class KernelMsgPoint(PointRecord):
    """One point of a kernel messages sweep: the message, the kernel, and a comm's or
    a stream's size and a comm's buffers where the message reads them."""

    msg: str = MSG.default
    kernel: str = KERNEL.default
    via: str = VIA.default
    ws_protocol: str = WS_PROTOCOL.default
    signing: bool = SIGNING.default
    packer: str = PACKER.default
    size: int = SIZE.default
    buffers: bool = BUFFERS.default

    called = "a kernel messages point"


@dataclass(frozen=True)
class KernelMsgParams(BenchParams):
    msg: tuple[str, ...] = param_field(MSG)
    kernel: tuple[str, ...] = param_field(KERNEL)
    via: tuple[str, ...] = param_field(VIA)
    ws_protocol: tuple[str, ...] = param_field(WS_PROTOCOL)
    server_url: str = param_field(SERVER_URL)
    signing: tuple[bool, ...] = param_field(SIGNING)
    packer: tuple[str, ...] = param_field(PACKER)
    size: tuple[int, ...] = param_field(SIZE)
    buffers: tuple[bool, ...] = param_field(BUFFERS)
    iopub_msg_rate_limit: float = param_field(IOPUB_MSG_RATE_LIMIT)
    iopub_data_rate_limit: float = param_field(IOPUB_DATA_RATE_LIMIT)
    count: int = param_field(COUNT)
    repeat: int = param_field(REPEAT)
    warmup: int = param_field(WARMUP)
    min_time: float = param_field(MIN_TIME)
    precision: float = param_field(PRECISION)
    until: str = param_field(UNTIL)
    tolerance: float = param_field(TOLERANCE)
    max_time: float = param_field(MAX_TIME)
    timeout: float = param_field(TIMEOUT)
    seed: int = param_field(SEED)
    label: str = param_field(LABEL)

    benchmark = "kernelmsg"
    metrics = KERNEL_MSG_METRICS
    columns = (
        Column("count", "requests (stream: chunks written) in the sample"),
        Column("output_msgs", "stream messages the client received in the sample"),
        Column(
            "unordered_stamps",
            "requests in the sample whose kernel stamps fell outside the client's own "
            f"send and arrival, by more than {STAMP_SLACK_S * 1000:g} ms: left out of the "
            "sample's stages",
        ),
        Column(
            "staged_roundtrip_us",
            "mean round trip of the requests the sample's stages come from, which they add "
            "up to (the round trip itself, unless some were left out)",
        ),
    )
    # A kernel serves every point of its rounds (a fresh one each round), on one path.
    outer = ("kernel", "via", "ws_protocol", "signing", "packer")

    def points(self) -> Iterator[KernelMsgPoint]:
        """Each combination of the swept values a message reads, in measuring order,
        as a typed record (an execute is not swept over sizes it never sends)."""
        seen: set[KernelMsgPoint] = set()
        for settings in super().points():
            point = KernelMsgPoint.of(settings)
            if point.msg not in _SIZED:
                point = point.without("size").without("buffers")
            elif point.msg != "comm":
                point = point.without("buffers")
            if point.via != "server":
                point = point.without("ws_protocol")
            if point not in seen:
                seen.add(point)
                yield point

    def resolve(self, point: Settings) -> Settings:
        return point

    def applies(self, name: str) -> bool:
        # A column only where a run asks for it: older results, and direct runs, have none.
        if name == VIA.name:
            return self.via != (VIA.default,)
        if name == WS_PROTOCOL.name:
            return "server" in self.via
        if name == SIGNING.name:
            return self.signing != (SIGNING.default,)
        if name == PACKER.name:
            return self.packer != (PACKER.default,)
        return True

    def _check_combinations(self) -> None:
        if self.server_url:
            self._check_server_url()
        if False in self.signing and set(self.via) - {"zmq"}:
            msg = (
                "signing false: a server signs with its own key whatever a page does; "
                "compare signing with --via zmq"
            )
            raise ValueError(msg)
        if set(self.packer) - {PACKER.default} and set(self.via) - {"zmq"}:
            msg = (
                "packer: a server packs with its own Session whatever a client does; "
                "compare packers with --via zmq"
            )
            raise ValueError(msg)
        if "orjson" in self.packer and importlib.util.find_spec("orjson") is None:
            raise ValueError("packer orjson needs orjson (pip install orjson)")
        if "start" in self.msg and set(self.via) - {"zmq"}:
            msg = (
                "msg start times a kernel's own start, which a server does not change: "
                "measure it with --via zmq"
            )
            raise ValueError(msg)

    def _check_server_url(self) -> None:
        url = urllib.parse.urlsplit(self.server_url)
        if url.scheme not in ("http", "https") or not url.netloc:
            msg = f"server_url must be an http:// or https:// URL; got {self.server_url!r}"
            raise ValueError(msg)
        if "token" in urllib.parse.parse_qs(url.query):
            msg = (
                f"server_url must not carry its token (the results save it): give "
                f"{url.scheme}://{url.netloc}{url.path}; the token is read from the "
                "server's runtime file, else from JUPYTER_TOKEN"
            )
            raise ValueError(msg)
        if "server" not in self.via:
            raise ValueError("server_url is the server --via server goes through: add it")
        if "browser" in self.via:
            msg = (
                "via browser needs a JupyterLab page of a server the run starts (its app "
                "exposed to the page's scripts): drop it with server_url"
            )
            raise ValueError(msg)
        limits = (IOPUB_MSG_RATE_LIMIT, IOPUB_DATA_RATE_LIMIT)
        if any(getattr(self, limit.name) != limit.default for limit in limits):
            msg = "a running server keeps its own IOPub limits: give them where it is started"
            raise ValueError(msg)


KERNEL_MESSAGES = Kind(
    name=KernelMsgParams.benchmark,
    title="Jupyter kernel messages",
    params=KernelMsgParams,
    counted="requests",
    counts_at=(0,),
    keeps="",
    magic="kernelmsg",
    magic_help="""Time Jupyter's own messages on a fresh kernel, stage by stage.

    ``%kernelmsg --msg execute info comm stream --size 100 64k`` starts a kernel of
    ``--kernel`` (python3: ipykernel) and times an execute round trip, a
    ``kernel_info`` request, a comm echo (a widget's sync) and stdout streaming, each
    split into the stages its messages' stamps bound. As a cell magic, the cell is the
    execute test's code.
    """,
)

__all__ = [
    "BUFFERS",
    "HANDLER",
    "IOPUB_DATA_RATE_LIMIT",
    "IOPUB_MSG_RATE_LIMIT",
    "KERNEL",
    "KERNEL_MESSAGES",
    "KERNEL_MSG_METRICS",
    "MESSAGES",
    "MSG",
    "PACKER",
    "ROUNDTRIP",
    "SERVER_HOP",
    "SERVER_URL",
    "SIGNING",
    "STAGE_METRICS",
    "STAMP_SLACK_S",
    "STREAM_METRICS",
    "VIA",
    "WS_PROTOCOL",
    "KernelMsgParams",
    "KernelMsgPoint",
]
