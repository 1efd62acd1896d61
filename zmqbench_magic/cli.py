"""``zmqbench thr|lat|flood``: the benchmarks from a shell, with the magics' options.

Exit status: 0 on success, 2 for bad input (an option out of range, an address that
cannot be bound), 1 when the measurement itself fails (a peer died or timed out).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .params import BenchParams, FloodParams, LatencyParams, ThroughputParams
from .results import ResultSet
from .sockets.measure import run_latency, run_throughput
from .ui.options import param_options, params_from_options


def _run_taskflood(params: BenchParams) -> ResultSet:
    from .parallel import cluster
    from .parallel.flood import run_taskflood

    try:
        return run_taskflood(params)
    finally:
        cluster.stop()  # a shell command keeps no cluster for a next call


COMMANDS: dict[str, tuple[type[BenchParams], Callable[[BenchParams], ResultSet], str]] = {
    "thr": (ThroughputParams, run_throughput, "PUSH/PULL throughput"),
    "lat": (LatencyParams, run_latency, "REQ/REP round-trip latency"),
    "flood": (FloodParams, _run_taskflood, "ipyparallel task flood"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zmqbench", description="ZeroMQ benchmarks")
    commands = parser.add_subparsers(dest="benchmark", required=True)
    for name, (params_class, _, title) in COMMANDS.items():
        sub = commands.add_parser(name, help=title, description=title)
        for flags, kwargs in param_options(params_class):
            sub.add_argument(*flags, **kwargs)
        sub.add_argument("-q", "--quiet", action="store_true", help="do not print the summary")
        sub.add_argument("--json", metavar="PATH", help="save the result as JSON")
        sub.add_argument("--csv", metavar="PATH", help="save one row per sample as CSV")
        sub.add_argument("--svg", metavar="PATH", help="save the chart as SVG (offline)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    params_class, measure, _ = COMMANDS[args.benchmark]
    try:
        result = measure(params_from_options(params_class, vars(args)))
    except ValueError as exc:
        parser.error(str(exc))  # exits with status 2
    except (TimeoutError, RuntimeError) as exc:  # PeerError is a RuntimeError
        print(f"zmqbench: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(result)
    _save(result, args)
    return 0


def _save(result: ResultSet, args: argparse.Namespace) -> None:
    if args.json:
        result.save(args.json)
    if args.csv:
        result.to_csv(args.csv)
    if args.svg:
        from .charts import chart_to_svg, default_chart

        with open(args.svg, "w") as svg:
            svg.write(chart_to_svg(default_chart(result.benchmark, result.df)))


if __name__ == "__main__":
    sys.exit(main())
