"""How the kernel starts a pattern's far ends (:mod:`.crowd`): each a :class:`Member`,
in a thread of the kernel or a process of its own on this machine, or a process on
another host that its far end's door starts there (``--remote``). Each gets a control
socket of the kernel's; the crowd then waits until each has said it is ready.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Protocol

import zmq

from ...params.far_end import host_of
from ..far_ends import member as member_module
from ..protocol import DoorOpen, MemberReport
from ..secret import Door, as_client
from .link import ask_door
from .processes import far_end_env, start_module

# A command to a far end waits in steps this long, looking for the dead between them.
COMMAND_STEP_MS = 100
_names = itertools.count()


@dataclass
class Member:
    """One far end of a pattern: its role, its control socket, and its process or thread."""

    role: str
    name: str  # "subscriber 3": how an error names it
    ctrl: zmq.Socket
    process: subprocess.Popen[bytes] | None = None
    thread: threading.Thread | None = None
    endpoint: str = ""  # where its data socket bound, said in its ready message
    front: str = ""  # a proxy's: where its XSUB bound for publishers beside the hub
    pid: int = 0
    host: str = ""  # another host's, started there by its far end's door; "": this one
    report: MemberReport | None = field(default=None, repr=False)
    attached: list[bytes] = field(default_factory=list, repr=False)  # the frames after it

    def alive(self) -> bool:
        if self.host:
            return True  # only its silence, bounded by the timeout, can tell
        if self.process is not None:
            return self.process.poll() is None
        return self.thread is not None and self.thread.is_alive()

    @property
    def far_end_id(self) -> int:
        if self.host:
            return self.pid
        if self.process is not None:
            return self.process.pid
        return (self.thread.native_id or 0) if self.thread is not None else 0


class Crowd(Protocol):
    """What starting a far end needs of its crowd (:class:`.crowd.Crowd`)."""

    ctx: zmq.Context
    members: list[Member]
    data: zmq.Socket | None  # the hub: far ends on other hosts are connected to it
    peer: str
    timeout: float
    hwm: int
    io_threads: int
    nodrop: bool
    conflate: bool
    cpus: set[int]
    doors: list[Door]


def _control_socket(crowd: Crowd) -> zmq.Socket:
    ctrl = crowd.ctx.socket(zmq.PAIR)
    ctrl.linger = 0
    ctrl.sndtimeo = COMMAND_STEP_MS
    return ctrl


def start_here(crowd: Crowd, role: str, name: str, url: str, bind: bool, proxy_url: str) -> Member:
    """One far end on this machine (``crowd.peer``: a thread or a process), its data
    socket bound at or connected to ``url`` (a proxy's XPUB bound at ``proxy_url``)."""
    ctrl = _control_socket(crowd)
    member = Member(role, name, ctrl)
    crowd.members.append(member)  # closed with the crowd, whatever happens next
    if crowd.peer == "thread":
        ctrl_url = f"inproc://zmqbench-ctrl-{os.getpid()}-{next(_names)}"
        ctrl.bind(ctrl_url)
        member.thread = threading.Thread(
            target=member_module.serve,
            args=(crowd.ctx, role, ctrl_url, url, bind, crowd.timeout, crowd.hwm),
            kwargs={"proxy_url": proxy_url, "nodrop": crowd.nodrop, "conflate": crowd.conflate},
            name=f"zmqbench-{name}",
            daemon=True,
        )
        member.thread.start()
        return member
    port = ctrl.bind_to_random_port("tcp://127.0.0.1")
    member.process = start_module(
        "zmqbench_magic.sockets.far_ends.member",
        (
            *("--role", role, "--ctrl", f"tcp://127.0.0.1:{port}", "--data", url),
            *(["--bind"] if bind else []),
            *(["--conflate"] if crowd.conflate else []),
            *(["--nodrop"] if crowd.nodrop and role in ("proxy", "publisher") else []),
            *("--proxy", proxy_url, "--timeout", str(crowd.timeout)),
            *("--hwm", str(crowd.hwm), "--io-threads", str(crowd.io_threads)),
            *("--parent", str(os.getpid())),
        ),
        env=far_end_env(),
        cpus=crowd.cpus,
    )
    return member


def start_elsewhere(crowd: Crowd, plans: list[tuple[str, str]]) -> list[Member]:
    """Ask the doors, in turn, to start one far end per ``(role, name)`` on their
    hosts, and connect the hub and a control socket to each."""
    assert crowd.data is not None
    started = []
    for number, (role, name) in enumerate(plans):
        url, secret = crowd.doors[number % len(crowd.doors)]
        request = DoorOpen(member=True, role=role, hwm=crowd.hwm, curve=False)
        where = ask_door(crowd.ctx, url, secret, request, crowd.timeout)
        host = host_of(url)
        ctrl = _control_socket(crowd)
        member = Member(role, f"{name} on {host}", ctrl, pid=int(where["pid"]), host=host)
        crowd.members.append(member)
        if secret is not None:
            as_client(ctrl, secret)
        ctrl.ipv6 = crowd.data.ipv6 = host.startswith("[")
        ctrl.connect(where["ctrl"])
        crowd.data.connect(where["data"])
        started.append(member)
    return started


__all__ = ["COMMAND_STEP_MS", "Crowd", "Member", "start_elsewhere", "start_here"]
