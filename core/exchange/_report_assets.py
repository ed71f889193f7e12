"""The style sheet and the inline script of the HTML report (`core.exchange.html`).

The script is ours, small and dependency-free (the charts are inline SVG drawn in Python:
core/exchange/svg_charts.py). It reads the report's data from a
`<script type="application/json">` element, renders the item table a page at a time (a
10,000-item report stays quick to open), filters it (text, score range, failed runs), sorts it
by any column and shows one item's details. It only ever writes data into the page with
`textContent`, never as HTML, so no text from a dataset or a judge can become markup. A large
report's data is gzip-compressed and base64-encoded (`data-encoding="gzip+base64"`); the script
inflates it with the browser's DecompressionStream.
"""

from __future__ import annotations

__all__ = ["REPORT_SCRIPT", "REPORT_STYLE"]

REPORT_STYLE = """
:root{--line:#d6d9de;--soft:#f4f5f7;--ink:#1f2328;--muted:#59636e;--bad:#b42318;--good:#067647}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--ink);
  line-height:1.45}
main{max-width:1280px;margin:0 auto;padding:1.5rem 2rem 4rem}
h1{margin:.2rem 0 .4rem;font-size:1.7rem}
h2{margin:2.2rem 0 .6rem;font-size:1.3rem;border-bottom:1px solid var(--line);padding-bottom:.3rem}
h3{margin:1.2rem 0 .4rem;font-size:1.1rem}
h4{margin:1rem 0 .3rem;font-size:1rem}
nav a{margin-right:1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem}
th,td{border:1px solid var(--line);padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:var(--soft)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:var(--muted);font-size:.9rem}
.bad{color:var(--bad)}
.verdict{font-weight:600}
.verdict-separates{color:var(--good);font-weight:600}
.verdict-inverted{color:var(--bad);font-weight:600}
.verdict-chance,.verdict-not-defined{color:var(--muted)}
.chart{margin:.5rem 0}
.svg-charts{display:flex;flex-wrap:wrap;gap:.5rem 1rem}
.controls{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:center;margin:.6rem 0}
.controls input[type=search]{min-width:22rem;padding:.35rem .5rem}
.controls input[type=number]{width:5.5rem;padding:.3rem}
#items{width:100%;table-layout:fixed}
#items td{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#items tbody tr{cursor:pointer}
#items tbody tr:hover,#items tbody tr:focus{background:#eef4ff;outline:none}
#items tbody tr.failed td.id{color:var(--bad)}
#items tr.selected{background:#dce8ff}
#items th button{all:unset;cursor:pointer;font-weight:600}
#items th button:focus-visible{outline:2px solid #4b7bec}
.pager{display:flex;gap:.6rem;align-items:center}
#detail{border:1px solid var(--line);border-radius:6px;padding:.5rem 1rem;margin-top:1rem}
#detail pre,.text{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);
  padding:.4rem .6rem;border-radius:4px;margin:.2rem 0 .6rem;font-size:.85rem;max-height:24rem;
  overflow:auto}
#detail details{margin:.3rem 0 .3rem 1rem}
#detail summary{cursor:pointer}
.label{font-weight:600;color:var(--muted);font-size:.85rem}
"""

