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
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tree_helpers import snapshot_with_copies, write_tree
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import CommandArm, CommandArmSpec
from pytest_retrieval_bench.arms.corvint import _porcelain
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.remove_tree import remove_tree
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


