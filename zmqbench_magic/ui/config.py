"""``%config ZmqBench.*``: session-wide defaults for the magics, as traitlets derived
from the parameter declarations.

Each parameter of any benchmark is one configurable trait, validated by its own
:class:`~zmqbench_magic.params.Param` (so ``%config ZmqBench.repeat = 0`` is refused
with the same message as ``--repeat 0``). A trait left at ``None`` means the
benchmark's own default; an option on the magic's line beats a configured value.
Two traits are about output rather than measurement: ``chart`` and ``quiet``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from traitlets import Bool, TraitError, TraitType
from traitlets.config import Configurable

from ..params import BENCHMARKS, BenchParams, Param
from ..params.declare import RunSettings
from .options import spell_value


class ParamTrait(TraitType):
    """A trait holding a value of one parameter (a tuple for a swept one), or None."""

    allow_none = True

    def __init__(self, param: Param, help: str) -> None:
        super().__init__(default_value=None, allow_none=True, help=help, config=True)
        self.param = param

    def validate(self, obj: Any, value: Any) -> Any:
        if value is None:
            return None
        try:
            if self.param.sweep:
                items = value if isinstance(value, (list, tuple)) else [value]
                if not items:
                    msg = f"{self.param.name} needs at least one value"
                    raise ValueError(msg)
                return tuple(self.param.parse(item) for item in items)
            return self.param.parse(value)
        except ValueError as exc:
            # The params' message starts with the name: prefix it, as %config spells it.
            raise TraitError(f"ZmqBench.{exc}") from None


def _declarations() -> Iterator[tuple[Param, dict[str, Any]]]:
    """Each parameter once, with its default in every benchmark that has it."""
    seen: dict[str, tuple[Param, dict[str, Any]]] = {}
    for benchmark, params_class in BENCHMARKS.items():
        for param in params_class.fields():
            entry = seen.setdefault(param.name, (param, {}))
            entry[1][benchmark] = param.default
    yield from seen.values()


def _help(param: Param, defaults: Mapping[str, Any]) -> str:
    by_value: dict[str, list[str]] = {}
    for benchmark, value in defaults.items():
        by_value.setdefault(spell_value(param, value), []).append(benchmark)
    if len(by_value) == 1:
        default = next(iter(by_value))
    else:
        default = "; ".join(f"{v} for {', '.join(b)}" for v, b in by_value.items())
    sweep = " A list sweeps." if param.sweep else ""
    return (
        f"{param.help}{f' [{param.unit}]' if param.unit else ''}. Allowed: "
        f"{param.allowed()}. None: the benchmark's default ({default}); used by "
        f"{', '.join(defaults)}.{sweep}"
    )


def _traits() -> dict[str, TraitType]:
    traits: dict[str, TraitType] = {
        param.name: ParamTrait(param, _help(param, defaults)) for param, defaults in _declarations()
    }
    traits["chart"] = Bool(True, help="show the chart after a run (--no-chart: False)").tag(
        config=True
    )
    traits["quiet"] = Bool(False, help="print no summary after a run (-q: True)").tag(config=True)
    return traits


# A Configurable whose traits are the parameters; the magics class inherits them.
BenchDefaults: type[Configurable] = type(
    "BenchDefaults",
    (Configurable,),
    {"__doc__": "Session defaults of every benchmark parameter.", **_traits()},
)


def configured(owner: Any, params_class: type[BenchParams]) -> RunSettings:
    """The values configured on ``owner`` that ``params_class`` takes (a kind
    registered after the traits were made has none configured)."""
    names = [p.name for p in params_class.fields()]
    return {n: getattr(owner, n, None) for n in names if getattr(owner, n, None) is not None}


__all__ = ["BenchDefaults", "ParamTrait", "configured"]
