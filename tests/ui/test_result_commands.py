"""``zmqbench compare --fail-on``, ``zmqbench thr --python A B --fail-on`` and ``zmqbench
show``, run as a CI job runs them: the exit status is the gate, stdout what a pull
request's comment shows (``--markdown``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY

from zmqbench_magic.results import ResultSet
from zmqbench_magic.results.synthetic import unpaired_run

ZMQBENCH = Path(sys.executable).with_name("zmqbench")
# Two rounds of one 100 B point: a second or two a run.
QUICK = ["-s", "100", "-r", "2", "--warmup", "0", "--min-time", "0.02"]


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [str(ZMQBENCH), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_a_synthetic_run_against_itself_passes_the_gate(tmp_path):
    rng = np.random.default_rng(3)  # a pair this seed calls "same" or "inconclusive"
    base = unpaired_run(rng, 1.0, points=3).save(tmp_path / "base.json")
    cand = unpaired_run(rng, 1.0, points=3).save(tmp_path / "cand.json")
    done = _run("compare", base, cand, "--fail-on", "slower", "faster")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "gate --fail-on slower faster: passed"
    # Without --fail-on, as before: 0 whatever the verdicts, and no gate line.
    slower = unpaired_run(rng, 0.8, points=3).save(tmp_path / "slower.json")
    done = _run("compare", base, slower)
    assert done.returncode == 0 and "gate" not in done.stdout


def test_a_table_is_not_written_over_a_saved_file_unless_told(tmp_path):
    rng = np.random.default_rng(3)
    base = unpaired_run(rng, 1.0, points=3).save(tmp_path / "base.json")
    cand = unpaired_run(rng, 1.0, points=3).save(tmp_path / "cand.json")
    saved = cand.read_bytes()
    done = _run("compare", base, cand, "--json", cand)
    assert done.returncode == 2
    assert f"--json {cand}: the file exists; add --replace to overwrite it" in done.stderr
    assert cand.read_bytes() == saved
    done = _run("history", tmp_path, "--csv", base)
    assert done.returncode == 2 and "must end in .csv, not .json" in done.stderr
    done = _run("show", cand, "--svg", tmp_path / "c.png")
    assert done.returncode == 2 and "must end in .svg, not .png (--png writes PNG)" in done.stderr
    table = tmp_path / "table.json"
    table.write_text("[]")
    assert _run("compare", base, cand, "--json", table, "--replace").returncode == 0
    assert len(json.loads(table.read_text())) == 3  # one row per point
    assert cand.read_bytes() == saved and not (tmp_path / "c.png").exists()


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_a_real_slower_pair_fails_the_gate_with_its_points(tmp_path):
    """A candidate paced at 20k msgs/s against the native loop unpaced (millions a
    second here): a real slower run, by a margin no load on a shared machine closes.
    The Python loop unpaced was once the candidate; under load its ratio to the native
    loop rose from 0.28 to 0.5 and past, because the native loop's two threads lose
    more to a busy neighbour than the Python loop does (compared on size alone, the
    one column they share)."""
    base, cand = tmp_path / "native.json", tmp_path / "paced.json"
    # Ten samples a side: a sample or two slowed by a busy neighbour still leaves the
    # rank-sum test its call (six a side needed every one apart).
    rounds = ["-s", "100", "-r", "10", "--warmup", "0", "--min-time", "0.05", "-q"]
    assert _run("thr", *rounds, "--loop", "native", "--json", base).returncode == 0
    assert _run("thr", *rounds, "--rate", "20k", "--json", cand).returncode == 0
    done = _run("compare", base, cand, "--match", "size", "--fail-on", "slower", "-q")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "gate --fail-on slower: FAILED at 1 point(s)",
        done.stdout.splitlines()[1],
    ]
    assert done.stdout.splitlines()[1].startswith("  size=100: slower, ratio 0.")
    # The same pair as Markdown: a table, then the gate in bold.
    done = _run("compare", base, cand, "--match", "size", "--fail-on", "slower", "--markdown")
    assert done.returncode == 1
    assert "| size=100 | msgs_per_s |" in done.stdout and "| **slower** |" in done.stdout
    assert "**gate --fail-on slower: FAILED at 1 point(s)**" in done.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["compare", "missing.json", "missing.json", "--fail-on", "slower"], "No such file"),
        (["compare", "a.json", "a.json", "--fail-on", "slowr"], "fail_on must be one of slower"),
        (["show", "/dev/null"], "/dev/null is not a zmqbench result file (not JSON: "),
        (["thr", *QUICK, "--fail-on", "slower"], "give --python BASE CANDIDATE"),
    ],
)
def test_bad_gate_input_exits_2_naming_it(args, words):
    done = _run(*args)
    assert done.returncode == 2 and words in done.stderr, done.stderr


@pytest.mark.slow  # a real sweep of several seconds: in the full run, not the inner loop
def test_an_interleaved_pair_of_environments_is_gated_by_its_own_verdict(tmp_path):
    """Two rounds cannot call anything (the smallest p-value 2 pairs give is 0.5), so
    the verdict is known: inconclusive. The gate follows it, whatever the figures."""
    python = f"a={sys.executable}", f"b={sys.executable}"
    passed = _run("thr", *QUICK, "--python", *python, "--fail-on", "slower", "any")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "python b vs a, msgs_per_s paired by round" in passed.stdout  # a is the baseline
    assert passed.stdout.splitlines()[-1] == "gate --fail-on slower any: passed"
    failed = _run("thr", *QUICK, "--python", *python, "--fail-on", "inconclusive", "-q")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.splitlines()[1].startswith("  size=100: inconclusive, ratio ")


def test_show_prints_a_saved_run_as_it_was_printed(tmp_path):
    saved = tmp_path / "r.json"
    tiny = ["-n", str(TINY["count"]), "-r", str(TINY["repeat"]), "--warmup", "0"]
    run = _run("lat", "-s", "1", "1k", *tiny, "--json", saved)
    assert run.returncode == 0, run.stderr
    shown = _run("show", saved)
    assert shown.returncode == 0 and shown.stdout == run.stdout
    markdown = _run("show", saved, "--markdown")
    lines = markdown.stdout.splitlines()
    assert lines[0].startswith("**REQ/REP round-trip latency** on ")
    assert "| point | figures |" in lines and sum(line.startswith("| tcp ") for line in lines) == 2
    assert _run("show", tmp_path / "none.json").returncode == 2


def test_history_of_a_folder_names_the_run_where_a_figure_stepped(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    rng = np.random.default_rng(6)
    for i in range(10):  # 1k is 8% slower from the 7th run on
        result = unpaired_run(rng, 0.92 if i >= 6 else 1.0, n=6, points=1)
        meta = {"run": f"night-{i}", "run_id": f"id-{i}", "date": f"2026-11-{i + 1:02d}T03:00"}
        rows = tuple({**row, "run": f"night-{i}"} for row in result.rows)
        type(result)("thr", rows, metadata=meta).save(runs / f"night-{i}.json")
    done = _run(
        "history",
        runs,
        "--tolerance",
        "2%",
        "--json",
        tmp_path / "h.json",
        "--svg",
        tmp_path / "h.svg",
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("16 B: 10 runs (2026-11-01 to 2026-11-10), last ")
    assert "; step at run night-6 (2026-11-07): " in first, first
    saved = json.loads((tmp_path / "h.json").read_text())
    assert len(saved["series"]) == 10 and saved["steps"][0]["run"] == "night-6"
    assert (tmp_path / "h.svg").read_text().lstrip().startswith("<svg")
    markdown = _run("history", runs, "--markdown").stdout
    assert markdown.startswith("```text\n16 B: 10 runs") and markdown.rstrip().endswith("```")
    lonely = _run("history", runs / "night-0.json")
    assert lonely.returncode == 2 and "a history needs at least 2 runs, got 1" in lonely.stderr


def test_a_run_that_loses_more_messages_fails_the_slower_gate(tmp_path):
    # lost is declared lower-is-better once, with the patterns' metrics: compare reads
    # its direction there, so more messages lost is "slower", never "higher".
    rng = np.random.default_rng(5)

    def run(lost: float) -> ResultSet:
        rows = [
            {
                "size": 100,
                "copy": True,
                "transport": "tcp",
                "peer": "process",
                "copy_threshold": 65536,
                "pattern": "pubsub",
                "peers": 4,
                "sample": i,
                "msgs_per_s": 1000.0,
                "lost": lost * value,
            }
            for i, value in enumerate(rng.lognormal(0, 0.05, 10))
        ]
        return ResultSet("thr", tuple(rows))

    base = run(100.0).save(tmp_path / "base.json")
    worse = run(400.0).save(tmp_path / "worse.json")
    done = _run("compare", base, worse, "--metric", "lost", "--fail-on", "slower")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "slower" in done.stdout and "higher" not in done.stdout
    assert _run("compare", worse, base, "--metric", "lost", "--fail-on", "slower").returncode == 0
