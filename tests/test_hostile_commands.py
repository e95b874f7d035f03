"""Command arms that try to outlive, outgrow or outwit the harness, and programs the plugin runs on
its own behalf that try to write into an input: endless stdout, children holding stdout after the
program answered, a copy made read-only, git settings planted in a copy (fsmonitor, hooks, a
filter driver, `core.worktree`), and a version probe that writes into its working directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tree_helpers import snapshot_with_copies, write_tree
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import CommandArm, CommandArmSpec
from pytest_retrieval_bench.arms.corvint import _porcelain
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.files.remove_tree import remove_tree
from pytest_retrieval_bench.errors import ArmError

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
STUB = TESTDATA / "stubs" / "corvint_stub.py"
GIN_TREE = TESTDATA / "trees" / "acme__gin-lite"
GIN_COMMIT = "5a1d1a74c1b9687a9f2f111e03db561cc2fa96b5"
GIN_KEY = f"acme/gin-lite@{GIN_COMMIT}"
REPO, COMMIT = "acme/demo", "b" * 40
FILES = {"README.md": b"demo\n", "src/app.py": b"def app():\n    return 1\n"}
ON_LINUX = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finding a call's processes reads /proc")


@pytest.fixture
def snapshot(tmp_path: Path, copies: PrivateCopies):
    return snapshot_with_copies(write_tree(tmp_path / "tree", FILES), REPO, COMMIT, copies)


def request(snapshot: Any) -> Request:
    return Request(sample_id="s1", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text='{"title": "x"}',
                   changed_file="src/app.py", k=10, snapshot=snapshot)


def program_arm(program: str, timeout: float) -> CommandArm:
    return CommandArm(CommandArmSpec.from_mapping("hostile", {"argv": [sys.executable, "-c", program], "ranking": "ids[]", "timeout": timeout},
                                                  "[tool.retrieval-bench.arms.hostile]"))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


def ended(pid: int) -> bool:
    """Whether `pid` is gone within a few seconds (the kill is sent; the kernel finishes it)."""
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


# -- outgrow: endless stdout ------------------------------------------------------------------------
ENDLESS = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])  # in the program's group
open({pids!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
block = b"x" * 65536
while True:
    sys.stdout.buffer.write(block)
"""


@ON_LINUX
def test_endless_stdout_stops_at_8_mib_says_so_and_ends_the_group(snapshot: Any, tmp_path: Path) -> None:
    """Reading stops at the documented 8 MiB: the item's error says so at once (before the older
    code reported a timeout after the arm's whole timeout), and the program and its child end."""
    pids = tmp_path / "pids"
    with pytest.raises(ArmError) as raised:
        program_arm(ENDLESS.format(pids=str(pids)), timeout=45).retrieve(request(snapshot))
    assert "stdout exceeded 8 MiB" in str(raised.value) and "timed out" not in str(raised.value)
    program, child = (int(pid) for pid in pids.read_text().split())
    assert ended(program) and ended(child)


# -- outlive: children holding stdout after the answer --------------------------------------------
HOLDER = """
import json, os, subprocess, sys
# a child in the program's group and one in a session of its own, both holding stdout, both alive
group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
detached = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
open({pids!r}, "w").write(f"{{group.pid}} {{detached.pid}}")
print(json.dumps({{"ids": ["src/app.py", "README.md"]}}), flush=True)
"""


@ON_LINUX
def test_a_program_that_answers_and_exits_while_children_hold_stdout_is_answered_when_it_exits(snapshot: Any, tmp_path: Path) -> None:
    """docs/arms.md: the call ends when the program exits. The older code waited for the arm's whole
    timeout and then discarded the answer as "timed out"; now the answer counts, and the children
    that kept stdout open are ended with the call."""
    pids = tmp_path / "pids"
    answer = program_arm(HOLDER.format(pids=str(pids)), timeout=20).retrieve(request(snapshot))
    assert answer.ranking == ["src/app.py", "README.md"]
    assert all(ended(int(pid)) for pid in pids.read_text().split())


