"""A flood's memory forecast on known answers: floods of several sizes whose kernel heap
grew as a known power of the tasks, fitted and extrapolated, a single figure within
reach of the floods measured and a range past it; a peak's rise, which reuse of freed
memory holds down, forecast as a floor and never fitted."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

from zmqbench_magic.params.memory import FAR_BEYOND, STEEPEST, fit_growth
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.words.advice import FLOOD_OF, forecasts

ROOT = Path(__file__).resolve().parent.parent.parent
EXPONENT = 1.25
SCALE_B = 1600.0  # a flood of n tasks rose 1.6 kB x n^1.25 (15.2 kB a task at 8,192)


def _rise(tasks: float) -> float:
    return SCALE_B * tasks**EXPONENT


def _rows(sizes: list[int], noise: tuple[float, ...] = (0.9, 1.0, 1.1)) -> list[dict[str, object]]:
    """Samples of floods of ``sizes`` whose kernel's heap held :func:`_rise` more (times
    each ``noise`` factor, one sample each: the median is the rise itself) while its
    peak rose a third of that (reuse), and whose controller's peak rose 2 kB a task."""
    return [
        {
            "test": "flood",
            "backend": "ipyparallel",
            "tasks": tasks,
            "engines": 2,
            "view": "lb",
            "scheme": "leastload",
            "sample": i,
            "tasks_per_s": 400.0,
            "client_held_kb_per_task": _rise(tasks) * factor / tasks / 1e3,
            "client_kb_per_task": _rise(tasks) * factor / tasks / 1e3 / 3,
            "controller_kb_per_task": 2.0 * factor,
            "engines_kb_per_task": 1.0,
        }
        for tasks in sizes
        for i, factor in enumerate(noise)
    ]


def _memory_advice(rows: list[dict[str, object]]) -> str:
    (sentence,) = [a for a in ResultSet("flood", rows).advice() if "in flight" in a]
    return sentence


def test_the_fit_recovers_a_known_exponent():
    sizes = [128, 512, 2048, 8192]
    fit = fit_growth({n: _rise(n) for n in sizes})
    assert fit.exponent == pytest.approx(EXPONENT, abs=1e-9)
    assert (fit.smallest, fit.largest) == (128, 8192)
    assert fit.per_task == pytest.approx(_rise(8192) / 8192)
    assert fit.fitted(FLOOD_OF) == pytest.approx(_rise(FLOOD_OF))
    assert fit.linear(FLOOD_OF) == pytest.approx(_rise(8192) / 8192 * FLOOD_OF)
    # Noise of +-10% on each size (alternating) moves the exponent by a few hundredths.
    noisy = fit_growth({n: _rise(n) * f for n, f in zip(sizes, (1.1, 0.9, 1.1, 0.9), strict=True)})
    assert abs(noisy.exponent - EXPONENT) < 0.05
    # A size whose peak did not rise cannot be logged: left out of the exponent.
    flat = fit_growth({64: 0.0, **{n: _rise(n) for n in sizes}})
    assert flat.exponent == pytest.approx(EXPONENT) and flat.smallest == 64
    # One size: no exponent, and past its reach no upper bound.
    (one,) = [fit_growth({8192: _rise(8192)})]
    assert math.isnan(one.exponent)
    assert one.forecast(FAR_BEYOND * 8192 + 1) == (one.linear(FAR_BEYOND * 8192 + 1), math.inf)


def test_the_medians_of_each_size_are_fitted_not_the_largest_alone():
    """Three samples a size, one of them an outlier: the median of each is what is
    fitted, and the exponent is the known one."""
    rows = _rows([128, 512, 2048, 8192], noise=(1.0, 1.0, 3.0))
    (client,) = forecasts(ResultSet("flood", rows)).query("role == 'client'").to_dict("records")
    assert client["exponent"] == pytest.approx(EXPONENT)
    assert client["beyond"] and (client["smallest"], client["largest"]) == (128, 8192)
    assert client["high"] == pytest.approx(_rise(FLOOD_OF))


