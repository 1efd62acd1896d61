"""How far can a user trust one run? The same default sweep, three times, measured
by this version and (with ``--before REV``) by an older one, runs alternating.

For each version and benchmark it prints, over every point of the sweep:

- **deviation**: how far a run's median strays from the median of the three runs'
  medians (the largest, and the median, over points and runs);
- **contained**: how often one run's 95% interval of a point's median holds another
  run's median of that point (every ordered pair of runs);
- **same**: how often comparing one run with another (``a.compare(b)``) calls no
  difference (``same`` or ``inconclusive``, never ``faster`` or ``slower``);
  **same±10%** with ``tolerance=0.1``; **shifted**: the pairs of runs in which every
  point moved the same way by a similar ratio.

An older version's runs get the same intervals and comparisons, computed here from
its samples, so both are judged alike. The sweeps are those of ``scripts/main.sh``.

    python bench/bench_trust.py --before 79a485d     # ~10 minutes on 2 cores
    python bench/bench_trust.py --quick              # seconds; checks the script
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from report import report

from zmqbench_magic import load
from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.statistics.stats import median_ci

ROOT = Path(__file__).resolve().parent.parent
SWEEPS = {
    "thr": ["--size", "100", "1k", "8k", "64k", "256k", "1M", "--copy", "true", "false"],
    "lat": ["--size", "1", "1k", "64k", "1M", "--transport", "tcp", "ipc", "inproc"],
}
QUICK = {
    "thr": ["--size", "100", "1k", "--count", "2000", "-r", "3", "--warmup", "0"],
    "lat": ["--size", "1", "--count", "200", "-r", "3", "--warmup", "0"],
}
HEADLINE = {"thr": "msgs_per_s", "lat": "sample_mean_us"}


def run_once(python: str, source: Path, benchmark: str, options: list[str], out: Path) -> ResultSet:
    """One run of ``zmqbench`` from the package in ``source``, saved and read back."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    subprocess.run(
        [python, "-m", "zmqbench_magic.cli", benchmark, *options, "-q", "--json", str(out)],
        # Not from the checkout: ``-m`` puts the working directory first on sys.path.
        check=True,
        env=env,
        timeout=1800,
        cwd=out.parent,
    )
    return load(out)


def _interpreter_without_this_checkout(folder: Path) -> str:
    """A Python that has this environment's packages but not this checkout's editable
    install: that install's import hook would win over PYTHONPATH, and an older
    version would silently run this one's code. A bare venv whose ``.pth`` lists this
    environment's site-packages as a plain path (its own ``.pth`` files, the editable
    hook among them, are then not run)."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    target = next((venv / "lib").glob("python*/site-packages"))
    (target / "environment.pth").write_text(site + "\n")
    return str(venv / "bin" / "python")


def _point_values(result: ResultSet, metric: str) -> dict[tuple, list[float]]:
    df = result.df
    by = [c for c in result.point_columns if c in df.columns]
    return {
        key if isinstance(key, tuple) else (key,): group[metric].dropna().tolist()
        for key, group in df.groupby(by, sort=True)
    }


def judge(runs: list[ResultSet], metric: str) -> dict[str, float]:
    """The three figures of the module docstring, for one version's runs."""
    values = [_point_values(r, metric) for r in runs]
    points = sorted(set.intersection(*(set(v) for v in values)))
    deviations, contained, total = [], 0, 0
    for point in points:
        medians = [statistics.median(v[point]) for v in values]
        center = statistics.median(medians)
        deviations += [abs(m - center) / center for m in medians]
        for i, j in itertools.permutations(range(len(runs)), 2):
            low, high, _ = median_ci(values[i][point])
            contained += low <= medians[j] <= high
            total += 1
    pairs = [
        (a.compare(b, metric=metric), a.compare(b, metric=metric, tolerance=0.1))
        for a, b in itertools.combinations(runs, 2)
    ]
    calls = ["faster", "slower"]  # a difference called: anything else is not one
    same = [(~strict["verdict"].isin(calls)).mean() for strict, _ in pairs if not strict.empty]
    lenient = [(~loose["verdict"].isin(calls)).mean() for _, loose in pairs if not loose.empty]
    return {
        "same within 10%": statistics.mean(lenient) if lenient else float("nan"),
        "shifted pairs": sum(bool(strict.attrs.get("shift")) for strict, _ in pairs),
        "largest deviation": max(deviations),
        "median deviation": statistics.median(deviations),
        "contained": contained / total,
        "same": statistics.mean(same) if same else float("nan"),
        "points": len(points),
        "samples per point": statistics.median(len(v[p]) for v in values for p in points),
    }


def _worktree(revision: str, folder: Path) -> Path:
    target = folder / "before"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), revision],
        check=True,
        capture_output=True,
    )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also measure this git revision")
    parser.add_argument("--runs", type=int, default=3, help="runs per version (3)")
    parser.add_argument("--quick", action="store_true", help="tiny sweeps; checks the script")
    args = parser.parse_args(argv)
    sweeps = QUICK if args.quick else SWEEPS
    with tempfile.TemporaryDirectory(prefix="zmqbench-trust-") as scratch:
        folder = Path(scratch)
        sources = {"after": (sys.executable, ROOT)}
        if args.before:
            before = (_interpreter_without_this_checkout(folder), _worktree(args.before, folder))
            sources = {"before": before, **sources}
        try:
            print_table(sources, sweeps, args.runs, folder)
        finally:
            if args.before:
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(ROOT),
                        "worktree",
                        "remove",
                        "--force",
                        str(sources["before"][1]),
                    ],
                    check=False,
                    capture_output=True,
                )
    return 0


def print_table(
    sources: dict[str, tuple[str, Path]], sweeps: dict[str, list[str]], runs: int, folder: Path
) -> None:
    print(
        f"{'benchmark':<10}{'version':<8}{'points':>7}{'n':>4}{'largest dev':>13}"
        f"{'median dev':>12}{'contained':>11}{'same':>7}{'same±10%':>10}"
        f"{'shifted':>9}"
    )
    for benchmark, options in sweeps.items():
        results: dict[str, list[ResultSet]] = {name: [] for name in sources}
        for number in range(runs):  # alternating: before, after, before, after...
            for name, (python, source) in sources.items():
                out = folder / f"{benchmark}-{name}-{number}.json"
                results[name].append(run_once(python, source, benchmark, options, out))
        for name, version_runs in results.items():
            figures = judge(version_runs, HEADLINE[benchmark])
            print(
                f"{benchmark:<10}{name:<8}{figures['points']:>7}"
                f"{figures['samples per point']:>4.0f}{figures['largest deviation']:>13.1%}"
                f"{figures['median deviation']:>12.1%}{figures['contained']:>11.0%}"
                f"{figures['same']:>7.0%}{figures['same within 10%']:>10.0%}"
                f"{figures['shifted pairs']:>6}/{runs * (runs - 1) // 2}"
            )


if __name__ == "__main__":
    with report("trust"):
        status = main()
    sys.exit(status)
