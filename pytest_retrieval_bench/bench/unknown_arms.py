"""What an unknown arm name's usage error says: where arms are loaded from, and which conftest
below the rootdir defines the name when one does (such a conftest is loaded only when pytest
collects its directory, after the arms were chosen)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Iterable

import pytest

from pytest_retrieval_bench.arms.registry import UnknownArm
from pytest_retrieval_bench.bench.node_ids import parse_node_id
from pytest_retrieval_bench.errors import BenchError

#: directories never searched: virtual environments, caches, version control
SKIPPED_DIRECTORIES = {"node_modules", "__pycache__", "site-packages", "dist-packages", "build", "dist"}
MAX_DIRECTORIES = 5000
MAX_CONFTEST_BYTES = 1 << 20
WHERE_ARMS_COME_FROM = ("arms are loaded at start-up from the rootdir's conftest.py (and those of the test paths given), "
                        "plugins given with -p MODULE, and the pytest_retrieval_bench.arms entry points")


def conftests_naming(rootdir: Path, name: str, skip: Iterable[Path] = ()) -> list[Path]:
    """conftest.py files below `rootdir` whose text holds `name` as a string literal: a cheap text
    search, bounded in the directories it visits, that skips virtual environments and hidden ones."""
    literal = re.compile(rb"""(["'])""" + re.escape(name.encode("utf-8")) + rb"\1")
    skipped = {path.resolve() for path in skip}
    found: list[Path] = []
    visited = 0
    for directory, subdirectories, files in os.walk(rootdir):
        visited += 1
        if visited > MAX_DIRECTORIES:
            break
        subdirectories[:] = sorted(entry for entry in subdirectories if not entry.startswith(".") and entry not in SKIPPED_DIRECTORIES
                                   and not os.path.exists(os.path.join(directory, entry, "pyvenv.cfg")))
        if "conftest.py" not in files:
            continue
        path = Path(directory) / "conftest.py"
        try:
            if path.stat().st_size > MAX_CONFTEST_BYTES or path.resolve() in skipped:
                continue
            text = path.read_bytes()
        except OSError:
            continue
        if literal.search(text):
            found.append(path)
    return found


def unknown_arm_message(error: BenchError, role: str, config: pytest.Config) -> str:
    """The usage error for an arm selection that failed; an unknown name says where arms come from."""
    if not isinstance(error, UnknownArm):
        return str(error)
    if role == "worker":
        return (f"{error} -- on this xdist worker (working directory {Path.cwd()}, rootdir {config.rootpath}): a conftest's arms exist "
                "only where that conftest is loaded; for gateways with another working directory put the arms in a module "
                "given with -p NAME (importable on the worker) or an entry point, or send the conftest with --rsyncdir")
    loaded = [Path(module.__file__) for module in config.pluginmanager.get_plugins() if getattr(module, "__file__", None)]
    base = error.name.split("[", 1)[0]  # a variant `dense[small]` is defined under its arm's name
    defining = conftests_naming(config.rootpath, base, loaded)
    message = f"{error}; {WHERE_ARMS_COME_FROM}"
    if defining:
        shown = ", ".join(os.path.relpath(path, config.rootpath) for path in defining[:3])
        message += (f". {shown} names {base!r} but is not loaded when the arms are chosen: move the arm to "
                    f"{config.rootpath / 'conftest.py'} or into a module given with -p MODULE, or give its directory as a test path "
                    f"(pytest {os.path.relpath(defining[0].parent, config.invocation_params.dir)} --bench-samples=...)")
    return message


def node_id_arm_message(config: pytest.Config, samples_files: Iterable[Path], arm_names: Iterable[str], arms: Iterable[str]) -> str | None:
    """The usage error for a node id given as a test path (`S::ID[arm]`) whose arm this run does not
    select: pytest alone would say only "not found". A pasted node id runs its arm only when the run
    selects it, so a custom arm needs its --bench-arms again (and its conftest's directory)."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return None
    files = {os.path.abspath(path) for path in samples_files}
    selected, defined = set(arm_names), set(arms)
    for arg in map(str, config.args):
        parsed = parse_node_id(arg) if "::" in arg else None
        if parsed is None or parsed[1] in selected or os.path.abspath(config.invocation_params.dir / arg.split("::", 1)[0]) not in files:
            continue
        arm = parsed[1]
        if arm in defined:
            return (f"{arg}: arm {arm!r} is not selected in this run (it selects {', '.join(arm_names)}): a node id runs only an arm the "
                    f"run selects, and custom arms need --bench-arms again: add --bench-arms={arm} to the command")
        loaded = [Path(module.__file__) for module in config.pluginmanager.get_plugins() if getattr(module, "__file__", None)]
        defining = conftests_naming(config.rootpath, arm.split("[", 1)[0], loaded)
        where = f"{os.path.relpath(defining[0].parent, config.invocation_params.dir)} " if defining else "DIRECTORY "
        return (f"{arg}: no arm {arm!r} in this run: custom arms need --bench-arms again, with the directory of the conftest "
                f"that declares them as a test path: pytest {where}{shlex.quote(arg)} --bench-arms={arm}")
    return None
