"""``zmqbench compare`` (two saved runs, gated in CI with ``--fail-on``), ``zmqbench
show`` (a saved run printed again) and ``zmqbench history`` (many saved runs in order,
and the steps in them): the shell commands over result files."""

from __future__ import annotations

import argparse
from typing import Any

from ..params import FAIL_ON, HISTORY_ORDER, TOLERANCE
from ..results import load
from .options import (
    CLI_OUTPUT_OPTIONS,
    OptionSpec,
    check_not_replaced,
    check_output_path,
    type_for,
)
from .present import Output, present, show

# --fail-on, as every gated command takes it.
FAIL_ON_OPTION: OptionSpec = (
    (FAIL_ON.option,),
    {
        "nargs": "+",
        "type": type_for(FAIL_ON),
        "default": [],
        "metavar": "VERDICT",
        "help": FAIL_ON.help,
    },
)


def add_commands(commands: Any) -> None:
    """The ``compare``, ``show`` and ``history`` subcommands, on ``zmqbench``'s
    subparsers."""
    compare = commands.add_parser(
        "compare",
        help="compare two saved runs point by point",
        description="Is the candidate faster, slower or the same as the baseline, per point, "
        "or can the data not tell (inconclusive)? Ratio with its interval, Mann-Whitney "
        "p-value adjusted across the points (Holm), verdict and reason. Two arms of one "
        "run compare better paired: ResultSet.versus() in Python, or --python A B with "
        "--fail-on. Exit status with --fail-on: 1 when a point is called what it names.",
    )
    compare.add_argument("baseline", help="a result file (--json) of the baseline run")
    compare.add_argument("candidate", help="a result file of the run compared with it")
    compare.add_argument(
        "--match",
        nargs="+",
        metavar="COLUMN",
        help="pair points on these columns only (e.g. size), default every shared one",
    )
    compare.add_argument("--metric", help="the metric compared, default the headline one")
    compare.add_argument(
        TOLERANCE.option,
        type=TOLERANCE.parse,
        default=None,
        metavar="FRACTION",
        help=f"{TOLERANCE.help}; default this host's noise floor at each point (zmqbench "
        f"noise), at least {TOLERANCE.label(TOLERANCE.default)}".replace("%", "%%"),
    )
    compare.add_argument(*FAIL_ON_OPTION[0], **FAIL_ON_OPTION[1])
    _output_options(compare)
    show_command = commands.add_parser(
        "show",
        help="print a saved run's summary again",
        description="Print a result file's summary (points, verdicts, advice, warnings) "
        "as the run printed it; with --svg/--png its chart, with --markdown as Markdown.",
    )
    show_command.add_argument("file", help="a result file (--json)")
    _output_options(show_command, saving=False)
    history = commands.add_parser(
        "history",
        help="each point's figure across saved runs, and where it stepped",
        description="Each point's median across result files (and every *.json in the "
        "folders given), in date order or by a version the runs ran with, and the runs "
        "where it stepped beyond the tolerance (a permutation test per point, "
        "Holm-adjusted across the points). --json saves the series and the steps.",
    )
    history.add_argument("paths", nargs="+", metavar="FILE|DIR", help="result files or folders")
    history.add_argument("--metric", help="the metric followed, default the headline one")
    history.add_argument(
        HISTORY_ORDER.option,
        type=type_for(HISTORY_ORDER),
        default=HISTORY_ORDER.default,
        metavar="|".join(HISTORY_ORDER.choices),
        help=f"{HISTORY_ORDER.help}; default {HISTORY_ORDER.default}",
    )
    history.add_argument(
        TOLERANCE.option,
        type=type_for(TOLERANCE),
        default=None,
        metavar="FRACTION",
        help="the smallest step called; default this host's noise floor at each point "
        f"(zmqbench noise), at least {TOLERANCE.label(TOLERANCE.default)}".replace("%", "%%"),
    )
    _output_options(history)


