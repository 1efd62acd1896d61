"""The documentation: the README stays a landing page, the site builds offline with
warnings as errors, its references cover every column a run makes, its benchmark
tables are the bench scripts' own, nothing speaks of how the project's work is
organised, and the built site works in a real browser with no network."""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from zmqbench_magic import load, run_latency, run_taskflood, run_throughput
from zmqbench_magic.params import BENCHMARKS, FLOOD_METRICS, LAT_METRICS, THR_METRICS
from zmqbench_magic.params.columns import SAMPLE_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM = "/usr/bin/chromium"

# Words that name the project's own process, or files beside the checkout. Other
# projects' issues are cited as "libzmq #4660" or "libzmq issue #4660", which stays
# allowed.
_SIBLINGS = sorted(p.name for p in ROOT.parent.iterdir() if p.is_dir() and p != ROOT)
INTERNAL = re.compile(
    r"(?<!libzmq )(?<!pyzmq )(?<!ipyparallel )(?<!altair )\bissues? #?\d+"
    r"|\b(?:FACTS|DESIGN|STYLE)\.md\b|\b(?:some|this) sessions?\b"
    + "".join(f"|\\.\\./{re.escape(name)}/" for name in _SIBLINGS),
    re.IGNORECASE,
)


def _project_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    suffixes = {".py", ".md", ".ipynb", ".sh", ".toml", ".c", ".txt", ".cfg", ".yml", ""}
    return [ROOT / name for name in listed if Path(name).suffix in suffixes]


def test_nothing_names_the_projects_internal_process():
    found = []
    for path in _project_text_files():
        if not path.is_file() or path.is_symlink() or path == Path(__file__):
            continue
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    assert not found, found


def test_the_pattern_catches_what_it_is_for():
    assert INTERNAL.search("against issue 7's targets")
    assert INTERNAL.search("the machine that some sessions get")
    assert not INTERNAL.search("libzmq issue #4660 and ipyparallel #534")


def test_the_readme_is_a_landing_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    # Its two set-up commands, and the test commands CI runs.
    assert "bash scripts/main.sh" in readme and "bash scripts/test.sh" in readme
    assert "bash scripts/test.sh examples" in readme
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "bash scripts/test.sh" in ci and "exec bash scripts/test.sh examples" in ci
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        assert (ROOT / target).exists(), target


def _documented(benchmark: str) -> set[str]:
    metrics = {"thr": THR_METRICS, "lat": LAT_METRICS, "flood": FLOOD_METRICS}[benchmark]
    return (
        {p.name for p in BENCHMARKS[benchmark].fields() if p.sweep}
        | {m.name for m in metrics}
        | {c.name for c in (*SAMPLE_COLUMNS, *BENCHMARKS[benchmark].columns)}
    )


def test_every_column_of_a_real_run_is_in_the_generated_reference():
    tiny = {"repeat": 1, "count": 50, "warmup": 0}
    runs = {
        "thr": run_throughput(size=64, **tiny),
        "lat": run_latency(size=64, **tiny),
        "flood": run_taskflood(backend="processpool", tasks=4, engines=1, repeat=1, warmup=0),
    }
    for benchmark, result in runs.items():
        missing = set(result.df.columns) - _documented(benchmark)
        assert not missing, f"{benchmark}: undocumented columns {sorted(missing)}"


def test_the_columns_page_states_the_format_the_code_writes():
    from zmqbench_magic.results import FORMAT_VERSION

    page = (DOCS / "reference" / "columns.md").read_text()
    stated = re.findall(r"\(format (\d+)\)", page)
    assert stated == [str(FORMAT_VERSION)], stated


