"""Command arms: the path syntax, the declaration, and running a program once per item."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tree_helpers import snapshot_with_copies, write_tree
from pytest_retrieval_bench.arms.base import Request
from pytest_retrieval_bench.arms.command import CommandArm, CommandArmSpec, Invocation, load_command_arms, problem_of, parse_command_arm_option, run_program
from pytest_retrieval_bench.arms.jsonpath import PathMissError, PathSyntaxError, extract, extract_scalar
from pytest_retrieval_bench.arms.capture import CaptureWriter
from pytest_retrieval_bench.corpus.copies import PrivateCopies
from pytest_retrieval_bench.corpus.resolve import SnapshotResolver
from pytest_retrieval_bench.corpus.store import SnapshotStore
from pytest_retrieval_bench.errors import ArmError, BenchError, InputError
from pytest_retrieval_bench.report.registration import arm_identity
from pytest_retrieval_bench.bench.run import run_arm
from pytest_retrieval_bench.samples.model import Sample

STUB = Path(__file__).resolve().parent.parent / "testdata" / "stubs" / "corvint_stub.py"
REPO, COMMIT = "acme/demo", "b" * 40
FILES = {"README.md": "demo\n", "src/app.py": "def app():\n    return 1\n", "tests/test_app.py": "import app\n"}

# A program that reports what it was given: its argv, cwd, one env var and the query file's text.
ECHO = textwrap.dedent("""
    import json, os, sys
    args = sys.argv[1:]
    query_file = args[args.index("--file") + 1] if "--file" in args else None
    text = open(query_file, encoding="utf-8").read() if query_file else None
    print(json.dumps({"ids": ["README.md", "./src/app.py", "README.md"], "args": args, "cwd": os.getcwd(),
                      "env": os.environ.get("BENCH_EXTRA"), "query_file": query_file, "file_text": text,
                      "meta": {"state": os.environ.get("BENCH_STATE", "FINE")}}))
""")


@pytest.fixture
def snapshot(tmp_path: Path, copies: PrivateCopies):
    tree = write_tree(tmp_path / "tree", {path: text.encode("utf-8") for path, text in FILES.items()})
    return snapshot_with_copies(tree, REPO, COMMIT, copies)


@pytest.fixture
def stub(stub_wrapper) -> str:
    return stub_wrapper("stub")


def request(snapshot: Any, text: str = '{"title": "fix app"}', changed: str | None = "src/app.py", k: int = 10) -> Request:
    return Request(sample_id="s1", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text=text,
                   changed_file=changed, k=k, snapshot=snapshot)


def arm(name: str = "mine", **fields: Any) -> CommandArm:
    return CommandArm(CommandArmSpec.from_mapping(name, fields, f"[tool.retrieval-bench.arms.{name}]"))


def echo_arm(**fields: Any) -> CommandArm:
    table = {"argv": [sys.executable, "-c", ECHO], "ranking": "ids[]", "state": "meta.state", **fields}
    table["argv"] = [*table["argv"], *fields.get("extra_args", [])]
    table.pop("extra_args", None)
    return arm(**table)


def run_captured(command: CommandArm, req: Request, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    """The answer and the program's parsed stdout, read back from a capture."""
    writer = CaptureWriter(tmp_path / "capture.jsonl", {}, [command.descriptor()])
    command.capture = writer
    answer = command.retrieve(req)
    writer.close()
    record = json.loads(writer.path.read_text().splitlines()[1])
    return answer, json.loads(base64.b64decode(record["stdout"]["base64"]))


# -- the path syntax -----------------------------------------------------------------------------
DOC = {"results": [{"path": "a"}, {"path": "b"}], "plan": {"selected": [{"tests": ["t1", "t2"]}, {"tests": []}, {"tests": ["t3"]}]},
       "ids": ["x", "y"], "state": "OK", "n": 3, "flag": True, "none": None, "empty": []}


@pytest.mark.parametrize("path, expected", [
    ("results[].path", ["a", "b"]),
    ("plan.selected[].tests[]", ["t1", "t2", "t3"]),
    ("ids[]", ["x", "y"]),
    ("ids[1]", ["y"]),
    ("results[0].path", ["a"]),
    ("empty[].path", []),
    ("state", ["OK"]),
])
def test_extract(path: str, expected: list[Any]) -> None:
    assert extract(DOC, path) == expected


