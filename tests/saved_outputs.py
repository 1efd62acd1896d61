"""What the package prints, writes and draws for real saved runs, as exact text.

:func:`outputs` loads every result file in ``tests/data/saved_runs/`` (real runs, real
sockets and a real cluster, saved with the package's own ``--json``; the commands are
in that folder's ``README.md``) and renders each through the package's public
functions only: the printed summary (``str``), the summary and the samples as CSV, the
file the result saves again, the Markdown report, the default chart's Vega-Lite spec,
``zmqbench show`` (plain and ``--markdown``), a paired run's ``versus`` table and
verdict lines, a flood's advice, a latency run's pooled histogram; then the
comparisons of two saved runs (``zmqbench compare``, ``ResultSet.compare``, its chart)
and their history (``zmqbench history``).

Each run file, and the comparisons, are rendered in a fresh Python process of their
own: altair names a chart's parameters and views from a counter that lives as long as
the process (``param_1``, ``view_2``), so a spec's names depend on what the process drew
before it. The child processes import the same ``zmqbench_magic`` as this one (its
folder first on their ``PYTHONPATH``), so the package under test is whichever this
process imported. Their noise floor store (``$ZMQBENCH_NOISE_FILE``) is a file that does
not exist: a comparison's default tolerance is the host's measured noise floor where
one is stored (``zmqbench noise``), which is this machine's state, not the saved runs'.

``python -m tests.saved_outputs --write`` writes the goldens to
``tests/data/saved_runs/outputs/`` (every file there is replaced); ``--write DIR``
elsewhere; ``--check`` diffs the outputs against the goldens and exits 1 on a
difference.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

RUNS_DIR = Path(__file__).resolve().parent / "data" / "saved_runs"
GOLDEN_DIR = RUNS_DIR / "outputs"

# Comparisons of two saved runs: output name -> (baseline, candidate), file stems.
COMPARISONS = {
    # The same sweep run twice: same or inconclusive, unpaired.
    "compare_thr": ("thr_a", "thr_b"),
    # Another sweep against it: the shared points only, and what else the runs differ in.
    "compare_thr_copy": ("thr_a", "thr_copy"),
}
# Histories: output name -> the runs, in order.
HISTORIES = {"history_thr": ("thr_a", "thr_b")}
# Two-arm parameters whose paired table a run gets when it measured both arms.
ARMS = (("copy", True, False),)


def _text(lines: list[str] | str) -> str:
    """Lines as a file holds them: joined, with a final newline."""
    text = lines if isinstance(lines, str) else "\n".join(lines)
    return text + "\n"


def _spec(chart: Any) -> str:
    """A chart's Vega-Lite spec, keys sorted."""
    return json.dumps(chart.to_dict(), indent=1, sort_keys=True) + "\n"


def _cli(argv: list[str]) -> str:
    """What ``zmqbench ARGV`` prints on stdout (its exit status must be 0)."""
    from zmqbench_magic.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(argv)
    if status:
        msg = f"zmqbench {' '.join(argv)} exited {status}"
        raise RuntimeError(msg)
    return out.getvalue()


def _run_outputs(path: Path) -> dict[str, str]:
    """Every output of one saved run, named ``<stem>.<what>``."""
    from zmqbench_magic import load
    from zmqbench_magic.charts import default_chart
    from zmqbench_magic.results.words.markdown import comparison_markdown, result_markdown
    from zmqbench_magic.results.words.text import comparison_lines, verdict_lines

    result = load(path)
    done = {
        "summary.txt": _text(str(result)),
        "summary.csv": result.summary().to_csv(index=False),
        "samples.csv": result.df.to_csv(index=False),
        "md": _text(result_markdown(result)),
        "chart.json": _spec(default_chart(result.benchmark, result.df, result.distributions)),
        "show.txt": _cli(["show", str(path)]),
        "show.md": _cli(["show", str(path), "--markdown"]),
    }
    with tempfile.TemporaryDirectory() as folder:
        done["json"] = result.save(Path(folder) / path.name).read_text()
    df = result.df
    for column, baseline, candidate in ARMS:
        if column in df.columns and {baseline, candidate} <= set(df[column]):
            table = result.versus(column, baseline, candidate)
            done[f"versus_{column}.txt"] = _text(comparison_lines(table))
            done[f"versus_{column}.md"] = _text(comparison_markdown(table))
            done[f"versus_{column}.csv"] = table.to_csv(index=False)
            done["verdict.txt"] = _text(verdict_lines(result))
    if result.advice():
        done["advice.txt"] = _text(result.advice())
    if result.distributions:
        done["histogram.json"] = json.dumps(result.histogram({}).to_json(), indent=1) + "\n"
    return {f"{path.stem}.{what}": text for what, text in done.items()}