def _pages() -> list[Path]:
    """The README and every page of the site written in Markdown."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


# A module or test file named by its path: from the root (``zmqbench_magic/...``,
# ``tests/...``, ``bench/...``), or within the package or the tests
# (``results/words/text.py``, ``sockets/test_paced.py``).
_PATH = re.compile(
    r"(?<![\w/.])(?:zmqbench_magic/|tests/|bench/)?"
    r"(?:kinds|params|sockets|results|parallel|charts|method|panels|ui|bench|tests)/[\w/]*\w\.py\b"
)
_MODULE = re.compile(r"\bzmqbench_magic(?:\.[A-Za-z_]\w*)+")


def _resolves(dotted: str) -> bool:
    """``zmqbench_magic.a.b.name``: a module of the package, or a name in one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_module_the_pages_name_exists():
    """The changelog names old paths on purpose; the README and the site name only
    modules, files and names the package and its tests have now."""
    missing = []
    for page in _pages():
        text = page.read_text()
        for path in sorted(set(_PATH.findall(text))):
            places = [ROOT / path, ROOT / "zmqbench_magic" / path, ROOT / "tests" / path]
            if not any(place.is_file() for place in places):
                missing.append(f"{page.relative_to(ROOT)}: {path}")
        for dotted in sorted(set(_MODULE.findall(text))):
            if not _resolves(dotted):
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert not missing, missing


def test_the_module_check_catches_what_it_is_for():
    assert _PATH.findall("see `results/unlike.py` and zmqbench_magic/sockets/far_ends/peer.py") == [
        "results/unlike.py",
        "zmqbench_magic/sockets/far_ends/peer.py",
    ]
    assert _resolves("zmqbench_magic.results.statistics.knee.load_knees")
    assert not _resolves("zmqbench_magic.results.unlike")
    assert not _resolves("zmqbench_magic.results.statistics.knee.no_such_name")


def test_no_shell_example_names_a_kernel():
    """``--python kernel`` is the kernel's own interpreter, in a notebook; a shell has
    no kernel, so its examples name interpreters by their paths."""
    found = []
    for page in _pages():
        for block in re.findall(r"```(?:bash|console|sh)\n(.*?)```", page.read_text(), re.DOTALL):
            found += [
                f"{page.name}: {line}" for line in block.splitlines() if "--python kernel" in line
            ]
    assert not found, found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from scratch with warnings as errors, as the test command does."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.mark.slow  # sphinx builds the whole site
def test_the_site_builds_with_its_generated_references(site):
    parameters = (site / "reference" / "parameters.html").read_text()
    for param in BENCHMARKS["thr"].fields():
        assert param.option in parameters, param.option
    columns = (site / "reference" / "columns.html").read_text()
    assert "msgs_per_s" in columns and "order_seed" in columns
    for notebook in sorted((ROOT / "examples").glob("*.ipynb")):
        assert (site / "examples" / f"{notebook.stem}.html").is_file(), notebook.name


def test_every_benchmark_table_was_written_by_its_bench_script():
    pages = "".join(path.read_text() for path in DOCS.glob("*.md"))
    included = re.findall(r"```\{include\} (benchmarks/\w+\.md)", pages)
    assert len(included) >= 9 and "benchmarks/screenshots.md" in included  # panels.md
    for name in included:
        text = (DOCS / name).read_text()
        header = re.match(r"Written by `python (bench/\w+\.py)[^`]*` in one run", text)
        assert header, f"{name} was not written by a bench script"
        assert (ROOT / header.group(1)).is_file()
        assert re.search(r"started \d{4}-\d\d-\d\d \d\d:\d\d UTC, at commit \w+", text), name
        assert " cores, " in text and "```text\n" in text, name


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Keep the test's output to what it checks."""


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.slow  # a real browser
def test_the_site_works_offline_in_a_browser(served):
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    elsewhere: list[str] = []
    errors: list[str] = []

    def only_here(route):
        host = urllib.parse.urlparse(route.request.url).hostname
        if host == "127.0.0.1":
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", only_here)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            page.goto(f"{served}/index.html")
            assert "zmqbench_magic" in page.title()
            # Search: Sphinx's own index, run in the page.
            page.goto(f"{served}/search.html?q=zero-copy")
            results = page.locator("#search-results li")
            results.first.wait_for(timeout=30_000)
            assert results.count() >= 3
            # Every example page shows its charts, drawn from the saved outputs.
            for notebook in sorted((ROOT / "examples").glob("*.ipynb")):
                page.goto(f"{served}/examples/{notebook.stem}.html")
                charts = page.locator("div.output img, div.output svg, img[src$='.svg']")
                drawn = [
                    charts.nth(i).evaluate("e => e.getBoundingClientRect().width")
                    for i in range(charts.count())
                ]
                assert any(width > 200 for width in drawn), f"{notebook.name}: no chart"
        finally:
            browser.close()
    assert not errors, errors
    assert not elsewhere, elsewhere