def test_a_forecast_far_past_the_floods_measured_is_a_range_naming_them():
    """100,000 tasks is 12x a flood of 8,192: the range from each task's cost at 8,192
    (15.2 kB x 100,000 = 1.52 GB) to the fitted curve (1.6 kB x 100,000^1.25 = 2.85 GB);
    the controller's peak is given a task and not forecast."""
    sentence = _memory_advice(_rows([128, 512, 2048, 8192]))
    linear = _rise(8192) / 8192 * FLOOD_OF
    assert (f"{linear / 1e9:.3g}", f"{_rise(FLOOD_OF) / 1e9:.3g}") == ("1.52", "2.85")
    assert sentence == (
        "with 2 engines (lb view, leastload scheme), each task in flight took about 15.2 kB "
        "in this kernel's heap and 2 kB in the controller's peak (medians of 3 samples of a "
        "flood of 8,192 tasks): a flood of 100,000 tasks at once needs between 1.52 GB "
        "(each task as here) and 2.85 GB (the fit, tasks^1.25) more in this kernel's heap; "
        "12x the largest flood measured, past what floods of 128 to 8,192 tasks can tell"
        "; the controller's peak is not forecast: memory an earlier flood freed is reused "
        "before a peak rises, by as much as the allocator kept, so a peak's rise a task does "
        "not scale to a larger flood"
    )


def test_a_forecast_within_reach_of_the_floods_is_one_figure():
    """A flood of 32,768 tasks is measured: 100,000 is 3x that, one figure on the
    fitted curve (1.6 kB x 100,000^1.25 = 2.85 GB)."""
    sentence = _memory_advice(_rows([128, 512, 2048, 8192, 32768]))
    needs = "needs about 2.85 GB more in this kernel's heap, the growth fitted"
    assert needs in sentence
    assert sentence.endswith(
        ", the growth fitted over floods of 128 to 32,768 tasks (tasks^1.25 in this kernel)"
        "; the controller's peak is not forecast: memory an earlier flood freed is reused "
        "before a peak rises, by as much as the allocator kept, so a peak's rise a task does "
        "not scale to a larger flood"
    )
    assert "between" not in sentence and "past what" not in sentence


def test_the_kernel_is_read_by_its_heap_where_every_sample_has_it():
    """A flood after one as large reuses the memory that one freed: its peak rises by
    a third of what it holds. Where the rows carry the heap's figure the client's
    forecast is the heap's fit, and the sentence says where each figure was read; with
    one sample without it (a file from before the column) the peak is read for every
    sample, and its figure is a floor, not a fit."""
    rows = _rows([128, 512, 2048, 8192])
    (client,) = forecasts(ResultSet("flood", rows)).query("role == 'client'").to_dict("records")
    assert client["read"] == "heap" and client["fitted"] == pytest.approx(_rise(FLOOD_OF))
    assert "15.2 kB in this kernel's heap and 2 kB in the controller's peak" in (
        _memory_advice(rows)
    )
    rows[0]["client_held_kb_per_task"] = float("nan")
    (client,) = forecasts(ResultSet("flood", rows)).query("role == 'client'").to_dict("records")
    peak_per_task = _rise(8192) / 8192 / 3
    assert client["read"] == "peak" and math.isnan(client["exponent"])
    assert math.isnan(client["low"]) and math.isnan(client["high"])
    assert client["linear"] == pytest.approx(peak_per_task * FLOOD_OF)
    sentence = _memory_advice(rows)
    assert "5.07 kB in this kernel's peak" in sentence and "needs" not in sentence
    assert "this kernel's peak and the controller's peak are not forecast" in sentence


