"""A signal at any moment leaves nothing behind: SIGTERM (and SIGINT) sent to a real pytest run or
to the `retrieval-bench` console script while an arm hook runs at configure, while a command arm's
program runs, while a private copy's git runs, and while a cache entry, a report, a merge output or
an unpack staging directory is being written. Each run gets a TMPDIR of its own; the moment is found
by a marker the code under test writes (an arm hook's or a program's file, git's `index.lock`, or
the writers' test hook `RETRIEVAL_BENCH_TEST_PAUSE`, see `pytest_retrieval_bench/leftovers.py`),
never by sleeping. Afterwards the process has ended by the signal and nothing it made is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARCHIVE = TESTDATA / "agent_retrieval_bench_synthetic_v1.tar.zst"
CONSOLE_SCRIPT = Path(sys.executable).with_name("retrieval-bench")
GIN = "acme/gin-lite"
GIN_COMMIT = "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"
WAIT = 60.0  # an upper bound on reaching the marker, never a guess of when the moment comes

ARM_HOOK_CONFTEST = """
import os, time
from pathlib import Path

def pytest_retrieval_bench_arms(config):
    Path(os.environ["MARKER"]).write_text("configuring")
    time.sleep(120)
    return []
"""

COPY_CONFTEST = """
from pytest_retrieval_bench import Answer

class Copying:
    name = "copying"

    def retrieve(self, request):
        request.snapshot.directory()
        return Answer(ranking=[])

def pytest_retrieval_bench_arms(config):
    return [Copying()]
"""

SLEEPING_PROGRAM = """
import os, sys, time
from pathlib import Path
query_file = sys.argv[1]
assert Path(query_file).is_file()
Path(os.environ["MARKER"] + ".part").write_text(f"{os.getpid()} {query_file}")
os.replace(os.environ["MARKER"] + ".part", os.environ["MARKER"])
time.sleep(120)
"""


def _environment(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    env.update(TMPDIR=str(tmp), **extra)
    return env


def _signalled(argv: list[str], cwd: Path, env: dict[str, str], reached: Callable[[], bool], signum: int = signal.SIGTERM) -> subprocess.CompletedProcess[str]:
    """Start `argv`, wait until `reached()` (the moment's marker), send `signum`, wait for the end."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # a background parent may ignore SIGINT
    try:
        deadline = time.monotonic() + WAIT
        while not reached():
            if process.poll() is not None:
                output, errors = process.communicate()
                pytest.fail(f"ended (status {process.returncode}) before the moment to signal it came:\n{output}\n{errors}")
            assert time.monotonic() < deadline, "the moment to signal never came"
            time.sleep(0.02)
        process.send_signal(signum)
        output, errors = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(argv, process.returncode, output, errors)


def _left(directory: Path) -> list[str]:
    """Every path below `directory`, relative to it."""
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args]


@pytest.fixture
def run_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A working directory and a TMPDIR of the run's own (fresh per test, so anything in it is a leftover)."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    return work, tmp


def _paused(tmp_path: Path, pattern: str) -> tuple[dict[str, str], Path]:
    marker = tmp_path / "paused-at"
    return {"RETRIEVAL_BENCH_TEST_PAUSE": pattern, "RETRIEVAL_BENCH_TEST_PAUSE_MARKER": str(marker)}, marker


def _process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent, or a zombie waiting for its reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


# -- pytest runs ----------------------------------------------------------------------------------
#: how pytest ends on each signal: killed by SIGTERM (after the clean-up), "interrupted" (2) on SIGINT
PYTEST_STATUS = {signal.SIGTERM: -signal.SIGTERM, signal.SIGINT: pytest.ExitCode.INTERRUPTED}
BOTH = pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])


@BOTH
def test_signal_while_an_arm_hook_runs_at_configure(run_dirs: tuple[Path, Path], tmp_path: Path, signum: int) -> None:
    work, tmp = run_dirs
    (work / "conftest.py").write_text(ARM_HOOK_CONFTEST)
    marker = tmp_path / "configuring"
    result = _signalled(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}"), work, _environment(tmp, MARKER=str(marker)),
                        marker.exists, signum)
    assert result.returncode == PYTEST_STATUS[signum], result.stderr
    assert _left(tmp) == []  # the session directory made before the hook ran is gone


