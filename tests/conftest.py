"""Shared fixtures: where the bundled test data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def testdata() -> Path:
    return TESTDATA


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