def test_a_program_whose_child_writes_after_it_exited_is_read_as_it_answered(snapshot: Any, tmp_path: Path) -> None:
    """What the program printed before it exited is its answer; a child's later output is not
    waited for (it is ended with the call)."""
    program = ("import json, subprocess, sys\n"
               "subprocess.Popen(['sh', '-c', 'sleep 2; echo late'])\n"
               "print(json.dumps({'ids': ['README.md']}), flush=True)\n")
    assert program_arm(program, timeout=20).retrieve(request(snapshot)).ranking == ["README.md"]


# -- outwit: git settings planted in the copy -----------------------------------------------------
PLANTS = ("fsmonitor", "hooks", "filter", "worktree")


def plant(copy: Path, what: str, log: Path, decoy: Path) -> None:
    """What a hostile arm can do in its copy without running git: an fsmonitor program, hooks, a
    filter driver on every file, or a work tree pointed at a directory outside the copy."""
    spy = copy.parent / f"{copy.name}-spy.sh"  # outside the copy, so the reset cannot remove it
    spy.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {log}\ncat\n")
    spy.chmod(0o755)
    if what == "hooks":
        hooks = copy / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        for hook in ("reference-transaction", "post-checkout", "post-index-change"):
            (hooks / hook).write_text(f"#!/bin/sh\necho hook {hook} >> {log}\n")
            (hooks / hook).chmod(0o755)
    settings = {"fsmonitor": f"[core]\n\tfsmonitor = {spy}\n", "hooks": "", "worktree": f"[core]\n\tworktree = {decoy}\n",
                "filter": f"[filter \"spy\"]\n\tsmudge = {spy}\n\tclean = {spy}\n"}[what]
    with open(copy / ".git" / "config", "a") as config:
        config.write(settings)
    if what == "filter":
        (copy / ".git" / "info").mkdir(exist_ok=True)
        (copy / ".git" / "info" / "attributes").write_text("* filter=spy\n")
    (copy / "README.md").write_text("changed by the arm\n")  # so the reset has a file to check out
    (copy / "untracked.txt").write_text("junk\n")


@pytest.mark.parametrize("what", PLANTS)
def test_git_settings_an_arm_plants_in_its_copy_never_run_or_redirect_the_plugins_git(tmp_path: Path, snapshot: Any, what: str) -> None:
    """The plugin resets the copy between items and reads its status (the affected preset): with
    fsmonitor, hooks or a filter driver planted, the older code ran the arm's program from the
    plugin's own git, outside the arm's call; with `core.worktree` planted, its `git reset --hard`
    and `git clean -ffdx` worked on a directory outside the copy. Now none of it happens, and the
    copy is reset as before, an arm's cache under `.git/` kept."""
    log, decoy = tmp_path / "ran.log", tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "precious.txt").write_text("not the copy's\n")
    copy = snapshot.directory(fresh=True)
    (copy / ".git" / "tool-cache").mkdir()
    for _ in range(3):  # three items in a row, each planting again
        plant(copy, what, log, decoy)
        assert snapshot.directory(fresh=True) == copy
        assert (copy / "README.md").read_bytes() == FILES["README.md"] and not (copy / "untracked.txt").exists()
        plant(copy, what, log, decoy)
        (copy / "README.md").write_bytes(FILES["README.md"])
        (copy / "untracked.txt").unlink()
        assert _porcelain(copy) == ""
    assert not log.exists(), log.read_text()
    assert [path.name for path in decoy.iterdir()] == ["precious.txt"]
    assert (copy / ".git" / "tool-cache").is_dir()


def test_a_git_dir_an_arm_replaced_with_a_link_is_an_error_never_followed(tmp_path: Path, snapshot: Any) -> None:
    elsewhere = tmp_path / "elsewhere"
    copy = snapshot.directory(fresh=True)
    shutil.move(copy / ".git", elsewhere)
    (copy / ".git").symlink_to(elsewhere)
    config = (elsewhere / "config").read_bytes()
    with pytest.raises(Exception, match="no longer the copy's git directory"):
        snapshot.directory(fresh=True)
    assert (elsewhere / "config").read_bytes() == config


