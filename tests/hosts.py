"""Test hosts of our own on this one machine: a Linux network namespace joined to this
one by a veth pair, optionally shaped with ``tc ... tbf`` (this kernel has no netem,
so no added delay). Traffic goes only to hosts a test made itself, and everything is
removed afterwards. Where the run is not root or namespaces cannot be made, the
tests that need a host are skipped with that reason, never silently green.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import wait_until

# A token bucket of two full Ethernet frames (2 x 1,514 B): every message crosses the
# link at its rate, as on a wire. A bucket larger than a message (tc's examples use
# hundreds of kB) lets a whole 64 KiB message through at once, and a round trip then
# reads the bucket's refill, not the wire: 546 µs for 64 KiB over "1 Gbit/s", where the
# wire needs 1,049 µs. The price, measured on a busy 2-core VM: the small bucket's
# timer-driven refill moves 600-900 Mbit/s of a nominal 1 Gbit/s over a long stream.
WIRE_BURST = str(2 * 1514)


@dataclass(frozen=True)
class Host:
    """A network-only host: its namespace, its address, and ours on the link to it."""

    namespace: str
    address: str
    our_address: str

    def run(self, *command: str, **kwargs) -> subprocess.Popen:
        """Start ``command`` inside the host."""
        return subprocess.Popen(["ip", "netns", "exec", self.namespace, *command], **kwargs)


def unavailable() -> str | None:
    """Why no test host can be made here, or None."""
    if os.geteuid() != 0:
        return "test hosts need root (network namespaces and veth pairs)"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "test hosts need iproute2 (ip, tc)"
    probe = f"zbprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"network namespaces are not available: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], check=False)
    return None


def skip_without_hosts() -> None:
    reason = unavailable()
    if reason:
        print(f"SKIPPED: {reason}", file=sys.stderr)
        pytest.skip(reason)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def host(number: int, rate: str | None = None) -> Iterator[Host]:
    """A host at 10.77.<number>.2, reached from 10.77.<number>.1; ``rate`` (``1gbit``)
    shapes both directions of the link with a token bucket of :data:`WIRE_BURST`."""
    tag = f"{os.getpid() % 10000}{number}"
    namespace, ours, theirs = f"zbhost{tag}", f"zb{tag}a", f"zb{tag}b"
    made = Host(namespace, f"10.77.{number}.2", f"10.77.{number}.1")
    try:
        _ip("netns", "add", namespace)
        _ip("link", "add", ours, "type", "veth", "peer", "name", theirs)
        _ip("link", "set", theirs, "netns", namespace)
        _ip("addr", "add", f"{made.our_address}/24", "dev", ours)
        _ip("link", "set", ours, "up")
        _ip("netns", "exec", namespace, "ip", "addr", "add", f"{made.address}/24", "dev", theirs)
        _ip("netns", "exec", namespace, "ip", "link", "set", theirs, "up")
        _ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
        # Our other addresses (another host's link) are reachable through us, as on
        # one LAN: an engine there reaches a controller on any of them.
        _ip("netns", "exec", namespace, "ip", "route", "add", "default", "via", made.our_address)
        if rate:
            shape = ["root", "tbf", "rate", rate, "burst", WIRE_BURST, "latency", "20ms"]
            subprocess.run(["tc", "qdisc", "add", "dev", ours, *shape], check=True)
            subprocess.run(
                ["ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", theirs, *shape],
                check=True,
            )
        yield made
    finally:
        subprocess.run(["ip", "link", "del", ours], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


def processes_in(where: Host) -> list:
    """Each process running in a test host (psutil's)."""
    import psutil

    listed = subprocess.run(
        ["ip", "netns", "pids", where.namespace], capture_output=True, text=True
    ).stdout.split()
    found = []
    for pid in map(int, listed):
        with contextlib.suppress(psutil.Error):
            found.append(psutil.Process(pid))
    return found


def commands_in(where: Host) -> list[str]:
    """The command line of each process running in a test host."""
    import psutil

    found = []
    for process in processes_in(where):
        with contextlib.suppress(psutil.Error):
            found.append(" ".join(process.cmdline()))
    return found


def namespaces() -> list[str]:
    """The test hosts still present (none should outlive its test)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith("zbhost")]


@contextlib.contextmanager
def standing_peer(where: Host | None, bind: str, secret: Path | None) -> Iterator[tuple[str, Path]]:
    """``zmqbench peer`` running (in ``where``, or here), its URL and its log file;
    stopped with SIGTERM afterwards, which it must obey."""
    command = [sys.executable, "-m", "zmqbench_magic.cli", "peer", "--bind", bind]
    if secret is not None:
        command += ["--secret-file", str(secret)]
    log = Path(tempfile.gettempdir()) / f"zb-peer-{os.getpid()}-{time.monotonic_ns()}.log"
    with log.open("w") as out:
        kwargs = {"stdout": out, "stderr": subprocess.STDOUT}
        process = where.run(*command, **kwargs) if where else subprocess.Popen(command, **kwargs)
    try:

        def said_where() -> re.Match[str] | None:
            assert process.poll() is None, log.read_text()
            return re.search(r"listening on (tcp://\S+)", log.read_text())

        found = wait_until(said_where, 20, "the far end saying where it listens", every=0.05)
        yield found.group(1), log
    finally:
        process.terminate()
        try:
            assert process.wait(10) == 0, log.read_text()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.unlink(missing_ok=True)


def _sshd_missing() -> str | None:
    if not Path("/usr/sbin/sshd").exists() or shutil.which("ssh") is None:
        return "an SSH test host needs Debian's openssh-server and openssh-client"
    return None


@contextlib.contextmanager
def sshd(where: Host, workdir: Path) -> Iterator[str]:
    """An sshd of our own in ``where``, with keys made for it; yields the ssh command
    that reaches it (for ``$ZMQBENCH_SSH_COMMAND``), and stops it afterwards."""
    missing = _sshd_missing()
    if missing:
        print(f"SKIPPED: {missing}", file=sys.stderr)
        pytest.skip(missing)
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):  # shared by the hosts of one test
        if not (workdir / name).exists():
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(workdir / name)],
                check=True,
            )
    (workdir / "authorized_keys").write_text((workdir / "client_key.pub").read_text())
    config = workdir / f"sshd_config_{where.namespace}"
    config.write_text(
        f"ListenAddress {where.address}\nPort 22\nHostKey {workdir / 'host_key'}\n"
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}\n"
        f"PidFile {workdir / where.namespace}.pid\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\n"
        "StrictModes no\nAcceptEnv no\nSubsystem sftp /usr/lib/openssh/sftp-server\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    daemon = where.run(
        "/usr/sbin/sshd",
        "-D",
        "-e",
        "-f",
        str(config),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = workdir / "ssh_config"
    client.write_text(
        f"Host *\n  IdentityFile {workdir / 'client_key'}\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 5\n"
    )
    command = f"ssh -F {client}"
    try:

        def accepted() -> bool:
            assert daemon.poll() is None, "sshd exited"
            probe = [*command.split(), "-o", "BatchMode=yes", f"root@{where.address}", "true"]
            return subprocess.run(probe, capture_output=True).returncode == 0

        wait_until(accepted, 10, "sshd accepting the test key", every=0.2)
        yield command
    finally:
        daemon.terminate()
        daemon.wait(10)
