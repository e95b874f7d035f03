"""Shared fixtures: where the bundled test data lives."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

# ranx, the independent oracle for the exports, compiles every metric with numba's JIT on first use:
# minutes of CPU per xdist worker for a few dozen samples. Run as the plain Python it is written in,
# it computes the same metrics in milliseconds. Set before any test module imports ranx (numba reads it once).
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def testdata() -> Path:
    return TESTDATA


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


STUB = TESTDATA / "stubs" / "corvint_stub.py"


@pytest.fixture
def stub_wrapper(tmp_path: Path):
    """A factory: an executable shell wrapper named NAME that runs the corvint stub program."""

    def make(name: str) -> str:
        wrapper = tmp_path / "bin" / name
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STUB}" "$@"\n')
        wrapper.chmod(0o755)
        return str(wrapper)

    return make


@pytest.fixture
def pytester(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """pytester whose pytest runs leave hypothesis's plugin out: at the end of every session it imports
    all of hypothesis, about half the CPU time of a small bench run, and no test run here uses it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")  # pytester itself clears any outer value
        yield pytester


@pytest.fixture
def release_bench(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory holding a copy of the bundled release under `release/` (its rootdir)."""
    import shutil

    shutil.copytree(TESTDATA / "release", pytester.path / "release")
    return pytester


@pytest.fixture
def copies(tmp_path: Path):
    """Private copies under the test's directory, cleaned up and the signal handlers restored after."""
    from pytest_retrieval_bench.corpus.copies import PrivateCopies

    private = PrivateCopies(tmp_path / "copies", owned_root=tmp_path / "copies")
    yield private
    private.cleanup()
    private.restore_signals()


@pytest.fixture
def corvint(stub_wrapper) -> str:
    """The corvint stub, as an executable wrapper."""
    return stub_wrapper("corvint")