# -- outwit: a copy made read-only (needs a user root's override does not apply to) ---------------
def _nobody() -> int | None:
    try:
        import pwd

        return pwd.getpwnam("nobody").pw_uid
    except (ImportError, KeyError):
        return None


NOBODY = _nobody()


def _unprivileged_python() -> tuple[list[str], dict[str, str]] | None:
    """How to run this venv's Python code as `nobody` (runuser, a system Python of the same
    version, the venv's site-packages on PYTHONPATH), or None when that is not possible here."""
    if os.geteuid() != 0 or not shutil.which("runuser"):
        return None
    if NOBODY is None:
        return None
    import pytest_retrieval_bench
    import sysconfig

    paths = os.pathsep.join([str(Path(pytest_retrieval_bench.__file__).resolve().parent.parent), sysconfig.get_paths()["purelib"]])
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}", "/usr/bin/python3"):
        command = ["runuser", "-u", "nobody", "--", "env", f"PYTHONPATH={paths}", candidate]
        probe = subprocess.run([*command, "-c", f"import sys, pytest, orjson, pytest_retrieval_bench; assert sys.version_info[:2] == {tuple(sys.version_info[:2])}"],
                               capture_output=True, cwd="/", check=False)
        if probe.returncode == 0:
            return command, {"PYTHONPATH": paths}
    return None


UNPRIVILEGED = _unprivileged_python()
NEEDS_NOBODY = pytest.mark.skipif(UNPRIVILEGED is None, reason="root ignores read-only directories; running as 'nobody' (runuser and a "
                                  "system Python of this version that can import this venv) is not possible here")


@pytest.fixture
def shared_dir():
    """A directory `nobody` can write, outside the test's own (root-only) temporary directory."""
    path = Path(tempfile.mkdtemp(prefix="hostile-commands-"))
    path.chmod(0o777)
    yield path
    remove_tree(path, ignore_errors=True)


READ_ONLY_ARM = """
import json, os, stat
for directory, subdirs, files in os.walk(".", topdown=False):
    for name in files:
        os.chmod(os.path.join(directory, name), 0o444)
    os.chmod(directory, 0o555)
os.chmod(".git", 0o555)
with open(os.environ["ARM_LOG"], "a") as log:
    log.write("called\\n")
print(json.dumps({"results": [{"path": "gin.go"}]}))
"""


