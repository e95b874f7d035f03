"""Every message points at the fix: what the user sees when a run cannot do what was asked, and
the version, help and install lines agree with the README and the docs."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from report_helpers import assert_outcomes

from pytest_retrieval_bench.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OPTIONS_PAGE = ROOT / "docs" / "options.md"
DOC_PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


# -- --version ------------------------------------------------------------------------------------


def test_the_console_script_prints_its_version(capsys):
    with pytest.raises(SystemExit) as exited:
        cli_main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"retrieval-bench {version('pytest-retrieval-bench')}"


# -- --help and the options page agree on every default -------------------------------------------------

_DEFAULT = re.compile(r"\bdefault(?:s to|:)?\s+(?P<value>.+?)(?=[;,()|]|\.(?:\s|$)|$)", re.IGNORECASE)


def _stated_default(text: str) -> str | None:
    """The default a help text states, with backticks and white space removed (help output wraps lines,
    at spaces and after hyphens), lowercased; None when it states none."""
    match = _DEFAULT.search(text)
    return re.sub(r"\s+", "", match["value"].replace("`", "")).lower() if match else None


def _documented_options() -> dict[str, str | None]:
    """docs/options.md's table: each `--bench-*` option with the default its row states."""
    rows = re.findall(r"^\| `--bench-([a-z-]+)[^`]*` \| (.*) \|$", OPTIONS_PAGE.read_text(encoding="utf-8"), re.MULTILINE)
    return {option: _stated_default(meaning) for option, meaning in rows}


def _help_options(lines: list[str]) -> dict[str, str | None]:
    texts: dict[str, list[str]] = {}
    current = None
    for line in lines:
        start = re.match(r"^  --bench-([a-z-]+)(?:=\S+)?\s*(.*)$", line)
        if start:
            current = start[1]
            texts[current] = [start[2]]
        elif current is not None and re.match(r"^\s{6,}\S", line):
            texts[current].append(line.strip())
        else:
            current = None
    return {option: _stated_default(" ".join(parts)) for option, parts in texts.items()}


def test_help_states_the_defaults_the_options_page_states(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == 0
    helps, documented = _help_options(result.stdout.lines), _documented_options()
    assert len(helps) > 20 and set(helps) == set(documented), sorted(set(helps) ^ set(documented))
    assert any(documented.values())
    differing = {option: (documented[option], helps[option]) for option in documented if documented[option] != helps[option]}
    assert not differing, differing
    named = {(page.name, option) for page in DOC_PAGES for option in re.findall(r"--bench-([a-z][a-z-]*[a-z])", page.read_text(encoding="utf-8"))}
    scripts = set(re.findall(r'"--bench-([a-z-]+)"', "".join(path.read_text() for path in (ROOT / "benchmarks").glob("*.py"))))
    unknown = sorted((page, option) for page, option in named if option not in helps and option not in scripts)
    assert not unknown, unknown  # every page names only options --help (or a benchmarks/ script's own --help) knows


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lowercased, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_the_readme_and_the_docs_resolves():
    """The reference moved out of the README into docs/: each relative link names a file that exists,
    and a heading of it when it names one."""
    broken = []
    for page in DOC_PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append((page.name, target))
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.MULTILINE)
                if anchor not in {_anchor(heading) for heading in headings}:
                    broken.append((page.name, target))
    assert not broken, broken


# -- install lines that work outside this checkout ------------------------------------------------


def _project() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


@pytest.mark.parametrize("doc", ["README.md", "docs/ci.md"])
def test_install_lines_name_a_git_url_and_a_wheel(doc):
    project = _project()
    text = (ROOT / doc).read_text(encoding="utf-8")
    extras = set(project["optional-dependencies"])
    urls = re.findall(rf"pip install '{project['name']}\[([a-z-]+)\] @ git\+https://github\.com/OWNER/{project['name']}'", text)
    assert urls and set(urls) <= extras
    wheel = f"{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"
    assert "pip wheel . --no-deps -w dist" in text
    assert re.search(rf"pip install 'dist/{re.escape(wheel)}\[([a-z-]+)\]'", text)
    if doc == "docs/ci.md":  # its jobs install from the checkout they run in, and say so
        assert "run inside this project's own checkout" in text and "pip install -e '.[xdist]'" in text


# -- snapshots that cannot be scored as their samples expect --------------------------------------

COMMIT = "c" * 40


def _arb_row(sample_id: str, repo: str, gold: str) -> dict:
    return {"id": sample_id, "task_type": "code2test", "repo": repo, "base_commit": COMMIT,
            "query": {"pr_title": "Fix the widget parser", "changed_file": "src/widget.py"}, "gold": {"related_tests": [gold]}, "metadata": {}}


