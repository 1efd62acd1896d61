"""``zmqbench thr|lat|flood|compare|noise|env|peer``: the benchmarks from a shell, with
the magics' options, a comparison of two saved runs, this host's noise floor, cached
environments to compare, and a standing far end.

Exit status: 0 on success, 2 for bad input (an option out of range, an address that
cannot be bound, an unreadable result file), 1 when the measurement itself fails (a
peer died or timed out), 130 after Ctrl-C (what was measured in whole rounds is
still printed and saved).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .method.schedule import Interrupted
from .params import KINDS, SECRET_FILE, TOLERANCE, BenchParams, Kind
from .results import ResultSet, load
from .ui.environment_commands import add_commands, env_command, noise_command
from .ui.options import (
    CLI_OUTPUT_OPTIONS,
    check_output_path,
    param_options,
    params_from_options,
)
from .ui.present import Output, present, show
from .ui.progress import ProgressLine, stream_writer


def _runner(kind: Kind) -> Callable[..., ResultSet]:
    """What measures ``kind`` from the shell: a one-shot command keeps nothing (no
    cluster) for a next call."""
    measure = kind.load("run")
    if not kind.stop:
        return measure

    def run_once(params: BenchParams, **kwargs: object) -> ResultSet:
        try:
            return measure(params, **kwargs)
        finally:
            kind.load("stop")()

    return run_once


# What ``zmqbench --help`` ends with, as git's and pip's help do: each line a command
# that runs as written (a test parses every one) and what it answers.
EXAMPLES = (
    ("zmqbench thr", "messages per second: 1k messages over tcp"),
    ("zmqbench thr -s 1k 64k 1M --copy true false", "where zero-copy starts to pay"),
    ("zmqbench lat -t inproc ipc tcp", "round-trip percentiles per transport"),
    ("zmqbench flood --engines 1 2 --json flood.json", "tiny tasks per second, saved"),
    ("zmqbench compare old.json new.json", "faster, slower, same or inconclusive, per point"),
    ("zmqbench noise thr", "how much this host's runs differ by themselves"),
    ("zmqbench thr --help", "every option of one command"),
)


def _epilog() -> str:
    width = max(len(command) for command, _ in EXAMPLES) + 2
    lines = [f"  {command.ljust(width)}{words}" for command, words in EXAMPLES]
    return "examples:\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zmqbench",
        description="ZeroMQ and ipyparallel benchmarks",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="benchmark", required=True)
    for kind in KINDS.values():
        sub = commands.add_parser(kind.name, help=kind.title, description=kind.title)
        for flags, kwargs in param_options(kind.params):
            sub.add_argument(*flags, **kwargs)
        _output_options(sub)
    compare = commands.add_parser(
        "compare",
        help="compare two saved runs point by point",
        description="Is the candidate faster, slower or the same as the baseline, per point, "
        "or can the data not tell (inconclusive)? Ratio with its interval, Mann-Whitney "
        "p-value adjusted across the points (Holm), verdict and reason. Two arms of one "
        "run compare better paired: ResultSet.versus() in Python.",
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
    _output_options(compare)
    add_commands(commands)
    peer = commands.add_parser(
        "peer",
        help="a standing far end for --remote runs from another host",
        description="Serve %%zmqthr/%%zmqlat --remote runs, one at a time, until Ctrl-C or "
        "SIGTERM (as libzmq's local_thr). Prints one line saying where it listens.",
    )
    place = peer.add_mutually_exclusive_group(required=True)
    place.add_argument(
        "--bind",
        metavar="tcp://ADDR:PORT",
        help="where to listen: an address of this host (and a port, 0 for a free one)",
    )
    peer.add_argument(SECRET_FILE.option, metavar="PATH", help=SECRET_FILE.help)
    place.add_argument(
        "--over-ssh",
        action="store_true",
        help="started by a driver's --remote ssh://: secret on stdin, ends when stdin closes",
    )
    return parser


def _output_options(sub: argparse.ArgumentParser) -> None:
    for flags, kwargs in CLI_OUTPUT_OPTIONS:
        sub.add_argument(*flags, **kwargs)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    others = {"compare": _compare, "peer": _peer, "noise": noise_command, "env": env_command}
    if args.benchmark in others:
        return others[args.benchmark](parser, args)
    kind = KINDS[args.benchmark]
    params_class, measure = kind.params, _runner(kind)
    status = 0
    try:
        params = params_from_options(params_class, vars(args))
        for path in (args.json, args.csv, args.svg, args.png):
            check_output_path(path)
        for caution in params.cautions():
            print(f"zmqbench: warning: {caution}", file=sys.stderr)
        result = _measure(measure, params, args.quiet)
    except Interrupted as interrupt:
        if interrupt.result is None:
            return 130
        result, status = interrupt.result, 130
    except ValueError as exc:
        parser.error(str(exc))  # exits with status 2
    except (TimeoutError, RuntimeError) as exc:  # PeerError is a RuntimeError
        print(f"zmqbench: {exc}", file=sys.stderr)
        return 1
    present(result, _output(args), draw=None)
    return status


def _measure(measure: Callable[..., ResultSet], params: BenchParams, quiet: bool) -> ResultSet:
    progress = None if quiet else ProgressLine(stream_writer(sys.stderr), bar=True)
    try:
        return measure(params, progress=progress)
    finally:
        if progress is not None:
            progress.close()


def _peer(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from pathlib import Path

    from .sockets import standing
    from .sockets.secret import read_secret, write_secret

    secret = None
    if args.secret_file:
        try:
            if Path(args.secret_file).exists():
                secret = read_secret(args.secret_file)
            else:
                secret = write_secret(args.secret_file)
                print(
                    f"zmqbench peer: wrote a new secret to {args.secret_file}: give the "
                    f"driver this file ({SECRET_FILE.option})",
                    flush=True,
                )
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
    return standing.main(args.bind, secret, over_ssh=args.over_ssh)


def _compare(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        baseline, candidate = load(args.baseline), load(args.candidate)
        table = baseline.compare(
            candidate, match=args.match, metric=args.metric, tolerance=args.tolerance
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    if not args.quiet:
        from .results.text import comparison_lines

        print("\n".join(comparison_lines(table)))
    if args.json:
        table.to_json(args.json, orient="records", indent=1)
    if args.csv:
        table.to_csv(args.csv, index=False)
    if args.svg or args.png:
        from .charts import comparison_chart

        show(comparison_chart(table), _output(args), draw=None)
    return 0


def _output(args: argparse.Namespace) -> Output:
    return Output(args.quiet, True, args.svg, args.png, args.json, args.csv)


if __name__ == "__main__":
    sys.exit(main())