def test_extract_from_a_top_level_array() -> None:
    assert extract([{"f": "p"}, {"f": "q"}], "[].f") == ["p", "q"]
    assert extract(["p", "q"], "[]") == ["p", "q"]


@pytest.mark.parametrize("path, where", [
    ("results[].file", "results[0] has no key 'file'"),
    ("state[]", "state is a string, not an array"),
    ("ids[5]", "ids has 2 elements, no [5]"),
    ("missing[]", "the document has no key 'missing'"),
    ("ids.name", "ids is an array, not an object"),
])
def test_extract_misses_name_the_location(path: str, where: str) -> None:
    with pytest.raises(PathMissError, match=re.escape(where)):
        extract(DOC, path)


@pytest.mark.parametrize("path", ["", "a..b", "a.[]", "a[x]", "a]b", "."])
def test_path_syntax_errors(path: str) -> None:
    with pytest.raises(PathSyntaxError):
        extract(DOC, path)


def test_extract_scalar() -> None:
    assert extract_scalar(DOC, "state") == "OK"
    assert extract_scalar(DOC, "n") == "3"
    assert extract_scalar(DOC, "flag") == "true"
    assert extract_scalar(DOC, "none") is None
    with pytest.raises(PathMissError, match="expected a string"):
        extract_scalar(DOC, "ids")
    with pytest.raises(PathMissError, match="reaches 2 values"):
        extract_scalar(DOC, "ids[]")


# -- the declaration -----------------------------------------------------------------------------
def test_spec_defaults_and_descriptor() -> None:
    spec = CommandArmSpec.from_mapping("mine", {"argv": ["tool", "{query}"], "ranking": "ids[]"}, "src")
    assert (spec.cwd, spec.timeout, dict(spec.env), spec.state, spec.abstain_states) == ("root", 120.0, {}, None, ())
    assert (spec.max_query_chars, spec.cache_probe, spec.requires_changed_file) == (None, None, False)
    assert spec.descriptor() == {"arm": "mine", "argv": ["tool", "{query}"], "cwd": "root", "timeout": 120.0}


