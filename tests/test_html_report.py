"""The HTML page (`report/html.py`): every figure is the report's, text is escaped, bytes are stable.

The three reports are produced at test time by the plugin over the bundled synthetic bench, as
users get them: all built-in arms (no paired section), a three-arm baseline, and a four-arm run
paired against grep and gated against that baseline. A headless Chromium, when installed, opens
the page offline and runs its script.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from html import escape
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval_bench.report import html as html_report
from pytest_retrieval_bench.report import html_parts, html_samples
from pytest_retrieval_bench.report.html import render_html

from browser_helpers import layout_at

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = "testdata/release/benchmark/synthetic_v1/samples.jsonl"
CORPUS = "testdata/release/corpus/synthetic_v1"
EVIL = "<script>alert(1)</script>"
EVIL_ARM = '<script>alert(1)</script>|&"q\'x'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _run_bench(report: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    process = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--bench-samples={SAMPLES}", f"--bench-corpus={CORPUS}",
         "--bench-no-cache", f"--bench-report={report}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    return json.loads(report.read_bytes())


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """plain (6 arms, no pairing), base (3 arms) and report (4 arms paired vs grep, with a baseline and a gate)."""
    directory = tmp_path_factory.mktemp("html-reports")
    plain = _run_bench(directory / "plain.json")
    base = _run_bench(directory / "base.json", "--bench-arms=grep,bm25:all,arb-lexical")
    report = _run_bench(directory / "report.json", "--bench-arms=grep,bm25:all,arb-lexical,grep-ident", "--bench-baseline-arms=grep",
                        f"--bench-baseline={directory / 'base.json'}", "--bench-gate=recall@10>=-0.02:arm=grep")
    return {"plain": plain, "base": base, "report": report}


@pytest.fixture(scope="module")
def pages(reports: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: render_html(report) for name, report in reports.items()}


def _renamed(value: Any, old: str, new: str) -> Any:
    """The report with arm `old` called `new` everywhere: keys, comparisons, lists, rule arms."""
    def name(text: str) -> str:
        if text == old:
            return new
        if text.endswith(f" vs {old}"):
            return text[: -len(old)] + new
        if text.startswith(f"{old} vs "):
            return new + text[len(old):]
        return text
    if isinstance(value, dict):
        return {name(key): _renamed(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, old, new) for item in value]
    return name(value) if isinstance(value, str) else value


def _reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(item) for item in value]
    return value


# -- the figures are the report's -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["plain", "base", "report"])
def test_every_arm_hit_at_10_and_its_wilson_bounds_are_on_the_page(reports, pages, name):
    page = pages[name]
    for group, arms in reports[name]["summary"].items():
        assert f"<h3>{group}</h3>" in page
        for arm, row in arms.items():
            hit, bounds = row["metrics"].get("hit@10"), row["wilson95"].get("hit@10")
            if hit is not None:
                assert f'{hit:.3f}<span class="ci">[{bounds[0]:.3f}, {bounds[1]:.3f}]</span>' in page, (group, arm)
            low, high = row["selective_success_wilson95"]
            assert f'{row["selective_success"]:.3f}<span class="ci">[{low:.3f}, {high:.3f}]</span>' in page


# the verdict cell's class and mark, written out here rather than read from the module under test
VERDICT_CELLS = {"better": ("better", "▲"), "worse": ("worse", "▼"), "not distinguishable": ("nd", "●"), "too few": ("few", "○")}


def _paired_results(report: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(comparison, metric, result) for group in report["paired"].values() for comparison, metrics in group.items()
            for metric, result in metrics.items()]


def _paired_row(comparison: str, metric: str, result: dict[str, Any], verdict: str) -> str:
    low, high = result["bootstrap95"]
    p = result["t_test"]["p"]
    css, mark = VERDICT_CELLS[verdict]
    return (f'<td class="arm">{comparison}</td><td>{metric}</td><td class="num">{result["n"]}</td>'
            f'<td class="num">{result["mean_difference"]:+.3f}</td><td>[{low:+.3f}, {high:+.3f}]</td><td class="v {css}">{mark} {verdict}</td>'
            f'<td>{result["wins"]}/{result["losses"]}/{result["ties"]}</td><td class="num">{result["minimum_detectable_effect"]:.3f}</td>'
            f'<td class="num">{"&lt;0.001" if p < 0.001 else f"{p:.3f}"}</td>')


def test_paired_rows_show_the_reports_difference_interval_verdict_mde_and_p(reports, pages):
    page = pages["report"]
    results = _paired_results(reports["report"])
    assert results
    for comparison, metric, result in results:
        assert _paired_row(comparison, metric, result, result["verdict"]) in page
    assert {"better", "worse"} <= {result["verdict"] for _, _, result in results}  # the bench shows both, so the colours are exercised
    assert '<p id="no-paired">' in pages["plain"] and 'class="panel paired-panel"' not in pages["plain"]


def test_a_report_without_verdicts_gets_the_rule_applied_on_the_page(reports):
    """A report written before verdicts were: the page applies the rule the report would have stated,
    from the bootstrap interval and n (below 10 paired samples, too few)."""
    old = copy.deepcopy(reports["report"])
    results = _paired_results(old)
    for _, _, result in results:
        del result["verdict"]
    results[0][2]["n"] = 9  # a comparison of too few samples
    page = render_html(old)
    expected = set()
    for comparison, metric, result in results:
        low, high = result["bootstrap95"]
        verdict = "too few" if result["n"] < 10 else "better" if low > 0 else "worse" if high < 0 else "not distinguishable"
        expected.add(verdict)
        assert _paired_row(comparison, metric, result, verdict) in page, (comparison, metric, verdict)
    assert {"better", "worse", "too few"} <= expected


def ps_of(results: list[tuple[str, str, dict[str, Any]]]) -> list[float]:
    return [result["t_test"]["p"] for _, _, result in results]


def test_holm_is_taken_from_the_report_or_derived_the_same_way_and_labelled(reports):
    report = reports["report"]
    stripped = copy.deepcopy(report)
    for group in stripped["paired"].values():
        for metrics in group.values():
            for result in metrics.values():
                result["t_test"].pop("p_holm", None)
    for name, entries in stripped["paired"].items():
        derived, is_derived = html_report._holm_values(html_report._paired_results(entries))
        assert is_derived
        original = html_report._paired_results(report["paired"][name])
        reported = [result["t_test"].get("p_holm") for _, _, result in original]
        if all(value is not None for value in reported):  # the plugin writes p_holm: the page derives the same numbers
            assert derived == pytest.approx(reported, abs=len(ps_of(original)) * 5e-7 + 1e-9)  # p is rounded to 6 decimals
        ps = ps_of(original)
        assert all(adj is None or adj >= p - 1e-12 for adj, p in zip(derived, ps))
    page = render_html(stripped)
    assert "p (Holm, derived)" in page and "computed on this page from the report's p-values" in page


def test_latency_figures_and_not_run(reports):
    report = copy.deepcopy(reports["report"])
    page = render_html(report)
    for arm, states in report["latency"].items():
        for state, figures in states.items():
            assert (f'<td class="arm">{arm}</td><td>{state}</td><td class="num">{figures["n"]}</td><td class="num">{figures["p50"]:.3f}</td>'
                    f'<td class="num">{figures["p95"]:.3f}</td><td class="num">{figures["max"]:.3f}</td><td class="num">{figures["mad"]:.3f}</td>') in page
    report["latency"]["grep"] = {"COLD_UNIQUE": "NOT_RUN", **report["latency"]["grep"]}
    page = render_html(report)
    assert '<td class="arm">grep</td><td>COLD_UNIQUE</td><td class="notrun" colspan="5">NOT_RUN</td>' in page
    assert '<text class="notrun"' in page


def test_rank_histogram_counts_agree_with_the_summary(reports):
    report = reports["plain"]
    limit = report["registration"]["limit"]
    for arm, row in report["summary"]["all"].items():
        bins = html_samples._rank_bins(html_samples._positive_records(report, arm), limit)
        hits = sum(count for label, count in bins if label != "miss")
        assert hits == round(row["metrics"][f"hit@{limit}"] * row["positives"])
        assert hits + dict(bins)["miss"] == row["positives"]
        assert f'<td class="arm">{arm}</td>' + "".join(f'<td class="num">{count}</td>' for _, count in bins) in render_html(report)


def test_samples_show_gold_given_rankings_and_filter_data(reports, pages):
    report, page = reports["report"], pages["report"]
    arms = html_parts.report_arms(report)
    for entry in report["details"]:
        assert f'<code>{entry["id"]}</code>' in page
        for arm, record in entry["arms"].items():
            for path in record["ranking"]:
                marked = f'<li class="gold">★ {path}</li>' if path in entry["gold"] else f"<li>{path}</li>"
                assert marked in page or f'<li class="hn">✗ {path}</li>' in page
    assert page.count('<details class="sample"') == len(report["details"])
    assert page.count(f'data-o{len(arms) - 1}="') == len(report["details"])
    assert "skipped: no_gold_unlabeled" in page
    assert 'data-o3="abstained"' in page and 'data-o0="answered"' in page  # grep-ident abstains on no-gold samples


# -- safe, stable, self-contained -----------------------------------------------------------------


def test_query_text_and_arm_names_are_escaped(reports):
    report = _renamed(copy.deepcopy(reports["report"]), "grep", EVIL_ARM)
    report["details"][0]["query_text"] = f"find {EVIL} & <b>bold</b>"
    report["details"][1]["gold"] = [f"src/{EVIL}.py"]
    page = render_html(report)
    assert "<script>alert" not in page
    assert page.count("<script>") == 1 and page.count("</script>") == 1  # only the page's own
    assert "<b>bold</b>" not in page
    assert "find &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    escaped_arm = "&lt;script&gt;alert(1)&lt;/script&gt;|&amp;&quot;q&#x27;x"
    assert f'<td class="arm">{escaped_arm}</td>' in page
    assert f'<td class="arm">bm25:all vs {escaped_arm}</td>' in page
    assert re.search(r'<option value="\d+">' + re.escape(escaped_arm) + "</option>", page)


def test_deterministic_bytes_whatever_the_key_order(reports):
    for report in reports.values():
        first = render_html(report)
        assert render_html(copy.deepcopy(report)) == first
        assert render_html(_reversed_keys(report)) == first
        assert not re.search(r"\b20\d\d-\d\d-\d\d", first)  # no dates


def test_baseline_section_only_with_a_baseline(reports, pages):
    assert '<section id="baseline">' in pages["report"] and 'id="gate-banner"' in pages["report"]
    for rule in reports["report"]["baseline"]["rules"]:
        assert f'<code class="rule">{escape(rule["rule"])}</code>' in pages["report"]
    for name in ("plain", "base"):
        assert '<section id="baseline">' not in pages[name] and 'id="gate-banner"' not in pages[name]


def test_regressions_are_listed_per_arm_in_the_reports_order(reports):
    report = copy.deepcopy(reports["report"])
    changes = [{"id": "s-b", "repo": "acme/gin-lite", "change": "regressed", "why": "hit at rank 2 is now a miss", "baseline_rank": 2, "rank": None},
               {"id": "s-a", "repo": "acme/gin-lite", "change": "regressed", "why": "first gold fell from rank 1 to 7", "baseline_rank": 1, "rank": 7}]
    report["baseline"]["arms"]["grep"].update(regressed=2, regressions=changes)
    report["baseline"]["failed"] = True
    page = render_html(report)
    assert "Gate: <strong>FAILED</strong>" in page and 'class="banner bad" id="gate-banner"' in page
    assert "<h4>Regressed (2)</h4>" in page
    assert page.index("hit at rank 2 is now a miss") < page.index("first gold fell from rank 1 to 7")
    assert "<td><code>s-b</code></td><td>acme/gin-lite</td><td>hit at rank 2 is now a miss</td><td class=\"num\">2</td><td class=\"num\">–</td>" in page


def test_partial_banner_only_when_partial(reports, pages):
    for page in pages.values():
        assert "PARTIAL report" not in page
    report = copy.deepcopy(reports["plain"])
    report["partial"] = {"not_run": ["00dbb090e0398e32269f1ce0[grep]", f"x[{EVIL}]"]}
    page = render_html(report)
    assert "<strong>PARTIAL report: 2 items did not run</strong>" in page
    assert page.index("PARTIAL report") < page.index('<section id="summary">')
    assert "<script>alert" not in page


def test_registration_shows_version_arms_and_identities(reports, pages):
    registration = reports["plain"]["registration"]
    page = pages["plain"]
    assert f"plugin {registration['plugin_version']}" in page
    for arm, identity in registration["arm_identities"].items():
        assert f'<td class="arm">{arm}</td><td><code>{identity}</code></td>' in page
    assert f"<td>limit</td><td>{registration['limit']}</td>" in page


def test_no_network_references(pages):
    for page in pages.values():
        outside_queries = re.sub(r'<pre class="query">.*?</pre>', "", page, flags=re.DOTALL)  # queries quote URLs as text
        assert "http://" not in outside_queries and "https://" not in outside_queries
        assert not re.search(r"""\b(?:src|href)\s*=\s*["'](?!#)""", page)  # only in-page anchors
        assert "default-src 'none'" in page


