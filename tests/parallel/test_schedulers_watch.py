"""The watch on a controller's schedulers, against a planted controller: a process
that forks one long-lived child (a scheduler, its command line the controller's) and
runs a short command every millisecond (each one a child with the controller's
command line from its fork until its exec). The commands are never taken for a
scheduler that exited; the scheduler, killed, is named."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import psutil
from conftest import wait_until

from zmqbench_magic.parallel.clusters.watch import Schedulers

CONTROLLER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    if os.fork() == 0:  # the scheduler: the controller's command line, for good
        time.sleep(60)
        os._exit(0)
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        subprocess.run(["true"])
        time.sleep(0.001)
    """
)


def test_commands_the_controller_runs_are_not_schedulers_and_a_killed_one_is_named():
    controller = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER], stdout=subprocess.PIPE, text=True
    )
    scheduler = None
    try:
        assert controller.stdout is not None and controller.stdout.readline() == "ready\n"
        schedulers = Schedulers()
        watched = SimpleNamespace(pid=controller.pid)
        commands_seen, looks_until = set(), time.monotonic() + 3
        while time.monotonic() < looks_until:
            assert schedulers.exit(watched) is None, "a command taken for a scheduler"
            commands_seen |= {
                child.pid
                for child in psutil.Process(controller.pid).children()
                if child.pid not in schedulers.known
            }
        (scheduler,) = schedulers.known
        assert commands_seen - {scheduler}, "the planted controller ran no command meanwhile"
        os.kill(scheduler, signal.SIGKILL)
        gone = wait_until(lambda: schedulers.exit(watched), timeout=10)
        assert f"a scheduler of the controller (pid {scheduler})" in gone.words()
    finally:
        for process in psutil.Process(controller.pid).children(recursive=True):
            process.kill()
        controller.kill()
        controller.wait(timeout=10)
