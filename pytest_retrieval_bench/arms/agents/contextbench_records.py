"""ContextBench's unified prediction records, read for replay, and a live agent's episode in the same shape.

A record (what ContextBench's `process_trajectories` and agent extractors write) is
`{"instance_id", "traj_data": {"pred_steps": [{"files", "spans", "symbols"}], "pred_files",
"pred_spans", "pred_symbols"}, "model_patch"}`, `spans` mapping a path to `[{"start", "end"}]`
line ranges and `symbols` a path to names; a file holds a JSON list of records or one per line.
Where the official loader would crash or silently misread, a record here is refused naming file,
line (where the record starts) and field. An empty `pred_steps`
means the final context is the one step, as the official parser has it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_retrieval_bench.arms.agents.observations import token_prefix
from pytest_retrieval_bench.arms.agents.protocol import Episode, context_step
from pytest_retrieval_bench.errors import InputError
from pytest_retrieval_bench.files.jsonl import json_lines
from pytest_retrieval_bench.scoring.contextbench_context import Checkout, ContextStep, Span, filter_step
from pytest_retrieval_bench.scoring.contextbench_trajectory import Prediction


def is_unified_record(row: dict[str, Any]) -> bool:
    """A ContextBench record, not one of the bench's step or trajectory rows."""
    return "traj_data" in row or (("instance_id" in row or "original_inst_id" in row) and "sample_id" not in row and "path" not in row)


def _or(value: Any, default: Any) -> Any:
    """A missing or null field as its empty default (as the official reads it); anything else as given."""
    return default if value is None else value


def _fail(source: str, line: int, field: str, message: str) -> InputError:
    return InputError(source, message, line=line, field=field)