def test_tables_only_without_plots(reports):
    page = render_html(reports["report"], plots=False)
    assert "<svg" not in page
    row = reports["report"]["summary"]["all"]["grep"]
    assert f'{row["metrics"]["hit@10"]:.3f}<span class="ci">' in page
    assert "<svg" in render_html(reports["report"])


# -- in a browser ---------------------------------------------------------------------------------


def _chromium(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=timeout)


def _expected(report: dict[str, Any], outcome: str, arm: str | None) -> int:
    """Samples the filter should keep: `outcome` for the arm, or for any arm."""
    arms = [arm] if arm else html_parts.report_arms(report)
    return sum(1 for entry in report["details"] if not entry.get("skipped")
               and any(html_parts.outcome_of(entry, entry["arms"].get(name)) == outcome for name in arms))


def _filtered_count(report: dict[str, Any], directory: Path, outcome: str, arm: str) -> int:
    """Chromium opens the page, a test script picks the filters as a user would, the counter is read back."""
    pick = (f'<script>var a=document.getElementById("f-arm");a.value="{arm}";a.dispatchEvent(new Event("change"));'
            f'var o=document.getElementById("f-outcome");o.value="{outcome}";o.dispatchEvent(new Event("change"));</script></body>')
    page = directory / f"filter-{outcome}-{arm or 'any'}.html"
    page.write_text(render_html(report).replace("</body>", pick), encoding="utf-8")
    dumped = _chromium("--dump-dom", page.as_uri())
    assert "Uncaught" not in dumped.stderr, dumped.stderr[-2000:]
    match = re.search(r'<span id="sample-count">Showing (\d+) of (\d+) samples</span>', dumped.stdout)
    assert match, dumped.stdout[-2000:]
    visible = [tag for tag in re.findall(r'<details class="sample"[^>]*>', dumped.stdout) if " hidden" not in tag]
    assert len(visible) == int(match[1])
    return int(match[1])


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser binary on PATH (apt-get install chromium)")
def test_chromium_runs_the_page_script_without_errors(reports, tmp_path):
    report = _renamed(copy.deepcopy(reports["report"]), "grep", EVIL_ARM)
    report["details"][0]["query_text"] = EVIL
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    dumped = _chromium("--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    total = len(report["details"])
    assert f'<span id="sample-count">Showing {total} of {total} samples</span>' in dumped.stdout  # filled in by the script
    assert re.search(r'<div class="panel summary-panel" data-idx="1" hidden', dumped.stdout)  # the group switch ran
    assert "<script>alert" not in dumped.stdout
    for marker in ("Uncaught", "SyntaxError", "ReferenceError", "TypeError", "Content Security Policy"):
        assert marker not in dumped.stderr, dumped.stderr[-2000:]
    assert _filtered_count(report, tmp_path, outcome="miss", arm="") == _expected(report, "miss", None)
    arms = html_parts.report_arms(report)
    assert _filtered_count(report, tmp_path, outcome="hit", arm=str(arms.index("grep-ident"))) == _expected(report, "hit", "grep-ident")
    shot = tmp_path / "report.png"
    started = time.perf_counter()
    taken = _chromium(f"--screenshot={shot}", "--window-size=1400,2400", page.as_uri())
    assert taken.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", taken.stderr[-2000:]
    assert time.perf_counter() - started < 120


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser binary on PATH (apt-get install chromium)")
def test_the_page_fits_a_420_px_screen(reports, tmp_path):
    """On a phone the page never scrolls sideways: plots wrap and shrink, wide tables scroll in their
    own box, and a gate rule is never broken inside its number."""
    page = tmp_path / "report.html"
    page.write_text(render_html(reports["report"]), encoding="utf-8")
    shot = tmp_path / "report-420.png"
    layout = layout_at(page, 420, shot)
    assert layout.client_width == 420 and layout.scroll_width <= 420, layout
    assert layout.overflowing == [] and layout.broken_rules == [], layout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_renderer_does_not_import_pytest():
    code = "import sys, pytest_retrieval_bench.report.html; sys.exit(1 if 'pytest' in sys.modules or '_pytest' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_every_samples_query_text_is_on_the_page_escaped(reports, pages):
    for entry in reports["report"]["details"]:
        assert entry["query_text"], entry["id"]
        assert f'<pre class="query">{escape(entry["query_text"])}</pre>' in pages["report"]
