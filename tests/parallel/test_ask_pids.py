"""Asking the engines their process ids survives a request the scheduler dropped: an
engine can be registered before its own connection to the queue is made."""

from __future__ import annotations

import os

import pytest

from zmqbench_magic.parallel.clusters import watch


class _Asked:
    """One request to the engines: answered, or dropped (never answered)."""

    def __init__(self, msg_id: str, answered: bool, engines: int) -> None:
        self.msg_ids, self.answered, self.engines = [msg_id], answered, engines

    def get(self, timeout: float) -> list[int]:
        if not self.answered:
            raise TimeoutError("Result not ready.")
        return [os.getpid() + i for i in range(self.engines)]


class _DroppingClient:
    """A client whose first ``dropped`` requests are never answered, as a ROUTER drops
    a message to a peer not yet connected (a stand-in for the scheduler's queue: the
    real race needs an engine slower to connect than to register)."""

    def __init__(self, dropped: int) -> None:
        self.dropped, self.asked, self.outstanding = dropped, 0, set()

    def __getitem__(self, engine_ids: list[int]) -> _DroppingClient:
        self.engines = len(engine_ids)
        return self

    def apply_async(self, func) -> _Asked:
        self.asked += 1
        msg_id = f"request-{self.asked}"
        self.outstanding.add(msg_id)
        answered = self.asked > self.dropped
        if answered:
            self.outstanding.discard(msg_id)
        return _Asked(msg_id, answered, self.engines)


def test_a_dropped_request_is_asked_again_and_not_left_outstanding(monkeypatch):
    monkeypatch.setattr(watch, "ASK_AGAIN_S", 0.01)
    client = _DroppingClient(dropped=2)
    pids = watch.ask_pids(client, [3, 4], timeout=60)
    assert client.asked == 3 and client.outstanding == set()
    assert pids == {os.getpid(): 3, os.getpid() + 1: 4}


def test_requests_never_answered_end_in_a_timeout(monkeypatch):
    monkeypatch.setattr(watch, "ASK_AGAIN_S", 0.01)
    client = _DroppingClient(dropped=10**9)
    with pytest.raises(TimeoutError):
        watch.ask_pids(client, [0], timeout=0.05)
    assert client.asked >= 2 and client.outstanding == set()
