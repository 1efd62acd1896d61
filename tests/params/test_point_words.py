"""A point is put into words by one function over its settings' declared phrases
(``departures``): the description a run prints as it goes and a summary's line name a
setting in the same words, and only where the point departs from its default."""

from __future__ import annotations

import math

import pytest

from zmqbench_magic.params import SocketPoint
from zmqbench_magic.params.declare import Param, departures
from zmqbench_magic.params.socket_point import (
    SAID_AFTER_THE_PEER,
    SAID_BESIDE_THE_PEER,
    SAID_IN_A_SUMMARY,
)
from zmqbench_magic.results.words.text import socket_where
from zmqbench_magic.sockets.kernel.rounds import describe

BASE = {"size": 100, "copy": True, "transport": "tcp", "peer": "process"}
# A value other than the default for each setting a description can name.
AWAY = {
    "loop": "native",
    "io_threads": 2,
    "curve": True,
    "hwm": 10,
    "conflate": True,
    "python": "b",
    "rate": 10_000.0,
    "idle": 0.001,
    "work": 1e-5,
    "copy_threshold": 0,
}


def test_a_toy_setting_is_said_in_its_declared_phrase_only_away_from_its_default():
    toy = Param("toy", 3, "a toy setting", "toy", "int", low=1, high=9, phrase="{} toys")
    assert departures({"toy": 3}, (toy,)) == []
    assert departures({"toy": 5}, (toy,)) == ["5 toys"]
    assert departures({}, (toy,)) == []  # a point that does not name it: the default
    assert departures({"toy": math.nan}, (toy,)) == []  # a merged frame's gap


def test_every_setting_a_description_names_has_a_value_to_name_it_at():
    said = {p.name for p in (*SAID_BESIDE_THE_PEER, *SAID_AFTER_THE_PEER, *SAID_IN_A_SUMMARY)}
    assert said == set(AWAY)


@pytest.mark.parametrize("name", sorted(AWAY))
def test_a_run_and_its_summary_say_a_setting_in_the_same_words(name):
    param = next(
        p
        for p in (*SAID_BESIDE_THE_PEER, *SAID_AFTER_THE_PEER, *SAID_IN_A_SUMMARY)
        if p.name == name
    )
    phrase = param.said_at(AWAY[name])
    point = {**BASE, name: AWAY[name]}
    as_it_runs = describe(SocketPoint.of(point))
    in_a_summary = " ".join(socket_where(point))
    at_default = {**BASE, name: param.default}
    for text, says in (
        (as_it_runs, param in (*SAID_BESIDE_THE_PEER, *SAID_AFTER_THE_PEER)),
        (in_a_summary, param in SAID_IN_A_SUMMARY),
    ):
        assert (phrase in text) == says, (name, text)
    assert phrase not in describe(SocketPoint.of(at_default))
    assert phrase not in " ".join(socket_where(at_default))


def test_the_words_of_a_point_as_it_runs():
    point = SocketPoint.of(
        {**BASE, "loop": "native", "curve": True, "rate": 10_000.0, "idle": 0.001}
    )
    assert describe(point) == (
        "tcp 100 B copy (peer process, native loop, CURVE) at 10k msgs/s offered after 1ms idle"
    )


def test_a_summary_never_says_a_rate_its_frame_has_no_value_for():
    # A frame joined from a paced run and an unpaced one has NaN in the other's rows.
    assert socket_where({**BASE, "rate": math.nan})[-1] == ""
