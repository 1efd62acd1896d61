"""What every kind's point record is: a typed, frozen record of one point of a sweep
that reads, as a mapping, as the settings its run names (its rows' columns, its key, a
far end's message), each other field its declaration's default."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

Record = TypeVar("Record", bound="PointRecord")
# A point named by its settings (setting -> value): as a sweep combines them, a row's
# point columns carry them, a stored file keeps them or a user writes them; every
# point record is one, and a record is built from one with ``of``.
Settings = Mapping[str, Any]


@dataclass(frozen=True, eq=False)
class PointRecord(Mapping[str, Any]):
    """A point: its fields are read by attribute (``point.size``); ``names`` are the
    settings the run sets at it, and as a mapping the point is those alone, so two
    points are equal where those are, whatever else the record holds."""

    names: tuple[str, ...] = ()

    # What a point of the kind is called in an error: "a ZeroMQ point".
    called: ClassVar[str] = "a point"

    @classmethod
    def settings_of_a_point(cls) -> tuple[str, ...]:
        """Every setting a point of the kind can name, in the record's order."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "names")

    @classmethod
    def of(cls: type[Record], settings: Settings) -> Record:
        """The point that sets ``settings`` (a sweep's combination, or a point as a
        far end's message or a stored row carries it)."""
        known = cls.settings_of_a_point()
        unknown = sorted(set(settings) - set(known))
        if unknown:
            msg = f"not a setting of {cls.called}: {', '.join(unknown)}; one of {known}"
            raise ValueError(msg)
        return cls(names=tuple(settings), **settings)

    @classmethod
    def of_row(cls: type[Record], row: Settings) -> Record:
        """The point a result's row (or summary row) is of: the kind's settings among
        its columns, the rest (figures, a payload's frames) left out."""
        return cls.of({name: row[name] for name in cls.settings_of_a_point() if name in row})

    def where(self: Record, **changes: Any) -> Record:
        """This point with ``changes`` set (and named)."""
        named = (*self.names, *(n for n in changes if n not in self.names))
        return dataclasses.replace(self, names=named, **changes)

    def without(self: Record, name: str) -> Record:
        """This point with ``name`` back at its default and no longer named."""
        default = {f.name: f.default for f in dataclasses.fields(self)}[name]
        kept = tuple(n for n in self.names if n != name)
        return dataclasses.replace(self, names=kept, **{name: default})

    def settings(self) -> Settings:
        """The settings the point names, as its rows, stored results and far ends'
        messages carry them."""
        return dict(self.items())

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __hash__(self) -> int:
        return hash(tuple(self.items()))
