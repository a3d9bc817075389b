#!/usr/bin/env bash
# Structured attention end to end (Kim et al. 2017): the tree-transduction task made by
# scripts/make-tree-task.py (deterministic, distinct parts, the paper's bracketed prefix ->
# infix), an RNN with --attention structured and --syntactic-attention trained a few hundred
# updates, saved, reloaded by translate and drawn by `heed attention` with the tree it induces
# (an arc per source unit, ROOT first) and in `heed report`'s samples; a self-attentive classifier with --syntactic-attention
# on SST drawn the same way; the families without it refuse the flag; the scorer of the task.
# Run by ctest: structured.sh HEED DATA SCRIPTS
set -euo pipefail
heed=$1 data=$2 scripts=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"

python3 "$scripts/make-tree-task.py" "$work/t" --train 400 --dev 50 --test 20 --seed 3 > /dev/null
python3 "$scripts/make-tree-task.py" "$work/t2" --train 400 --dev 50 --test 20 --seed 3 > /dev/null
cmp -s "$work/t/train.src" "$work/t2/train.src" || fail "make-tree-task.py: not deterministic"
[ "$(sort -u "$work/t/train.src" "$work/t/dev.src" "$work/t/test.src" | wc -l)" -eq 470 ] ||
  fail "make-tree-task.py: a formula in two parts (or twice)"
head -1 "$work/t/test.src" | grep -qE '^\( [-+*/] ' || fail "source not in prefix: $(head -1 "$work/t/test.src")"
head -1 "$work/t/test.tgt" | grep -qE '^\( .* [-+*/] ' || fail "target not infix: $(head -1 "$work/t/test.tgt")"

"$heed" --threads 1 train --model rnn --attention structured --syntactic-attention --embed 16 \
  --tgt-embed 16 --hidden 16 --dec-hidden 32 --train-src "$work/t/train.src" \
  --train-tgt "$work/t/train.tgt" --valid-src "$work/t/dev.src" --valid-tgt "$work/t/dev.tgt" \
  --batch 16 --max-steps 60 --max-len 400 --save "$work/m" > "$work/train.log" 2>&1 ||
  fail "train: $(tail -3 "$work/train.log")"
grep -q '"syntactic_attention": true' "$work/m/config.json" || fail "config.json without syntactic_attention"
grep -q '"attention": "structured"' "$work/m/config.json" || fail "config.json without structured attention"
"$heed" translate --model "$work/m" < "$work/t/test.src" > "$work/hyp" || fail "translate"
[ "$(wc -l < "$work/hyp")" -eq 20 ] || fail "translate: $(wc -l < "$work/hyp") lines for 20"
head -3 "$work/t/test.src" | "$heed" attention --model "$work/m" --out "$work/a.svg" > /dev/null
python3 - "$work/a.svg" "$work/t/test.src" <<'PY' || fail "the tree in attention's SVG"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text for t in root.iter(ns + "text")]
assert texts.count("ROOT") == 3, texts.count("ROOT")
assert sum(1 for t in texts if t and t.startswith("syntactic attention")) == 3
units = sum(len(l.split()) for l in open(sys.argv[2]).read().splitlines()[:3])
# every unit's most probable parent gets an arc and an arrowhead: at least 2 polylines each
lines = list(root.iter(ns + "polyline"))
assert len(lines) >= 2 * units, (len(lines), units)
PY
"$heed" --threads 1 report --model "$work/m" --src "$work/t/test.src" --ref "$work/t/test.tgt" \
  --samples first 2 --out "$work/r.html" > /dev/null 2>&1 || fail "report"
[ "$(grep -o ">ROOT<" "$work/r.html" | wc -l)" -eq 2 ] || fail "the report's samples lack their trees"
python3 "$scripts/score-tree-task.py" "$work/hyp" "$work/t/test.tgt" "$work/t/test.depth" > "$work/score"
grep -q '"depth": "all", "formulas": 20' "$work/score" || fail "score: $(cat "$work/score")"
python3 "$scripts/score-tree-task.py" "$work/t/test.tgt" "$work/t/test.tgt" "$work/t/test.depth" |
  grep -q '"depth": "all", "formulas": 20, "exact_match": 100.0, "length_to_failure": 100.0' ||
  fail "score of the references themselves"

# a classifier with syntactic attention: trained, reloaded, its tree drawn
"$heed" --threads 1 train --task classify --train "$data/sst/stsa.binary.train" \
  --valid "$data/sst/stsa.binary.dev" --syntactic-attention --embed 16 --hidden 8 --attn-dim 8 \
  --hops 2 --mlp-hidden 8 --batch 32 --max-steps 20 --save "$work/c" > "$work/c.log" 2>&1 ||
  fail "classifier: $(tail -3 "$work/c.log")"
echo "a gripping , funny film" | "$heed" attention --model "$work/c" --out "$work/c.svg" > /dev/null
grep -q ">ROOT<" "$work/c.svg" || fail "the classifier's tree is not drawn"

expect_error "--syntactic-attention is a layer over the encoder of the rnn family and the classifiers, not of a transformer model" \
  "$heed" train --model transformer --syntactic-attention --train-src "$work/t/train.src" \
  --train-tgt "$work/t/train.tgt" --valid-src "$work/t/dev.src" --valid-tgt "$work/t/dev.tgt" \
  --save "$work/x"
echo "structured attention: task, training, the tree drawn, refusals"
