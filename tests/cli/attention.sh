#!/usr/bin/env bash
# `heed attention` and `heed report` end to end on tiny models of the shared data: an RNN G2P
# model, a Transformer on Multi30k pieces (mean of heads and a grid of all heads), ensembles, and a
# self-attentive SST classifier. SVGs parse as XML with one cell per (output, source) pair and
# the tokens as text (counts checked against `heed translate --attention-out`); PNGs decode with
# the SVG's size; the report is one self-contained HTML page. Run by ctest: attention.sh HEED DATA
set -euo pipefail
heed=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmu=$data/cmudict m30k=$data/multi30k/tok sst=$data/sst

# svg_cells SVG JSONL [HEADS]: the SVG has HEADS x (rows x cols) cells per line of the JSONL, every
# source token as a text of class "src", and parses as XML
svg_check() {
  python3 - "$@" <<'PY' || fail "svg check of $1"
import json, sys, xml.etree.ElementTree as ET
svg, jsonl = sys.argv[1], sys.argv[2]
heads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(svg).getroot()
cells = [r for r in root.iter(ns + "rect") if r.get("class") == "cell"]
rows = [json.loads(l) for l in open(jsonl)]
want = heads * sum(len(r["attention"]) * len(r["attention"][0]) for r in rows)
assert len(cells) == want, (len(cells), want)
src_text = [t.text for t in root.iter(ns + "text") if t.get("class") == "src"]
for r in rows:
    for tok in r.get("src", r.get("tokens")):
        assert tok[:24] in [s.rstrip("…") for s in src_text], tok
out_text = [t.text for t in root.iter(ns + "text") if t.get("class") == "out"]
for r in rows:  # the output tokens (G2P phones, pieces, "</s>") or the classifier's hops
    for tok in r.get("out", ["hop %d" % (k + 1) for k in range(len(r["attention"]))]):
        assert tok[:24] in [s.rstrip("…") for s in out_text], tok
PY
}
# png_check PNG SVG: the PNG decodes (tests/cli/png.py), with the SVG's width and height
png_check() {
  python3 - "$@" <<PY || fail "png check of $1"
import math, sys, xml.etree.ElementTree as ET
sys.path.insert(0, "$(dirname "$0")")
from png import read_png
w, h, rows = read_png(sys.argv[1])
root = ET.parse(sys.argv[2]).getroot()
assert (w, h) == (math.ceil(float(root.get("width"))), math.ceil(float(root.get("height")))), (w, h)
assert len({px for row in rows for px in row}) > 20, "a nearly blank image"
PY
}

# an RNN G2P model (a few hundred updates: the attention need not be good, only drawn)
"$heed" --threads 1 train --train-src "$cmu/cmudict-0.7b.train-dev-20-21" \
  --valid-src "$cmu/cmudict-0.7b.train-dev-1-21" --src-units char --tgt-units word \
  --embed 16 --hidden 32 --max-steps 30 --valid-max 20 --save "$work/g2p" > "$work/g2p.log" 2>&1
printf 'ABANDON\nZYGOTE\nO'"'"'NEILL\n' > "$work/words.txt"
"$heed" --threads 1 attention --model "$work/g2p" --out "$work/g2p.svg" --beam 3 \
  < "$work/words.txt" > "$work/g2p_out.txt" 2> "$work/g2p_att.log"
"$heed" --threads 1 translate --model "$work/g2p" --beam 3 --attention-out "$work/g2p.jsonl" \
  < "$work/words.txt" > /dev/null
[ "$(wc -l < "$work/g2p_out.txt")" = 3 ] || fail "attention: one output line per word"
svg_check "$work/g2p.svg" "$work/g2p.jsonl"
"$heed" --threads 1 attention --model "$work/g2p" --out "$work/g2p.png" --beam 3 \
  < "$work/words.txt" > /dev/null 2>&1
png_check "$work/g2p.png" "$work/g2p.svg"

# a Transformer on SentencePiece pieces: the mean of heads, then every head of layer 0
"$heed" --threads 1 train --model transformer --train-src "$m30k/train.lc.norm.tok.en" \
  --train-tgt "$m30k/train.lc.norm.tok.de" --valid-src "$m30k/val.lc.norm.tok.en" \
  --valid-tgt "$m30k/val.lc.norm.tok.de" --src-units spm --tgt-units spm --spm-vocab-size 1000 \
  --d-model 16 --heads 2 --ff 32 --layers 2 --warmup 4 --batch-tokens 500 --max-steps 8 \
  --valid-max 5 --max-positions 128 --save "$work/tf" > "$work/tf.log" 2>&1
