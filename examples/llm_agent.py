"""An example command agent: a model picks each closed-tool action, over JSON lines.

The run starts this program once per item and writes the task as the first line of its stdin; the
program writes one action per line and reads one observation line back, until it submits. The
model is behind `client`: a real chat-completions endpoint when AGENT_API_URL and AGENT_API_KEY
are set (a CI secret, read from the environment only), otherwise a scripted stand-in that runs
offline: grep the query's longest word, read the best hits, submit what was read.

    pytest --bench-samples=testdata/release/benchmark/synthetic_v1/samples.jsonl \
        --bench-corpus=testdata/release/corpus/synthetic_v1 --bench-arms=llm-agent,grep \
        --bench-command-arm 'llm-agent={"kind": "agent", "argv": ["python", "examples/llm_agent.py"], "timeout": 120}'
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.request
from typing import Any

PROMPT = """You find the files a coding agent needs, with four tools only. Answer with one JSON object:
{{"tool": "grep", "pattern": "..."}}, {{"tool": "read_file", "path": "..."}}, {{"tool": "list_dir", "path": "..."}}
or {{"tool": "submit", "files": ["..."]}} (only files you read count).
Task: {query}
What the tools showed so far:
{history}"""


class ScriptedModel:
    """A stand-in for the model, so the agent runs without a network or a key."""

    def complete(self, task: dict[str, Any], history: list[dict[str, Any]]) -> str:
        words = sorted(set(re.findall(r"[A-Za-z][a-z]{4,}", task["query"])), key=lambda word: (-len(word), word)) or ["main"]
        greps = [line for line in history if line.get("tool") == "grep" and line.get("ok")]
        read = [line["path"] for line in history if line.get("tool") == "read_file" and line.get("ok")]
        if not greps or (not greps[-1].get("hits") and len(greps) < min(3, len(words))):
            return json.dumps({"tool": "grep", "pattern": words[len(greps)]})  # the next longest word while nothing is found
        tried = {line.get("path") for line in history if line.get("tool") == "read_file"}
        for hit in greps[-1].get("hits", [])[:2]:
            if hit["path"] not in tried:
                return json.dumps({"tool": "read_file", "path": hit["path"]})
        return json.dumps({"tool": "submit", "files": read})


class ChatModel:
    """A chat-completions endpoint; the key comes from the environment and is sent nowhere else."""

    def __init__(self, url: str, key: str, model: str):
        self.url, self.key, self.model = url, key, model

    def complete(self, task: dict[str, Any], history: list[dict[str, Any]]) -> str:
        shown = "\n".join(line["observation"] for line in history) or "(nothing yet)"
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": PROMPT.format(query=task["query"], history=shown)}]})
        request = urllib.request.Request(self.url, body.encode(), {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["choices"][0]["message"]["content"]


def first_object(text: str) -> str:
    """The model's first JSON object on one line (a reply may wrap it in prose); the text itself if none."""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    try:
        return json.dumps(json.loads(match[0])) if match else text.replace("\n", " ")
    except json.JSONDecodeError:
        return text.replace("\n", " ")  # sent as it is: the run answers with an error observation


def main() -> int:
    url, key = os.environ.get("AGENT_API_URL"), os.environ.get("AGENT_API_KEY")
    client = ChatModel(url, key, os.environ.get("AGENT_MODEL", "gpt-4o-mini")) if url and key else ScriptedModel()
    task = json.loads(sys.stdin.readline())["task"]
    history: list[dict[str, Any]] = []
    while True:
        print(first_object(client.complete(task, history)), flush=True)
        line = sys.stdin.readline()
        if not line:
            return 0  # the run ended the episode
        observation = json.loads(line)
        history.append(observation)
        if observation.get("done"):
            return 0


if __name__ == "__main__":
    sys.exit(main())
