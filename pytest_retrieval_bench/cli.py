"""`retrieval-bench`: merge written reports, render one as an HTML page or as the Agent Retrieval Bench's
leaderboard tables, diff two reports, export one for other IR tools, generate known-target case banks."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import Callable

from pytest_retrieval_bench import __version__, leftovers
from pytest_retrieval_bench.arms.registry import CORVINT_ARMS, REFERENCE_ARMS
from pytest_retrieval_bench.bench.outputs import check_outputs
from pytest_retrieval_bench.errors import BenchError
from pytest_retrieval_bench.history import DEFAULT_STORAGE
from pytest_retrieval_bench.report.build import write_atomically
from pytest_retrieval_bench.report.merge import read_report, reports_among
from pytest_retrieval_bench.report.tables import printable


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="retrieval-bench")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    summarize = commands.add_parser("summarize", help="merge reports by sample id and rebuild every summary section")
    summarize.add_argument("reports", nargs="+", type=Path)
    summarize.add_argument("--output", "-o", type=Path, required=True)
    summarize.add_argument("--arm", action="append", default=[],
                           help="a non-built-in arm the reports may hold without recording one identity for it; a fixture arm's name "
                                "selects all its variants (repeatable; arms every report records under one identity need none)")
    summarize.add_argument("--baseline-arms", default=",".join(REFERENCE_ARMS))
    summarize.add_argument("--baseline", type=Path, help="a baseline report to pair the merge with, as --bench-baseline does")
    summarize.add_argument("--gate", action="append", default=[], help="a gate rule, as --bench-gate (repeatable; needs --baseline)")
    summarize.add_argument("--fail-regressed", action="store_true", help="fail when any sample regressed against the baseline")
    summarize.add_argument("--update-baseline", action="store_true",
                           help="write the merge to the --baseline path, keeping the baseline's other arms (refused when partial or errored)")
    summarize.add_argument("--markdown", type=Path, help="also write the Markdown summary here")
    summarize.add_argument("--html", type=Path, help="also write the HTML page here")
    summarize.add_argument("--allow-partial", action="store_true", help="merge an incomplete or duplicated set of shards, marked partial")
    summarize.add_argument("--table", default="all", help="summary groups to print (as --bench-table)")
    summarize.add_argument("--fuse", action="append", default=[], metavar="NAME=ARM,ARM[:k=K]",
                           help="add a fused arm over arms the reports hold, as --bench-fuse (repeatable; file metrics only)")
    page = commands.add_parser("html", help="a self-contained HTML page of a written report (a run, a merge or a baseline comparison)")
    page.add_argument("report", type=Path)
    page.add_argument("--output", "-o", type=Path, required=True)
    board = commands.add_parser("leaderboard", help="a written report's summary in the Agent Retrieval Bench's leaderboard layout (with agent arms, its V1.4 trajectory tables too)")
    board.add_argument("report", type=Path)
    board.add_argument("--markdown", type=Path, metavar="OUT", help="also write the tables as Markdown here")
    board.add_argument("--mrr-at-k", action="store_true", help="also show MRR@k (MRR cut at the run's limit) after the bench's MRR")
    diff = commands.add_parser("diff", help="what changed between two written reports (paired table, per-sample changes); writes nothing")
    diff.add_argument("before", type=Path, help="the earlier report (the baseline): a file, or a saved run's number or name, or latest")
    diff.add_argument("after", type=Path, help="the later report (the change): a file, or a saved run's number or name, or latest")
    diff.add_argument("--storage", type=Path, default=Path(DEFAULT_STORAGE),
                      help=f"the folder of saved runs a number or name is looked up in (default: {DEFAULT_STORAGE})")
    diff.add_argument("--arm", action="append", default=[], help="only this arm (a fixture arm's name selects all its variants; repeatable)")
    diff.add_argument("--group", default="all", help="a summary group (all, task:T, stratum:S, repo:R, fold:F; default all)")
    diff.add_argument("--markdown", action="store_true", help="print GitHub Markdown (for a pull-request comment) instead")
    exporter = commands.add_parser("export", help="a written report as a TREC run, its qrels, or one CSV/JSONL row per sample x arm")
    exporter.add_argument("report", type=Path)
    exporter.add_argument("--format", required=True, choices=("trec", "qrels", "csv", "jsonl"))
    exporter.add_argument("--arm", action="append", default=[],
                          help="only this arm (a fixture arm's name selects all its variants; repeatable); a trec run holds one arm, "
                               "and qrels with the same --arm hold the samples it scored")
    exporter.add_argument("--output", "-o", type=Path, required=True, help="the file to write; - writes to standard output")
    exporter.add_argument("--all-samples", action="store_true",
                          help="trec: also the no-gold samples' rankings (no qrels holds them; the unranked positives get no line)")
    history = commands.add_parser("history", help="the saved runs (--bench-save, --bench-autosave), with each arm's metric and its change")
    history.add_argument("--storage", type=Path, default=Path(DEFAULT_STORAGE), help=f"the folder of saved runs (default: {DEFAULT_STORAGE})")
    history.add_argument("--metric", help="the metric shown per arm (default: hit at the largest cut-off the limit reaches, e.g. hit@20); "
                                          "a trajectory metric (final_file_f1, final_any_gold, ...) is the trajectory table's instead (default final_file_f1)")
    history.add_argument("--html", type=Path, metavar="PAGE", help="also write a self-contained trend page here, and each run's own page in a folder beside it "
                              "named for the page without its suffix: history.html's in history_runs/")
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
    """Exit 0 when merged and published, 1 when the gate or a write failed, 2 for inputs that cannot be merged."""
    from pytest_retrieval_bench.bench.finish import Outputs, summarize

    if (args.gate or args.fail_regressed or args.update_baseline) and args.baseline is None:
        print("retrieval-bench: error: --gate, --fail-regressed and --update-baseline need --baseline REPORT", file=sys.stderr)
        return 2
    try:
        check_outputs([("--output", args.output), ("--markdown", args.markdown), ("--html", args.html),
                       ("--baseline (with --update-baseline)", args.baseline if args.update_baseline else None)],
                      [*(("report", path) for path in args.reports), *([("--baseline", args.baseline)] if args.baseline and not args.update_baseline else [])], [])
        args.reports = reports_among(args.reports)  # a shell glob also matches the registration sidecars
        report = read_report(args.reports[0]) if args.reports else {}
        limit = int(report.get("registration", {}).get("limit") or 20)
        outputs = Outputs(report=args.output, markdown=args.markdown, html=args.html, baseline=args.baseline,
                          update_baseline=args.update_baseline, fail_regressed=args.fail_regressed, limit=limit)
        published, lines = summarize(args.reports, [*REFERENCE_ARMS, *CORVINT_ARMS, *args.arm], [a for a in args.baseline_arms.split(",") if a],
                                     outputs, args.gate, args.allow_partial, [g for g in args.table.split(",") if g], args.fuse)
    except BenchError as error:
        print(printable(f"retrieval-bench: error: {error}"), file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if published.failures else 0


def _html(args: argparse.Namespace) -> int:
    from pytest_retrieval_bench.report.html import render_html

    try:
        check_outputs([("--output", args.output)], [("report", args.report)], [])
        report = read_report(args.report, sections=("summary", "paired", "latency", "baseline", "trajectory"))
        write_atomically(args.output, render_html(report).encode("utf-8"))
    except BenchError as error:
        print(printable(f"retrieval-bench: error: {error}"), file=sys.stderr)
        return 2
    except OSError as error:
        print(printable(f"retrieval-bench: error: cannot write {args.output}: {error.strerror or error}"), file=sys.stderr)
        return 2
    print(f"retrieval-bench: wrote {args.output}")
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    """Exit 0 with the tables printed (and written); 2 for an unreadable report or an unwritable output."""
    from pytest_retrieval_bench.report.leaderboard import leaderboard_markdown, leaderboard_tables, leaderboard_text
    from pytest_retrieval_bench.report.trajectory_tables import trajectory_markdown, trajectory_text

    try:
        check_outputs([("--markdown", args.markdown)], [("report", args.report)], [])
        report = read_report(args.report, sections=("summary", "trajectory"))
    except BenchError as error:
        print(printable(f"retrieval-bench: error: {error}"), file=sys.stderr)
        return 2
    if not leaderboard_tables(report):
        print(printable(f"retrieval-bench: error: {args.report}: no summary group with positive items to rank"), file=sys.stderr)
        return 2
    if args.markdown is not None:
        try:
            write_atomically(args.markdown, (leaderboard_markdown(report, args.mrr_at_k) + trajectory_markdown(report)).encode("utf-8"))
        except OSError as error:
            print(printable(f"retrieval-bench: error: cannot write {args.markdown}: {error.strerror or error}"), file=sys.stderr)
            return 2
    print(leaderboard_text(report, args.mrr_at_k) + trajectory_text(report), end="")
    if args.markdown is not None:
        print(f"retrieval-bench: wrote {args.markdown}")
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
        print(printable(f"retrieval-bench: error: {error}"), file=sys.stderr)
        return 1
    counts = {}
    for case in cases:
        counts[case["intent"]] = counts.get(case["intent"], 0) + 1
    print(f"Generated {len(cases)} source-verified cases: " + ", ".join(f"{intent} {count}" for intent, count in counts.items()))
    return 0


def _diff(args: argparse.Namespace) -> int:
    """Exit 0 with the diff printed, 2 for a report that cannot be read or a choice neither holds."""
    from pytest_retrieval_bench.history.store import report_or_saved_run
    from pytest_retrieval_bench.report.diff import diff_reports
    from pytest_retrieval_bench.report.diff_text import diff_lines, diff_markdown

    try:
        args.before, args.after = (report_or_saved_run(path, args.storage) for path in (args.before, args.after))
        result = diff_reports(read_report(args.before), read_report(args.after), args.arm, args.group)
    except BenchError as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 2
    print(diff_markdown(result, str(args.before), str(args.after)) if args.markdown else "\n".join(diff_lines(result, str(args.before), str(args.after))),
          end="" if args.markdown else "\n")
    return 0


def _export(args: argparse.Namespace) -> int:
    """Exit 0 with the file written, 2 for a report that cannot be read or exported, or an output that would replace an input."""
    from pytest_retrieval_bench.report.export import export

    if str(args.output) == "-":
        try:
            text = export(read_report(args.report), args.format, args.arm, args.all_samples)
        except BenchError as error:
            print(f"retrieval-bench: error: {error}", file=sys.stderr)
            return 2
        sys.stdout.write(text)  # nothing else on stdout: it is the export, for a pipe
        return 0
    return _writing(args.output, lambda: write_atomically(args.output, export(read_report(args.report), args.format, args.arm,
                                                                                       args.all_samples).encode("utf-8")),
                    [("--output", args.output)], [("report", args.report)], [], f"{args.format} export of {args.report} written to {args.output}")


def _writing(path: Path, write: Callable[[], object], outputs: list[tuple[str, Path]], inputs: list[tuple[str, Path]],
             directories: list[tuple[str, Path]], done: str) -> int:
    """Check the outputs against the inputs, write, and say so: 0, or 2 with the reason."""
    try:
        check_outputs(outputs, inputs, directories)
        write()
    except BenchError as error:
        print(f"retrieval-bench: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"retrieval-bench: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return 2
    print(f"retrieval-bench: {done}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """SIGTERM and SIGINT are handled as in the plugin: what is being written is removed, then the
    process ends by the signal (the status a shell expects), without a traceback."""
    args = _parser().parse_args(argv)
    leftovers.install()
    try:
        return _run(args)
    except KeyboardInterrupt:
        leftovers.remove_all()  # each write removed its own temporary on the way out; this is the rest
        if argv is not None:  # called as a function: the caller decides
            raise
        print("retrieval-bench: interrupted", file=sys.stderr)
        leftovers.die_by(signal.SIGINT)
        raise
    finally:
        leftovers.release()


def _run(args: argparse.Namespace) -> int:
    if args.command == "known-target":
        return _generate(args)
    if args.command == "html":
        return _html(args)
    if args.command == "leaderboard":
        return _leaderboard(args)
    if args.command == "diff":
        return _diff(args)
    if args.command == "export":
        return _export(args)
    if args.command == "history":
        from pytest_retrieval_bench.history.store import load_saved, saved_runs
        from pytest_retrieval_bench.history.table import history_lines

        runs = saved_runs(args.storage)
        # once, for the table and the page (which shows each run's whole page: every section it shows is checked)
        loaded, unreadable = load_saved(runs, ("summary", "paired", "latency", "baseline", "trajectory") if args.html is not None else ("summary",))
        print("\n".join(history_lines(loaded, unreadable, str(args.storage), args.metric)))
        if args.html is not None:
            from pytest_retrieval_bench.history.page import write_history_page

            from pytest_retrieval_bench.report.trajectory_values import is_trajectory_metric

            plotted = None if args.metric is not None and is_trajectory_metric(args.metric) else args.metric  # the page plots ranking metrics
            return _writing(args.html, lambda: write_history_page(loaded, args.html, plotted), [("--html", args.html)],
                            [("saved run", run.path) for run in runs], [("--storage", args.storage)],
                            f"history page written to {args.html} (each run's page in {args.html.stem}_runs/ beside it)")
        return 0
    return _summarize(args)


if __name__ == "__main__":
    sys.exit(main())
