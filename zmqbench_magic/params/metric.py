"""A :class:`Metric`: one measured quantity, its column, title and unit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A measured quantity: the DataFrame column (unit in the name), its title and its
    unit, which every axis, legend and line takes from here."""

    name: str
    title: str
    help: str
    better: str = ""  # "higher" or "lower": which way a comparison calls faster
    unit: str = ""

    @property
    def axis_title(self) -> str:
        """``delivered (msgs/s)``."""
        return with_unit(self.title, self.unit)

    def __post_init__(self) -> None:
        if self.better not in ("", "higher", "lower"):
            msg = f"better must be higher, lower or empty, got {self.better!r}"
            raise ValueError(msg)


def with_unit(title: str, unit: str) -> str:
    """``title (unit)``, or the title alone for a quantity without a unit."""
    return f"{title} ({unit})" if unit else title


__all__ = ["Metric", "with_unit"]
