#include "rnnsearch/serve/page.h"

namespace rnnsearch::serve {

namespace {

// Element ids the browser test reads: #source, #prefix, #constraints, #avoid, #status,
// #translations, #nbest, #heatmap, #tooltip, #words, #alternatives, and one field per decoding
// option named as on the command line (#beam-size, ...). Each line of the text area is one
// sentence (one entry of "q"); #prefix is the target prefix of the chosen sentence (its entry of
// "target_prefix"), #constraints and #avoid its phrases that must and must not appear, separated
// by ";" (its entries of "constraints" and "avoid").
// #words holds the chosen hypothesis' words: a click on word i asks for the alternatives after
// its first i words ("alternatives" with that "target_prefix"); choosing one makes the prefix
// those words and the alternative's, and the page translates again.
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
label { margin-right: 1.2em; color: #555; white-space: nowrap; display: inline-block; }
input[type=number] { width: 4em; }
#prefix { width: 100%; box-sizing: border-box; font: inherit; padding: .4em .5em; margin: .6em 0; }
#steering { display: flex; gap: 1em; }
#steering label { flex: 1; display: flex; align-items: center; gap: .5em; margin: 0; }
#steering input { flex: 1; font: inherit; padding: .3em .5em; }
details { margin-top: .4em; color: #555; }
#status { color: #666; font-size: .9em; margin-left: .5em; }
#status.error { color: #b00020; }
ol { margin: 0; padding-left: 1.6em; }
li { padding: .15em .3em; border-radius: 4px; cursor: pointer; }
li.selected { background: #e8eefc; }
.score { color: #666; margin-left: .8em; font-size: .9em; }
#words span { padding: .1em .25em; border-radius: 4px; cursor: pointer; display: inline-block; }
#words span:hover { background: #eef2fb; }
#words span.selected { background: #e8eefc; outline: 1px solid #9db4ea; }
#alternatives b { margin-right: .5em; }
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
<div id="options"><span id="status"></span></div>
<input id="prefix" type="text" placeholder="Start of the chosen sentence's translation (target prefix): the model completes it">
<div id="steering">
<label title="Phrases the chosen sentence's translation must contain, separated by ; (lexical constraints)">must contain
<input id="constraints" type="text" placeholder="phrase; phrase"></label>
<label title="Phrases the chosen sentence's translation must not contain, separated by ;">must not contain
<input id="avoid" type="text" placeholder="phrase; phrase"></label>
</div>
</section>
<section><h2>Translation</h2><ol id="translations"></ol></section>
<section><h2>n-best of the chosen sentence</h2><ol id="nbest"></ol></section>
<section><h2>Alternatives</h2><div id="words"></div><ol id="alternatives"></ol>
<p style="color:#666;font-size:.9em">Click a word of the translation for the model's most probable words in its place, each
with its probability and the translation it leads to; choose one to have the rest translated again after it.</p>
</section>
<section><h2 id="heatmap-title">Attention</h2><div id="heatmap"></div>
<p style="color:#666;font-size:.9em"><span id="heatmap-source">The decoder's attention: where it looked before choosing each word.</span>
Hover a cell for its weight; click a target word to mark the source words it is aligned to.</p>
</section>
<div id="tooltip"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let sequence = 0, result = null, lines = [], chosenLine = 0, chosenHypothesis = 0, timer = null;
// The alternatives shown: {position, prefix (the words before it), hypotheses}, or null.
let alternatives = null, alternativesSequence = 0;
const kAlternatives = 5;

// The decoding options' fields, one per option /translate takes, built from GET /info
// "options" (the table every shell reads); their starting values the defaults, but for the
// page's own: an n-best list of 5.
const pageValues = { n_best: 5 };
let options = [], alignmentOutput = false;

// The heatmap's title says what it shows: the model's alignment output, or (a model without
// one, or raw attention asked for) the decoder's attention.
function titleHeatmap() {
  const raw = $("raw-attention"), shown = alignmentOutput && !(raw && Number(raw.value) === 1);
  $("heatmap-title").textContent = shown ? "Alignment" : "Attention";
  $("heatmap-source").textContent = shown
    ? "The model's alignment output: where each word comes from, computed once the word is known."
    : "The decoder's attention: where it looked before choosing each word.";
}

async function buildControls() {
  const response = await fetch("info");
  if (!response.ok) throw new Error("GET info: " + response.statusText);
  const info = await response.json();
  alignmentOutput = info.alignment_output === true;
  // (alternatives: asked for when a word is clicked, not a field)
  options = info.options.filter((o) => "translate" in o.defaults && o.name !== "alternatives");
  for (const o of options) {
    const label = document.createElement("label"), input = document.createElement("input");
    label.title = o.help;
    input.id = o.option.slice(2);  // "--beam-size": #beam-size
    input.type = "number";
    if (o.minimum !== null) input.min = o.minimum;
    if (o.maximum !== null) input.max = o.maximum;
    input.step = o.type === "integer" ? "1" : "0.1";
    const start = o.name in pageValues ? pageValues[o.name] : o.defaults.translate;
    input.value = start === null ? "" : start;
    input.addEventListener("input", schedule);
    label.append(o.name.replace(/_/g, " ") + " ", input);
    $("options").insertBefore(label, $("status"));
  }
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(translate, 300);  // debounced: translate once typing pauses
}

// The options' fields as request fields: an option goes with a request when its field differs
// from the default (empty: not given); the server checks it as the command line would and says
// what is wrong.
function optionFields() {
  const fields = {};
  for (const o of options) {
    const text = $(o.option.slice(2)).value.trim();
    if (text !== "" && Number(text) !== o.defaults.translate) fields[o.name] = Number(text);
  }
  return fields;
}

// The phrases typed into #constraints or #avoid: separated by ";", blanks dropped.
function phrases(id) {
  return $(id).value.split(";").map((p) => p.trim()).filter((p) => p !== "");
}

// The chosen sentence's steering as request fields, every other sentence unsteered.
function steeringFields(requested) {
  const fields = {}, prefix = $("prefix").value.trim();
  const steering = { target_prefix: prefix === "" ? null : prefix, constraints: phrases("constraints"),
                     avoid: phrases("avoid") };
  for (const [name, mine] of Object.entries(steering))
    if (mine !== null && mine.length > 0)
      fields[name] = requested.map((_, k) => (k === chosenLine ? mine : (name === "target_prefix" ? "" : [])));
  return fields;
}

const steered = () => $("prefix").value.trim() !== "" || phrases("constraints").length > 0 || phrases("avoid").length > 0;

async function post(body) {
  const response = await fetch("translate", { method: "POST", headers: { "Content-Type": "application/json" },
                                              body: JSON.stringify(body) });
  const data = await response.json();
  return { ok: response.ok, data: data, error: data.error || response.statusText };
}

function showError(error) {
  $("status").className = "error";
  $("status").textContent = String(error.message || error);
}

async function translate() {
  const requested = $("source").value.split("\n").filter((line) => line.trim() !== "");
  const mine = ++sequence;
  if (requested.length === 0) { result = null; render(); $("status").textContent = ""; return; }
  await controls;
  const body = Object.assign({ q: requested, alignment: "soft", heatmap: true }, optionFields());
  const beam = options.find((o) => o.name === "beam_size");
  if (beam && body.n_best > (body.beam_size || beam.defaults.translate))  // a smaller beam: its whole list
    body.n_best = body.beam_size || beam.defaults.translate;
  if (chosenLine >= requested.length) chosenLine = 0;
  Object.assign(body, steeringFields(requested));
  $("status").className = "";
  $("status").textContent = "translating…";
  try {
    const reply = await post(body);
    if (mine !== sequence) return;  // a later request is under way
    if (!reply.ok) throw new Error(reply.error);
    result = reply.data.translations;
    lines = requested;
    if (chosenLine >= result.length) chosenLine = 0;
    chosenHypothesis = 0;
    alternatives = null;
    $("status").textContent = "";
    render();
  } catch (error) {
    if (mine === sequence) showError(error);
  }
}

// The alternatives after the first `position` words of the chosen hypothesis, decoded with the
// options' fields (but the n-best list and sampling, which alternatives replace) and the phrases
// to avoid (the constraints need a beam search of their own, which alternatives are not).
async function askAlternatives(position) {
  const hypothesis = result[chosenLine].hypotheses[chosenHypothesis];
  const prefix = hypothesis.target.slice(0, position).join(" ");
  const body = optionFields();
  for (const name of Object.keys(body)) if (name === "n_best" || name.startsWith("sampling_")) delete body[name];
  Object.assign(body, { q: [lines[chosenLine]], target_prefix: [prefix], alternatives: kAlternatives });
  if (phrases("avoid").length > 0) body.avoid = [phrases("avoid")];
  const mine = ++alternativesSequence;
  try {
    const reply = await post(body);
    if (mine !== alternativesSequence) return;
    if (!reply.ok) throw new Error(reply.error);
    alternatives = { position: position, prefix: prefix, hypotheses: reply.data.translations[0].hypotheses };
    render();
  } catch (error) {
    if (mine === alternativesSequence) showError(error);
  }
}

// Choosing an alternative: the target prefix becomes the words before it and its word, and the
// sentence is translated again (n-best list and heatmap) from there.
function choose(alternative) {
  const word = alternative.alternative.word;
  if (word === "</s>") return;  // the end: nothing to force
  $("prefix").value = (alternatives.prefix === "" ? "" : alternatives.prefix + " ") + word;
  alternatives = null;
  translate();
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
        alternatives = null;
        render();
        if (moved && steered()) schedule();  // the prefix and phrases now belong to this sentence
      })));
  const entry = result[chosenLine];
  if (!entry) return;
  entry.hypotheses.forEach((h, k) => nbest.appendChild(
      item(h.translation, h.score, k === chosenHypothesis, () => { chosenHypothesis = k; alternatives = null; render(); })));
  const hypothesis = entry.hypotheses[chosenHypothesis];
  renderAlternatives(hypothesis);
  if (hypothesis && hypothesis.heatmap_svg) {
    titleHeatmap();
    heatmap.innerHTML = hypothesis.heatmap_svg;  // drawn by the server, tokens XML-escaped
    wire(heatmap.querySelector("svg"), hypothesis);
  }
}

function renderAlternatives(hypothesis) {
  const words = $("words"), list = $("alternatives");
  words.replaceChildren();
  list.replaceChildren();
  if (!hypothesis) return;
  hypothesis.target.forEach((word, position) => {
    const span = document.createElement("span");
    span.textContent = word;
    if (alternatives && alternatives.position === position) span.classList.add("selected");
    span.onclick = () => askAlternatives(position);
    words.append(span, " ");
  });
  if (!alternatives) return;
  for (const h of alternatives.hypotheses) {
    const li = document.createElement("li"), word = document.createElement("b"), p = document.createElement("span");
    word.textContent = h.alternative.word === "</s>" ? "(end)" : h.alternative.word;
    p.className = "score";
    p.textContent = h.alternative.probability.toFixed(4);
    li.dataset.word = h.alternative.word;
    li.append(word, h.translation === "" ? "(empty)" : h.translation, p);
    li.onclick = () => choose(h);
    list.appendChild(li);
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
for (const id of ["prefix", "constraints", "avoid"]) $(id).addEventListener("input", schedule);
const controls = buildControls().catch((error) => {
  $("status").className = "error";
  $("status").textContent = String(error.message || error);
});
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
