"""Commands that take a repository path accept it relative to the working directory, at any
revision git resolves (git itself runs elsewhere, so the path must be made absolute first)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_retrieval_bench.cli import main as cli_main
from test_format_known_target import _git, commit_widgets


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = commit_widgets(tmp_path_factory.mktemp("repos") / "widgets")
    _git(repo, "tag", "v1")
    return repo


def test_generate_takes_a_relative_repository_at_any_revision(widgets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "work" / "deep"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # not the repository's parent
    relative = Path(os.path.relpath(widgets, elsewhere))  # ../../../repos0/widgets: from any other directory, another place
    assert not relative.is_absolute() and relative.resolve() == widgets.resolve()
    full = _git(widgets, "rev-parse", "HEAD")
    branch = _git(widgets, "rev-parse", "--abbrev-ref", "HEAD")
    banks = []
    for number, revision in enumerate(["HEAD", full, full[:8], branch, "v1", "HEAD~0"]):
        out = Path(f"bank{number}.jsonl")
        code = cli_main(["known-target", "generate", str(relative), "--commit", revision, "--per-intent", "1", "--out", str(out),
                         "--repo-name", "acme/widgets"])
        assert code == 0, (revision, capsys.readouterr().err)
        banks.append(out.read_bytes())
    assert len(set(banks)) == 1 and full.encode() in banks[0]
    code = cli_main(["known-target", "generate", str(relative), "--commit", "no-such-revision", "--per-intent", "1", "--out", "x.jsonl"])
    assert code != 0 and f"'no-such-revision' is not a commit of {relative}" in capsys.readouterr().err
