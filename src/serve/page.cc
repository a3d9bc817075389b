// The page `heed serve` answers GET / with: type sentences, pick a model (and a Transformer's
// layer and head), see the outputs and their attention as heed's own SVG heatmaps.
// Self-contained (no network access); ?src=...&model=...&layer=...&head=... fill the form and
// translate at once, so a link shows a given sentence (and the browser test uses it).
// Leaves out: drawing (the server renders each heatmap with viz/heatmap.h).
#include "heed/serve/server.h"

namespace heed::serve {

const std::string& page_html() {
  static const std::string page = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>heed: see the attention</title>
<style>
body { font: 15px/1.4 "DejaVu Sans", sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 20px; margin: 0 0 12px; }
textarea { width: 100%; height: 90px; font: 15px "DejaVu Sans Mono", monospace; }
.controls { margin: 8px 0 16px; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
.out { margin: 18px 0; padding-top: 10px; border-top: 1px solid #ddd; }
.src { color: #666; } .tgt { font-weight: bold; margin: 4px 0 8px; }
.err { color: #b00; white-space: pre-wrap; }
.map svg { max-width: 100%; height: auto; }
</style></head>
<body>
<h1>heed &mdash; what the model attends to</h1>
<textarea id="src" placeholder="One sentence per line"></textarea>
<div class="controls">
  <label>model <select id="model"></select></label>
  <label id="layer-box">layer <select id="layer"></select></label>
  <label id="head-box">head <select id="head"></select></label>
  <label>beam <input id="beam" type="number" min="1" max="16" value="1" style="width:4em"></label>
  <button id="go">Translate</button> <span id="status"></span>
</div>
<div id="results"></div>
<script>
"use strict";
const $ = id => document.getElementById(id);
let models = [];
function option(sel, value, text) {
  const o = document.createElement("option"); o.value = value; o.textContent = text; sel.appendChild(o);
}
function showChoices() {
  const m = models.find(x => x.name === $("model").value) || {};
  const layers = m.layers || 0, heads = m.heads || 0;
  $("layer").innerHTML = ""; $("head").innerHTML = "";
  option($("layer"), -1, "last");
  for (let l = m.first_layer || 0; l < layers; l++) option($("layer"), l, String(l));
  option($("head"), -1, "mean");
  for (let h = 0; h < heads; h++) option($("head"), h, String(h));
  $("layer-box").style.display = heads > 0 ? "" : "none";
  $("head-box").style.display = heads > 1 ? "" : "none";
  $("go").textContent = m.kind === "classifier" ? "Classify" : "Translate";
}
async function run() {
  const m = models.find(x => x.name === $("model").value);
  const src = $("src").value.split("\n").filter(s => s.trim() !== "");
  if (!m || src.length === 0) return;
  $("status").textContent = "…"; $("results").innerHTML = "";
  const body = {src: src, model: m.name, svg: true};
  let url = "/classify";
  if (m.kind !== "classifier") {
    url = "/translate";
    body.beam = Math.max(1, parseInt($("beam").value, 10) || 1);
    if (m.heads > 0) { body.layer = parseInt($("layer").value, 10); body.head = parseInt($("head").value, 10); }
  }
  const t0 = performance.now();
  try {
    const res = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                                  body: JSON.stringify(body)});
    const j = await res.json();
    if (!res.ok) throw new Error(j.error || res.statusText);
    const items = j.translations || j.predictions;
    items.forEach((it, i) => {
      const div = document.createElement("div"); div.className = "out";
      const s = document.createElement("div"); s.className = "src"; s.textContent = src[i];
      const t = document.createElement("div"); t.className = "tgt";
      t.textContent = it.text !== undefined ? it.text : "label " + it.label +
        " (" + it.probs.map(p => p.toFixed(3)).join(", ") + ")";
      const map = document.createElement("div"); map.className = "map";
      if (it.svg) map.innerHTML = it.svg;  // heed's own SVG, made by the server
      div.append(s, t, map); $("results").appendChild(div);
    });
    $("status").textContent = items.length + " in " + Math.round(performance.now() - t0) + " ms";
  } catch (e) {
    const d = document.createElement("div"); d.className = "err"; d.textContent = String(e.message || e);
    $("results").appendChild(d); $("status").textContent = "";
  }
}
async function start() {
  models = await (await fetch("/models")).json();
  models.forEach(m => option($("model"), m.name, m.name + " (" + m.family + ")"));
  const q = new URLSearchParams(location.search);
  if (q.get("model")) {
    if (models.some(m => m.name === q.get("model"))) {
      $("model").value = q.get("model");
    } else {  // say so, rather than leave the choice blank
      const d = document.createElement("div"); d.className = "err"; d.id = "unknown-model";
      d.textContent = "no model named '" + q.get("model") + "' here; the models: " +
        models.map(m => m.name).join(", ");
      $("results").appendChild(d);
    }
  }
  showChoices();
  if (q.get("layer")) $("layer").value = q.get("layer");
  if (q.get("head")) $("head").value = q.get("head");
  if (q.get("beam")) $("beam").value = q.get("beam");
  $("model").onchange = showChoices;
  $("go").onclick = run;
  if (q.get("src")) { $("src").value = q.get("src"); await run(); }
}
start();
</script>
</body></html>
)PAGE";
  return page;
}

}  // namespace heed::serve