def _comparison_outputs(runs_dir: Path) -> dict[str, str]:
    """The comparisons and histories of saved runs, and two runs joined as one."""
    from zmqbench_magic import load
    from zmqbench_magic.charts import comparison_chart, history_chart

    def file(stem: str) -> str:
        return str(runs_dir / f"{stem}.json")

    done: dict[str, str] = {}
    for name, (baseline, candidate) in COMPARISONS.items():
        done[f"{name}.verdict.txt"] = _cli(["compare", file(baseline), file(candidate)])
        done[f"{name}.md"] = _cli(["compare", file(baseline), file(candidate), "--markdown"])
        table = load(file(baseline)).compare(load(file(candidate)))
        done[f"{name}.csv"] = table.to_csv(index=False)
        done[f"{name}.chart.json"] = _spec(comparison_chart(table))
    for name, stems in HISTORIES.items():
        with tempfile.TemporaryDirectory() as folder:
            saved = Path(folder) / "history.json"
            done[f"{name}.txt"] = _cli(["history", *map(file, stems), "--json", str(saved)])
            done[f"{name}.json"] = saved.read_text()
        joined = load(file(stems[0]))
        for stem in stems[1:]:
            joined = joined + load(file(stem))
        done[f"{name}.chart.json"] = _spec(history_chart(*joined.history()))
        done[f"{name}.joined.summary.txt"] = _text(str(joined))
    return done


def _child_env(empty: str) -> dict[str, str]:
    """A child's environment: this process's ``zmqbench_magic`` first on its path, and
    no stored noise floor (its store a file that does not exist, in the folder
    ``empty``)."""
    import zmqbench_magic

    root = str(Path(zmqbench_magic.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    env["ZMQBENCH_NOISE_FILE"] = os.path.join(empty, "noise.json")
    return env


def _in_child(args: list[str], env: Mapping[str, str]) -> dict[str, str]:
    """The outputs a fresh process renders (``--child ARGS``)."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "outputs.json"
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", *args, str(target)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            msg = f"rendering {args} failed ({done.returncode}):\n{done.stderr}"
            raise RuntimeError(msg)
        return json.loads(target.read_text())


def outputs(runs_dir: Path = RUNS_DIR) -> dict[str, str]:
    """Every output of the saved runs in ``runs_dir``, by name, each rendered in a
    fresh process: ``{"thr_copy.summary.txt": "...", ...}``."""
    jobs = [["run", str(path)] for path in sorted(runs_dir.glob("*.json"))]
    jobs.append(["comparisons", str(runs_dir)])
    with tempfile.TemporaryDirectory() as empty, ThreadPoolExecutor(os.cpu_count()) as pool:
        env = _child_env(empty)
        parts = list(pool.map(lambda job: _in_child(job, env), jobs))
    return {name: text for part in parts for name, text in sorted(part.items())}


def differences(rendered: Mapping[str, str], golden_dir: Path = GOLDEN_DIR) -> list[str]:
    """A unified diff per output that differs from its golden, and a line per output
    missing on either side."""
    goldens = {p.name: p.read_bytes() for p in sorted(golden_dir.iterdir())}
    found = [f"no golden for {name}" for name in sorted(set(rendered) - set(goldens))]
    found += [f"not rendered: {name}" for name in sorted(set(goldens) - set(rendered))]
    for name in sorted(set(rendered) & set(goldens)):
        if rendered[name].encode() != goldens[name]:
            found.append(diff(name, goldens[name].decode(), rendered[name]))
    return found


def diff(name: str, golden: str, rendered: str) -> str:
    """``golden`` against ``rendered`` as a unified diff."""
    lines = difflib.unified_diff(
        golden.splitlines(keepends=True),
        rendered.splitlines(keepends=True),
        f"golden/{name}",
        f"rendered/{name}",
    )
    return "".join(lines)


def write(rendered: Mapping[str, str], folder: Path) -> None:
    """Replace every file in ``folder`` with the outputs."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, text in rendered.items():
        (folder / name).write_bytes(text.encode())


def _child(what: str, source: str, target: str) -> None:
    render: Callable[[Path], dict[str, str]] = (
        _run_outputs if what == "run" else _comparison_outputs
    )
    Path(target).write_text(json.dumps(render(Path(source))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", nargs="?", const=str(GOLDEN_DIR), metavar="DIR")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    import zmqbench_magic

    print(f"zmqbench_magic from {Path(zmqbench_magic.__file__).parent}", file=sys.stderr)
    rendered = outputs()
    if args.write:
        write(rendered, Path(args.write))
        print(f"{len(rendered)} outputs written to {args.write}", file=sys.stderr)
    if args.check:
        found = differences(rendered)
        print("\n".join(found) or f"all {len(rendered)} outputs match", file=sys.stderr)
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
