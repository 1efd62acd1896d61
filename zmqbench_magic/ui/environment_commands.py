"""``zmqbench noise`` (this host's noise floor), ``zmqbench system`` (what the host does
to a figure's stability) and ``zmqbench env`` (environments to compare with
``--python``): the shell commands about where figures are measured."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..params import KINDS, TOLERANCE, SocketPoint
from ..params.units import parse_fraction
from .options import (
    REPLACE_OPTION,
    check_not_replaced,
    check_output_path,
    param_options,
    params_from_options,
)
from .progress import ProgressLine, stream_writer

_NOISE_RUNS = 5


def add_commands(commands: Any) -> None:
    """The ``noise`` and ``env`` subcommands, on ``zmqbench``'s subparsers."""
    noise = commands.add_parser(
        "noise",
        help="measure this host's noise floor: one sweep as independent runs",
        description="Run one sweep several times, each an independent run in fresh "
        "processes, and keep per point the widest ratio between two runs' medians: "
        "compare then never calls a difference between separate runs smaller than it.",
    )
    kinds = noise.add_subparsers(dest="noise_benchmark", required=True)
    # The kinds whose loop a far end runs: those measured in independent processes.
    for kind in (kind for kind in KINDS.values() if kind.far_end):
        sub = kinds.add_parser(kind.name, help=f"the noise floor of {kind.name}")
        for flags, kwargs in param_options(kind.params):
            sub.add_argument(*flags, **kwargs)
        sub.add_argument(
            "--runs",
            type=int,
            default=_NOISE_RUNS,
            help=f"independent runs, 2 to 100 (default {_NOISE_RUNS})",
        )
        sub.add_argument("--store", metavar="PATH", help="the floor file (default: the cache's)")
        sub.add_argument("-q", "--quiet", action="store_true", help="print no progress")
        sub.add_argument(
            "--markdown", action="store_true", help="print the floor in a Markdown block"
        )
    system = commands.add_parser(
        "system",
        help="check what this host does to a figure's stability",
        description="Read the CPU governor, turbo, isolated and tickless CPUs, the cgroup's "
        "CPU quota and memory limit, transparent huge pages, SMT, load and frequency, and "
        "say of each whether it helps or hurts a stable figure and what to do (as pyperf's "
        "system show). Every result keeps the same facts in its metadata (system).",
    )
    system.add_argument(
        "--json", metavar="PATH", help="save the facts and the checks as JSON (PATH.json)"
    )
    system.add_argument(*REPLACE_OPTION[0], **{**REPLACE_OPTION[1], "help": "overwrite it"})
    system.add_argument(
        "--markdown", action="store_true", help="print the checks as a Markdown table"
    )
    plan = commands.add_parser(
        "plan",
        help="how many rounds --until decided needs for a difference, before a run",
        description="Print, for differences from none to 2x, about how many rounds a "
        "comparison taken --until decided needs to decide them, at a tolerance and over "
        "a number of points, where each round's ratio of the two arms varies by --noise "
        "(default: at most what this host's stored noise floor says, zmqbench noise).",
    )
    plan.add_argument(
        "--noise", type=parse_fraction, help="how much a round's ratio varies, e.g. 3%%"
    )
    plan.add_argument(
        "--tolerance", type=TOLERANCE.parse, default=TOLERANCE.default, help=TOLERANCE.help
    )
    plan.add_argument(
        "--points", type=int, default=12, help="points in the comparison (default 12)"
    )
    plan.add_argument(
        "--floor-of",
        choices=sorted(KINDS),
        default="thr",
        help="the benchmark whose stored noise floor gives the noise (default thr)",
    )
    env = commands.add_parser(
        "env",
        help="build cached virtual environments to compare with --python",
        description="Build (once) a virtual environment per argument, each with its "
        "requirements and numpy, and print their interpreters, one per line: give them "
        "to --python. Example: zmqbench env pyzmq==25.1.2 pyzmq==26.4.0",
    )
    env.add_argument(
        "requirements",
        nargs="+",
        metavar="REQUIREMENTS",
        help="one environment's requirements, as pip takes them (quote several)",
    )
    env.add_argument(
        "--base-python",
        default=sys.executable,
        metavar="PATH",
        help="the interpreter the environments are made from (default: this one)",
    )
    env.add_argument(
        "--pip-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an option for pip, e.g. --pip-arg=--no-index "
        "--pip-arg=--find-links=DIR on a machine with no package index",
    )
    env.add_argument(
        "--markdown", action="store_true", help="print the interpreters in a Markdown block"
    )


