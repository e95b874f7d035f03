"""The HTML page's style sheet and script, inline: the page loads nothing (its CSP forbids it)."""

STYLE = """
:root{--fg:#1d232b;--muted:#5d6773;--line:#d8dde3;--good:#1b7f3b;--bad:#b42318;--nd:#6b7280;--acc:#2857a4}
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0 auto;max-width:1320px;padding:0 20px 40px}
header{border-bottom:2px solid var(--line);padding:12px 0 6px}h1{margin:0;font-size:22px}.meta{margin:2px 0;color:var(--muted)}
nav a{margin-right:14px;color:var(--acc);text-decoration:none}h2{margin:26px 0 6px;font-size:18px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:14px 0 6px}h4{margin:10px 0 4px;font-size:13px}h5{margin:0 0 2px;font-size:13px}
.note{color:var(--muted);margin:4px 0 8px;font-size:13px}.muted{color:var(--muted)}.derived{font-style:italic}
.banner{padding:10px 14px;margin:12px 0;border-radius:6px;border:1px solid}.banner.bad{background:#fdecea;border-color:var(--bad)}
.banner.good{background:#eaf6ee;border-color:var(--good)}.status.bad strong,.v.bad{color:var(--bad)}.status.good strong,.v.good{color:var(--good)}
.tw{overflow-x:auto}table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.arm{font-family:ui-monospace,monospace;white-space:nowrap}.ci{display:block;color:var(--muted);font-size:11px}
td.notrun{color:var(--muted);font-weight:600}.v.better{color:var(--good)}.v.worse{color:var(--bad)}.v.nd,.v.few{color:var(--nd)}
table.ranks td,table.ranks th{padding:2px 5px}select{font:inherit;margin-right:12px}label{margin-right:4px}
.controls{margin:8px 0;padding:8px;background:#f6f7f9;border-radius:6px}#sample-count{font-weight:600}
svg.plot{display:block;margin:4px 0 6px;overflow:visible;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:var(--fg)}
svg .tick{fill:var(--muted);font-size:10px}svg .ptitle{font-weight:600}svg .ax{stroke:#8a949e}svg .grid{stroke:#eceff2}
svg .stripe{fill:#f7f8fa}svg .zero{stroke:#222;stroke-dasharray:4 3}svg .bar,svg .cap{stroke:var(--acc);stroke-width:1.6}
svg .pt{fill:var(--acc)}svg .better .bar,svg .better .cap{stroke:var(--good)}svg .better .pt{fill:var(--good)}
svg .worse .bar,svg .worse .cap{stroke:var(--bad)}svg .worse .pt{fill:var(--bad)}svg .nd .bar,svg .nd .cap,svg .few .bar,svg .few .cap{stroke:var(--nd)}
svg .nd .pt,svg .few .pt{fill:var(--nd)}svg .hbar{fill:#7f9fd4}svg .hbar.miss{fill:#d98b84}svg .count{font-size:9px;fill:var(--muted)}
svg .lat{stroke:var(--acc);stroke-width:5;stroke-opacity:.45}svg .max{stroke:var(--bad);stroke-width:1.6}svg .notrun{fill:var(--muted);font-weight:600}
.multiples{display:flex;flex-wrap:wrap;gap:8px 18px}
details.sample{border-bottom:1px solid var(--line);padding:4px 0}details.sample>summary{cursor:pointer}
.labels{color:var(--muted);margin-right:6px}.badge{display:inline-block;font-size:11px;padding:0 6px;margin:1px 2px;border-radius:9px;background:#eef0f3;font-family:ui-monospace,monospace}
.badge.hit,.badge.abstained{background:#e3f3e8;color:#14592a}.badge.miss,.badge.answered,.badge.error{background:#fbe4e1;color:#8a1c12}
.sbody{padding:6px 0 6px 18px}dl.facts{display:grid;grid-template-columns:110px 1fr;gap:2px 10px;margin:4px 0}dt{color:var(--muted)}dd{margin:0}
.rankings{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:10px 18px}.rk p{margin:0 0 2px}
.rk ol{margin:2px 0;padding-left:26px;font:12px ui-monospace,monospace;overflow-wrap:anywhere}
.gold{color:var(--good);font-weight:700}.hn{color:var(--bad)}pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px}
pre.err{color:var(--bad)}code{font-size:12px;word-break:break-all}
code.rule,table.rules td{white-space:nowrap;word-break:normal}details.arm-changes>summary{font-family:ui-monospace,monospace;cursor:pointer;margin:6px 0}
"""


SCRIPT = """
(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  function value(id) { var el = byId(id); return el ? el.value : ""; }
  function reveal() {
    var hidden = document.querySelectorAll(".js-only");
    for (var i = 0; i < hidden.length; i++) { hidden[i].hidden = false; }
  }
  function bindSwitch(selectId, panelClass) {
    var select = byId(selectId);
    if (!select) { return; }
    var panels = document.querySelectorAll("." + panelClass);
    function show() {
      for (var i = 0; i < panels.length; i++) { panels[i].hidden = panels[i].getAttribute("data-idx") !== select.value; }
    }
    select.addEventListener("change", show);
    show();
  }
  function matches(sample, f, armCount) {
    if (f.repo !== "" && sample.getAttribute("data-repo") !== f.repo) { return false; }
    if (f.task !== "" && sample.getAttribute("data-task") !== f.task) { return false; }
    if (f.outcome === "") { return true; }
    if (f.outcome === "disagree") { return sample.getAttribute("data-dis") === "1"; }
    for (var i = 0; i < armCount; i++) {
      if ((f.arm === "" || f.arm === String(i)) && sample.getAttribute("data-o" + i) === f.outcome) { return true; }
    }
    return false;
  }
  function filterSamples() {
    var samples = document.querySelectorAll("details.sample");
    var f = {repo: value("f-repo"), task: value("f-task"), arm: value("f-arm"), outcome: value("f-outcome")};
    var armCount = byId("f-arm") ? byId("f-arm").options.length - 1 : 0;
    var shown = 0;
    for (var i = 0; i < samples.length; i++) {
      var ok = matches(samples[i], f, armCount);
      samples[i].hidden = !ok;
      if (ok) { shown++; }
    }
    var counter = byId("sample-count");
    if (counter) { counter.textContent = "Showing " + shown + " of " + samples.length + " samples"; }
  }
  reveal();
  bindSwitch("summary-group", "summary-panel");
  bindSwitch("paired-group", "paired-panel");
  ["f-repo", "f-task", "f-arm", "f-outcome"].forEach(function (id) {
    var el = byId(id);
    if (el) { el.addEventListener("change", filterSamples); }
  });
  filterSamples();
})();
"""
