"""``zmqbench thr|lat``: the console script, run as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import zmqbench_magic
from zmqbench_magic.ui.present import NO_CHART_HERE

# The console script pip installed beside this interpreter (not whatever is on PATH).
ZMQBENCH = Path(sys.executable).with_name("zmqbench")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    assert ZMQBENCH.exists(), f"{ZMQBENCH} missing: install the package with pip install -e ."
    return subprocess.run([str(ZMQBENCH), *args], capture_output=True, text=True, timeout=120)


def test_throughput_summary_and_files(tmp_path):
    json_path, csv_path, svg_path = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.svg"
    done = _run(
        "thr",
        "-n",
        "200",
        "-r",
        "2",
        "--warmup",
        "0",
        "--size",
        "100",
        "1k",
        "--transport",
        "tcp",
        "inproc",
        "--json",
        str(json_path),
        "--csv",
        str(csv_path),
        "--svg",
        str(svg_path),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("msgs/s delivered") == 4
    result = zmqbench_magic.load(json_path)
    assert len(result.df) == 8
    assert len(pd.read_csv(csv_path)) == 8
    assert svg_path.read_text().lstrip().startswith("<svg")
    assert "to save the chart" not in done.stderr  # it was saved


@pytest.mark.slow  # real sockets through the shell or a panel, several seconds: the full run
def test_without_a_chart_file_one_line_says_how_to_get_it_and_png_works(tmp_path):
    quick = ["lat", "-n", "100", "-r", "2", "--warmup", "0", "--size", "1"]
    done = _run(*quick)
    assert done.returncode == 0, done.stderr
    assert NO_CHART_HERE in done.stderr
    assert "object>" not in done.stdout + done.stderr
    png = tmp_path / "lat.png"
    done = _run(*quick, "--png", str(png))
    assert done.returncode == 0, done.stderr
    assert png.read_bytes().startswith(b"\x89PNG")
    done = _run(*quick, "--png", str(tmp_path / "nowhere" / "lat.png"))
    assert done.returncode == 2 and "no folder" in done.stderr


def test_latency_quiet_json(tmp_path):
    done = _run(
        "lat", "-q", "-n", "100", "-r", "2", "--size", "1", "--json", str(tmp_path / "l.json")
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert set(zmqbench_magic.load(tmp_path / "l.json").df["benchmark"]) == {"lat"}


# One round of one point: the smallest run the CLI takes.
ONE_ROUND = ["thr", "-q", "-n", "200", "-r", "1", "--warmup", "0", "--size", "100"]


@pytest.mark.slow  # real sockets through the shell or a panel, several seconds: the full run
def test_a_second_json_onto_a_saved_run_keeps_it_unless_told(tmp_path):
    saved, rows = tmp_path / "run.json", tmp_path / "run.csv"
    done = _run(*ONE_ROUND, "--json", str(saved), "--csv", str(rows))
    assert done.returncode == 0, done.stderr
    first_json, first_csv = saved.read_bytes(), rows.read_bytes()
    (first,) = zmqbench_magic.load(saved).runs.values()

    again = _run(*ONE_ROUND, "--json", str(saved))
    assert again.returncode == 2
    assert f"--json {saved}: the file exists; add --append" in again.stderr
    assert "or --replace to overwrite it" in again.stderr
    again = _run(*ONE_ROUND, "--csv", str(rows))
    assert again.returncode == 2 and f"--csv {rows}: the file exists" in again.stderr
    assert saved.read_bytes() == first_json and rows.read_bytes() == first_csv

    appended = _run(*ONE_ROUND, "--json", str(saved), "--csv", str(rows), "--append")
    assert appended.returncode == 0, appended.stderr
    both = zmqbench_magic.load(saved)
    assert len(both.runs) == 2 and first["run_id"] in {r["run_id"] for r in both.runs.values()}
    assert len(both.df) == 2 and both.df["run"].nunique() == 2
    csv = pd.read_csv(rows)
    assert len(csv) == 2 and rows.read_bytes().startswith(first_csv)  # its rows kept

    replaced = _run(*ONE_ROUND, "--json", str(saved), "--replace")
    assert replaced.returncode == 0, replaced.stderr
    (only,) = zmqbench_magic.load(saved).runs.values()
    assert only["run_id"] not in {r["run_id"] for r in both.runs.values()}
    # A chart holds no data of its own: it is drawn again, and the line says so.
    chart = tmp_path / "run.svg"
    chart.write_text("a chart of an earlier run")
    drawn = _run(*[a for a in ONE_ROUND if a != "-q"], "--svg", str(chart))
    assert drawn.returncode == 0, drawn.stderr
    assert f"chart saved to {chart} (it replaced the one there)" in drawn.stdout
    assert chart.read_text().lstrip().startswith("<svg")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--svg", "pic.png"], ["--svg", "pic.png", "must end in .svg, not .png", "--png"]),
        (["--png", "pic.svg"], ["--png", "pic.svg", "must end in .png, not .svg", "--svg"]),
        (["--json", "run.csv"], ["--json", "run.csv", "must end in .json, not .csv"]),
        (["--csv", "rows"], ["--csv", "rows", "must end in .csv"]),
        (["--append"], ["--append adds this run to the file given with --json or --csv"]),
        (["--json", "r.json", "--append", "--replace"], ["give one"]),
    ],
)
def test_an_output_its_option_cannot_write_is_refused_before_the_run(tmp_path, args, words):
    done = subprocess.run(
        [str(ZMQBENCH), *ONE_ROUND, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2
    for word in words:
        assert word in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing measured, nothing written


def test_append_refuses_a_file_of_another_benchmark(tmp_path):
    saved = tmp_path / "lat.json"
    done = _run("lat", "-q", "-n", "100", "-r", "1", "--size", "1", "--json", str(saved))
    assert done.returncode == 0, done.stderr
    before = saved.read_bytes()
    done = _run(*ONE_ROUND, "--json", str(saved), "--append")
    assert done.returncode == 2
    assert f"--append {saved}: the file holds lat runs, this is a thr run" in done.stderr
    assert saved.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["thr", "--size", "0"], ["size must be from 1 B", "got 0 B"]),
        (["lat", "--transport", "udp"], ["transport must be one of tcp, ipc, inproc, got udp"]),
        (["thr", "-r", "0"], ["repeat must be from 1 to 1000, got 0"]),
        (["lat", "--address", "192.0.2.1", "-n", "5"], ["cannot bind tcp address"]),
        (["thr", "--transport", "inproc", "--peer", "process"], ["inproc", "peer thread"]),
    ],
)
def test_bad_input_exits_2_with_the_reason(args, words):
    done = _run(*args)
    assert done.returncode == 2
    for word in words:
        assert word in done.stderr


@pytest.mark.slow  # a real cluster
def test_flood_from_a_shell_stops_its_cluster(tmp_path):
    from conftest import cluster_processes

    done = _run(
        "flood",
        "-n",
        "8",
        "-e",
        "1",
        "-r",
        "1",
        "--warmup",
        "0",
        "--json",
        str(tmp_path / "f.json"),
    )
    assert done.returncode == 0, done.stderr
    assert "tasks/s" in done.stdout and "note: started a leastload cluster" in done.stdout
    assert set(zmqbench_magic.load(tmp_path / "f.json").df["test"]) == {"flood"}
    assert cluster_processes() == []


# A run the progress line shows in: past its first second on any machine, however fast.
# Each round trip waits 10 ms idle first, so each of the 12 samples of 20 lasts 0.2 s or
# more, and samples 6 to 12 begin after the first second (a busy machine only adds).
LONG_RUN = ["lat", "--size", "1", "--count", "20", "--idle", "10ms", "--warmup", "0", "-r", "12"]


@pytest.mark.slow  # real sockets through the shell or a panel, several seconds: the full run
def test_progress_in_a_log_is_a_few_plain_lines(tmp_path):
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        done = subprocess.run(
            [str(ZMQBENCH), *LONG_RUN], stdout=subprocess.PIPE, stderr=stderr, timeout=120
        )
    assert done.returncode == 0
    text = log.read_text()
    assert "\r" not in text
    lines = [line for line in text.splitlines() if "of 12 samples, about" in line]
    assert 1 <= len(lines) <= 4, text  # once it has run a second, then each quarter


@pytest.mark.slow  # real sockets through the shell or a panel, several seconds: the full run
def test_progress_on_a_terminal_is_one_line_redrawn_in_place():
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(ZMQBENCH), *LONG_RUN], stdout=subprocess.DEVNULL, stderr=follower
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=120) == 0
    finally:
        os.close(leader)
    text = b"".join(chunks).decode()
    assert "\r[" in text and "of 12 samples, about" in text
    assert text.count("\n") <= 2  # drawn over itself, not line after line


# What a person reads in a terminal fits 100 columns: an 80-120 column terminal wraps
# nothing mid-number.
_COLUMNS = 100


@pytest.mark.parametrize("command", ["thr", "lat", pytest.param("flood", marks=pytest.mark.slow)])
def test_every_line_at_default_options_fits_100_columns(command):
    done = subprocess.run([str(ZMQBENCH), command], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines, "nothing printed"
    # Every result line, its notes, advice and warnings (stderr: the progress line).
    too_long = [line for line in lines + done.stderr.splitlines() if len(line) > _COLUMNS]
    assert too_long == [], "\n".join(too_long)
    headline = {"thr": "msgs/s delivered", "lat": "µs", "flood": "tasks/s"}[command]
    assert any(headline in line for line in lines), done.stdout
    assert "n/a" not in done.stdout, "a figure nobody measured is left out, with a word why"


def test_help_ends_with_examples_that_each_parse():
    from zmqbench_magic.cli import EXAMPLES, build_parser

    done = _run("--help")
    assert done.returncode == 0
    assert "examples:" in done.stdout
    parser = build_parser()
    for command, words in EXAMPLES:
        assert command in done.stdout and words in done.stdout
        argv = command.split()[1:]
        if "--help" not in argv:
            parser.parse_args(argv)  # exits (status 2) if an example went stale