def _recipe_steps() -> list[tuple[str, str]]:
    """The CI page's job: each step's name and ``run:`` script, in order."""
    import yaml

    page = (DOCS / "ci.md").read_text()
    (job,) = re.findall(r"```yaml\n(.*?)```", page, re.DOTALL)
    (gate,) = yaml.safe_load(job)["jobs"].values()
    return [(step.get("name", ""), step["run"]) for step in gate["steps"] if "run" in step]


@pytest.mark.slow  # builds an environment from wheels and runs both, interleaved
def test_the_ci_recipe_runs_here_and_its_exit_status_follows_its_verdicts(tmp_path):
    """The job's steps, as written, in one shell each: the baseline environment built
    from the wheels the test command fetched (pip reads PIP_FIND_LINKS and PIP_NO_INDEX
    from the environment, as a CI runner's pip reads its own settings), the candidate
    this test's environment (in place of the install step)."""
    import os

    wheels = ROOT / ".wheelhouse"
    assert wheels.is_dir(), "scripts/test.sh fetches .wheelhouse before the tests"
    steps = _recipe_steps()
    assert steps[0][0] == "install"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
    }
    status = {}
    for name, script in steps[1:]:
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        status[name] = done.returncode
        assert done.returncode in (0, 1), f"{name}: {done.stderr[-3000:]}"
    assert status["baseline environment"] == 0
    summary = (tmp_path / "summary.md").read_text()
    assert "| point | figures |" in summary and "pyzmq 26.4.0" in summary
    (verdicts,) = [line for line in summary.splitlines() if "python candidate vs base" in line]
    # The gate follows the printed verdicts, whichever way this machine's run went.
    slower = re.search(r"\bslower at\b", verdicts) is not None
    assert status["both environments, interleaved, gated"] == int(slower), summary
    (gate_line,) = [line for line in summary.splitlines() if line.startswith("**gate ")]
    assert gate_line.startswith("**gate --fail-on slower: " + ("FAILED" if slower else "passed"))
    assert (tmp_path / "step-summary.md").read_text() == summary
    assert load(tmp_path / "ab.json").df["python"].nunique() == 2


_COUNTS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
_NUMBER_WORDS = {word: n for n, word in enumerate(_COUNTS.split(), start=1)}


def test_the_docs_count_the_example_notebooks_there_are():
    """A count on a line about the notebooks or the script that runs them ("all
    nine", "the eleven notebooks") is the number in examples/, in the README, the
    site's pages and the changelog's unreleased notes."""
    notebooks = len(list((ROOT / "examples").glob("*.ipynb")))
    named = []
    unreleased = (ROOT / "CHANGELOG.md").read_text().split("\n## ")[1]
    texts = {path.name: path.read_text() for path in [ROOT / "README.md", *DOCS.glob("*.md")]}
    texts["CHANGELOG.md (Unreleased)"] = unreleased
    for name, text in texts.items():
        for line in text.splitlines():
            if re.search(r"\bnotebooks\b|examples\.sh", line):
                words = re.findall(r"\b(?:all|the) (\w+)\b", line, re.IGNORECASE)
                named += [(name, w) for w in words if w.lower() in _NUMBER_WORDS]
        # "the nine notebooks" broken across two lines.
        flowing = re.sub(r"\s+", " ", text)
        words = re.findall(r"\b(?:all|the) (\w+) (?:example )?notebooks\b", flowing, re.I)
        named += [(name, w) for w in words if w.lower() in _NUMBER_WORDS]
    assert named, "the README names how many notebooks there are"
    wrong = [(name, w) for name, w in named if _NUMBER_WORDS[w.lower()] != notebooks]
    assert not wrong, f"there are {notebooks} notebooks: {wrong}"