head -3 "$m30k/test_2016_flickr.lc.norm.tok.en" > "$work/en.txt"
"$heed" --threads 1 attention --model "$work/tf" --out "$work/tf.svg" < "$work/en.txt" > /dev/null 2>&1
"$heed" --threads 1 translate --model "$work/tf" --attention-out "$work/tf.jsonl" < "$work/en.txt" > /dev/null
svg_check "$work/tf.svg" "$work/tf.jsonl"
"$heed" --threads 1 attention --model "$work/tf" --out "$work/tf_heads.svg" --layer 0 --all-heads \
  < "$work/en.txt" > /dev/null 2>&1
svg_check "$work/tf_heads.svg" "$work/tf.jsonl" 2
grep -q ">layer 0, head 1<" "$work/tf_heads.svg" || fail "head grid: no title for head 1"
"$heed" --threads 1 attention --model "$work/tf" --out "$work/tf_all.png" --all-layers --all-heads \
  < "$work/en.txt" > /dev/null 2>&1 || fail "all layers and heads as PNG"

# an ensemble of a model with itself draws exactly the model's picture (the mean of equal
# weights), for the RNN and for every head of a Transformer layer; mismatched members are refused
"$heed" --threads 1 attention --model "$work/tf" "$work/tf" --out "$work/tf_heads2.svg" --layer 0 \
  --all-heads < "$work/en.txt" > /dev/null 2>&1
cmp -s "$work/tf_heads.svg" "$work/tf_heads2.svg" || fail "ensemble of two copies: another picture"
"$heed" --threads 1 attention --model "$work/g2p" --model "$work/g2p" --out "$work/g2p2.svg" \
  --beam 3 < "$work/words.txt" > /dev/null 2>&1
cmp -s "$work/g2p.svg" "$work/g2p2.svg" || fail "RNN ensemble of two copies: another picture"
if "$heed" attention --model "$work/g2p" "$work/tf" --out "$work/x.svg" < "$work/words.txt" \
  > /dev/null 2> "$work/err.txt"; then fail "an ensemble of G2P and translation accepted"; fi
grep -q "an ensemble needs" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"

# a self-attentive classifier: its hops over the tokens
"$heed" --threads 1 train --task classify --train "$sst/stsa.binary.train" \
  --valid "$sst/stsa.binary.dev" --embed 8 --hidden 8 --attn-dim 8 --hops 3 --mlp-hidden 8 \
  --batch 32 --max-steps 5 --save "$work/cls" > "$work/cls.log" 2>&1
head -4 "$sst/stsa.binary.test" | cut -d' ' -f2- > "$work/sents.txt"
"$heed" --threads 1 attention --model "$work/cls" --out "$work/cls.svg" < "$work/sents.txt" > "$work/cls_labels.txt" 2>&1
"$heed" --threads 1 classify --model "$work/cls" --attention-out "$work/cls.jsonl" < "$work/sents.txt" > /dev/null
svg_check "$work/cls.svg" "$work/cls.jsonl"

# errors: named, non-zero exit
if "$heed" attention --model "$work/g2p" --out "$work/x.svg" --all-heads < "$work/words.txt" \
  > /dev/null 2> "$work/err.txt"; then fail "--all-heads on an RNN accepted"; fi
grep -q "layers and heads are a Transformer's" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"
if "$heed" attention --model "$work/tf" --out "$work/x.svg" --layer 5 < "$work/en.txt" \
  > /dev/null 2> "$work/err.txt"; then fail "--layer 5 of 2 accepted"; fi
grep -q "layer 5 of a decoder with 2 layers" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"
if "$heed" attention --model "$work/g2p" --out "$work/x.jpg" < "$work/words.txt" \
  > /dev/null 2> "$work/err.txt"; then fail "a .jpg accepted"; fi
grep -q "x.jpg: unknown image format" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"

# the report: one self-contained page with curves, scores and heatmaps
"$heed" --threads 1 report --model "$work/g2p" --src "$cmu/cmudict-0.7b.test" --beam 1 \
  --samples 3 --out "$work/report.html" 2> "$work/report.log"
python3 - "$work/report.html" <<'PY' || fail "report"
import sys, re
html = open(sys.argv[1], encoding="utf-8").read()
assert html.startswith("<!DOCTYPE html>")
for section in ("model", "scores", "training", "samples"):
    assert 'id="%s"' % section in html, section
