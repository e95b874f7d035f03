"""`retrieval-bench summarize`: merge written reports outside pytest (same rules as --bench-summarize)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_retrieval_bench.arms.registry import BUILTIN_ARMS
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.merge import merge_reports
from pytest_retrieval_bench.report import canonical_json, write_atomically


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="retrieval-bench")
    commands = parser.add_subparsers(dest="command", required=True)
    summarize = commands.add_parser("summarize", help="merge reports by sample id and rebuild every summary section")
    summarize.add_argument("reports", nargs="+", type=Path)
    summarize.add_argument("--output", "-o", type=Path, required=True)
    summarize.add_argument("--arm", action="append", default=[], help="a non-built-in arm name the reports may contain (repeatable)")
    summarize.add_argument("--baseline-arms", default=",".join(BUILTIN_ARMS))
    args = parser.parse_args(argv)
    try:
        report = merge_reports(args.reports, [*BUILTIN_ARMS, *args.arm], [a for a in args.baseline_arms.split(",") if a])
    except BenchError as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 2
    write_atomically(args.output, canonical_json(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