@BOTH
def test_signal_during_a_command_arm_call(run_dirs: tuple[Path, Path], tmp_path: Path, signum: int) -> None:
    work, tmp = run_dirs
    program = tmp_path / "sleeper.py"
    program.write_text(SLEEPING_PROGRAM)
    marker = tmp_path / "called"
    spec = {"argv": [sys.executable, str(program), "{query_file}"], "ranking": "results[].path", "env": {"MARKER": str(marker)}}
    result = _signalled(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-command-arm=sleeper={json.dumps(spec)}",
                                "--bench-arms=sleeper", "--bench-no-cache"), work, _environment(tmp), marker.exists, signum)
    pid, query_file = marker.read_text().split(" ", 1)
    assert Path(query_file).parent == tmp, "the query file was in this run's TMPDIR while the program ran"
    assert result.returncode == PYTEST_STATUS[signum], result.stderr
    assert _left(tmp) == []  # neither the query file nor the session directory
    assert _process_gone(int(pid)), "the arm's program outlived the run"


HANGING_AGENT = """
import os, subprocess, sys, time
from pathlib import Path
sys.stdin.readline()
child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(120)"])
Path(os.environ["MARKER"] + ".part").write_text(f"{os.getpid()} {child.pid}")
os.replace(os.environ["MARKER"] + ".part", os.environ["MARKER"])
time.sleep(120)
"""


@BOTH
def test_signal_during_a_command_agent_item(run_dirs: tuple[Path, Path], tmp_path: Path, signum: int) -> None:
    work, tmp = run_dirs
    program = tmp_path / "hanging_agent.py"
    program.write_text(HANGING_AGENT)
    marker = tmp_path / "talking"
    spec = {"kind": "agent", "argv": [sys.executable, str(program)], "env": {"MARKER": str(marker)}, "timeout": 100}
    result = _signalled(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", f"--bench-command-arm=hanging={json.dumps(spec)}",
                                "--bench-arms=hanging", "--bench-no-cache"), work, _environment(tmp), marker.exists, signum)
    agent, detached = map(int, marker.read_text().split())
    assert result.returncode == PYTEST_STATUS[signum], result.stderr
    assert _left(tmp) == []
    deadline = time.monotonic() + 10  # SIGINT: the item's `finally` gives the agent its exit grace first
    while not (_process_gone(agent) and _process_gone(detached)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _process_gone(agent) and _process_gone(detached), "the agent, or the process it detached, outlived the run"


def _git_in(directory: Path) -> int | None:
    """The pid of a git process started with `-C` a path below `directory`, if one runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"git" and b"-C" in argv[:-1] \
                and os.fsencode(directory) in argv[argv.index(b"-C") + 1] and b"add" in argv:
            return int(entry.name)
    return None


def test_sigterm_while_git_commits_a_private_copy(run_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    """A snapshot with a large incompressible file, so `git add` in its copy runs a while: the signal
    comes once git holds the copy's `index.lock`; git is ended before the copy is removed."""
    work, tmp = run_dirs
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "gin.go").write_text("package gin\n")
    (tree / "blob.bin").write_bytes(os.urandom(48 << 20))
    rows = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    row = next(row for row in rows if row["repo"] == GIN)
    (tmp_path / "samples.jsonl").write_text(json.dumps(row) + "\n")
    (work / "conftest.py").write_text(COPY_CONFTEST)
    git: list[int] = []

    def git_adding() -> bool:
        if not git and any(tmp.glob("pytest-retrieval-bench-*/copies/copy-*/.git/index.lock")):
            git.extend(pid for pid in [_git_in(tmp)] if pid is not None)
        return bool(git)

    result = _signalled(_pytest(f"--bench-samples={tmp_path / 'samples.jsonl'}", f"--bench-snapshot={GIN}@{GIN_COMMIT}={tree}",
                                "--bench-arms=copying", "--bench-no-cache"), work, _environment(tmp), git_adding)
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert _process_gone(git[0]), "git still ran in the removed copy"
    assert _left(tmp) == []


