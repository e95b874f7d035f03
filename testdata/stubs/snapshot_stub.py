#!/usr/bin/env python3
"""A generic ranker with an index step and a snapshot store, for matched snapshot latency tests.

`snapshot_stub.py index ROOT` writes the store `.ranker/snapshot` (the sorted file list) under ROOT;
`snapshot_stub.py search QUERY K` prints {"status", "hits": [{"path", "score"}]}, reading the store
when it exists ("hit") and walking the tree otherwise ("miss"). With RANKER_SNAPSHOT_TRACE=1 it prints
one stderr line `RANKER_SNAPSHOT_TRACE {"snapshot": "hit"|"miss"}`. RANKER_MODE (comma-separated):
TRACE_NONE, TRACE_BAD, TRACE_MISS, DRIFT (with the store, another ranking), FAIL_COLD (exit 4 on a
miss), DELETE_STORE (a hit removes the store). Each call appends "miss"/"hit" to the file named by
RANKER_LOG, when set, with whether the store existed, so tests can see what each call found.
"""

import json
import os
import shutil
import sys

STORE = os.path.join(".ranker", "snapshot")


def walk(root):
    found = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in (".git", ".ranker"))
        found += [os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/") for name in names]
    return sorted(found)


def main(argv):
    modes = {m for m in os.environ.get("RANKER_MODE", "").split(",") if m}
    if argv[:1] == ["index"]:
        root = argv[1]
        os.makedirs(os.path.join(root, ".ranker"), exist_ok=True)
        with open(os.path.join(root, STORE), "w") as handle:
            json.dump(walk(root), handle)
        return 0
    query, limit = argv[1], int(argv[2])
    hit = os.path.isfile(STORE)
    if os.environ.get("RANKER_LOG"):
        with open(os.environ["RANKER_LOG"], "a") as handle:
            handle.write(("hit" if hit else "miss") + "\n")
    if os.environ.get("RANKER_SNAPSHOT_TRACE") == "1" and "TRACE_NONE" not in modes:
        observed = "miss" if "TRACE_MISS" in modes or not hit else "hit"
        line = "not json" if "TRACE_BAD" in modes else json.dumps({"snapshot": observed})
        sys.stderr.write(f"RANKER_SNAPSHOT_TRACE {line}\n")
    if "FAIL_COLD" in modes and not hit:
        sys.stderr.write("cold call failed on purpose\n")
        return 4
    if hit:
        with open(STORE) as handle:
            paths = json.load(handle)
        if "DELETE_STORE" in modes:
            shutil.rmtree(".ranker")
    else:
        paths = walk(".")
    words = set(query.lower().split())
    ranked = sorted(paths, key=lambda path: (-sum(word in path.lower() for word in words), path))[:limit]
    if hit and "DRIFT" in modes:
        ranked = ranked[::-1]
    print(json.dumps({"status": "OK", "hits": [{"path": path, "score": 1.0 - n / 10} for n, path in enumerate(ranked)]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
