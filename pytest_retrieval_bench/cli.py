"""`retrieval-bench`: merge written reports, render one as an HTML page, generate known-target case banks."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from pytest_retrieval_bench.arms.registry import BUILTIN_ARMS, CORVINT_ARMS
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.report.merge import merge_reports
from pytest_retrieval_bench.report.build import canonical_json, write_atomically


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="retrieval-bench")
    commands = parser.add_subparsers(dest="command", required=True)
    summarize = commands.add_parser("summarize", help="merge reports by sample id and rebuild every summary section")
    summarize.add_argument("reports", nargs="+", type=Path)
    summarize.add_argument("--output", "-o", type=Path, required=True)
    summarize.add_argument("--arm", action="append", default=[], help="a non-built-in arm name the reports may contain (repeatable)")
    summarize.add_argument("--baseline-arms", default=",".join(BUILTIN_ARMS))
    page = commands.add_parser("html", help="a self-contained HTML page of a written report (a run, a merge or a baseline comparison)")
    page.add_argument("report", type=Path)
    page.add_argument("--output", "-o", type=Path, required=True)
    known = commands.add_parser("known-target", help="known-target-v1 case banks")
    known_commands = known.add_subparsers(dest="known_command", required=True)
    generate = known_commands.add_parser("generate", help="derive a case bank from a git repository's blobs at one commit")
    generate.add_argument("repo", type=Path, help="a git repository (bare or not); its working tree is never read")
    generate.add_argument("--commit", required=True, help="the commit (any revision git resolves to one)")
    generate.add_argument("--per-intent", type=int, required=True, help="cases per intent; fewer available is an error")
    generate.add_argument("--out", type=Path, required=True, help="the new bank file (an existing file is never overwritten)")
    generate.add_argument("--repo-name", help="OWNER/NAME the cases name (default: local/<repository directory name>)")
    return parser


def _summarize(args: argparse.Namespace) -> int:
    try:
        report = merge_reports(args.reports, [*BUILTIN_ARMS, *CORVINT_ARMS, *args.arm], [a for a in args.baseline_arms.split(",") if a])
    except BenchError as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 2
    write_atomically(args.output, canonical_json(report))
    return 0


def _html(args: argparse.Namespace) -> int:
    from pytest_retrieval_bench.report.html import render_html
    from pytest_retrieval_bench.report.merge import read_report

    try:
        report = read_report(args.report)
        write_atomically(args.output, render_html(report).encode("utf-8"))
    except BenchError as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"retrieval-bench: error: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"retrieval-bench: wrote {args.output}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    """Exit 0 with the bank written; 1 when the bank cannot be made (nothing is written then)."""
    from pytest_retrieval_bench.samples.known_target_generate import GenerationError, generate, header, write_bank
    from pytest_retrieval_bench.samples.known_target import parse_known_target_row

    name = args.repo_name or "local/" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", args.repo.resolve().name.removesuffix(".git")).strip(".-") or "repo")
    try:
        if args.out.exists():
            raise GenerationError(f"{args.out} already exists; choose a new output path (an existing bank is never overwritten)")
        cases = generate(args.repo, args.commit, args.per_intent, name)
        for number, case in enumerate(cases, start=2):  # the bank must load as it will be read
            parse_known_target_row(case, str(args.out), number)
        write_bank(args.out, [header(name, cases[0]["commit"], args.per_intent), *cases])
    except (GenerationError, BenchError) as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 1
    counts = {}
    for case in cases:
        counts[case["intent"]] = counts.get(case["intent"], 0) + 1
    print(f"Generated {len(cases)} source-verified cases: " + ", ".join(f"{intent} {count}" for intent, count in counts.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "known-target":
        return _generate(args)
    if args.command == "html":
        return _html(args)
    return _summarize(args)


if __name__ == "__main__":
    sys.exit(main())