def plan_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..results.host.environment import environment
    from ..results.storage.noise_floor import describe, floors_at
    from ..results.words.planning import noise_from_floor, plan_lines

    noise = args.noise
    if noise is None:
        floors = floors_at(environment(), args.floor_of)
        noise = noise_from_floor(floors)
        if noise is None:
            parser.error(
                f"no noise floor of {args.floor_of} is stored for this host and "
                f"environment: give --noise, or measure it (zmqbench noise {args.floor_of})"
            )
        print(f"noise: at most √2 x the widest spread within a run of {describe(floors)}")
    if not 0 < noise < 10 or args.points < 1:
        parser.error(f"--noise must be above 0 and --points 1 or more, got {noise}, {args.points}")
    print("\n".join(plan_lines(noise, args.tolerance, args.points)))
    return 0


def noise_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..results.storage.noise_floor import floor_of, point_key
    from ..sockets.kernel.noise import run_noise
    from ..sockets.kernel.rounds import describe

    params_class = KINDS[args.noise_benchmark].params
    progress = None
    if not args.quiet:
        progress = ProgressLine(stream_writer(sys.stderr), bar=True, unit="runs")
    try:
        params = params_from_options(params_class, vars(args))
        store = Path(args.store) if args.store else None
        results, path = run_noise(params, args.runs, store=store, progress=progress)  # type: ignore[arg-type]
    except ValueError as exc:
        parser.error(str(exc))
    except (TimeoutError, RuntimeError) as exc:
        print(f"zmqbench: {exc}", file=sys.stderr)
        return 1
    finally:
        if progress is not None:
            progress.close()

    floors = floor_of(results)
    lines = []
    for row in results[0].summary().to_dict("records"):
        found = floors.get(point_key({c: row[c] for c in results[0].point_columns}))
        point = SocketPoint.of_row(row)
        if found is not None:
            lines.append(
                f"{describe(point)}: runs within {found['run_to_run']:.1%} of each other "
                f"({found['runs']} runs), samples within a run up to "
                f"{found['within_run']:.0%} stdev over mean"
            )
    lines.append(f"noise floor saved to {path}")
    if args.markdown:
        from ..results.words.markdown import lines_markdown

        print(lines_markdown(lines))
    else:
        print("\n".join(lines))
    return 0


def system_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from ..results.host.system import check_lines, system_checks, system_facts

    try:
        check_output_path(args.json, "json")
        check_not_replaced(args.json, "--json", None, args.replace)
    except ValueError as exc:
        parser.error(str(exc))
    facts = system_facts()
    checks = system_checks(facts)
    if args.markdown:
        from ..results.words.markdown import table_markdown

        rows = [[c.name, c.verdict, c.value, c.advice] for c in checks]
        print(table_markdown(["check", "verdict", "value", "what to do"], rows))
        print(f"\n{check_lines(checks)[-1]}")
    else:
        print("\n".join(check_lines(checks)))
    if args.json:
        saved = {"facts": facts, "checks": [dataclasses.asdict(c) for c in checks]}
        try:
            Path(args.json).write_text(json.dumps(saved, indent=1) + "\n")
        except OSError as exc:
            parser.error(str(exc))
    return 0


def env_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..method.environments import build

    built = []
    for requirements in args.requirements:
        try:
            python = build(requirements, base_python=args.base_python, pip_args=args.pip_arg)
        except ValueError as exc:
            print(f"zmqbench env: {exc}", file=sys.stderr)
            return 1
        if not args.markdown:  # one line as each is ready, for a script to read
            print(python, flush=True)
        built.append(f"{requirements}: {python}")
    if args.markdown:
        from ..results.words.markdown import lines_markdown

        print(lines_markdown(built))
    return 0


__all__ = ["add_commands", "env_command", "noise_command", "system_command"]
