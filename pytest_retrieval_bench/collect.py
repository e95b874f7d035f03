"""pytest nodes: one collector per samples file, one item per sample x arm, named `<id>[<arm>]`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import pytest

from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.samples.model import Sample

if TYPE_CHECKING:
    from pytest_retrieval_bench.bench.session import BenchSession

RECORD_KEY = pytest.StashKey[dict[str, Any]]()


class ItemFailure(BenchError):
    """Raised from an item to fail it with a one-line message and no traceback."""


class BenchFile(pytest.File):
    """The items of one samples file (it may live outside the rootdir, so the nodeid is given)."""

    bench: "BenchSession"
    index: int

    def collect(self) -> Iterator[pytest.Item]:
        loaded = self.bench.loaded[self.index]
        for number, problem in enumerate(loaded.problems, start=1):
            line = f"line{problem.line}" if problem.line is not None else f"file{number}"
            yield InvalidRowItem.from_parent(self, name=f"invalid-{line}", message=str(problem))
        for sample in self.bench.selected_samples(self.index):
            for arm in self.bench.arm_names:
                item = BenchItem.from_parent(self, name=f"{sample.id}[{arm}]", sample=sample, arm=arm)
                yield item


class BenchItem(pytest.Item):
    def __init__(self, *, sample: Sample, arm: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.sample = sample
        self.arm = arm
        owner, _, name = sample.repo.partition("/")
        self.extra_keyword_matches.update({sample.id, sample.repo, owner, name, sample.task_type, sample.stratum, arm})
        self.add_marker(pytest.mark.xdist_group(sample.snapshot_key))

    @property
    def bench(self) -> "BenchSession":
        return self.parent.bench  # type: ignore[union-attr]

    def runtest(self) -> None:
        record = self.bench.run(self.sample, self.arm)
        self.stash[RECORD_KEY] = record
        if record.get("skipped"):
            pytest.skip(record["skipped"])
        for name, value in self.bench.junit_properties(record):
            self.user_properties.append((name, value))
        if record["error"]:
            raise ItemFailure(f"arm {self.arm} failed on {self.sample.id}: {record['error']}")
        regression = self.bench.regression(record)
        if regression:
            raise ItemFailure(f"{self.sample.id} ({self.sample.repo}) regressed against the baseline with arm {self.arm}: {regression}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, BenchError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.sample.line - 1, f"{self.sample.id}[{self.arm}] ({self.sample.repo}, {self.sample.task_type})"


class InvalidRowItem(pytest.Item):
    """A samples row that could not be read: fails with file, line and field; others still run."""

    def __init__(self, *, message: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.message = message

    def runtest(self) -> None:
        raise ItemFailure(self.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name
