"""The one sample model every format is read into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STRATA = ("positive", "natural_no_gold", "counterfactual_no_gold")
SKIP_UNLABELED = "no_gold_unlabeled"


@dataclass(frozen=True)
class Sample:
    """One labeled query. Gold fields are read by the scorer only, never handed to an arm."""

    id: str
    task_type: str
    repo: str
    base_commit: str
    query: Any
    query_text: str
    gold_files: tuple[str, ...]
    given_files: tuple[str, ...]
    hard_negatives: tuple[str, ...]
    no_gold: bool
    organic: bool
    changed_file: str | None
    source: str
    line: int
    partition: str = "unassigned"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the given files an arm is told about, when a format's rule differs from `given_files`
    shown_given: tuple[str, ...] | None = None

    @property
    def arm_given_files(self) -> tuple[str, ...]:
        return self.given_files if self.shown_given is None else self.shown_given

    @classmethod
    def positive(cls, *, id: str, task_type: str, repo: str, base_commit: str, query: Any, query_text: str,
                 gold_files: tuple[str, ...], source: str, line: int, extra: dict[str, Any]) -> "Sample":
        """A sample of a format whose gold is files only: no given context, no hard negatives."""
        return cls(id=id, task_type=task_type, repo=repo, base_commit=base_commit, query=query, query_text=query_text,
                   gold_files=gold_files, given_files=(), hard_negatives=(), no_gold=False, organic=False,
                   changed_file=None, source=source, line=line, extra=extra)

    @classmethod
    def from_labels(cls, sample_id: str, labels: dict[str, Any]) -> "Sample":
        """A sample rebuilt from a report's labels, for scoring a ranking offline (file metrics only:
        a format's own metrics need the sample file and the snapshot)."""
        stratum = labels.get("stratum", "positive")
        return cls(id=sample_id, task_type=labels.get("task_type", ""), repo=labels.get("repo", ""), base_commit=labels.get("base_commit", ""),
                   query=None, query_text=labels.get("query_text", ""), gold_files=tuple(labels.get("gold") or ()),
                   given_files=tuple(labels.get("given") or ()), hard_negatives=tuple(labels.get("hard_negatives") or ()),
                   no_gold=stratum != "positive", organic=stratum == "natural_no_gold", changed_file=None, source="", line=0,
                   partition=labels.get("partition", "unassigned"))

    @property
    def labeled(self) -> bool:
        return self.no_gold or bool(self.gold_files)

    @property
    def stratum(self) -> str:
        if not self.no_gold:
            return "positive"
        return "natural_no_gold" if self.organic else "counterfactual_no_gold"

    @property
    def skip_reason(self) -> str | None:
        """A protocol skip: the bench's selective evaluator skips unlabeled rows too.

        A format may name its own reason in `extra["skip_reason"]` (a relevance case whose
        anchors name no file has nothing the file-level metrics could score).
        """
        forced = self.extra.get("skip_reason")
        if forced:
            return str(forced)
        return None if self.labeled else SKIP_UNLABELED

    @property
    def snapshot_key(self) -> str:
        return f"{self.repo}@{self.base_commit}"

    def labels(self) -> dict[str, Any]:
        """The sample's labels as they appear in the report's details."""
        return {
            "repo": self.repo,
            "base_commit": self.base_commit,
            "task_type": self.task_type,
            "stratum": self.stratum,
            "partition": self.partition,
            "gold": list(self.gold_files),
            "given": list(self.given_files),
            "hard_negatives": list(self.hard_negatives),
            "query_text": self.query_text,  # what the arms saw (before any arm's own cut), for people reading the report
        }