@pytest.fixture
def unscorable(pytester):
    """acme/full holds a gold file of s1 but not s2's; acme/empty holds only a binary file (s3's gold)."""
    full, empty = pytester.path / "full", pytester.path / "empty"
    (full / "tests").mkdir(parents=True)
    (full / "src").mkdir()
    (full / "tests" / "test_widget.py").write_text("def test_widget_parser():\n    pass\n")
    (full / "src" / "widget.py").write_text("def parse_widget(text):\n    return text\n")
    empty.mkdir()
    (empty / "blob.bin").write_bytes(b"\x00\x01widget\x00")
    rows = [_arb_row("s1", "acme/full", "tests/test_widget.py"), _arb_row("s2", "acme/full", "tests/test_gone.py"),
            _arb_row("s3", "acme/empty", "blob.bin")]
    (pytester.path / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    expected = [{"kind": "empty_snapshot", "snapshot": f"acme/empty@{COMMIT}"},
                {"kind": "gold_not_in_snapshot", "sample": "s2", "path": "tests/test_gone.py", "snapshot": f"acme/full@{COMMIT}"}]
    args = ["--bench-samples=samples.jsonl", f"--bench-snapshot=acme/full@{COMMIT}={full}", f"--bench-snapshot=acme/empty@{COMMIT}={empty}",
            "--bench-arms=grep,bm25:all", "-p", "no:cacheprovider"]
    return args, expected


def test_unscorable_snapshots_warn_once_each_and_are_listed_in_the_report(pytester, unscorable):
    args, expected = unscorable
    result = pytester.runpytest(*args, "--bench-report=out.json", "--bench-html=page.html")
    assert result.ret == 0, result.stdout.str()
    assert_outcomes(result, passed=6, warnings=2)  # scored as before: 3 samples x 2 arms, every item passes (hit or miss)
    output = result.stdout.str()
    assert output.count(f"SnapshotProblemWarning: snapshot acme/full@{COMMIT}: 1 gold file(s)") == 1
    assert "s2: tests/test_gone.py" in output
    assert output.count(f"SnapshotProblemWarning: snapshot acme/empty@{COMMIT}: it has no text file") == 1
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["snapshot_problems"] == expected
    assert report["problems"] == [] and "invalid_row" not in report["skipped"]
    s2 = next(entry for entry in report["details"] if entry["id"] == "s2")
    assert all(record["rank_of_first_gold"] is None and not record["error"] for record in s2["arms"].values())
    page = (pytester.path / "page.html").read_text()
    assert 'id="snapshot-problems-banner"' in page and "tests/test_gone.py" in page and "empty_snapshot" in page


def test_unscorable_snapshots_travel_from_xdist_workers_and_survive_a_merge(pytester, unscorable, capsys):
    args, expected = unscorable
    result = pytester.runpytest_subprocess(*args, "--bench-report=out.json", "-n", "2", "--dist", "loadgroup")
    assert result.ret == 0, result.stdout.str()
    assert f"snapshot acme/full@{COMMIT}: 1 gold file(s)" in result.stdout.str()
    assert json.loads((pytester.path / "out.json").read_text())["snapshot_problems"] == expected
    merged = pytester.path / "merged.json"
    assert cli_main(["summarize", str(pytester.path / "out.json"), "-o", str(merged)]) == 0
    assert json.loads(merged.read_text())["snapshot_problems"] == expected


def test_a_report_without_snapshot_problems_has_no_such_key(pytester, release_bench):
    result = pytester.runpytest("--bench-samples=release/benchmark/synthetic_v1/samples.jsonl", "--bench-corpus=release/corpus/synthetic_v1",
                                "--bench-arms=grep", "--bench-report=out.json", "-p", "no:cacheprovider")
    assert result.ret == 0 and "warnings" not in result.parseoutcomes()
    assert "snapshot_problems" not in json.loads((pytester.path / "out.json").read_text())


# -- a repository --bench-repos cannot find ---------------------------------------------------------


def test_a_repository_not_found_is_explained_once_per_snapshot_with_the_names_tried(pytester, tmp_path):
    from test_format_known_target import _git, commit_widgets

    root = commit_widgets(tmp_path / "repos" / "widgets")
    bank = tmp_path / "bank.jsonl"
    assert cli_main(["known-target", "generate", str(root), "--commit", "HEAD", "--per-intent", "1", "--out", str(bank)]) == 0
    cases = len(bank.read_text().splitlines()) - 1  # after the header line
    result = pytester.runpytest(f"--bench-samples={bank}", f"--bench-repos={tmp_path / 'repos'}", "--bench-arms=grep",
                                "--bench-report=out.json", "-p", "no:cacheprovider", "-rE")
    result.assert_outcomes(errors=cases)
    output = result.stdout.str()
    sections = output.split("short test summary info")[0]  # on a CI (CI=true) pytest's short summary repeats each message whole
    assert sections.count("tried local__widgets, local+widgets, local/widgets, each also with .git") == 1
    assert "widgets is there, but the name must carry the owner: rename or link it as local__widgets" in output
    assert "--repo-name OWNER/NAME" in output
    assert sections.count(f"snapshot local/widgets@{_git(root, 'rev-parse', 'HEAD')} could not be set up; the reason is given once, at ") == cases - 1
    report = json.loads((pytester.path / "out.json").read_text())
    errors = [record["error"] for entry in report["details"] for record in entry["arms"].values()]
    assert len(errors) == cases and all("tried local__widgets" in error for error in errors)  # every record keeps the reason


def test_a_repository_named_without_an_owner_points_at_bench_snapshot(tmp_path):
    from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
    from pytest_retrieval_bench.errors import SnapshotError

    with pytest.raises(SnapshotError, match=rf"--bench-snapshot widgets@{COMMIT}=PATH"):
        SnapshotResolver(repos_dir=tmp_path).load("widgets", COMMIT)


# -- test paths with samples from the ini; an arm defined in a conftest below the rootdir --------

SAMPLES = "release/benchmark/synthetic_v1/samples.jsonl"
DEEP_ARM = """
import pytest_retrieval_bench


@pytest_retrieval_bench.arm("deep")
def deep(bench_request):
    return []
"""


@pytest.fixture
def ini_bench(release_bench):
    release_bench.makepyprojecttoml(f'[tool.pytest.ini_options]\nbench_samples = ["{SAMPLES}"]\nbench_corpus = ["release/corpus/synthetic_v1"]\n')
    (release_bench.path / "sub").mkdir()
    (release_bench.path / "sub" / "conftest.py").write_text(DEEP_ARM)
    return release_bench


def test_a_test_path_with_ini_samples_says_they_do_not_apply_and_how_to_add_them(ini_bench):
    result = ini_bench.runpytest("-q", "sub", "--bench-arms=deep", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines([f"retrieval-bench: bench_samples from the ini ({SAMPLES}) does not apply when test paths are given*"
                                 f"--bench-arms had no effect*name the samples file as a test path (pytest sub {SAMPLES}) or pass --bench-samples=PATH"])
    followed = ini_bench.runpytest("-q", "sub", SAMPLES, "--bench-arms=deep", "-p", "no:cacheprovider")  # the advice, as printed
    assert followed.ret == 0 and followed.parseoutcomes().get("passed", 0) + followed.parseoutcomes().get("missed", 0) > 0
    assert "does not apply" not in followed.stdout.str()


def test_a_test_path_of_plain_tests_with_ini_samples_stays_quiet(ini_bench):
    (ini_bench.path / "sub" / "test_plain.py").write_text("def test_plain():\n    pass\n")
    result = ini_bench.runpytest("-q", "sub", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "bench_samples" not in result.stdout.str()


def test_an_unknown_arm_says_where_arms_come_from_and_names_the_conftest_defining_it(ini_bench):
    result = ini_bench.runpytest("--bench-arms=deep", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert "unknown arm 'deep' in --bench-arms" in error
    assert "rootdir's conftest.py" in error and "-p MODULE" in error and "pytest_retrieval_bench.arms entry points" in error
    assert f"{Path('sub') / 'conftest.py'} names 'deep' but is not loaded when the arms are chosen" in error
    assert "pytest sub --bench-samples=" in error


def test_an_unknown_arm_no_conftest_defines_names_none(release_bench):
    result = release_bench.runpytest(f"--bench-samples={SAMPLES}", "--bench-corpus=release/corpus/synthetic_v1", "--bench-arms=nowhere",
                                     "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert "unknown arm 'nowhere'" in error and "-p MODULE" in error and "conftest.py names" not in error


def test_warnings_as_errors_leave_the_scores_of_unscorable_snapshots_alone(pytester, unscorable):
    args, expected = unscorable
    result = pytester.runpytest(*args, "--bench-report=out.json", "-W", "error::pytest.PytestWarning")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] + result.parseoutcomes().get("missed", 0) == 6
    assert json.loads((pytester.path / "out.json").read_text())["snapshot_problems"] == expected


def test_a_report_with_malformed_snapshot_problems_is_refused_with_its_path():
    from pytest_retrieval_bench.report.schema import report_problem

    report = {"registration": {}, "details": [], "snapshot_problems": [{"kind": "empty_snapshot"}]}
    assert report_problem(report) == "$.snapshot_problems: expected a list of objects with a kind and a snapshot, got a list"
    report["snapshot_problems"] = [{"kind": "empty_snapshot", "snapshot": f"acme/empty@{COMMIT}"}]
    assert report_problem(report) is None
