// The page `heed serve` answers GET / with: type sentences, pick a model (and a Transformer's
// layer and head), see the outputs and their attention as heed's own SVG heatmaps. A streaming
// recognizer listens to the microphone instead: getUserMedia and an AudioWorklet (its code a
// Blob made here) hand the samples to POST /stream/ID every ~100 ms, and the page shows the words
// as they come (the stable part dark, the rest grey), the log-mel spectrogram scrolling and the
// CTC alignment (each 40 ms position's unit probabilities) growing under it.
// Self-contained (no network access); ?src=...&model=...&layer=...&head=... fill the form and
// translate at once, so a link shows a given sentence (and the browser test uses it);
// ?model=NAME&mic=1&seconds=S starts listening at once and stops after S seconds (the browser
// test's fake microphone). Each result is logged in #stream-log with the audio read by then.
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
#listen-box { margin: 8px 0 16px; }
#words { font-size: 20px; min-height: 1.6em; margin: 8px 0; }
#words .unstable { color: #999; }
#stream-log { font: 12px "DejaVu Sans Mono", monospace; color: #666; max-height: 8em; overflow: auto; }
canvas { display: block; background: #000; image-rendering: pixelated; }
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
<div id="listen-box" style="display:none">
  <button id="listen">Listen to the microphone</button> <span id="listen-status"></span>
  <div id="words"></div>
  <canvas id="spectrogram" width="800" height="80" title="log-mel spectrogram, 10 ms a column"></canvas>
  <canvas id="alignment" width="800" height="96" title="CTC: each 40 ms position's unit probabilities (top row: blank)"></canvas>
  <ol id="stream-log"></ol>
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
  const listens = m.kind === "recognizer";
  $("listen-box").style.display = listens ? "" : "none";
  $("src").style.display = listens ? "none" : "";
  $("go").style.display = listens ? "none" : "";
}
// --- listening: the microphone streamed to POST /stream, the words and what the model heard
let mic = null;  // the running stream: {ctx, media, session, units, blank, queue, finals, ...}
const tap = `class HeedTap extends AudioWorkletProcessor {
  process(inputs) { const x = inputs[0][0]; if (x) this.port.postMessage(x.slice(0)); return true; }
}
registerProcessor("heed-tap", HeedTap);`;
function viridis(t) {  // 0..1 -> a colour close to matplotlib's viridis
  const stops = [[68,1,84],[59,82,139],[33,145,140],[94,201,98],[253,231,37]];
  const x = Math.min(0.9999, Math.max(0, t)) * 4, i = Math.floor(x), f = x - i;
  return stops[i].map((c, k) => Math.round(c + f * (stops[i + 1][k] - c)));
}
function scrollCanvas(c, n) {  // n new columns at the right
  const g = c.getContext("2d");
  g.drawImage(c, -n, 0);
  g.fillStyle = "#000"; g.fillRect(c.width - n, 0, n, c.height);
  return g;
}
function drawFrames(frames) {  // log-mel in tenths, [n][bins]; 1 px per 10 ms frame
  if (!frames || frames.length === 0) return;
  const c = $("spectrogram"), g = scrollCanvas(c, frames.length), bins = frames[0].length;
  const img = g.createImageData(frames.length, c.height);
  frames.forEach((f, x) => {
    for (let y = 0; y < c.height; y++) {
      const v = f[Math.floor((c.height - 1 - y) * bins / c.height)] / 10;  // low bins at the bottom
      const [r, gg, b] = viridis((v + 2) / 18);
      const k = 4 * (y * frames.length + x);
      img.data[k] = r; img.data[k + 1] = gg; img.data[k + 2] = b; img.data[k + 3] = 255;
    }
  });
  g.putImageData(img, c.width - frames.length, 0);
}
function drawProbs(probs) {  // per 40 ms position the units' probabilities in 255ths; 4 px each
  if (!probs || probs.length === 0) return;
  const c = $("alignment"), g = scrollCanvas(c, 4 * probs.length);
  const V = probs[0].length, h = c.height / V;
  const order = [mic.blank].concat([...Array(V).keys()].filter(u => u !== mic.blank));
  probs.forEach((p, i) => {
    const x = c.width - 4 * (probs.length - i);
    order.forEach((u, row) => {
      const [r, gg, b] = viridis(p[u] / 255);
      g.fillStyle = `rgb(${r},${gg},${b})`; g.fillRect(x, row * h, 4, Math.ceil(h));
    });
  });
}
function drawStops(positions, stops) {  // an attention decoder's units where it stopped; 4 px a position
  const c = $("alignment"), g = scrollCanvas(c, 4 * positions), rows = 8, h = c.height / rows;
  mic.positions += positions;
  g.font = Math.floor(h) + "px sans-serif"; g.textAlign = "right"; g.textBaseline = "middle";
  for (const [u, stop] of stops) {  // a staircase: each unit a row down, at its stop
    const x = c.width - 4 * (mic.positions - stop), y = (mic.written++ % rows) * h;
    g.fillStyle = "rgb(253,231,37)"; g.fillRect(x, y, 4, Math.ceil(h));
    const unit = mic.units[u];
    g.fillStyle = "#fff"; g.fillText(unit.trim() === "" ? "\u2423" : unit, x - 2, y + h / 2);
  }
}
function showWords(partial) {
  const w = $("words"); w.innerHTML = "";
  const done = document.createElement("span"); done.className = "final";
  done.textContent = mic.finals.join(" ");
  w.appendChild(done);
  if (partial) {
    const st = document.createElement("span"); st.className = "stable";
    st.textContent = (mic.finals.length ? " " : "") + partial.stable;
    const un = document.createElement("span"); un.className = "unstable";
    un.textContent = partial.text.slice(partial.stable.length);
    w.append(st, un);
  }
}
function handle(answer) {
  drawFrames(answer.frames);
  if (mic.alignment === "attention") drawStops(answer.positions, answer.stops); else drawProbs(answer.probs);
  let partial = null;
  for (const r of answer.results) {
    const li = document.createElement("li");
    li.dataset.type = r.type; li.dataset.audio = r.audio; li.dataset.text = r.text;
    li.textContent = r.type + " at " + r.audio.toFixed(2) + " s: " + r.text;
    $("stream-log").appendChild(li);
    if (r.type === "final") { if (r.text) mic.finals.push(r.text); partial = null; } else partial = r;
  }
  if (answer.results.length) showWords(partial);
  $("listen-status").textContent = answer.audio.toFixed(1) + " s heard";
}
async function post(url, samples) {
  const res = await fetch(url, {method: "POST", body: samples,
                                headers: {"Content-Type": "application/octet-stream"}});
  const j = await res.json();
  if (!res.ok) throw new Error(j.error || res.statusText);
  return j;
}
async function pump() {  // one chunk in flight at a time; the rest waits in the queue
  if (!mic || mic.busy) return;
  const n = mic.queue.reduce((s, x) => s + x.length, 0);
  if (n < mic.rate / 10 && !mic.stopping) return;
  const chunk = new Float32Array(n); let at = 0;
  for (const x of mic.queue) { chunk.set(x, at); at += x.length; }
  mic.queue = []; mic.busy = true;
  const last = mic.stopping;
  try {
    handle(await post("/stream/" + mic.session + (last ? "?end=1" : ""), chunk.buffer));
  } catch (e) {
    $("listen-status").textContent = String(e.message || e); last || stop();
  }
  if (!mic) return;
  mic.busy = false;
  if (!last && mic.stopping) return pump();  // stopped while this chunk was out: the last one
  if (last) { mic.media.getTracks().forEach(t => t.stop()); mic.ctx.close(); mic = null;
              $("listen").textContent = "Listen to the microphone"; $("listen").disabled = false;
              document.body.dataset.listening = "done"; }
}
function stop() { if (mic) { mic.stopping = true; $("listen").disabled = true; pump(); } }
async function listen(seconds) {
  if (mic) { stop(); return; }
  const m = models.find(x => x.name === $("model").value);
  try {
    const media = await navigator.mediaDevices.getUserMedia(
      {audio: {channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false}});
    const ctx = new AudioContext();
    await ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([tap], {type: "text/javascript"})));
    const open = await post("/stream?model=" + encodeURIComponent(m.name) + "&sample_rate=" +
                            ctx.sampleRate + "&encoding=f32&view=1", new ArrayBuffer(0));
    mic = {ctx, media, rate: ctx.sampleRate, session: open.session, units: open.units,
           blank: open.blank, alignment: open.alignment, positions: 0, written: 0,
           queue: [], finals: [], busy: false, stopping: false, heard: false};
    $("alignment").title = open.alignment === "attention"
      ? "attention: each unit written, a row down, at the 40 ms position its attention stopped on"
      : "CTC: each 40 ms position's unit probabilities (top row: blank)";
    const node = new AudioWorkletNode(ctx, "heed-tap");
    node.port.onmessage = e => {
      if (!mic || mic.stopping) return;
      let x = e.data;
      if (!mic.heard) {  // a device's warm-up, exact zeros, is not audio: the stream starts after it
        const first = x.findIndex(v => v !== 0);
        if (first < 0) return;
        x = x.subarray(first); mic.heard = true;
      }
      mic.queue.push(x); pump();
    };
    const mute = ctx.createGain(); mute.gain.value = 0;  // pulled by the output, heard by no one
    ctx.createMediaStreamSource(media).connect(node); node.connect(mute); mute.connect(ctx.destination);
    if (ctx.state !== "running") await ctx.resume();
    $("listen").textContent = "Stop"; document.body.dataset.listening = "yes";
    if (seconds > 0) setTimeout(stop, 1000 * seconds);
  } catch (e) {
    $("listen-status").textContent = "cannot listen: " + String(e.message || e);
  }
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
  $("listen").onclick = () => listen(0);
  if (q.get("src")) { $("src").value = q.get("src"); await run(); }
  if (q.get("mic") === "1") await listen(parseFloat(q.get("seconds")) || 0);
}
start();
</script>
</body></html>
)PAGE";
  return page;
}

}  // namespace heed::serve
