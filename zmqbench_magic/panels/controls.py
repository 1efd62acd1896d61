"""ipywidgets controls built from the parameter declarations, and their values read back.

A control takes its description, default, range, choices and tooltip from its
:class:`~zmqbench_magic.params.Param`, so a panel never restates them: sizes and
task counts are powers-of-two sliders, durations and offered rates 1-2-5 steps,
booleans and short choice lists toggle buttons, small integer ranges sliders, and the
rest bounded text boxes. A swept parameter plotted on the chart's x axis (size, tasks,
duration) is a from-to range: every option between the two handles is measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import ipywidgets as widgets

from ..params import Param
from ..params.units import format_rate

# Integer ranges up to this wide are sliders; wider ones (counts) are text boxes.
_SLIDER_MAX_STEPS = 64
# More choices than this go in a drop-down rather than a row of buttons.
_BUTTON_MAX_CHOICES = 4
_POWERS_OF_TWO = [2**i for i in range(41)]
_ONE_TWO_FIVE = [m * 10.0**e for e in range(-4, 4) for m in (1, 2, 5)]
_RATES = [m * 10.0**e for e in range(1, 8) for m in (1, 2, 5)]
_STYLE = {"description_width": "11em"}
# A control's whole width, its description included: a slider keeps 26em or more for
# its track whatever :func:`fit_descriptions` gives the descriptions.
_WIDE = widgets.Layout(width="42em")
# About how wide a character of the widgets' font is, in em (13 px sans-serif): what
# a description or a button's label needs so that none is cut ("minimum sample ti…").
_EM_PER_CHAR = 0.6


def log_options(param: Param, keep: tuple[Any, ...] = ()) -> list[Any]:
    """What a log-scale control offers within the parameter's range, plus ``keep``
    (values asked for that are not on the grid, such as a 100-byte size)."""
    grids = {"duration": [0.0, *_ONE_TWO_FIVE], "rate": [0.0, *_RATES]}
    grid = grids.get(param.kind, [0, *_POWERS_OF_TWO])
    low = param.low if param.low is not None else grid[0]
    high = param.high if param.high is not None else grid[-1]
    return sorted({v for v in grid if low <= v <= high or v == param.off} | set(keep))


def make_control(param: Param, value: Any, *, ranged: bool) -> widgets.ValueWidget:
    """The widget for ``param`` showing ``value`` (a tuple for a swept parameter).

    ``ranged``: a from-to range slider over a log-scale grid, measuring every option
    between its handles. Otherwise a swept parameter takes one value at a time (runs
    accumulate on the chart instead), and more than one is a ``ValueError``.
    """
    values = tuple(value) if param.sweep else (value,)
    if not ranged and len(values) > 1:
        spelled = ", ".join(param.label(v) for v in values)
        msg = (
            f"{param.name}: a panel takes one value per run, got {spelled}; give one and "
            "run once per value (runs accumulate on the panel's chart)"
        )
        raise ValueError(msg)
    common: dict[str, Any] = {
        "description": param.axis_title,
        "tooltip": param.help,
        "style": _STYLE,
    }
    if ranged or param.kind in ("size", "duration", "rate"):
        options = [(param.label(v), v) for v in log_options(param, values)]
        if ranged:
            span = (min(values), max(values))
            return widgets.SelectionRangeSlider(
                options=options, value=span, continuous_update=False, layout=_WIDE, **common
            )
        return widgets.SelectionSlider(
            options=options, value=values[0], continuous_update=False, layout=_WIDE, **common
        )
    return _plain_control(param, values[0], common)


def _plain_control(param: Param, value: Any, common: dict[str, Any]) -> widgets.ValueWidget:
    if param.choices:
        options = [(param.label(c), c) for c in param.choices]
        if len(options) <= _BUTTON_MAX_CHOICES:
            # In a row with its description, like the sliders (ipywidgets puts it above).
            row = widgets.Layout(display="flex", flex_flow="row", align_items="center")
            buttons = widgets.ToggleButtons(options=options, value=value, layout=row, **common)
            longest = max(len(label) for label, _ in options)
            buttons.style.button_width = f"{max(7, math.ceil(_EM_PER_CHAR * longest + 3))}em"
            return buttons
        return widgets.Dropdown(options=options, value=value, **common)
    if param.kind == "messages":
        # A mark is typed (10k) or picked: auto, ZeroMQ's no limit (0), or powers of ten.
        picks = [_spelled_count(c) for c in (param.off, 0, 10, 100, 1000, 10_000, 100_000)]
        return widgets.Combobox(
            value=_spelled_count(value), options=picks, ensure_option=False, **common
        )
    # A value that turns the feature off (--max-time 0) may lie below the range.
    low = param.low if param.off is None or param.low is None else min(param.low, param.off)
    bounds = {"min": low, "max": param.high}
    if param.kind == "int":
        assert param.low is not None and param.high is not None, f"{param.name}: no range"
        if param.high - param.low <= _SLIDER_MAX_STEPS:
            return widgets.IntSlider(
                value=value, continuous_update=False, layout=_WIDE, **bounds, **common
            )
        return widgets.BoundedIntText(value=value, **bounds, **common)
    if param.kind == "float":
        return widgets.BoundedFloatText(value=value, **bounds, **common)
    if param.kind == "fraction":
        # In steps of 1% (0: off): tighter than that is beyond a shared machine's noise.
        return widgets.FloatSlider(
            value=value,
            min=param.low,
            max=param.high,
            step=0.01,
            readout_format=".0%",
            continuous_update=False,
            layout=_WIDE,
            **common,
        )
    # No placeholder: a box's help is its tooltip, whole (a placeholder was cut off).
    return widgets.Text(value=value, layout=_WIDE, **common)


def _spelled_count(value: Any) -> str:
    """A count as it is typed back: ``auto``, ``0``, ``10k``."""
    return format_rate(value) if isinstance(value, int) else str(value)


def fit_descriptions(controls: Iterable[widgets.ValueWidget]) -> None:
    """Give every control's description the width of the longest, so that none is cut
    and all line up."""
    controls = list(controls)
    longest = max((len(c.description) for c in controls), default=0)
    width = f"{math.ceil(_EM_PER_CHAR * longest + 1)}em"
    for control in controls:
        control.style.description_width = width


def shown(control: widgets.ValueWidget) -> widgets.Widget:
    """What a panel lays out for ``control``: a range slider with a readout of its own,
    which says a single value once (``256``, not ``256-256``) and a range ``1k to 64k``."""
    if not isinstance(control, widgets.SelectionRangeSlider):
        return control
    control.readout = False
    readout = widgets.Label(layout=widgets.Layout(margin="0 0 0 0.5em"))
    readout.add_class("zmqbench-readout")

    def say(_change: Any = None) -> None:
        labels = dict((v, label) for label, v in control.options)
        low, high = (labels[v] for v in control.value)
        readout.value = low if low == high else f"{low} to {high}"

    control.observe(say, names="value")
    say()
    return widgets.HBox([control, readout], layout=widgets.Layout(align_items="center"))


def control_value(param: Param, control: widgets.ValueWidget) -> Any:
    """The value a control stands for, as the params object takes it: every option
    between a range slider's handles; a list of one for another swept parameter."""
    if isinstance(control, widgets.SelectionRangeSlider):
        low, high = control.value
        return [v for _, v in control.options if low <= v <= high]
    return [control.value] if param.sweep else control.value