REPORT_SCRIPT = r"""
(function () {
  "use strict";
  var PAGE = 50, CELL = 160;
  var data, rows, scorers, details;
  var state = {query: "", scorer: -1, min: null, max: null, failedOnly: false,
               sortKey: null, sortDir: 1, page: 0, selected: -1};
  var haystack = null;

  function $(id) { return document.getElementById(id); }
  function node(tag, text, cls) {
    var el = document.createElement(tag);
    if (text !== undefined && text !== null) { el.textContent = String(text); }
    if (cls) { el.className = cls; }
    return el;
  }
  function shown(value) {
    if (value === undefined || value === null) { return ""; }
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }
  function clip(text) { return text.length > CELL ? text.slice(0, CELL) + "\u2026" : text; }
  function score(value) { return value === null || value === undefined ? "" : value.toFixed(3); }

  function searchText(i) {
    if (haystack === null) {
      haystack = rows.map(function (row, n) {
        var parts = [row[0], row[1], row[2], row[3]];
        (details[n] || []).forEach(function (entry) {
          if (entry) { parts.push(shown(entry.reason), shown(entry.error)); }
        });
        return parts.join("\n").toLowerCase();
      });
    }
    return haystack[i];
  }

  function inRange(row) {
    if (state.min === null && state.max === null) { return true; }
    var picked = state.scorer < 0 ? scorers.map(function (_, k) { return k; }) : [state.scorer];
    return picked.some(function (k) {
      var value = row[5][k];
      return value !== null && (state.min === null || value >= state.min) &&
        (state.max === null || value <= state.max);
    });
  }

  function failed(row) {
    return state.scorer < 0 ? row[6].length > 0 : row[6].indexOf(state.scorer) >= 0;
  }

  function sortValue(row, key) {
    if (key === "tokens") { return row[4]; }
    if (key.charAt(0) === "s") { return row[5][Number(key.slice(1))]; }
    return row[Number(key)];
  }

  function compare(a, b) {
    var x = sortValue(rows[a], state.sortKey), y = sortValue(rows[b], state.sortKey);
    if (x === null || y === null) {  // unscored rows last, whatever the direction
      return x === y ? a - b : (x === null ? 1 : -1);
    }
    if (x < y) { return -state.sortDir; }
    if (x > y) { return state.sortDir; }
    return a - b;
  }

  function visible() {
    var query = state.query, found = [];
    for (var i = 0; i < rows.length; i++) {
      if (query && searchText(i).indexOf(query) < 0) { continue; }
      if (state.failedOnly && !failed(rows[i])) { continue; }
      if (!inRange(rows[i])) { continue; }
      found.push(i);
    }
    if (state.sortKey !== null) { found.sort(compare); }
    return found;
  }

  function renderRow(i) {
    var row = rows[i], tr = node("tr");
    tr.tabIndex = 0;
    tr.dataset.index = String(i);
    if (row[6].length) { tr.className = "failed"; }
    if (i === state.selected) { tr.className += " selected"; }
    tr.appendChild(node("td", row[0], "id"));
    [1, 2, 3].forEach(function (k) {
      var td = node("td", clip(row[k]));
      td.title = row[k].slice(0, 2000);
      tr.appendChild(td);
    });
    scorers.forEach(function (_, k) {
      var failedHere = row[6].indexOf(k) >= 0;
      tr.appendChild(node("td", failedHere ? "failed" : score(row[5][k]),
                          failedHere ? "num bad" : "num"));
    });
    tr.appendChild(node("td", row[4].toLocaleString(), "num"));
    return tr;
  }

  function render() {
    var found = visible(), pages = Math.max(1, Math.ceil(found.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE, body = $("items-body");
    body.textContent = "";
    found.slice(start, start + PAGE).forEach(function (i) { body.appendChild(renderRow(i)); });
    $("count").textContent = found.length
      ? "Showing " + (start + 1).toLocaleString() + "\u2013" +
        Math.min(start + PAGE, found.length).toLocaleString() + " of " +
        found.length.toLocaleString() + " matching items (" + rows.length.toLocaleString() +
        " in all)"
      : "No item matches (" + rows.length.toLocaleString() + " in all)";
    $("page").textContent = "Page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  function labelled(parent, label, value, preformatted) {
    parent.appendChild(node("div", label, "label"));
    parent.appendChild(node(preformatted ? "pre" : "div", value === "" ? "\u2014" : value));
  }

  function renderExecution(parent, execution) {
    var usage = execution.usage || {};
    var line = [execution.status, "model " + (execution.judgeModelId || "?"),
      "attempts " + execution.attemptCount, "model calls " + execution.modelCallCount,
      execution.durationMs + " ms", "tokens in " + shown(usage.inputTokens) + " / out " +
      shown(usage.outputTokens)].join(" \u00b7 ");
    parent.appendChild(node("div", "Judge execution: " + line));
    if (execution.error) {
      parent.appendChild(node("div", execution.error.name + ": " + execution.error.message, "bad"));
    }
    if (execution.prompt !== undefined) { labelled(parent, "Prompt", execution.prompt, true); }
    if (execution.output !== undefined) {
      labelled(parent, "Output", shown(execution.output), true);
    }
    if (execution.rawOutput) { labelled(parent, "Raw output", execution.rawOutput, true); }
  }

  function renderStep(parent, step) {
    var box = node("details");
    var title = (step.failed ? "\u274c " : "") + step.name + " \u00b7 " + step.kind;
    box.appendChild(node("summary", title, step.failed ? "bad" : null));
    if (step.failed) { box.open = true; }
    if (step.result !== undefined) { labelled(box, "Result", shown(step.result), true); }
    if (step.prompt !== undefined) { labelled(box, "Prompt", step.prompt, true); }
    (step.executions || []).forEach(function (e) { renderExecution(box, e); });
    parent.appendChild(box);
  }

  function renderEntry(parent, name, entry) {
    parent.appendChild(node("h4", name));
    if (!entry) { parent.appendChild(node("div", "No run for this item.", "note")); return; }
    if (entry.status === "failed") {
      var where = "Failed at " + (entry.failedStep || "?") + ": " + entry.error;
      parent.appendChild(node("div", where, "bad"));
      var done = (entry.completedSteps || []).join(", ") || "none";
      var recovered = score(entry.recoveredScore) || "\u2014";
      parent.appendChild(node("div", "Completed steps: " + done + " \u00b7 recovered score " +
                              recovered + " (kept in memory only)", "note"));
    } else {
      parent.appendChild(node("div", "Score " + (score(entry.score) || "\u2014 (not scored)")));
      labelled(parent, "Reason", shown(entry.reason), true);
    }
    (entry.steps || []).forEach(function (step) { renderStep(parent, step); });
  }

  function showDetail(i) {
    var row = rows[i], panel = $("detail");
    state.selected = i;
    panel.textContent = "";
    panel.hidden = false;
    panel.appendChild(node("h3", "Item " + row[0]));
    labelled(panel, "Input", row[1], true);
    labelled(panel, "Output", row[2], true);
    labelled(panel, "Ground truth", row[3], true);
    scorers.forEach(function (name, k) { renderEntry(panel, name, (details[i] || [])[k]); });
    render();
    panel.scrollIntoView({block: "start"});
  }

  function number(id) {
    var text = $(id).value.trim();
    return text === "" || isNaN(Number(text)) ? null : Number(text);
  }

  function refilter() {
    state.query = $("filter").value.trim().toLowerCase();
    state.scorer = Number($("score-scorer").value);
    state.min = number("score-min");
    state.max = number("score-max");
    state.failedOnly = $("failed-only").checked;
    state.page = 0;
    render();
  }

  function sortBy(key) {
    state.sortDir = state.sortKey === key ? -state.sortDir : 1;
    state.sortKey = key;
    Array.prototype.forEach.call(document.querySelectorAll("#items th"), function (th) {
      var button = th.querySelector("button");
      var mine = button && button.dataset.sort === key;
      var order = state.sortDir > 0 ? "ascending" : "descending";
      th.setAttribute("aria-sort", mine ? order : "none");
    });
    render();
  }

  function wire() {
    var select = $("score-scorer");
    scorers.forEach(function (name, k) {
      var option = node("option", name);
      option.value = String(k);
      select.appendChild(option);
    });
    ["filter", "score-min", "score-max"].forEach(function (id) {
      $(id).addEventListener("input", refilter);
    });
    select.addEventListener("change", refilter);
    $("failed-only").addEventListener("change", refilter);
    $("prev").addEventListener("click", function () { state.page -= 1; render(); });
    $("next").addEventListener("click", function () { state.page += 1; render(); });
    Array.prototype.forEach.call(document.querySelectorAll("#items th button"), function (b) {
      b.addEventListener("click", function () { sortBy(b.dataset.sort); });
    });
    var body = $("items-body");
    body.addEventListener("click", function (event) {
      var tr = event.target.closest("tr");
      if (tr) { showDetail(Number(tr.dataset.index)); }
    });
    body.addEventListener("keydown", function (event) {
      var tr = event.target.closest("tr");
      if (tr && event.key === "Enter") { showDetail(Number(tr.dataset.index)); }
    });
  }

  function start(loaded) {
    data = loaded;
    rows = data.items;
    scorers = data.scorers;
    details = data.details;
    $("report-status").hidden = true;
    $("items-ui").hidden = false;
    wire();
    render();
  }

  function fail(message) {
    $("report-status").textContent = message;
    $("report-status").className = "bad";
  }

  // A large report's data is gzip-compressed (then base64): a tenth of the size, for email.
  function inflate(text) {
    var binary = atob(text), bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  var block = $("report-data");
  if (block.dataset.encoding !== "gzip+base64") {
    start(JSON.parse(block.textContent));
  } else if (typeof DecompressionStream === "undefined") {
    fail("This report's data is compressed and this browser cannot read it: open the file " +
         "in a current Chrome, Edge, Firefox or Safari.");
  } else {
    inflate(block.textContent.trim()).then(function (text) { start(JSON.parse(text)); },
      function (error) { fail("The report's data could not be read: " + error); });
  }
})();
"""
