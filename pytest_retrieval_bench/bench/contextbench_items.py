"""ContextBench's trajectory scores of an agent item on a ContextBench row.

A replayed ContextBench record is scored as it was recorded; a live agent's episode is read as
ContextBench steps (each read, with the lines it was shown; the submission as the final context,
`contextbench_records.episode_prediction`). Both are scored against the row's gold spans over the
item's snapshot (`scoring/contextbench_trajectory.py`), and the record keeps the prediction, the
official-shaped result and the `cb_traj_*` metrics. An errored item has no ContextBench figures:
the official evaluator leaves out a task it cannot score, and so does the section.
"""

from __future__ import annotations

from typing import Any

from pytest_retrieval_bench.arms.agents.contextbench_records import as_unified, episode_prediction
from pytest_retrieval_bench.arms.agents.protocol import Episode
from pytest_retrieval_bench.corpus.snapshot import Snapshot
from pytest_retrieval_bench.samples.contextbench import FORMAT
from pytest_retrieval_bench.samples.model import Sample
from pytest_retrieval_bench.scoring.contextbench_context import Gold, GoldSpan, TextCheckout
from pytest_retrieval_bench.scoring.contextbench_trajectory import flat_metrics, score_task

AGENT_ERROR = "agent_error"


def contextbench_gold(sample: Sample) -> Gold:
    """The row's gold spans as ContextBench's `init` (a dataset row has no separate `add`)."""
    return Gold([GoldSpan(span["path"], span["start_line"], span["end_line"]) for span in sample.extra["spans"]])


def contextbench_scores(sample: Sample, episode: Episode, snapshot: Snapshot, error: str | None) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """(the trajectory's `contextbench` block, the `cb_traj_*` metrics); (None, {}) off ContextBench rows."""
    if sample.extra.get("format") != FORMAT or sample.no_gold:
        return None, {}
    prediction = episode.contextbench if episode.contextbench is not None else episode_prediction(episode, snapshot.read_text)
    block: dict[str, Any] = {"prediction": as_unified(prediction)}
    if error:
        block["result"] = {"error": AGENT_ERROR}
        return block, {}
    block["result"] = score_task(contextbench_gold(sample), prediction, TextCheckout(snapshot.texts, snapshot.path_set()))
    return block, flat_metrics(block["result"])
