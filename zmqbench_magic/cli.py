"""``zmqbench thr|lat|flood|compare|show|history|noise|plan|system|env|peer``: the
benchmarks from a shell, with the magics' options; a comparison of two saved runs, a
saved run printed again, many saved runs in order with the steps in them; this host's
noise floor, the rounds a comparison taken until decided needs, what the host does to
a figure's stability, cached environments to compare, and a standing far end.

Exit status: 0 on success, 2 for bad input (an option out of range, an address that
cannot be bound, an unreadable result file), 1 when the measurement itself fails (a
peer died or timed out) or a ``--fail-on`` gate fails (a point called what it names),
130 after Ctrl-C (what was measured in whole rounds is still printed and saved; a
gated run fails).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from .method.schedule import Interrupted
from .params import KINDS, PYTHON, SECRET_FILE, BenchParams, Kind
from .results import ResultSet, load
from .results.statistics.gate import gate
from .results.words.text import python_arms
from .ui.environment_commands import (
    add_commands,
    env_command,
    noise_command,
    plan_command,
    system_command,
)
from .ui.options import (
    APPEND_OPTION,
    CLI_OUTPUT_OPTIONS,
    check_not_replaced,
    check_output_path,
    param_options,
    params_from_options,
)
from .ui.present import present
from .ui.progress import ProgressLine, stream_writer
from .ui.result_commands import (
    FAIL_ON_OPTION,
    compare_command,
    history_command,
    output_of,
    report_gate,
    show_command,
)
from .ui.result_commands import add_commands as add_result_commands


def _runner(kind: Kind) -> Callable[..., ResultSet]:
    """What measures ``kind`` from the shell: a one-shot command keeps nothing (no
    cluster) for a next call."""
    measure, stop = kind.module.run, kind.module.stop
    if stop is None:
        return measure

    def run_once(params: BenchParams, **kwargs: object) -> ResultSet:
        try:
            return measure(params, **kwargs)
        finally:
            stop()

    return run_once


# What ``zmqbench --help`` ends with, as git's and pip's help do: each line a command
# that runs as written (a test parses every one) and what it answers.
EXAMPLES = (
    ("zmqbench thr", "messages per second: 1k messages over tcp"),
    ("zmqbench thr -s 1k 64k 1M --copy true false", "where zero-copy starts to pay"),
    ("zmqbench lat -t inproc ipc tcp", "round-trip percentiles per transport"),
    ("zmqbench flood --engines 1 2 --json flood.json", "tiny tasks per second, saved"),
    ("zmqbench compare old.json new.json", "faster, slower, same or inconclusive, per point"),
    ("zmqbench compare old.json new.json --fail-on slower", "exit 1 on a slower point (CI)"),
    ("zmqbench show new.json --markdown", "a saved run's summary for a PR comment"),
    ("zmqbench history runs/ --svg history.svg", "where a figure stepped, run after run"),
    ("zmqbench noise thr", "how much this host's runs differ by themselves"),
    ("zmqbench thr -s 1M --copy true false --until decided", "rounds until zero-copy is called"),
    ("zmqbench plan --noise 3%", "how many rounds a 5% or 2x difference needs"),
    ("zmqbench system", "what this host does to a figure's stability, and what to do"),
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
        if PYTHON in kind.params.fields():
            flags, kwargs = FAIL_ON_OPTION
            help_text = f"with --python BASE CANDIDATE: {kwargs['help']}"
            sub.add_argument(*flags, **{**kwargs, "help": help_text})
        _output_options(sub)
    add_result_commands(commands)
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
    sub.add_argument(*APPEND_OPTION[0], **APPEND_OPTION[1])


def _check_outputs(args: argparse.Namespace, benchmark: str) -> None:
    """Refuse, before measuring, what could only fail or lose a saved file after it."""
    if args.append and args.replace:
        msg = "--append adds to a file that exists, --replace overwrites it: give one"
        raise ValueError(msg)
    if args.append and not (args.json or args.csv):
        msg = "--append adds this run to the file given with --json or --csv: give one"
        raise ValueError(msg)
    for kind in ("json", "csv", "svg", "png"):
        check_output_path(getattr(args, kind), kind)
    check_not_replaced(args.json, "--json", args.append, args.replace)
    check_not_replaced(args.csv, "--csv", args.append, args.replace)
    if args.append and args.json and Path(args.json).exists():
        try:
            saved = load(args.json)  # a file that is no result is refused here
        except OSError as exc:
            raise ValueError(str(exc)) from None
        if saved.benchmark != benchmark:
            msg = (
                f"--append {args.json}: the file holds {saved.benchmark} runs, this is a "
                f"{benchmark} run; give another --json file"
            )
            raise ValueError(msg)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    others = {
        "compare": compare_command,
        "show": show_command,
        "history": history_command,
        "peer": _peer,
        "noise": noise_command,
        "plan": plan_command,
        "env": env_command,
        "system": system_command,
    }
    if args.benchmark in others:
        return others[args.benchmark](parser, args)
    kind = KINDS[args.benchmark]
    params_class, measure = kind.params, _runner(kind)
    status = 0
    try:
        params = params_from_options(params_class, vars(args))
        fail_on = getattr(args, "fail_on", [])
        if fail_on:
            _check_gated(params)
        _check_outputs(args, kind.name)
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
    output = output_of(args)
    try:
        present(result, output, draw=None)
    except OSError as exc:  # a file made, or a folder removed, while the run ran
        print(f"zmqbench: {exc}", file=sys.stderr)
        return 2
    if fail_on and status == 0:  # an interrupted run is no pass
        baseline, candidate = python_arms(result)
        failed = gate(result.versus("python", baseline, candidate), fail_on)
        status = report_gate(failed, fail_on, output)
    return status


def _check_gated(params: BenchParams) -> None:
    """--fail-on gates the two environments one run compared: exactly two."""
    arms = getattr(params, "python", ())
    if len(arms) != 2:
        msg = (
            f"--fail-on gates two environments measured in one run: give --python BASE "
            f"CANDIDATE (2 interpreters), got {len(arms)}; to gate two saved runs use "
            f"zmqbench compare BASE.json CAND.json --fail-on ..."
        )
        raise ValueError(msg)


def _measure(measure: Callable[..., ResultSet], params: BenchParams, quiet: bool) -> ResultSet:
    progress = None if quiet else ProgressLine(stream_writer(sys.stderr), bar=True)
    try:
        return measure(params, progress=progress)
    finally:
        if progress is not None:
            progress.close()


def _peer(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from pathlib import Path

    from .sockets.far_ends import standing
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


if __name__ == "__main__":
    sys.exit(main())
