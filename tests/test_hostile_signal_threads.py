"""A signal delivered to another thread of the process leaves nothing behind either.

Importing numpy starts OpenBLAS's threads; the kernel hands a process-directed signal to any thread
that does not block it, and Python then runs the handler in the main thread at its next bytecode,
wherever that is: between creating a temporary and registering it, say. To hit that moment every
time, the run's conftest wraps `tempfile.mkstemp` and `tempfile.mkdtemp`: right after the chosen
temporary is made, the process sends itself the signal and waits, so the handler runs before the
caller's next line. The runs keep four BLAS threads, and each checks that it had more than one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
SAMPLES = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
CORPUS = TESTDATA / "release" / "corpus" / "synthetic_v1"
ARCHIVE = TESTDATA / "agent_retrieval_bench_synthetic_v1.tar.zst"
WAIT = 120.0

SIGNAL_AFTER_CREATION = """
import fnmatch, os, signal, tempfile, time
from pathlib import Path

import numpy  # starts the BLAS threads (OPENBLAS_NUM_THREADS in the environment)

_THREADS = len(os.listdir("/proc/self/task"))  # this process's threads once numpy is imported

_PATTERN, _MARKER = os.environ["SIGNAL_AFTER"], Path(os.environ["SIGNAL_MARKER"])
_SIGNUM = getattr(signal, os.environ.get("SIGNAL_NAME", "SIGTERM"))


def _signalling(make, name_of):
    def made(*args, **kwargs):
        result = make(*args, **kwargs)
        name = name_of(result)
        if not _MARKER.exists() and fnmatch.fnmatchcase(os.path.basename(name), _PATTERN):
            _MARKER.write_text(f"{_THREADS} {name}")
            os.kill(os.getpid(), _SIGNUM)
            time.sleep(0.5)  # wherever the signal went, Python's handler runs before this call returns
        return result
    return made


tempfile.mkstemp = _signalling(tempfile.mkstemp, lambda result: result[1])
tempfile.mkdtemp = _signalling(tempfile.mkdtemp, lambda result: result)
"""


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args]


def _left(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def signalled_after_creation(tmp_path: Path, pattern: str, args: list[str], signum: int = signal.SIGTERM) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run pytest with `args` in a fresh directory and TMPDIR; the first temporary whose name
    matches `pattern` gets a signal right after it is made. Returns the run and that temporary."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS starts no second thread on one CPU")
    work, tmp, marker = tmp_path / "work", tmp_path / "tmp", tmp_path / "made"
    work.mkdir()
    tmp.mkdir()
    (work / "conftest.py").write_text(SIGNAL_AFTER_CREATION)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    env.update(TMPDIR=str(tmp), OPENBLAS_NUM_THREADS="4", SIGNAL_AFTER=pattern, SIGNAL_MARKER=str(marker),
               SIGNAL_NAME=signal.Signals(signum).name)
    result = subprocess.run(_pytest(*args), cwd=work, env=env, capture_output=True, text=True, timeout=WAIT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert marker.exists(), f"no temporary matching {pattern!r} was made:\n{result.stdout}\n{result.stderr}"
    threads, temporary = marker.read_text().split(" ", 1)
    assert int(threads) > 1, "numpy started no BLAS thread for the signal to go to"
    return result, Path(temporary)


EMPTY_ANSWER = "print('{\"results\": []}')\n"
RUN = [f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}"]
COMMAND_ARM = ['--bench-command-arm=empty={{"argv": ["{python}", "{program}", "{{query_file}}"], "ranking": "results[].path"}}',
               "--bench-arms=empty", "--bench-no-cache"]

#: each way the plugin makes a temporary outside its session directory (what is made inside goes
#: with it): the pattern of its name, and a run that makes one
WRITE_PATHS = {
    "report": (".report.json.????????.tmp", [*RUN, "--bench-arms=grep", "--bench-no-cache", "--bench-report={out}/report.json"]),
    "cache-entry": (".tmp-*", [*RUN, "--bench-arms=bm25:all", "--bench-cache-dir={out}/cache"]),
    "session-directory": ("pytest-retrieval-bench-*", [*RUN, "--bench-arms=grep", "--bench-no-cache"]),
    "query-file": ("retrieval-bench-query-*", [*RUN, *COMMAND_ARM]),
    "unpack": (".unpack-*", [f"--bench-samples={ARCHIVE}", "--bench-arms=grep", "--bench-cache-dir={out}/cache"]),
}


@pytest.mark.parametrize("write", list(WRITE_PATHS))
def test_sigterm_right_after_a_temporary_is_made(tmp_path: Path, write: str) -> None:
    pattern, args = WRITE_PATHS[write]
    out, program = tmp_path / "out", tmp_path / "empty.py"
    program.write_text(EMPTY_ANSWER)
    result, temporary = signalled_after_creation(tmp_path, pattern, [arg.format(out=out, python=sys.executable, program=program) for arg in args])
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert not temporary.exists(), f"{temporary} was left behind"
    assert _left(tmp_path / "tmp") == []
    assert [name for name in (_left(out) if out.exists() else []) if ".tmp" in name or ".unpack-" in name] == []


def test_sigint_right_after_the_report_temporary_is_made(tmp_path: Path) -> None:
    pattern, args = WRITE_PATHS["report"]
    out = tmp_path / "out"
    result, temporary = signalled_after_creation(tmp_path, pattern, [arg.format(out=out) for arg in args], signal.SIGINT)
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stderr
    assert not temporary.exists(), f"{temporary} was left behind"
    assert [name for name in _left(out) if name.endswith(".tmp")] == []
    assert _left(tmp_path / "tmp") == []
