"""Top-level conftest: the project's own test suite drives pytest in subprocesses with pytester."""

pytest_plugins = ("pytester",)