@pytest.mark.parametrize("fields, field, message", [
    ({"ranking": "ids[]"}, "argv", "non-empty list of strings"),
    ({"argv": "tool {query}", "ranking": "ids[]"}, "argv", "non-empty list of strings"),
    ({"argv": ["{root}/tool"], "ranking": "ids[]"}, "argv", "may not be empty or hold a placeholder"),
    ({"argv": ["tool", "{quarry}"], "ranking": "ids[]"}, "argv", "unknown placeholder {quarry}"),
    ({"argv": ["tool"]}, "ranking", "expected a path"),
    ({"argv": ["tool"], "ranking": "ids..x"}, "ranking", "empty key"),
    ({"argv": ["tool"], "ranking": "ids[]", "state": 3}, "state", "expected a path string"),
    ({"argv": ["tool"], "ranking": "ids[]", "timeout": 0}, "timeout", "positive number"),
    ({"argv": ["tool"], "ranking": "ids[]", "timeout": True}, "timeout", "positive number"),
    ({"argv": ["tool"], "ranking": "ids[]", "cwd": "../up"}, "cwd", "relative directory inside the copy"),
    ({"argv": ["tool"], "ranking": "ids[]", "cwd": "/abs"}, "cwd", "relative directory inside the copy"),
    ({"argv": ["tool"], "ranking": "ids[]", "env": {"A": 1}}, "env", "string values"),
    ({"argv": ["tool"], "ranking": "ids[]", "env": {"A": "{nope}"}}, "env", "unknown placeholder {nope}"),
    ({"argv": ["tool"], "ranking": "ids[]", "abstain_states": ["X"]}, "abstain_states", "needs a 'state' path"),
    ({"argv": ["tool"], "ranking": "ids[]", "state": "s", "abstain_states": "X"}, "abstain_states", "list of strings"),
    ({"argv": ["tool"], "ranking": "ids[]", "max_query_chars": 0}, "max_query_chars", "positive whole number"),
    ({"argv": ["tool"], "ranking": "ids[]", "cache_probe": "/abs/index"}, "cache_probe", "relative path inside the copy"),
    ({"argv": ["tool"], "ranking": "ids[]", "requires_changed_file": "yes"}, "requires_changed_file", "true or false"),
    ({"argv": ["tool"], "ranking": "ids[]", "rankng": "x"}, "rankng", "unknown field"),
])
def test_spec_errors_name_the_arm_and_the_field(fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        CommandArmSpec.from_mapping("mine", fields, "pyproject.toml [tool.retrieval-bench.arms.mine]")
    assert raised.value.field == field
    assert str(raised.value).startswith("pyproject.toml [tool.retrieval-bench.arms.mine]: field ")
    assert message in str(raised.value)


@pytest.mark.parametrize("name", ["", "has space", "x]y", "-lead"])
def test_spec_refuses_names_that_cannot_be_an_item_name(name: str) -> None:
    with pytest.raises(InputError, match="arm name"):
        CommandArmSpec.from_mapping(name, {"argv": ["tool"], "ranking": "ids[]"}, "src")


PYPROJECT = """
[project]
name = "anything"

[tool.retrieval-bench.arms.ripgrep-files]
argv = ["rg", "--json", "{query}"]
ranking = "results[].path"
timeout = 30

[tool.retrieval-bench.arms.local]
argv = ["./tools/rank.sh", "--k={k}", "{query_file}"]
cwd = "src"
ranking = "plan.selected[].tests[]"
state = "plan.scope"
abstain_states = ["EMPTY"]
env = { RANK_MODE = "fast" }
max_query_chars = 500
cache_probe = ".git/rank-cache"
requires_changed_file = true
"""


def test_load_command_arms_from_pyproject(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(PYPROJECT)
    first, second = load_command_arms(pyproject)
    assert (first.name, first.spec.argv, first.spec.timeout) == ("ripgrep-files", ("rg", "--json", "{query}"), 30.0)
    assert second.name == "local" and second.max_query_chars == 500
    assert second.spec.argv[0] == str(tmp_path / "tools" / "rank.sh")  # relative to the pyproject, not the copy
    assert (second.spec.cwd, second.spec.state, second.spec.abstain_states) == ("src", "plan.scope", ("EMPTY",))
    assert (dict(second.spec.env), second.spec.cache_probe, second.spec.requires_changed_file) == ({"RANK_MODE": "fast"}, ".git/rank-cache", True)


def test_load_command_arms_without_a_table(tmp_path: Path) -> None:
    assert load_command_arms(tmp_path / "absent.toml") == []
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert load_command_arms(tmp_path / "pyproject.toml") == []
    (tmp_path / "pyproject.toml").write_text("[tool.retrieval-bench]\nlimit = 10\n")
    assert load_command_arms(tmp_path / "pyproject.toml") == []


@pytest.mark.parametrize("text, message", [
    ("[tool.retrieval-bench.arms.x\nargv = 1\n", "not valid TOML"),
    ("[tool.retrieval-bench]\narms = 3\n", "must be a table of arm tables"),
    ("[tool.retrieval-bench.arms]\nx = 3\n", "an arm is a table of fields"),
    ("[tool.retrieval-bench.arms.x]\nargv = ['t']\n", "[tool.retrieval-bench.arms.x]: field 'ranking'"),
])
def test_load_command_arms_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text)
    with pytest.raises(InputError) as raised:
        load_command_arms(pyproject)
    assert str(raised.value).startswith(str(pyproject))
    assert message in str(raised.value)


def test_load_command_arms_without_a_toml_reader_explains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(PYPROJECT)
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    with pytest.raises(BenchError, match=r"pyproject.toml: .*Python 3.11\+ or, on Python 3.10, the 'tomli' package"):
        load_command_arms(pyproject)


def test_parse_command_arm_option(tmp_path: Path) -> None:
    command = parse_command_arm_option('mine={"argv": ["bin/tool", "{query}"], "ranking": "ids[]", "timeout": 5}', base_dir=tmp_path)
    assert (command.name, command.spec.timeout, command.spec.argv) == ("mine", 5.0, (str(tmp_path / "bin/tool"), "{query}"))
    with pytest.raises(InputError, match="expected NAME=JSON"):
        parse_command_arm_option('{"argv": ["t"]}')
    with pytest.raises(InputError, match="^--bench-command-arm mine: malformed JSON"):
        parse_command_arm_option("mine={argv")
    with pytest.raises(InputError, match="^--bench-command-arm mine: an arm is a table"):
        parse_command_arm_option("mine=[1]")


# -- running -------------------------------------------------------------------------------------
def test_command_arm_against_the_stub(snapshot: Any, stub: str) -> None:
    command = arm(argv=[stub, "query", "--task", "{query}", "--limit", "{k}"], ranking="results[].path", state="state",
                  abstain_states=["OUT_OF_SCOPE"])
    answer = command.retrieve(request(snapshot, k=2))
    assert (answer.ranking, answer.state, answer.abstained, answer.cache_state) == (["README.md", "src/app.py"], "OK", False, "UNRECORDED")
    out_of_scope = command.retrieve(request(snapshot, "STUB:OUT_OF_SCOPE"))
    assert (out_of_scope.ranking, out_of_scope.abstained, out_of_scope.state) == ([], True, "OUT_OF_SCOPE")
    empty = command.retrieve(request(snapshot, "STUB:EMPTY"))
    assert (empty.ranking, empty.abstained, empty.state) == ([], True, "OK")


def test_placeholders_cwd_env_and_query_file(snapshot: Any, tmp_path: Path) -> None:
    command = echo_arm(extra_args=["--k={k}", "{root}", "{changed_file}", "--file", "{query_file}", "{query}"], cwd="src",
                       env={"BENCH_EXTRA": "k={k}"})
    text = '{"q": "keep {k} and {root} verbatim"}'
    answer, seen = run_captured(command, request(snapshot, text, k=7), tmp_path)
    root = snapshot.directory()
    assert seen["args"][:3] == ["--k=7", str(root), "src/app.py"]
    assert seen["args"][-1] == text  # substituted once: placeholders inside the query stay as typed
    assert seen["file_text"] == text and not Path(seen["query_file"]).exists()  # removed after the call
    assert not Path(seen["query_file"]).resolve().is_relative_to(root.resolve())  # never inside the copy
    assert Path(seen["cwd"]).resolve() == (root / "src").resolve()
    assert seen["env"] == "k=7"
    assert answer.ranking == ["README.md", "src/app.py"]  # "./" read as repo-relative, repeats dropped
    assert answer.state == "FINE"


def test_literal_braces(snapshot: Any, tmp_path: Path) -> None:
    command = echo_arm(extra_args=["{{query}}", '{"json": {"kept": 1}}'])
    _, seen = run_captured(command, request(snapshot, "the query"), tmp_path)
    assert seen["args"] == ["{query}", '{"json": {"kept": 1}}']
    with pytest.raises(InputError, match=r"unknown placeholder \{i\}.*write \{\{i\}\} for a literal"):
        echo_arm(extra_args=["f'{i}'"])


def test_packet_bytes_is_the_stdout_length(snapshot: Any, tmp_path: Path) -> None:
    command = echo_arm()
    writer = CaptureWriter(tmp_path / "c.jsonl", {}, [command.descriptor()])
    command.capture = writer
    answer = command.retrieve(request(snapshot))
    writer.close()
    record = json.loads(writer.path.read_text().splitlines()[1])
    assert answer.packet_bytes == record["stdout"]["bytes"] == len(base64.b64decode(record["stdout"]["base64"])) > 0


def test_max_query_chars_bounds_what_the_program_sees(snapshot: Any, tmp_path: Path) -> None:
    command = echo_arm(extra_args=["{query}"], max_query_chars=5)
    assert command.max_query_chars == 5
    _, seen = run_captured(command, request(snapshot, "abcdefghij"), tmp_path)
    assert seen["args"][-1] == "abcde"


def test_abstain_states(snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    command = echo_arm(abstain_states=["NOPE"])
    monkeypatch.setenv("BENCH_STATE", "NOPE")
    answer = command.retrieve(request(snapshot))
    assert (answer.ranking, answer.abstained, answer.state) == ([], True, "NOPE")
    monkeypatch.setenv("BENCH_STATE", "YES")
    assert command.retrieve(request(snapshot)).abstained is False


def test_cache_probe(snapshot: Any) -> None:
    assert echo_arm(cache_probe="README.md").retrieve(request(snapshot)).cache_state == "PRIMED_SHARED"
    assert echo_arm(cache_probe=".git/tool-cache").retrieve(request(snapshot)).cache_state == "COLD_UNIQUE"


def test_changed_file_required(snapshot: Any) -> None:
    with pytest.raises(ArmError, match="^no changed_file in query$"):
        echo_arm(requires_changed_file=True).retrieve(request(snapshot, changed=None))
    with pytest.raises(ArmError, match="^no changed_file in query$"):
        echo_arm(extra_args=["{changed_file}"]).retrieve(request(snapshot, changed=None))
    assert echo_arm().retrieve(request(snapshot, changed=None)).ranking == ["README.md", "src/app.py"]


@pytest.mark.parametrize("program, fields, message", [
    ("import sys\nfor i in range(8): print(f'oops {{i}}', file=sys.stderr)\nsys.exit(2)", {}, "exited with status 2; stderr: oops 0 | oops 1 | oops 2 | oops 3 | oops 4"),
    ("import sys; print('warn', file=sys.stderr); print('{bad')", {}, "stdout is not JSON"),
    ("print('')", {}, "stdout is not JSON"),
    ("import json; print(json.dumps({'hits': []}))", {}, "ranking path 'ids[]' does not resolve: the document has no key 'ids'"),
    ("import json; print(json.dumps({'ids': ['a']}))", {"state": "meta.state"}, "state path 'meta.state' does not resolve"),
    ("import json; print(json.dumps({'ids': ['README.md', 3]}))", {}, "ranking entry 1 is not a string: 3"),
])
def test_failures_are_errors_with_stderr(snapshot: Any, program: str, fields: dict[str, Any], message: str) -> None:
    command = arm(argv=[sys.executable, "-c", program], ranking="ids[]", **fields)
    with pytest.raises(ArmError) as raised:
        command.retrieve(request(snapshot))
    assert message in str(raised.value)
    if "oops" in message:
        assert "oops 5" not in str(raised.value)
    if "warn" in program:
        assert "stderr: warn" in str(raised.value)


def test_timeout_kills_the_program_and_its_children(snapshot: Any) -> None:
    program = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    command = arm(argv=[sys.executable, "-c", program], ranking="ids[]", timeout=1)
    started = time.monotonic()
    with pytest.raises(ArmError, match="timed out after 1 s"):
        command.retrieve(request(snapshot))
    assert time.monotonic() - started < 15  # a child left holding the pipe would block the read


def test_missing_program_and_missing_cwd(snapshot: Any) -> None:
    with pytest.raises(ArmError, match="executable 'no-such-program-here' not found"):
        arm(argv=["no-such-program-here"], ranking="ids[]").retrieve(request(snapshot))
    with pytest.raises(ArmError, match="working directory 'nope' is not a directory"):
        echo_arm(cwd="nope").retrieve(request(snapshot))


def test_stdout_is_bounded(tmp_path: Path) -> None:
    invocation = run_program([sys.executable, "-c", "print('x' * 100)"], tmp_path, {}, 10, stdout_limit=10)
    assert invocation.stdout == b"x" * 10 and invocation.stdout_total > 10 and invocation.stdout_overflow
    assert "stdout exceeded 8 MiB" in (problem_of(Invocation([], stdout=b"x", stdout_total=2)) or "")
    assert "stdout exceeded 10 bytes" in (problem_of(invocation) or "")


def test_identity_is_the_program_digest_cached(tmp_path: Path) -> None:
    program = tmp_path / "ranker"
    program.write_text("#!/bin/sh\necho '{}'\n")
    program.chmod(0o755)
    command = arm(argv=[str(program)], ranking="ids[]")
    expected = "command:ranker:sha256:" + hashlib.sha256(program.read_bytes()).hexdigest()
    assert arm_identity(command, "t") == expected
    program.write_text("#!/bin/sh\necho changed\n")
    assert command.identity() == expected  # computed once per run
    assert arm_identity(arm(argv=["no-such-program-here"], ranking="ids[]"), "t") == "NOT_RUN"


def test_through_the_runner(tmp_path: Path, snapshot: Any) -> None:
    tree = tmp_path / "tree"
    copies = PrivateCopies(tmp_path / "copies2", owned_root=tmp_path / "copies2")
    try:
        store = SnapshotStore(SnapshotResolver(explicit={f"{REPO}@{COMMIT}": tree}), copies, None)
        sample = Sample(id="s9", task_type="code2test", repo=REPO, base_commit=COMMIT, query={}, query_text="q" * 50,
                        gold_files=("src/app.py",), given_files=("README.md",), hard_negatives=(), no_gold=False,
                        organic=False, changed_file=None, source="x", line=1)
        record = run_arm(sample, echo_arm(max_query_chars=20, cache_probe="src"), store, 5)
    finally:
        copies.cleanup()
        copies.restore_signals()
    assert record["error"] is None
    assert (record["query_chars"], record["query_truncated"]) == (50, True)
    assert record["ranking"] == ["src/app.py"]  # the given file left the ranking
    assert (record["state"], record["cache_state"], record["metrics"]["mrr@k"]) == ("FINE", "PRIMED_SHARED", 1.0)
    assert record["packet_bytes"] > 0


def test_a_query_with_a_nul_byte_names_the_cause(snapshot: Any, tmp_path: Path) -> None:
    """A NUL cannot go on a command line: a clear arm error, and {query_file} still carries it."""
    with pytest.raises(ArmError, match="the query holds a NUL byte.*pass it with \\{query_file\\}"):
        echo_arm(extra_args=["{query}"]).retrieve(request(snapshot, "a\x00b"))
    _, seen = run_captured(echo_arm(extra_args=["--file", "{query_file}"]), request(snapshot, "a\x00b"), tmp_path)
    assert seen["file_text"] == "a\x00b"


def test_a_long_ranking_is_read_in_linear_time() -> None:
    """100,000 distinct paths (a 3 MB packet, under the output limit) once took minutes: a list scan per entry."""
    from pytest_retrieval_bench.arms.command import distinct_strings

    values = [f"src/module_{number}.py" for number in range(100_000)]
    assert distinct_strings(values + values[:10], "ranking") == values  # repeats dropped, order kept
    with pytest.raises(ArmError, match="ranking entry 3 is not a string"):
        distinct_strings(["a", "b", "c", 4], "ranking")


def test_a_ranking_above_the_entry_limit_is_refused_at_once() -> None:
    from pytest_retrieval_bench.arms.base import MAX_RANKING_ENTRIES, Answer
    from pytest_retrieval_bench.arms.command import distinct_strings

    too_many = ["a"] * (MAX_RANKING_ENTRIES + 1)
    with pytest.raises(ArmError, match="ranking has 1,000,001 entries, above the limit of 1,000,000"):
        distinct_strings(too_many, "ranking")
    with pytest.raises(ValueError, match="ranking has 1,000,001 entries"):
        Answer(ranking=(f"f{n}" for n in range(MAX_RANKING_ENTRIES + 1)))
    with pytest.raises(ValueError, match="spans has 1,000,001 entries"):
        Answer(ranking=["a"], spans=[{"path": "a"}] * (MAX_RANKING_ENTRIES + 1))
    assert len(Answer(ranking=too_many[:MAX_RANKING_ENTRIES]).ranking) == MAX_RANKING_ENTRIES


ESCAPER = """
import os, subprocess, sys, time
# a grandchild that leaves the program's session and keeps stdout open, then the program exits
subprocess.Popen([sys.executable, "-c", "import os, time; open({pidfile!r}, 'w').write(str(os.getpid())); time.sleep(120)"],
                 start_new_session=True)
while not os.path.exists({pidfile!r}):
    time.sleep(0.01)
print('{{"ids": ["src/app.py"]}}', flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))  # a zombie has ended


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finding escaped processes reads /proc")
def test_an_escaped_grandchild_holding_stdout_is_killed(snapshot: Any, tmp_path: Path) -> None:
    """A grandchild in a session of its own holding stdout: the call ends when the program exits,
    with the program's answer (not at its timeout, not when the grandchild does), and the
    grandchild is killed, not left behind."""
    pidfile = tmp_path / "grandchild.pid"
    command = arm(argv=[sys.executable, "-c", ESCAPER.format(pidfile=str(pidfile))], ranking="ids[]", timeout=60)
    assert command.retrieve(request(snapshot)).ranking == ["src/app.py"]
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


DAEMON = """
import os, subprocess, sys
# a detached helper with its output elsewhere: the program exits at once and succeeds
subprocess.Popen([sys.executable, "-c", "import os, time; open({pidfile!r}, 'w').write(str(os.getpid())); time.sleep(120)"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
import time
while not os.path.exists({pidfile!r}):
    time.sleep(0.01)
print('{{"ids": ["src/app.py"]}}')
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finding escaped processes reads /proc")
def test_a_detached_helper_does_not_outlive_its_call(snapshot: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "helper.pid"
    command = arm(argv=[sys.executable, "-c", DAEMON.format(pidfile=str(pidfile))], ranking="ids[]", timeout=30)
    assert command.retrieve(request(snapshot)).ranking == ["src/app.py"]
    helper = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(helper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(helper)