def test_no_bench_page_names_a_folder_of_the_machine_that_wrote_it():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    assert spec and spec.loader
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    # Two interpreters told apart by their folders, a file by its name, one of the
    # project's from its root; what is not a path is left as it is.
    envs = "/elsewhere/pyzmq==25.1.2/bin/python", "/elsewhere/pyzmq==26.4.0/bin/python"
    shown = report.spelled([*envs, "--perf=/elsewhere/perf.py", str(ROOT / "docs"), "-r", "7"])
    assert shown == [
        "pyzmq==25.1.2/bin/python",
        "pyzmq==26.4.0/bin/python",
        "--perf=perf.py",
        "docs",
        "-r",
        "7",
    ]
    for page in sorted((DOCS / "benchmarks").glob("*.md")):
        (command,) = re.findall(r"\AWritten by `([^`]*)`", page.read_text())
        assert not re.search(r"(?:^|[\s=])[/~]", command), f"{page.name}: {command}"


# Every line of an output block that fits 100 columns (the summary lines, and the
# annotated forms on reading.md), and every line that calls a magic: its width as the
# page's font draws it against the room its block gives; and a block made only of such
# lines must not scroll sideways.
_CUT_LINES_JS = r"""() => {
  const pen = document.createElement('canvas').getContext('2d');
  const cut = [], scrolls = [];
  let checked = 0, widest = 0;
  for (const pre of document.querySelectorAll('article pre')) {
    const style = getComputedStyle(pre);
    pen.font = style.font;
    const room = pre.clientWidth - parseFloat(style.paddingLeft)
                 - parseFloat(style.paddingRight);
    const lines = pre.textContent.replace(/\n$/, '').split('\n');
    const wanted = lines.filter(l => l.length <= 100 || /%(zmq\w+|taskflood)\b/.test(l));
    for (const line of wanted) {
      checked += 1;
      widest = Math.max(widest, line.length);
      const width = pen.measureText(line).width;
      if (width > room + 1) cut.push(`${Math.round(width)} > ${Math.round(room)} px: ${line}`);
    }
    if (wanted.length === lines.length && pre.scrollWidth > pre.clientWidth + 1)
      scrolls.push(`${pre.scrollWidth} > ${pre.clientWidth} px: ${lines[0]}`);
  }
  return {checked, widest, cut, scrolls};
}"""


@pytest.mark.slow  # sphinx builds the whole site; a real browser
def test_a_whole_summary_line_shows_without_scrolling_at_a_laptops_width(served):
    """The example pages and reading.md at a 1,300 px window: no 100-column line (nor
    a magic's command line) is cut or needs a scroll bar."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    elsewhere: list[str] = []

    def only_here(route):
        url = urllib.parse.urlparse(route.request.url)
        if url.scheme == "file" or url.hostname == "127.0.0.1":
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    pages = [f"examples/{nb.stem}.html" for nb in sorted((ROOT / "examples").glob("*.ipynb"))]
    seen = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.route("**/*", only_here)
            for name in [*pages, "reading.html"]:
                page.goto(f"{served}/{name}")
                page.wait_for_load_state("load")
                seen[name] = page.evaluate(_CUT_LINES_JS)
        finally:
            browser.close()
    assert not elsewhere, elsewhere
    for name, found in seen.items():
        assert not found["cut"] and not found["scrolls"], (name, found)
    # The check had full lines to measure: the summaries' own, and reading.md's forms.
    assert seen["examples/01_throughput.html"]["widest"] >= 95, seen["examples/01_throughput.html"]
    assert seen["reading.html"]["widest"] >= 95 and seen["reading.html"]["checked"] >= 5


def test_the_pictures_script_runs_the_browser_test_and_takes_what_the_docs_show(monkeypatch):
    """bench/panel_screenshots.py names the browser test that takes the pictures: a
    renamed test is caught here, not by the next person to retake them."""
    import importlib

    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    script = importlib.import_module("panel_screenshots")
    path, name = script.TEST.split("::")
    assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.MULTILINE), script.TEST
    shown = set(re.findall(r"\(images/([\w-]+\.png)\)", (DOCS / "panels.md").read_text()))
    assert shown and shown <= set(script.PICTURES), shown - set(script.PICTURES)
    for picture in script.PICTURES:
        assert (DOCS / "images" / picture).is_file(), picture
