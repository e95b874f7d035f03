"""Reading the jobs docs/ci.md shows, as a CI runner would read them: the YAML block under a
heading, a GitHub step's `run: |` script and a GitLab job's `script:` items. The tests that run
these jobs share them, so a change to the docs' layout is followed in one place."""

from __future__ import annotations

import re
from pathlib import Path

CI_DOC = Path(__file__).resolve().parent.parent / "docs" / "ci.md"


def yaml_block(heading: str) -> str:
    """The first YAML block under a docs/ci.md heading (the heading's whole line)."""
    text = CI_DOC.read_text()
    start = text.index(f"\n{heading}\n")
    match = re.search(r"```yaml\n(.*?)```", text[start:], re.S)
    assert match, f"no YAML block under {heading!r} in docs/ci.md"
    return match.group(1)


def github_run(block: str, step: str) -> str:
    """The `run: |` script of the first step whose name starts with `step`, its indentation removed."""
    lines = block.splitlines()
    start = next(number for number, line in enumerate(lines) if line.strip().startswith(f"- name: {step}"))
    run = next(number for number in range(start, len(lines)) if lines[number].strip() == "run: |")
    indent = len(lines[run + 1]) - len(lines[run + 1].lstrip())
    script = []
    for line in lines[run + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        script.append(line[indent:])
    return "\n".join(script).strip() + "\n"


def gitlab_script(job: str) -> list[str]:
    """The first `script:` items of a job, folded as YAML folds `>` scalars (lines joined with spaces);
    blank lines and comments are left out."""
    lines = job.splitlines()
    start = next(number for number, line in enumerate(lines) if line.strip() == "script:")
    items: list[str] = []
    for line in lines[start + 1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not line.startswith("    "):
            break
        if stripped.startswith("- "):
            items.append(stripped[2:])
        else:
            items[-1] = f"{items[-1]} {stripped}" if items[-1] != ">" else stripped
    return [item[2:] if item.startswith("> ") else item for item in items]
