"""The parameter machinery: a :class:`Param` is one parameter declared once, and
:class:`BenchParams` a benchmark's frozen, validated settings with its sweep grid, its
metrics and its own columns (:mod:`.columns`).

A Param carries a parameter's name, default, unit, allowed range and help text. The
magics' options, the CLI's options, the panels' controls, the DataFrame's columns and
the charts' axis titles are all derived from these declarations, and validation lives
here too, so a bad value is rejected with the same message everywhere. The benchmarks'
own declarations are in :mod:`.sockets` and :mod:`.taskflood`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from .address import check_address
from .columns import Column, Metric, with_unit
from .cpus import ALLOWED as CPUS_ALLOWED
from .cpus import parse_cpus
from .interpreter import ALLOWED as INTERPRETERS_ALLOWED
from .interpreter import check_arms, parse_interpreter
from .point_record import Settings
from .units import (
    format_duration,
    format_rate,
    format_size,
    parse_bool,
    parse_duration,
    parse_fraction,
    parse_messages,
    parse_rate,
    parse_size,
    spell_size,
)

# A run's every setting (each field's value, JSON-friendly: a swept one as its list),
# as a result keeps them and a later run or comparison reads them back.
RunSettings = dict[str, Any]


@dataclass(frozen=True)
class Param:
    """One benchmark parameter: the single source of its name, default, unit and range.

    ``sweep`` parameters take a list of values and the benchmark runs the grid
    product of all of them; the others take exactly one value.
    """

    name: str
    default: Any
    help: str
    title: str
    kind: str  # "size" | "rate" | "duration" | "int" | "float" | "bool" | "choice" | ...
    unit: str = ""
    low: float | None = None
    high: float | None = None
    choices: Sequence[Any] = ()  # a tuple, or a registry's live view (--pattern's)
    sweep: bool = False
    short: str | None = None
    labels: tuple[str, ...] = ()  # words for the choices, in order, where a bare value is unclear
    # How a value reads in a legend or a line, e.g. "{} loop"; "{} peer|{} peers" for
    # one and for more.
    phrase: str = ""
    off: Any = None  # a value allowed outside low-high that turns the feature off: rate 0
    off_means: str = ""  # what that value does, in words: "closed loop"
    zero_means: str = ""  # how a legal 0 reads where it is not a bare number: "no limit"
    # How a point's description says a value other than the default, where it is not
    # the legend's words (``words``): "CURVE", "at {} msgs/s".
    said: str = ""

    def label(self, value: Any) -> str:
        """A value as people read it: ``zero-copy`` for ``copy=False``, ``64k`` for a size."""
        if self.labels:
            return self.labels[self.choices.index(value)]
        if self.kind == "size":
            return format_size(int(value))
        if self.kind == "duration":
            return format_duration(value) if value else "0"
        if self.kind == "fraction":
            return f"{value:.0%}" if value else "off"
        if self.kind == "rate":
            return format_rate(value)
        if self.kind == "messages" and isinstance(value, int):
            return format_rate(value) if value else (self.zero_means or "0")
        return _spell(value)

    def words(self, value: Any) -> str:
        """A value with what it is, for a legend or a line: ``1k B``, ``10k msgs/s``,
        ``zero-copy``, ``native``, ``2 engines``."""
        label = self.label(value)
        if self.phrase:
            one, _, more = self.phrase.partition("|")
            return (more if more and value != 1 else one).format(label)
        if self.labels or self.kind == "choice":
            return label
        if self.name == "size":
            return f"{label} B"
        if self.kind == "rate":
            return f"{label} {self.unit}"
        if self.kind == "int":
            return f"{label} {self.name.replace('_', ' ')}"
        return f"{self.name.replace('_', ' ')} {label}"

    def departs(self, value: Any) -> bool:
        """Whether ``value`` is other than the default (a figure not measured, NaN in a
        merged frame's column, is no value)."""
        missing = isinstance(value, float) and math.isnan(value)
        return not missing and bool(value != self.default)

    def said_at(self, value: Any) -> str:
        """``value`` as a point's description says it (:func:`departures`)."""
        return self.said.format(self.label(value)) if self.said else self.words(value)

    @property
    def axis_title(self) -> str:
        """The title with its unit, as axes, columns and controls show it:
        ``message size (B)``."""
        return with_unit(self.title, self.unit)

    @property
    def option(self) -> str:
        """The long command-line option, e.g. ``--min-time``."""
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """The allowed values, in words, for error messages and help."""
        if self.choices:
            return "one of " + ", ".join(_spell(c) for c in self.choices)
        if self.kind == "cpus":
            return CPUS_ALLOWED
        if self.kind == "address":
            return "an interface, optionally with a port: 127.0.0.1, 127.0.0.1:5555, [::1]"
        if self.kind == "interpreter":
            return INTERPRETERS_ALLOWED
        if self.off is not None:
            return f"{_spell(self.off)} ({self.off_means}) or {self._range()}"
        return self._range()

    def _range(self) -> str:
        low = self._spell_bound(self.low)
        high = self._spell_bound(self.high)
        if self.low is not None and self.high is not None:
            return f"from {low} to {high}"
        if self.low is not None:
            return f"at least {low}"
        if self.high is not None:
            return f"at most {high}"
        return "any value"

    def _spell_bound(self, bound: float | None) -> str:
        if bound is None:
            return ""
        if self.kind == "size":
            return spell_size(int(bound))
        if self.kind in ("rate", "messages"):
            return f"{format_rate(bound)} {self.unit}"
        if self.kind == "duration" and bound:
            return format_duration(bound)  # 1us, 60s: as they are typed
        return f"{_spell(bound)}{(' ' + self.unit) if self.unit else ''}"

    def parse(self, text: Any) -> Any:
        """Convert text (or an already-typed value) and check it is allowed."""
        try:
            value = _PARSERS[self.kind](text)
        except (TypeError, ValueError) as exc:
            msg = f"{self.name}: {exc}; allowed: {self.allowed()}"
            raise ValueError(msg) from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        """Raise ``ValueError`` naming the parameter, the value and the allowed range."""
        if self.off is not None and value == self.off:
            return value
        bad = (
            (self.choices and value not in self.choices)
            or (self.low is not None and value < self.low)
            or (self.high is not None and value > self.high)
        )
        if bad:
            spell = {"size": spell_size, "rate": format_rate, "messages": format_rate}.get(
                self.kind, _spell
            )
            got = spell(value)
            msg = f"{self.name} must be {self.allowed()}, got {got}"
            raise ValueError(msg)
        return value


def departures(point: Settings, params: Iterable[Param]) -> list[str]:
    """The settings among ``params`` at which ``point`` departs from the default, each
    in its declared words, in the order given: every description of a point says its
    settings through this, so a setting's phrase is declared once, on its ``Param``.

    >>> from zmqbench_magic.params import IO_THREADS, LOOP
    >>> departures({"loop": "native", "io_threads": 1}, (LOOP, IO_THREADS))
    ['native loop']
    """
    named = (p for p in params if p.name in point)
    return [p.said_at(point[p.name]) for p in named if p.departs(point[p.name])]


def _spell(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _parse_choice(text: Any) -> str:
    return str(text).strip().lower()


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "size": parse_size,
    "address": check_address,
    "fraction": parse_fraction,
    "duration": parse_duration,
    "rate": parse_rate,
    "messages": parse_messages,
    "int": int,
    "float": float,
    "bool": parse_bool,
    "choice": _parse_choice,
    "str": str,
    "interpreter": parse_interpreter,
    "cpus": parse_cpus,
}


def param_field(param: Param) -> Any:
    default = (param.default,) if param.sweep else param.default
    return field(default=default, metadata={"param": param})


@dataclass(frozen=True)
class BenchParams:
    """Common machinery: normalise, validate and expand the sweep grid."""

    # Each benchmark's own: its short name ("thr"), its metrics, headline first, and
    # the columns its sample rows record beyond every kind's (``SAMPLE_COLUMNS``).
    benchmark: ClassVar[str]
    metrics: ClassVar[tuple[Metric, ...]]
    columns: ClassVar[tuple[Column, ...]] = ()

    def __post_init__(self) -> None:
        for param in self.fields():
            value = getattr(self, param.name)
            object.__setattr__(self, param.name, _validated(param, value))
        self._check_combinations()
        if getattr(self, "until", "") == "decided":
            self._check_decided()

    @classmethod
    def fields(cls) -> tuple[Param, ...]:
        return tuple(f.metadata["param"] for f in dataclasses.fields(cls))

    @classmethod
    def sweep_fields(cls) -> tuple[Param, ...]:
        return tuple(p for p in cls.fields() if p.sweep)

    # Swept fields measured outermost first: changing them is the costly part.
    outer: ClassVar[tuple[str, ...]] = ()

    def points(self) -> Iterator[Settings]:
        """Each combination of the swept values, in measuring order."""
        names = [p.name for p in self.sweep_fields() if self.applies(p.name)]
        order = sorted(names, key=lambda n: self.outer.index(n) if n in self.outer else 99)
        for combo in itertools.product(*(getattr(self, n) for n in order)):
            point = self.resolve(dict(zip(order, combo, strict=True)))
            yield {n: point[n] for n in names}

    @classmethod
    def words(cls, point: Settings, names: Iterable[str] | None = None) -> str:
        """A point's settings (those in ``names``; default all) in words, in the order
        they are declared: ``tcp 1k B zero-copy``."""
        wanted = set(point if names is None else names)
        return " ".join(
            p.words(point[p.name]) for p in cls.fields() if p.name in wanted & set(point)
        )

    # Swept fields each of whose values takes rounds of its own (a cluster each): their
    # values are never measured side by side.
    separate_blocks: ClassVar[tuple[str, ...]] = ()

    def compared_arms(self) -> tuple[str, Any, Any] | None:
        """The two arms a run compares (``column``, baseline, candidate), as its
        points name them: a setting swept over exactly two values. Where several are,
        the first of :data:`ARM_ORDER`, then a setting that is not a number, then a
        number, the size last (it is a sweep's usual axis); the baseline is copy, the
        python loop, or the value named first. None where the run compares nothing.

        >>> from zmqbench_magic.params import ThroughputParams
        >>> ThroughputParams(size=[100, "1M"], io_threads=[1, 2]).compared_arms()
        ('io_threads', 1, 2)
        """
        points = list(self.points())
        two = {}
        for param in self.sweep_fields():
            if not points or param.name not in points[0]:
                continue
            values = list(dict.fromkeys(point[param.name] for point in points))
            if len(values) == 2:
                two[param.name] = values
        if not two:
            return None
        kinds = {p.name: p.kind for p in self.fields()}

        def rank(name: str) -> tuple[int, int]:
            if name in ARM_ORDER:
                return 0, ARM_ORDER.index(name)
            return (1 if kinds[name] in _ARM_KINDS else 3 if kinds[name] == "size" else 2), 0

        name = min(two, key=rank)  # the first declared of equal rank
        baseline, candidate = two[name]
        if _REFERENCE_ARM.get(name, object()) == candidate:
            baseline, candidate = candidate, baseline
        return name, baseline, candidate

    def _check_decided(self) -> None:
        if getattr(self, "precision", 0):
            msg = (
                "--until decided and --precision both add rounds, to different ends: "
                "give one (decided: until each comparison is called; precision: until "
                "each median is that narrow)"
            )
            raise ValueError(msg)
        arms = self.compared_arms()
        if arms is None:
            msg = (
                "--until decided compares two arms measured in the same rounds: sweep "
                "one setting over two values (--copy true false, --loop python native, "
                "--transport tcp ipc, --python A B); this run has none"
            )
            raise ValueError(msg)
        if arms[0] in self.separate_blocks:
            msg = (
                f"--until decided: --{arms[0].replace('_', '-')}'s two values each take "
                "a cluster of their own, measured in separate blocks of rounds, never "
                "side by side: no round decides them; leave --until at rounds"
            )
            raise ValueError(msg)

    def applies(self, name: str) -> bool:
        """Whether a parameter matters for these settings (echo's size, map's duration)."""
        return True

    def resolve(self, point: Settings) -> Settings:
        return point

    def scalars(self) -> RunSettings:
        return {p.name: getattr(self, p.name) for p in self.fields() if not p.sweep}

    def settings(self) -> RunSettings:
        """Every field as JSON-friendly values, as stored with a result."""
        swept = {p.name: list(getattr(self, p.name)) for p in self.sweep_fields()}
        return {**self.scalars(), **swept}

    def _check_combinations(self) -> None:
        """Checks across fields, after each field is valid on its own."""

    def cautions(self) -> list[str]:
        """Settings that are allowed but make figures to be read with care, in words,
        said before a run starts (and kept with its result)."""
        return []


# What --until decided compares where a run sweeps several settings over two values,
# and the arm that is the baseline whichever order they were named in.
ARM_ORDER = ("python", "loop", "copy", "transport")
_REFERENCE_ARM: Settings = {"copy": True, "loop": "python"}
# Settings whose values are named, not numbers: arms rather than places on an axis.
_ARM_KINDS = ("bool", "choice", "interpreter", "str")


class RunParams(Protocol):
    """What every benchmark's settings hold for the way it is run (rounds, warm-up,
    precision, time limits, order seed, label), whatever it measures."""

    benchmark: ClassVar[str]
    metrics: ClassVar[tuple[Metric, ...]]

    @property
    def repeat(self) -> int: ...
    @property
    def warmup(self) -> int: ...
    @property
    def precision(self) -> float: ...
    @property
    def until(self) -> str: ...
    @property
    def tolerance(self) -> float: ...
    @property
    def max_time(self) -> float: ...
    @property
    def timeout(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def label(self) -> str: ...

    def points(self) -> Iterator[Settings]: ...
    def settings(self) -> RunSettings: ...
    def cautions(self) -> list[str]: ...
    def compared_arms(self) -> tuple[str, Any, Any] | None: ...


def _validated(param: Param, value: Any) -> Any:
    if not param.sweep:
        return param.parse(value)
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    if not values:
        msg = f"{param.name} needs at least one value; allowed: {param.allowed()}"
        raise ValueError(msg)
    parsed = [param.parse(v) for v in values]
    if param.kind == "interpreter":
        check_arms(param.name, parsed)
    # Keep the user's order (it is the sweep order) but drop repeats.
    return tuple(dict.fromkeys(parsed))
