#!/usr/bin/env python3
"""A stand-in for the corvint CLI that prints each verb's packet shape (standard library only).

It exists so the corvint presets can be tested without corvint: every abstention and error
branch is reachable by naming a mode, either as a marker `STUB:MODE` in the task text (query,
context) or in the environment variable CORVINT_STUB_MODE (comma-separated, every verb).

Modes: OUT_OF_SCOPE, NO_CANDIDATES, EMPTY, UNSUPPORTED, UNKNOWN (affected scope), EXIT3 (seven
stderr lines, exit 3), BADJSON, NOT_OBJECT, SLEEP (30 s), BIGERR (100 KiB of stderr first),
DIRTY (affected leaves an untracked file), MUTATE (affected overwrites the dirty files),
PRIME (creates .git/corvint/index, as an index build would).

Matched snapshot latency: `index` builds .git/corvint/index. With CORVINT_BENCH_SNAPSHOT_TRACE=1,
query and context print one stderr line `CORVINT_BENCH_SNAPSHOT_TRACE {"snapshot": "hit"|"miss"}`,
"hit" when .git/corvint/index exists. Modes: TRACE_NONE (no line), TRACE_BAD (malformed line),
TRACE_TWICE (two lines), TRACE_MISS (always "miss"), DRIFT (with a store, another ranking),
SCORE_DRIFT (with a store, another top score), COLD_WRITES (a miss writes a store of its own),
INDEX_FAIL (index exits 5), INDEX_NOOP (index builds nothing), EXIT3_COLD (exit 3 on a miss).
CORVINT_STUB_TOUCH=PATH appends a line to PATH on every query and context call.
Context results carry a `score`.

Verbs: query --task TEXT|--task-file PATH --limit N; context (same); impact PATH --limit N;
[--root DIR] affected. Normal packets list the tree's files, with one repeated entry so a
reader's de-duplication is exercised, and echo what the stub was given.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import time


def files(root):
    found = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for name in sorted(names):
            found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(found)


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def emit(packet):
    sys.stdout.write(json.dumps(packet))
    sys.stdout.write("\n")


def main(argv):
    args = list(argv)
    if args == ["--version"]:
        sys.stdout.write("corvint-stub 0.0.1\n")
        return 0
    root = os.getcwd()
    if args[:1] == ["--root"]:
        root, args = args[1], args[2:]
    verb = args[0] if args else ""
    task = option(args, "--task", "")
    if "--task-file" in args:
        with open(option(args, "--task-file"), encoding="utf-8") as handle:
            task = handle.read()
    limit = int(option(args, "--limit", "20"))
    modes = {m for m in os.environ.get("CORVINT_STUB_MODE", "").split(",") if m}
    modes |= set(re.findall(r"STUB:([A-Z0-9_]+)", task))
    if "BIGERR" in modes:
        sys.stderr.write("x" * 100 * 1024 + "\n")
    if "SLEEP" in modes:
        time.sleep(30)
    if "PRIME" in modes:
        os.makedirs(os.path.join(root, ".git", "corvint"), exist_ok=True)
        with open(os.path.join(root, ".git", "corvint", "index"), "w") as handle:
            handle.write("index\n")
    store = os.path.join(root, ".git", "corvint", "index")
    if verb == "index":
        if "INDEX_FAIL" in modes:
            sys.stderr.write("index failed on purpose\n")
            return 5
        if "INDEX_NOOP" not in modes:
            os.makedirs(os.path.dirname(store), exist_ok=True)
            with open(store, "w") as handle:
                handle.write("indexed\n")
        return 0
    hit = os.path.isfile(store)
    if os.environ.get("CORVINT_STUB_TOUCH") and verb in ("query", "context"):
        with open(os.environ["CORVINT_STUB_TOUCH"], "a") as handle:  # a file changed during the run
            handle.write("\n# touched by the stub\n")
    if os.environ.get("CORVINT_BENCH_SNAPSHOT_TRACE") == "1" and verb in ("query", "context"):
        observed = "miss" if "TRACE_MISS" in modes else ("hit" if hit else "miss")
        line = json.dumps({"snapshot": observed, "store": ".git/corvint/index"})
        if "TRACE_BAD" in modes:
            line = "{snapshot: hit"
        if "TRACE_NONE" not in modes:
            for _ in range(2 if "TRACE_TWICE" in modes else 1):
                sys.stderr.write(f"CORVINT_BENCH_SNAPSHOT_TRACE {line}\n")
        if "COLD_WRITES" in modes and not hit:
            os.makedirs(os.path.dirname(store), exist_ok=True)
            with open(store, "w") as handle:
                handle.write("written by a cold call\n")
        if "EXIT3_COLD" in modes and not hit:
            sys.stderr.write("cold call failed on purpose\n")
            return 3
    tree = files(root)
    echo = {"verb": verb, "task": task, "limit": limit, "cwd": os.getcwd(), "args": args}

    if verb == "affected":
        status = subprocess.run(["git", "-C", root, "status", "--porcelain"], capture_output=True, text=True, check=True).stdout
        dirty = [line[3:] for line in status.splitlines()]
        observed = {}
        for path in dirty:
            with open(os.path.join(root, path), "rb") as handle:
                observed[path] = hashlib.sha256(handle.read()).hexdigest()
            if "MUTATE" in modes:
                with open(os.path.join(root, path), "wb") as handle:
                    handle.write(b"garbage written by the stub\n")
        if "DIRTY" in modes:
            with open(os.path.join(root, "stray.txt"), "w") as handle:
                handle.write("left behind\n")
    if "EXIT3" in modes:
        for number in range(1, 8):
            sys.stderr.write(f"stub error line {number}\n")
        return 3
    if "BADJSON" in modes:
        sys.stdout.write("{not json\n")
        return 0
    if "NOT_OBJECT" in modes:
        emit([])
        return 0

    if verb in ("query", "context"):
        if verb == "context" and len(task) > 32000:
            sys.stderr.write("task exceeds 32000 characters\n")
            return 2
        key = "path" if verb == "query" else "id"
        if hit and "DRIFT" in modes:
            tree = tree[::-1]
        results = [{key: path} for path in tree[:limit]]
        if verb == "context":
            top = 0.5 if hit and "SCORE_DRIFT" in modes else 0.9
            results = [{**result, "score": round(top - number / 100, 4)} for number, result in enumerate(results)]
        results += results[:1]
        state = "OK"
        if "OUT_OF_SCOPE" in modes:
            state = "OUT_OF_SCOPE"
        if "NO_CANDIDATES" in modes:
            state, results = "NO_CANDIDATES", []
        if "EMPTY" in modes:
            results = []
        echo["store"] = hit
        packet = {"state": state, "results": results, "echo": echo}
        if verb == "context":
            verdict = "unsupported-conjunction" if "UNSUPPORTED" in modes else "supported"
            packet["coverage"] = {"answerability": {"verdict": verdict}}
        emit(packet)
        return 0

    if verb == "impact":
        changed = args[1] if len(args) > 1 else ""
        if limit > 50:
            sys.stderr.write("refused: --limit above 50\n")
            return 2
        if changed not in tree:
            sys.stderr.write(f"refused: {changed} is not tracked\n")
            return 4
        evidence = [{"path": changed}] + [{"path": path} for path in tree if path != changed][:limit]
        evidence += evidence[1:2]
        state = "OUT_OF_SCOPE" if "OUT_OF_SCOPE" in modes else "OK"
        if "EMPTY" in modes:
            evidence = [{"path": changed}]
        emit({"state": state, "evidence": evidence, "echo": echo})
        return 0

    if verb == "affected":
        tests = [path for path in tree if "test" in path.rsplit("/", 1)[-1]]
        selected = [{"unit": "dirty", "tests": dirty + tests}, {"unit": "again", "tests": tests[:1]}] if dirty else []
        unknowns = [] if dirty else [{"kind": "UNOWNED_DIRTY_PATH"}]
        if "EMPTY" in modes:
            selected = [{"unit": "dirty", "tests": dirty}]
        scope = "UNKNOWN" if "UNKNOWN" in modes else "BOUNDED"
        emit({"plan": {"scope": scope, "selected": selected, "unknowns": unknowns}, "observed": observed, "echo": echo})
        return 0

    sys.stderr.write(f"unknown verb {verb!r}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
