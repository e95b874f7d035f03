"""Every message points at the fix: what the user sees when a run cannot do what was asked, and
the version, help and install lines agree with the README."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

from pytest_retrieval_bench.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


# -- --version ------------------------------------------------------------------------------------


def test_the_console_script_prints_its_version(capsys):
    with pytest.raises(SystemExit) as exited:
        cli_main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"retrieval-bench {version('pytest-retrieval-bench')}"


# -- --help and the README agree on every default -------------------------------------------------

_DEFAULT = re.compile(r"\bdefault(?:s to|:)?\s+(?P<value>.+?)(?=[;,()|]|\.(?:\s|$)|$)", re.IGNORECASE)


def _stated_default(text: str) -> str | None:
    """The default a help text states, with backticks and white space removed (help output wraps lines,
    at spaces and after hyphens), lowercased; None when it states none."""
    match = _DEFAULT.search(text)
    return re.sub(r"\s+", "", match["value"].replace("`", "")).lower() if match else None


def _readme_options() -> dict[str, str | None]:
    section = README.read_text(encoding="utf-8").split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `--bench-([a-z-]+)[^`]*` \| (.*) \|$", section, re.MULTILINE)
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


def test_help_states_the_defaults_the_readme_states(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == 0
    helps, readme = _help_options(result.stdout.lines), _readme_options()
    assert len(helps) > 20 and set(helps) == set(readme), sorted(set(helps) ^ set(readme))
    assert any(readme.values())
    differing = {option: (readme[option], helps[option]) for option in readme if readme[option] != helps[option]}
    assert not differing, differing


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
