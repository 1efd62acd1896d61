"""The options of the magics and the CLI, from the declarations: each value's text is
parsed once, by its settings class, and a bad one is named with its range."""

from __future__ import annotations

import argparse

import pytest

from zmqbench_magic.params import KINDS, FloodParams, Param, ThroughputParams
from zmqbench_magic.ui.options import param_options, params_from_options


def _parser(params_class):
    parser = argparse.ArgumentParser()
    for flags, kwargs in param_options(params_class):
        parser.add_argument(*flags, **kwargs)
    return parser


def test_each_value_is_parsed_once_from_the_option_to_the_settings(monkeypatch):
    parsed: list[tuple[str, object]] = []
    original = Param.parse

    def counting(self, text):
        parsed.append((self.name, text))
        return original(self, text)

    monkeypatch.setattr(Param, "parse", counting)
    args = _parser(FloodParams).parse_args(["--engines", "2", "4", "--backend", "processpool"])
    assert parsed == []  # argparse keeps the text
    params = params_from_options(FloodParams, vars(args))
    assert params.engines == (2, 4) and params.backend == ("processpool",)
    given = [(name, text) for name, text in parsed if name in ("engines", "backend")]
    assert sorted(given) == [("backend", "processpool"), ("engines", "2"), ("engines", "4")]


def test_sizes_are_parsed_with_their_units():
    args = _parser(ThroughputParams).parse_args(["-s", "1k", "64k", "1M"])
    assert params_from_options(ThroughputParams, vars(args)).size == (1024, 65536, 1048576)


def test_a_bad_value_names_the_parameter_and_its_range():
    args = _parser(ThroughputParams).parse_args(["-s", "2G"])
    with pytest.raises(ValueError, match=r"size must be .*, got 2G"):
        params_from_options(ThroughputParams, vars(args))


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_no_option_converts_its_text_itself(kind):
    assert all("type" not in kwargs for _, kwargs in param_options(kind.params))