@NEEDS_NOBODY
def test_an_arm_that_makes_its_copy_read_only_leaves_nothing_and_the_next_items_run(shared_dir: Path) -> None:
    """Run as a user without root's override: every item's arm makes the whole copy read-only
    (its `.git` too). The next item's reset gives write permission back first, every item answers,
    and the session directory under TMPDIR is removed at the end."""
    assert UNPRIVILEGED is not None
    command, _env = UNPRIVILEGED
    source = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
    rows = [line for line in source.read_text().splitlines() if json.loads(line)["repo"] == "acme/gin-lite" and '"UNLABELED' not in line]
    (shared_dir / "samples.jsonl").write_text("\n".join(rows) + "\n")
    shutil.copytree(GIN_TREE, shared_dir / "gin")
    (shared_dir / "arm.py").write_text(READ_ONLY_ARM)
    (shared_dir / "tmp").mkdir()
    for path in shared_dir.rglob("*"):
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    spec = {"argv": [command[-1], str(shared_dir / "arm.py")], "ranking": "results[].path", "env": {"ARM_LOG": str(shared_dir / "arm.log")}}
    result = subprocess.run([*command[:-2], f"TMPDIR={shared_dir / 'tmp'}", *command[-2:], "-m", "pytest", "-p", "no:cacheprovider", "--bench-no-cache",
                             f"--bench-samples={shared_dir / 'samples.jsonl'}", f"--bench-snapshot={GIN_KEY}={shared_dir / 'gin'}",
                             f"--bench-command-arm=readonly={json.dumps(spec)}", "--bench-arms=readonly", f"--bench-report={shared_dir / 'out.json'}",
                             "-q"], cwd=shared_dir, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    records = [entry["arms"]["readonly"] for entry in json.loads((shared_dir / "out.json").read_text())["details"] if entry["arms"]]
    calls = (shared_dir / "arm.log").read_text().count("called")
    assert len(records) == len(rows) == calls > 1 and all(record["error"] is None for record in records)
    assert list((shared_dir / "tmp").iterdir()) == []  # the copy and the session directory are gone


# -- no program of the plugin's writes into an input ----------------------------------------------
WRITER = """#!/bin/sh
# a corvint that writes into its working directory on every call, then answers as the stub does
echo "$*" > "./written-by-corvint-$$.txt" 2>/dev/null
echo "$(pwd)" >> {log}
exec "{python}" "{stub}" "$@"
"""


def test_a_version_probe_that_writes_into_its_working_directory_cannot_change_the_snapshot(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest started from inside the --bench-snapshot directory: `corvint --version`, asked once
    for the registration, ran in the caller's working directory, so a corvint that writes there
    changed the snapshot and every item failed. It runs in a directory of the run's own now."""
    tree = pytester.path / "gin"
    shutil.copytree(GIN_TREE, tree)
    log = pytester.path / "cwd.log"
    binary = pytester.path / "bin" / "corvint"
    binary.parent.mkdir()
    binary.write_text(WRITER.format(log=log, python=sys.executable, stub=STUB))
    binary.chmod(0o755)
    monkeypatch.delenv("CORVINT", raising=False)
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
    source = TESTDATA / "release" / "benchmark" / "synthetic_v1" / "samples.jsonl"
    rows = [line for line in source.read_text().splitlines() if json.loads(line)["repo"] == "acme/gin-lite" and '"UNLABELED' not in line]
    samples = pytester.path / "samples.jsonl"
    samples.write_text("\n".join(rows) + "\n")
    before = sorted(path.relative_to(tree).as_posix() for path in tree.rglob("*"))
    monkeypatch.chdir(tree)
    result = pytester.runpytest_subprocess(f"--bench-samples={samples}", f"--bench-snapshot={GIN_KEY}={tree}", "--bench-arms=corvint-query",
                                           f"--bench-report={pytester.path / 'out.json'}", "-p", "no:cacheprovider", "--bench-no-cache", timeout=300)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert sorted(path.relative_to(tree).as_posix() for path in tree.rglob("*")) == before
    report = json.loads((pytester.path / "out.json").read_text())
    assert report["registration"]["corvint"]["version"] == "corvint-stub 0.0.1"
    records = [entry["arms"]["corvint-query"] for entry in report["details"] if entry["arms"]]
    assert len(records) == len(rows) and all(record["error"] is None for record in records)
    directories = {Path(line) for line in log.read_text().splitlines()}
    assert len(directories) >= 2 and tree not in directories  # the probe's directory and the copy, never the caller's
    assert not any(directory.exists() for directory in directories)  # the run's own directories are removed


def test_a_version_probe_named_by_a_relative_path_is_found_from_the_callers_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe starts in the run's own directory, but `CORVINT=bin/x` still names the caller's
    `bin/x`, as the identity digest reads it; and the probe writes nothing where the caller is."""
    from pytest_retrieval_bench.arms.corvint import QueryArm

    binary = tmp_path / "bin" / "corvint-relative-probe"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\ntouch ./probe-was-here\necho 'corvint 9.9.9'\n")
    binary.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    arm = QueryArm("bin/corvint-relative-probe")
    assert arm.version() == "corvint 9.9.9" and arm.identity().startswith("corvint:sha256:")
    assert not (tmp_path / "probe-was-here").exists()