def test_a_peak_that_fell_with_the_flood_is_not_forecast():
    """Reuse can make a larger flood's peak rise less a task than a smaller one's (a
    negative power, fitted, fell below what the measured flood used; scaled linearly,
    it is no floor either): the controller's rise a task at its largest flood is given,
    and no figure for 100,000 tasks."""
    rows = _rows([128, 512, 2048, 8192])
    for row in rows:
        row["controller_kb_per_task"] = 40.0 * (128 / float(row["tasks"])) ** 0.5
    (controller,) = (
        forecasts(ResultSet("flood", rows)).query("role == 'controller'").to_dict("records")
    )
    at_largest = 40.0 * (128 / 8192) ** 0.5 * 1e3  # bytes a task
    assert controller["linear"] == pytest.approx(at_largest * FLOOD_OF)
    assert math.isnan(controller["low"]) and math.isnan(controller["high"])
    assert math.isnan(controller["exponent"])
    assert "5 kB in the controller's peak" in _memory_advice(rows)


def test_one_flood_size_far_below_gives_a_lower_bound_only():
    sentence = _memory_advice(_rows([1000]))
    assert "needs at least " in sentence and "between" not in sentence
    assert sentence.endswith(
        "; 100x the largest flood measured, past what a flood of 1,000 tasks can tell: memory "
        "per task may grow with the flood, as floods of several sizes would show"
        "; the controller's peak is not forecast: memory an earlier flood freed is reused "
        "before a peak rises, by as much as the allocator kept, so a peak's rise a task does "
        "not scale to a larger flood"
    )


def test_every_form_of_the_forecast_is_masked_alike_for_the_notebooks():
    """The notebooks' checks compare the shape of a cell's text: a range, one figure
    and a lower bound are all what the run found."""
    patterns = get_sanitize_patterns((ROOT / "examples/sanitize.cfg").read_text())

    def sanitized(text: str) -> str:
        for regex, replacement in patterns:
            text = re.sub(regex, replacement, text)
        return text

    forms = [
        _memory_advice(_rows([128, 512, 2048, 8192])),
        _memory_advice(_rows([128, 512, 2048, 8192, 32768])),
        _memory_advice(_rows([1000])),
    ]
    assert len({sanitized(f"advice: {form}\n") for form in forms}) == 1


def test_a_fit_steeper_than_any_floods_records_need_is_drawn_at_the_steepest():
    """Noise over small floods fitted tasks^4: the figure is drawn as tasks^2 (each
    task's cost growing as the flood), and the words say the fit was taken so."""
    sizes = [128, 512, 2048]
    fit = fit_growth({n: n**4 for n in sizes})
    assert fit.exponent == pytest.approx(4.0) and fit.curve == STEEPEST
    assert fit.fitted(2048 * 16) == pytest.approx(2048**4 * 16**2)
    rows = _rows(sizes)
    for row in rows:
        row["client_held_kb_per_task"] = float(row["tasks"]) ** 3 / 1e3  # rise = tasks^4 bytes
    sentence = _memory_advice(rows)
    cut = "the fit, tasks^4.00, cut to tasks^2.00: steeper is past what a flood's records need"
    assert cut in sentence


def test_the_outputs_unread_at_the_last_reply_are_said_beside_the_heaps_figure():
    """The heap is read once every output is in: what was still unread at the largest
    flood's last reply is said beside it, as the median share of its samples, and
    nothing where none was measured or a peak (which saw them) is read."""
    rows = _rows([128, 512, 2048, 8192])
    for row, share in zip(rows, [0.0, 0.0, 0.0] * 3 + [0.10, 0.12, 0.50], strict=True):
        row["outputs_unread"] = share
    said = _memory_advice(rows)
    assert said.endswith(
        "; at the last reply 12% of that flood's task outputs were still unread, held on "
        "top until read (a longer flood leaves a larger share)"
    ), said
    for row in rows:
        row["outputs_unread"] = 0.001 if row["tasks"] == 8192 else 0.5
    assert "unread" not in _memory_advice(rows)
    for row in rows:
        row["outputs_unread"] = 0.2
        row["client_held_kb_per_task"] = float("nan")  # read at the peak
    assert "unread" not in _memory_advice(rows)