def _paths(value: Any, source: str, line: int, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(path, str) for path in value):
        raise _fail(source, line, field, f"expected a list of path strings, got {value!r:.80}")
    return list(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _spans(value: Any, source: str, line: int, field: str) -> list[Span]:
    if not isinstance(value, dict):
        raise _fail(source, line, field, f"expected an object of path -> [{{start, end}}], got {type(value).__name__}")
    spans: list[Span] = []
    for path, ranges in value.items():
        if not isinstance(ranges, list):
            raise _fail(source, line, f"{field}[{path!r}]", f"expected a list of {{start, end}}, got {type(ranges).__name__}")
        for index, item in enumerate(ranges):
            if not isinstance(item, dict) or not _integer(item.get("start")) or not _integer(item.get("end")):
                raise _fail(source, line, f"{field}[{path!r}][{index}]", f"expected {{\"start\": int, \"end\": int}}, got {item!r:.80}")
            spans.append(Span(path, item["start"], item["end"]))
    return spans


def _symbols(value: Any, source: str, line: int, field: str) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(source, line, field, f"expected an object of path -> [name], got {type(value).__name__}")
    for path, names in value.items():
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise _fail(source, line, f"{field}[{path!r}]", f"expected a list of symbol names, got {names!r:.80}")
    return {path: list(names) for path, names in value.items()}


def _step(value: Any, source: str, line: int, field: str, keys: tuple[str, str, str]) -> ContextStep:
    if not isinstance(value, dict):
        raise _fail(source, line, field, f"expected an object, got {type(value).__name__}")
    files, spans, symbols = keys
    prefix = f"{field}." if field else ""
    return ContextStep(_paths(_or(value.get(files), []), source, line, prefix + files), _spans(_or(value.get(spans), {}), source, line, prefix + spans),
                       _symbols(value.get(symbols), source, line, prefix + symbols))


def parse_record(row: Any, source: str, line: int) -> tuple[str, Prediction]:
    """(instance id, prediction) of one unified record."""
    if not isinstance(row, dict):
        raise _fail(source, line, "", f"expected a JSON object, got {type(row).__name__}")
    instance_id = row.get("instance_id") or row.get("original_inst_id")
    if not isinstance(instance_id, str) or not instance_id.strip():
        raise _fail(source, line, "instance_id", "a record needs a non-empty instance_id string")
    data = _or(row.get("traj_data"), {})
    if not isinstance(data, dict):
        raise _fail(source, line, "traj_data", f"expected an object, got {type(data).__name__}")
    raw_steps = _or(data.get("pred_steps"), [])
    if not isinstance(raw_steps, list):
        raise _fail(source, line, "traj_data.pred_steps", f"expected a list of steps, got {type(raw_steps).__name__}")
    final = _step(data, source, line, "traj_data", ("pred_files", "pred_spans", "pred_symbols"))
    steps = [_step(step, source, line, f"traj_data.pred_steps[{index}]", ("files", "spans", "symbols")) for index, step in enumerate(raw_steps)]
    patch = row.get("model_patch")
    if patch is not None and not isinstance(patch, str):
        raise _fail(source, line, "model_patch", f"expected a string, got {type(patch).__name__}")
    return instance_id.strip(), Prediction(steps=steps or [final], final=final, model_patch=patch or None)


_SPACE = re.compile(r"\s*")


def _list_records(text: str, source: str) -> list[tuple[int, Any]]:
    """(line where it starts, record) of each element of a JSON list, in one pass over the text."""
    decoder, found = json.JSONDecoder(), []
    position, counted, line = _SPACE.match(text, text.index("[") + 1).end(), 0, 1

    def line_at(offset: int) -> int:
        nonlocal counted, line
        line, counted = line + text.count("\n", counted, offset), offset
        return line

    while not text.startswith("]", position):
        start = line_at(position)
        try:
            row, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise InputError(source, f"not a JSON list: {error.msg}", line=line_at(max(error.pos, counted))) from None
        found.append((start, row))
        position = _SPACE.match(text, position).end()
        if text.startswith(",", position):
            position = _SPACE.match(text, position + 1).end()
        elif not text.startswith("]", position):
            raise InputError(source, "not a JSON list: expected ',' or ']' after a record", line=line_at(position))
    return found


def first_list_record(data: bytes) -> Any:
    """The first element of a file that starts as a JSON list (`[]` for an empty list), decoding
    nothing else; None when it is not one."""
    try:
        text = data.decode("utf-8")
        position = _SPACE.match(text, text.index("[") + 1).end()
        return [] if text.startswith("]", position) else json.JSONDecoder().raw_decode(text, position)[0]
    except (UnicodeDecodeError, ValueError):  # JSONDecodeError is a ValueError
        return None


def parse_records(data: bytes, source: str) -> list[tuple[int, Any]]:
    """(line, record) of a JSON list or of JSON lines: the line where each record starts."""
    if data.lstrip()[:1] == b"[":
        try:
            return _list_records(data.decode("utf-8"), source)
        except UnicodeDecodeError as error:
            raise InputError(source, f"not UTF-8: {error}") from None
    return list(json_lines(data, source))


def as_unified(prediction: Prediction) -> dict[str, Any]:
    """A prediction as a unified record's `traj_data` and `model_patch` (kept in an item's record)."""
    def step(value: ContextStep, keys: tuple[str, str, str]) -> dict[str, Any]:
        spans: dict[str, list[dict[str, int]]] = {}
        for span in value.spans:
            spans.setdefault(span.path, []).append({"start": span.start, "end": span.end})
        return {keys[0]: list(value.files), keys[1]: spans, keys[2]: {path: list(names) for path, names in value.symbols.items()}}
    return {"traj_data": {"pred_steps": [step(value, ("files", "spans", "symbols")) for value in prediction.steps],
                          **step(prediction.final, ("pred_files", "pred_spans", "pred_symbols"))},
            "model_patch": prediction.model_patch}


def from_unified(record: dict[str, Any]) -> Prediction:
    """`as_unified` read back (a record this module wrote, so no checks are repeated)."""
    return parse_record({"instance_id": "-", **record}, "<record>", 0)[1]


def shown_lines(text: str, tokens: int) -> int:
    """How many lines of `text` a read shown `tokens` tokens (the bench's cut) let the agent see."""
    shown = token_prefix(text, tokens)
    if shown != text:
        shown = shown[: -len("\n[TRUNCATED]")]
    return max(1, shown.count("\n") + (0 if shown.endswith("\n") else 1))


def episode_prediction(episode: Episode, read_text: Any) -> Prediction:
    """A live agent's episode as ContextBench steps: each accepted `read_file` is a step of its
    file and the lines it was shown (1 to the last line its read tokens reached); the final
    context is the final files with the lines read of them."""
    steps: list[ContextStep] = []
    seen: dict[str, Span] = {}
    for call in episode.calls:
        if call.tool != "read_file" or call.refusal or not call.path:
            continue
        span = Span(call.path, 1, shown_lines(read_text(call.path) or "", call.tokens))
        seen[call.path] = span
        steps.append(ContextStep([call.path], [span], {}))
    final_files = list(dict.fromkeys(episode.final_files))
    final = ContextStep(final_files, [seen[path] for path in final_files if path in seen], {})
    return Prediction(steps=steps or [final], final=final, model_patch=None)


def replay_episode(prediction: Prediction, checkout: Checkout) -> Episode:
    """A replayed record as an episode: one whole-file step per file a step names (its files, then
    its spans' files), resolved as ContextBench resolves paths, final when the final context names
    it; the final files are the final context's. The prediction itself rides along for scoring."""
    def paths(step: ContextStep) -> list[str]:
        kept = filter_step(step, checkout)
        return list(dict.fromkeys([*kept.files, *(span.path for span in kept.spans)]))
    final = paths(prediction.final)
    steps = [context_step(number, "read", path, final=path in final) for number, step in enumerate(prediction.steps, start=1) for path in paths(step)]
    return Episode(budgets=None, calls=[], steps=steps, final_files=final, submitted_files=final, fallback=False,
                   tool_calls=None, grep_calls=None, read_calls=None, read_tokens=None,  # type: ignore[arg-type]  # not recorded
                   extra={"policy": "replay"}, contextbench=prediction)
