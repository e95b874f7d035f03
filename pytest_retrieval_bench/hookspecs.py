"""Hooks this plugin offers to conftest files and other plugins."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_retrieval_bench_arms(config: pytest.Config) -> Any:
    """Return an iterable of arms (objects with `name` and `retrieve(request)`) to make selectable.

    Every implementation is called; arms are selected by name with --bench-arms.
    """