assert re.search(r"WER = [0-9.]+ PER = [0-9.]+", html), "no test score"
assert html.count("<svg") == 5 + 3, html.count("<svg")  # 5 curves (with the rate), 3 heatmaps
assert ">Learning rate<" in html
assert html.count('class="cell"') > 3 * 3
assert not re.search(r'(src|href)="(https?:)?//', html), "the page needs the network"
PY

# an ensemble's report: a model with itself scores and draws exactly as the model alone, with one
# config column and one set of curves per member; a classifier ensemble is refused
"$heed" --threads 1 report --model "$work/g2p" "$work/g2p" --src "$cmu/cmudict-0.7b.test" --beam 1 \
  --samples 3 --out "$work/report2.html" 2> "$work/report2.log"
python3 - "$work/report.html" "$work/report2.html" "$work/g2p" <<'PY' || fail "ensemble report"
import sys, re
one, two = (open(f, encoding="utf-8").read() for f in sys.argv[1:3])
member = sys.argv[3]
score = lambda html: re.search(r"WER = [0-9.]+ PER = [0-9.]+", html).group(0)
assert score(one) == score(two), (score(one), score(two))
assert "ensemble test (" in two and "ensemble test (" not in one
samples = lambda html: html[html.index('id="samples"'):]
assert samples(one) == samples(two), "the samples or their heatmaps differ"
section = lambda html, a, b: html[html.index('id="%s"' % a):html.index('id="%s"' % b)]
assert section(two, "model", "run").count("<th>%s</th>" % member) == 2, "one config column per member"
assert section(two, "run", "scores").count("<th>%s</th>" % member) == 2, "one run column per member"
assert "<code>heed train " in section(one, "run", "scores"), "no command in the Run section"
assert two.count("%s: train loss" % member) >= 2 * 2, "each member's curve in both loss plots"
assert two.count("<svg") == 5 + 3, two.count("<svg")
PY
# which samples: each with its own score; the worst first, a seeded draw, the first ones
for pick in "worst 4" "4 random" "random 4 --seed 9" "first 2"; do
  # shellcheck disable=SC2086
  "$heed" --threads 1 report --model "$work/g2p" --src "$cmu/cmudict-0.7b.test" --beam 1 \
    --samples $pick --out "$work/pick-${pick// /_}.html" 2> /dev/null
done
python3 - "$work" "$cmu/cmudict-0.7b.test" <<'PY' || fail "report --samples"
import sys, re
work, test = sys.argv[1:3]
def shown(name):
    html = open(f"{work}/pick-{name}.html", encoding="utf-8").read()
    html = html[html.index('id="samples"'):]
    words = re.findall(r'<td class="label">input</td><td>([^<]*)</td>', html)
    pers = [float(x) for x in re.findall(r'<td class="label">score</td><td>PER ([0-9.]+)</td>', html)]
    assert len(words) == len(pers), (name, words, pers)
    return words, pers, html
words, pers, html = shown("worst_4")
assert len(pers) == 4 and pers == sorted(pers, reverse=True) and pers[0] > 0, pers
assert "worst scores, worst first" in html
spread_pers = [float(x) for x in re.findall(r'score</td><td>PER ([0-9.]+)<', open(f"{work}/report.html").read())]
assert len(spread_pers) == 3 and max(spread_pers) <= pers[0], (spread_pers, pers)
a, b = shown("4_random")[0], shown("random_4_--seed_9")[0]
assert len(a) == 4 and len(b) == 4 and a != b, (a, b)
first = sorted({re.sub(r"\(\d+\)$", "", l.split()[0]) for l in open(test, encoding="latin-1")
                if l.strip() and not l.startswith(";;;")})
assert shown("first_2")[0] == first[:2], (shown("first_2")[0], first[:2])
PY
"$heed" --threads 1 report --model "$work/g2p" --src "$cmu/cmudict-0.7b.test" --beam 1 \
  --samples 4 random --out "$work/pick-again.html" 2> /dev/null
cmp <(sed -n '/id="samples"/,$p' "$work/pick-again.html") \
  <(sed -n '/id="samples"/,$p' "$work/pick-4_random.html") || fail "--samples random is not seeded"
if "$heed" report --model "$work/g2p" --samples wrost --out "$work/x.html" > /dev/null \
  2> "$work/err.txt"; then fail "--samples wrost accepted"; fi
grep -q "unknown --samples 'wrost'" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"
if "$heed" report --model "$work/cls" "$work/cls" --out "$work/x.html" > /dev/null \
  2> "$work/err.txt"; then fail "an ensemble of classifiers accepted by report"; fi
grep -q "an ensemble is for sequence-to-sequence models" "$work/err.txt" || fail "error: $(cat "$work/err.txt")"
echo ok