def _output_options(sub: argparse.ArgumentParser, saving: bool = True) -> None:
    for flags, kwargs in CLI_OUTPUT_OPTIONS:
        if saving or flags not in (("--json",), ("--csv",), ("--replace",)):
            sub.add_argument(*flags, **kwargs)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before reading anything, a file name that says another format than its
    option, and a table written over a file that exists unasked (``compare a.json
    b.json --json b.json`` would lose a saved run)."""
    for kind in ("json", "csv", "svg", "png"):
        check_output_path(getattr(args, kind, None), kind)
    for kind in ("json", "csv"):
        check_not_replaced(getattr(args, kind, None), f"--{kind}", None, args.replace)


def output_of(args: argparse.Namespace) -> Output:
    """How a command's result is presented, from its output options."""
    return Output(
        args.quiet,
        True,
        args.svg,
        args.png,
        getattr(args, "json", None),
        getattr(args, "csv", None),
        args.markdown,
        append=getattr(args, "append", False),
        replace=getattr(args, "replace", False),
    )


def compare_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..results.statistics.gate import gate

    try:
        _check_outputs(args)
        baseline, candidate = load(args.baseline), load(args.candidate)
        table = baseline.compare(
            candidate, match=args.match, metric=args.metric, tolerance=args.tolerance
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    output = output_of(args)
    print_comparison(table, output)
    if args.json:
        table.to_json(args.json, orient="records", indent=1)
    if args.csv:
        table.to_csv(args.csv, index=False)
    if args.svg or args.png:
        from ..charts import comparison_chart

        show(comparison_chart(table), output, draw=None)
    return report_gate(gate(table, args.fail_on), args.fail_on, output)


def print_comparison(table: Any, output: Output) -> None:
    if output.quiet:
        return
    if output.markdown:
        from ..results.words.markdown import comparison_markdown

        print(comparison_markdown(table))
    else:
        from ..results.words.text import comparison_lines

        print("\n".join(comparison_lines(table)))


def report_gate(failed: list[str], fail_on: list[str], output: Output) -> int:
    """Print a gate's outcome (none without --fail-on) and give the exit status: 1 when
    it failed. Printed even with --quiet: it is why the job failed."""
    if not fail_on:
        return 0
    from ..results.statistics.gate import gate_lines

    lines = gate_lines(failed, fail_on)
    if output.markdown:
        lines = [f"**{lines[0]}**", *(f"- {line.strip()}" for line in lines[1:])]
    print("\n".join(["", *lines] if not output.quiet else lines))
    return 1 if failed else 0


def history_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import json

    from ..results import load_runs
    from ..results.words.history_text import history_lines

    try:
        _check_outputs(args)
        series, steps = load_runs(args.paths).history(args.metric, args.by, args.tolerance)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    output = output_of(args)
    if not output.quiet:
        lines = history_lines(series, steps)
        if output.markdown:
            from ..results.words.markdown import lines_markdown

            print(lines_markdown(lines))
        else:
            print("\n".join(lines))
    if args.json:
        both = {
            "series": json.loads(series.to_json(orient="records")),
            "steps": json.loads(steps.to_json(orient="records")),
            **{key: value for key, value in series.attrs.items()},
        }
        with open(args.json, "w") as file:
            json.dump(both, file, indent=1)
    if args.csv:
        series.to_csv(args.csv, index=False)
    if args.svg or args.png:
        from ..charts import history_chart

        show(history_chart(series, steps), output, draw=None)
    return 0


def show_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        for kind in ("svg", "png"):
            check_output_path(getattr(args, kind), kind)
        result = load(args.file)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    present(result, output_of(args), draw=None)
    return 0


__all__ = [
    "FAIL_ON_OPTION",
    "add_commands",
    "compare_command",
    "history_command",
    "output_of",
    "print_comparison",
    "report_gate",
    "show_command",
]
