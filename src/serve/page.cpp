#include "rnnsearch/serve/page.h"

namespace rnnsearch::serve {

namespace {

// Element ids the browser test reads: #source, #prefix, #status, #translations, #nbest,
// #heatmap, #tooltip. Each line of the text area is one sentence (one entry of "q"); #prefix
// is the target prefix of the chosen sentence (its entry of "target_prefix").
constexpr const char* kPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rnnsearch</title>
<style>
body { font-family: system-ui, 'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK SC', sans-serif;
       margin: 0 auto; max-width: 1280px; padding: 1em; color: #222; background: #f6f6f6; }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 1em; margin: 1em 0; }
h1 { font-size: 1.4em; margin: .2em 0; }
h2 { font-size: 1.05em; margin: 0 0 .6em; }
textarea { width: 100%; box-sizing: border-box; min-height: 6em; font: inherit; padding: .5em; }
label { margin-right: 1.2em; color: #555; }
input[type=number] { width: 4em; }
#prefix { width: 100%; box-sizing: border-box; font: inherit; padding: .4em .5em; margin: .6em 0; }
details { margin-top: .4em; color: #555; }
#status { color: #666; font-size: .9em; margin-left: .5em; }
#status.error { color: #b00020; }
ol { margin: 0; padding-left: 1.6em; }
li { padding: .15em .3em; border-radius: 4px; cursor: pointer; }
li.selected { background: #e8eefc; }
.score { color: #666; margin-left: .8em; font-size: .9em; }
#heatmap svg { max-width: 100%; height: auto; }
#heatmap text.target { cursor: pointer; }
#heatmap text.highlight { fill: #d62728; font-weight: bold; }
#heatmap rect.cell.focus { stroke: #d62728; stroke-width: 1.5; }
#tooltip { position: fixed; pointer-events: none; background: #222; color: #fff; padding: .25em .5em;
           border-radius: 4px; font-size: .85em; display: none; white-space: nowrap; }
</style>
</head>
<body>
<h1>rnnsearch</h1>
<section>
<textarea id="source" placeholder="Type or paste text: one sentence per line" autofocus></textarea>
<div>
<label>beam <input id="beam" type="number" min="1" value="5"></label>
<label>n-best <input id="nbest-size" type="number" min="1" value="5"></label>
<label>normalize <input id="normalize" type="number" min="0" step="0.1" value="1"></label>
<span id="status"></span>
</div>
<details><summary>decoding controls</summary>
<label title="at most F × source length; 0 = 2 × source + 10">max length factor <input id="max-length-factor" type="number" min="0" step="0.1" value="0"></label>
<label title="subtracted from the score per output word">word penalty <input id="word-penalty" type="number" step="0.1" value="0"></label>
<label title="GNMT's length penalty instead of normalize; empty = off">length penalty α <input id="length-penalty-alpha" type="number" min="0" step="0.1" value=""></label>
<label title="GNMT's coverage penalty">coverage penalty <input id="coverage-penalty" type="number" min="0" step="0.1" value="0"></label>
</details>
<input id="prefix" type="text" placeholder="Start of the chosen sentence's translation (target prefix): the model completes it">
</section>
<section><h2>Translation</h2><ol id="translations"></ol></section>
<section><h2>n-best of the chosen sentence</h2><ol id="nbest"></ol></section>
<section><h2>Attention</h2><div id="heatmap"></div>
<p style="color:#666;font-size:.9em">Hover a cell for its weight; click a target word to mark the source words it attends to.</p>
</section>
<div id="tooltip"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let sequence = 0, result = null, chosenLine = 0, chosenHypothesis = 0, timer = null;

function number(id, fallback) {
  const value = Number($(id).value);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

// A number field's value, or undefined when it is empty, not a number, or below minimum.
function optional(id, minimum) {
  const text = $(id).value.trim(), value = Number(text);
  return text !== "" && Number.isFinite(value) && value >= minimum ? value : undefined;
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(translate, 300);  // debounced: translate once typing pauses
}

async function translate() {
  const lines = $("source").value.split("\n").filter((line) => line.trim() !== "");
  const mine = ++sequence;
  if (lines.length === 0) { result = null; render(); $("status").textContent = ""; return; }
  const beam = Math.max(1, Math.round(number("beam", 5)));
  const body = { q: lines, beam_size: beam, n_best: Math.min(beam, Math.max(1, Math.round(number("nbest-size", 5)))),
                 normalize: number("normalize", 1), alignment: "soft", heatmap: true };
  // the decoding controls and the prefix go with the request only when set
  const controls = { max_length_factor: optional("max-length-factor", 0), word_penalty: optional("word-penalty", -Infinity),
                     length_penalty_alpha: optional("length-penalty-alpha", 0), coverage_penalty: optional("coverage-penalty", 0) };
  for (const [name, value] of Object.entries(controls)) if (value !== undefined && (value !== 0 || name === "length_penalty_alpha")) body[name] = value;
  if (body.length_penalty_alpha !== undefined) delete body.normalize;
  if (chosenLine >= lines.length) chosenLine = 0;
  const prefix = $("prefix").value.trim();
  if (prefix !== "") body.target_prefix = lines.map((_, k) => (k === chosenLine ? prefix : ""));
  $("status").className = "";
  $("status").textContent = "translating…";
  try {
    const response = await fetch("translate", { method: "POST", headers: { "Content-Type": "application/json" },
                                                body: JSON.stringify(body) });
    const data = await response.json();
    if (mine !== sequence) return;  // a later request is under way
    if (!response.ok) throw new Error(data.error || response.statusText);
    result = data.translations;
    if (chosenLine >= result.length) chosenLine = 0;
    chosenHypothesis = 0;
    $("status").textContent = "";
    render();
  } catch (error) {
    if (mine !== sequence) return;
    $("status").className = "error";
    $("status").textContent = String(error.message || error);
  }
}

function item(text, score, selected, onclick) {
  const li = document.createElement("li");
  li.textContent = text === "" ? "(empty)" : text;
  const s = document.createElement("span");
  s.className = "score";
  s.textContent = score.toFixed(4);
  li.appendChild(s);
  if (selected) li.classList.add("selected");
  li.onclick = onclick;
  return li;
}

function render() {
  const translations = $("translations"), nbest = $("nbest"), heatmap = $("heatmap");
  translations.replaceChildren();
  nbest.replaceChildren();
  heatmap.replaceChildren();
  if (!result) return;
  result.forEach((entry, k) => translations.appendChild(
      item(entry.translation, entry.score, k === chosenLine, () => {
        const moved = k !== chosenLine;
        chosenLine = k;
        chosenHypothesis = 0;
        render();
        if (moved && $("prefix").value.trim() !== "") schedule();  // the prefix now belongs to this sentence
      })));
  const entry = result[chosenLine];
  if (!entry) return;
  entry.hypotheses.forEach((h, k) => nbest.appendChild(
      item(h.translation, h.score, k === chosenHypothesis, () => { chosenHypothesis = k; render(); })));
  const hypothesis = entry.hypotheses[chosenHypothesis];
  if (hypothesis && hypothesis.heatmap_svg) {
    heatmap.innerHTML = hypothesis.heatmap_svg;  // drawn by the server, tokens XML-escaped
    wire(heatmap.querySelector("svg"), hypothesis);
  }
}

// The heatmap's cells (rect.cell, row-major) carry "source → target: weight" titles; the
// target labels are the texts of the group anchored at the end, the source labels those
// anchored at the start.
function wire(svg, hypothesis) {
  if (!svg) return;
  const tooltip = $("tooltip");
  const cells = Array.from(svg.querySelectorAll("rect.cell"));
  const sources = Array.from(svg.querySelectorAll("g[text-anchor=start] > text"));
  const targets = Array.from(svg.querySelectorAll("g[text-anchor=end] > text"));
  const cols = sources.length;
  cells.forEach((cell, k) => {
    const title = cell.querySelector("title");
    const text = title ? title.textContent : "";
    if (title) title.remove();  // the page's tooltip replaces the browser's
    cell.dataset.tip = text;
    cell.dataset.row = Math.floor(k / cols);
    cell.dataset.col = k % cols;
    cell.addEventListener("mouseenter", (event) => {
      tooltip.textContent = text;
      tooltip.style.display = "block";
      move(event);
    });
    cell.addEventListener("mousemove", move);
    cell.addEventListener("mouseleave", () => { tooltip.style.display = "none"; });
  });
  function move(event) {
    tooltip.style.left = (event.clientX + 12) + "px";
    tooltip.style.top = (event.clientY + 12) + "px";
  }
  targets.forEach((label, row) => {
    label.classList.add("target");
    label.addEventListener("click", () => {
      const weights = hypothesis.alignment[row] || [];
      const best = Math.max(...weights);
      sources.forEach((s, col) => s.classList.toggle("highlight", weights[col] >= 0.5 * best && best > 0));
      targets.forEach((t, r) => t.classList.toggle("highlight", r === row));
      cells.forEach((c) => c.classList.toggle("focus", Number(c.dataset.row) === row));
    });
  });
}

$("source").addEventListener("input", schedule);
for (const id of ["beam", "nbest-size", "normalize", "prefix", "max-length-factor", "word-penalty",
                  "length-penalty-alpha", "coverage-penalty"])
  $(id).addEventListener("input", schedule);
</script>
</body>
</html>
)PAGE";

}  // namespace

const std::string& page_html() {
  static const std::string page = kPage;
  return page;
}

}  // namespace rnnsearch::serve