@pytest.mark.parametrize("entry", ["*.idx.zst", "*.receipt", "*.digest"], ids=["index", "read-receipt", "file-digest"])
def test_sigterm_while_a_cache_entry_is_written(run_dirs: tuple[Path, Path], tmp_path: Path, entry: str) -> None:
    work, tmp = run_dirs
    cache = tmp_path / "cache"
    pause, marker = _paused(tmp_path, f"cache-entry:{entry}")
    result = _signalled(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=bm25:all", f"--bench-cache-dir={cache}"),
                        work, _environment(tmp, **pause), marker.exists)
    temporary = Path(marker.read_text())
    assert temporary.parent.is_relative_to(cache) and temporary.name.startswith(".tmp-")
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert not temporary.exists()
    assert [name for name in _left(cache) if Path(name).name.startswith(".tmp-")] == []
    assert _left(tmp) == []


def test_sigterm_while_the_report_is_written(run_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    work, tmp = run_dirs
    out = tmp_path / "out"
    pause, marker = _paused(tmp_path, "atomic-write:report.json")
    result = _signalled(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "--bench-no-cache",
                                f"--bench-report={out / 'report.json'}"), work, _environment(tmp, **pause), marker.exists)
    assert Path(marker.read_text()).parent == out
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert [name for name in _left(out) if name.endswith(".tmp")] == []
    assert _left(tmp) == []


def test_sigterm_while_a_release_is_unpacked(run_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    work, tmp = run_dirs
    cache = tmp_path / "cache"
    pause, marker = _paused(tmp_path, "unpack:*")
    result = _signalled(_pytest(f"--bench-samples={ARCHIVE}", "--bench-arms=grep", f"--bench-cache-dir={cache}"), work,
                        _environment(tmp, **pause), marker.exists)
    staging = Path(marker.read_text())
    assert staging.parent == cache / "releases" and staging.name.startswith(".unpack-")
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert not staging.exists()
    assert [name for name in _left(cache / "releases") if ".unpack-" in name] == []
    assert _left(tmp) == []


# -- the console script ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One report of a quick run, to merge."""
    directory = tmp_path_factory.mktemp("report")
    report = directory / "report.json"
    subprocess.run(_pytest(f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}", "--bench-arms=grep", "--bench-no-cache",
                           f"--bench-report={report}", f"--rootdir={directory}"), cwd=directory, check=True, capture_output=True)
    return report


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_while_the_console_script_writes_a_merge(run_dirs: tuple[Path, Path], tmp_path: Path, written_report: Path,
                                                        signum: int) -> None:
    work, tmp = run_dirs
    out = tmp_path / "out"
    out.mkdir()
    pause, marker = _paused(tmp_path, "atomic-write:merged.json")
    result = _signalled([str(CONSOLE_SCRIPT), "summarize", str(written_report), "--output", str(out / "merged.json")], work,
                        _environment(tmp, **pause), marker.exists, signum)
    temporary = Path(marker.read_text())
    assert temporary.parent == out and temporary.name.startswith(".merged.json.") and temporary.name.endswith(".tmp")
    assert result.returncode == -signum, result.stderr  # ended by the signal, as a shell expects
    assert "Traceback" not in result.stderr
    assert _left(out) == []
    assert _left(tmp) == []


def test_sigterm_while_pytest_summarize_writes_the_merge(run_dirs: tuple[Path, Path], tmp_path: Path, written_report: Path) -> None:
    """`--bench-summarize` configures no session, so the merge itself installs the handler."""
    work, tmp = run_dirs
    out = tmp_path / "out"
    pause, marker = _paused(tmp_path, "atomic-write:merged.json")
    result = _signalled(_pytest(f"--bench-summarize={written_report}", f"--bench-report={out / 'merged.json'}", f"--rootdir={work}"), work,
                        _environment(tmp, **pause), marker.exists)
    temporary = Path(marker.read_text())
    assert temporary.parent == out and temporary.name.startswith(".merged.json.") and temporary.name.endswith(".tmp")
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert _left(tmp) == []  # nor the directory the plugin's own programs start in
    assert _left(out) == []
