"""Command-line options derived from the parameter declarations.

The ``%zmqthr``/``%zmqlat`` magics and the ``zmqbench`` console script take the same
options; both are built here from :mod:`zmqbench_magic.params`, so a parameter's
flag, default, help and validation are written once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..params import BenchParams, Param
from ..params.declare import RunSettings
from ..params.units import format_size

# (positional flags, argparse keyword arguments) for one option.
OptionSpec = tuple[tuple[str, ...], dict[str, Any]]

# How a run is presented (:class:`.present.Output`): the options magics and the CLI share,
# then each one's own.
_QUIET: OptionSpec = (
    ("-q", "--quiet"),
    {"action": "store_true", "help": "no summary, no progress"},
)
_CHART_FILES: list[OptionSpec] = [
    (("--svg",), {"metavar": "PATH", "help": "save the chart as SVG (PATH.svg, offline)"}),
    (("--png",), {"metavar": "PATH", "help": "save the chart as PNG (PATH.png, offline)"}),
]
MAGIC_OUTPUT_OPTIONS: list[OptionSpec] = [
    _QUIET,
    (("-o", "--output"), {"action": "store_true", "help": "return the result object"}),
    (("-v", "--variable"), {"metavar": "NAME", "help": "store the result in NAME"}),
    (("--no-chart",), {"action": "store_true", "help": "do not show the chart"}),
    *_CHART_FILES,
    (
        ("--widget",),
        {
            "action": "store_true",
            "help": "measure nothing now: show an "
            "interactive panel with these options filled in (line magic only)",
        },
    ),
]
# A saved file is never replaced unasked: --replace overwrites one that exists, and a
# benchmark's --append adds the run to it (a result file holds several runs).
REPLACE_OPTION: OptionSpec = (
    ("--replace",),
    {"action": "store_true", "help": "overwrite a --json or --csv file that exists"},
)
APPEND_OPTION: OptionSpec = (
    ("--append",),
    {
        "action": "store_true",
        "help": "add this run to the runs a --json file holds, and its samples to a --csv "
        "file's rows (either is written new where there is none)",
    },
)
CLI_OUTPUT_OPTIONS: list[OptionSpec] = [
    _QUIET,
    (("--json",), {"metavar": "PATH", "help": "save the result as JSON (PATH.json)"}),
    (("--csv",), {"metavar": "PATH", "help": "save one row per sample as CSV (PATH.csv)"}),
    *_CHART_FILES,
    REPLACE_OPTION,
    (
        ("--markdown",),
        {"action": "store_true", "help": "print the summary as Markdown (a PR comment)"},
    ),
]


def type_for(param: Param) -> Callable[[str], Any]:
    """argparse's ``type``: parse and validate, reporting our message verbatim."""

    def convert(text: str) -> Any:
        try:
            return param.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = param.name
    return convert


def spell_value(param: Param, value: Any) -> str:
    """A value as an option takes it: ``1k``, ``true``, ``0.1``; ``none`` for empty."""
    if param.kind == "size":
        return format_size(value)
    if param.kind == "bool":
        return str(value).lower()
    return str(value) if value != "" else "none"


def param_options(params: type[BenchParams]) -> Iterator[OptionSpec]:
    """One option per parameter, in declaration order."""
    for param in params.fields():
        flags = (f"-{param.short}", param.option) if param.short else (param.option,)
        unit = f" [{param.unit}]" if param.unit else ""
        sweep = " Several values sweep." if param.sweep else ""
        kwargs: dict[str, Any] = {
            "dest": param.name,
            # No ``type``: the settings class parses the text, once (its ValueError
            # names the value and the range, as the magic or the CLI then says).
            "default": None,
            "metavar": param.name.upper(),
            # argparse formats help with %: a literal one (5%) is written %%.
            "help": f"{param.help}{unit}. Allowed: {param.allowed()}; "
            f"default {spell_value(param, param.default)}.{sweep}".replace("%", "%%"),
        }
        if param.sweep:
            kwargs["nargs"] = "+"
        yield flags, kwargs


def given_options(params: type[BenchParams], parsed: Mapping[str, Any]) -> RunSettings:
    """The parameters the user set among parsed options (the others stay at default)."""
    return {p.name: parsed[p.name] for p in params.fields() if parsed.get(p.name) is not None}


def params_from_options(params: type[BenchParams], parsed: Mapping[str, Any]) -> BenchParams:
    """Build the params object from parsed options, leaving unset ones at their default."""
    return params(**given_options(params, parsed))


def check_output_path(path: str | None, kind: str) -> None:
    """Refuse, before a run, a file the result or chart could not be saved to after it,
    or one whose name says another format than ``kind`` (the option's: ``"json"``,
    ``"csv"``, ``"svg"``, ``"png"``): ``--svg pic.png`` would write SVG into a file every
    viewer opens as PNG."""
    if path is None:
        return
    suffix = Path(path).suffix.lower()
    if suffix != f".{kind}":
        got = f", not {suffix}" if suffix else ""
        other = suffix.lstrip(".")
        hint = f" (--{other} writes {other.upper()})" if other in ("svg", "png") else ""
        msg = f"--{kind} {path}: --{kind} writes {kind.upper()}, so the name must end in .{kind}"
        msg += got + hint
        raise ValueError(msg)
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        msg = f"cannot save to {path}: there is no folder {folder}"
        raise ValueError(msg)


def check_not_replaced(path: str | None, option: str, append: bool | None, replace: bool) -> None:
    """Refuse, before a run, to replace a file that exists without being told to;
    ``append`` is None where the command has nothing to add to it (a table, not a run)."""
    if path is None or replace or append or not Path(path).expanduser().exists():
        return
    ways = "add --replace to overwrite it"
    if append is not None:
        held = "the runs it holds" if option == "--json" else "its rows"
        ways = f"add --append to add this run to {held}, or --replace to overwrite it"
    msg = f"{option} {path}: the file exists; {ways}"
    raise ValueError(msg)
