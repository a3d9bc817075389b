#!/usr/bin/env bash
# The classifier's command line end to end on the shared SST-2 files: a tiny `heed train --task
# classify` (self-attention, 2 hops, penalty) with a test report, `heed classify` with --probs
# and --attention-out, `heed score --metric acc` agreeing with the trainer, `--resume`, the
# Transformer-encoder classifier ([CLS] pooling) trained, saved and run the same way, the two as
# an ensemble, and clear errors for bad labelled lines. Run by ctest: classify.sh HEED DATA_DIR
set -euo pipefail
heed=$1 sst=$2/sst
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

train() {
  "$heed" --threads 1 train --task classify --train "$sst/stsa.binary.train" \
    --valid "$sst/stsa.binary.dev" --test "$sst/stsa.binary.test" --embed 16 --hidden 16 \
    --attn-dim 16 --hops 2 --penalty 0.1 --mlp-hidden 16 --batch 32 --epochs 1 --checkpoint-every 20 \
    --save "$work/m" "$@"
}
train --max-steps 40 > "$work/train.log" 2>&1
train --resume > "$work/resume.log" 2>&1
grep -q "resuming from .*step 40" "$work/resume.log" || fail "did not resume at step 40"
test_acc=$(sed -n 's/^test .* acc \([0-9.]*\) .*/\1/p' "$work/resume.log")
[ -n "$test_acc" ] || fail "no test report: $(cat "$work/resume.log")"

cut -d' ' -f2- "$sst/stsa.binary.test" | "$heed" --threads 1 classify --model "$work/m" --probs \
  --attention-out "$work/att.jsonl" > "$work/hyp.txt"
[ "$(wc -l < "$work/hyp.txt")" = 1821 ] || fail "classify: wrong line count"
acc=$("$heed" score --metric acc --ref "$sst/stsa.binary.test" --hyp "$work/hyp.txt" --json |
  python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["score"])')
[ "$acc" = "$test_acc" ] || fail "score --metric acc says $acc, the trainer $test_acc"
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 1821
for r in rows:
    assert len(r["attention"]) == 2 and all(len(h) == len(r["tokens"]) for h in r["attention"]), r
    assert all(abs(sum(h) - 1) < 1e-4 for h in r["attention"]), r
    assert r["label"] in (0, 1) and r["redundancy"] >= 0' "$work/att.jsonl" || fail "attention-out"

# the Transformer-encoder baseline with a [CLS] position: trains, saves, classifies the same
"$heed" --threads 1 train --task classify --model transformer --pooling cls --d-model 16 --heads 2 \
  --ff 32 --layers 1 --mlp-hidden 16 --train "$sst/stsa.binary.train" --valid "$sst/stsa.binary.dev" \
  --test "$sst/stsa.binary.test" --batch 32 --max-steps 30 --save "$work/tf" > "$work/tf.log" 2>&1
grep -q "Transformer-encoder classifier (cls)" "$work/tf.log" || fail "not a Transformer: $(cat "$work/tf.log")"
grep -q '"model": "transformer-classifier"' "$work/tf/config.json" || fail "config.json"
tf_acc=$(sed -n 's/^test .* acc \([0-9.]*\) .*/\1/p' "$work/tf.log")
cut -d' ' -f2- "$sst/stsa.binary.test" | "$heed" --threads 1 classify --model "$work/tf" > "$work/tf_hyp.txt"
acc=$("$heed" score --metric acc --ref "$sst/stsa.binary.test" --hyp "$work/tf_hyp.txt" --json |
  python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["score"])')
[ "$acc" = "$tf_acc" ] || fail "Transformer: score --metric acc says $acc, the trainer $tf_acc"
head -3 "$sst/stsa.binary.dev" | cut -d' ' -f2- > "$work/three.txt"
"$heed" --threads 1 classify --model "$work/tf" --attention-out "$work/tf_att.jsonl" \
  < "$work/three.txt" > /dev/null
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 3
for r in rows:  # one row: what [CLS] attends to in the last layer, the rest on [CLS] itself
    assert len(r["attention"]) == 1 and len(r["attention"][0]) == len(r["tokens"]), r
    assert all(w >= 0 for w in r["attention"][0]) and sum(r["attention"][0]) <= 1 + 1e-4, r' \
  "$work/tf_att.jsonl" || fail "Transformer [CLS] attention-out"
"$heed" --threads 1 attention --model "$work/tf" --out "$work/tf.svg" < "$work/three.txt" > /dev/null
grep -q "\[CLS\], last layer" "$work/tf.svg" || fail "the [CLS] heatmap's row name"
# the two as an ensemble: the mean of their class probabilities, the label its argmax
"$heed" --threads 1 classify --model "$work/m" --probs < "$work/three.txt" > "$work/p_m.txt"
"$heed" --threads 1 classify --model "$work/tf" --probs < "$work/three.txt" > "$work/p_tf.txt"
"$heed" --threads 1 classify --model "$work/m" "$work/tf" --probs < "$work/three.txt" > "$work/p_mt.txt"
python3 -c 'import sys
rows = [[l.split("\t") for l in open(f)] for f in sys.argv[1:]]
assert all(len(r) == 3 for r in rows), rows
for m, t, e in zip(*rows):
    pm, pt, pe = ([float(x) for x in r[1].split()] for r in (m, t, e))
    assert all(abs(x - (a + b) / 2) <= 1.5e-4 for x, a, b in zip(pe, pm, pt)), (pm, pt, pe)
    assert int(e[0]) == max(range(len(pe)), key=pe.__getitem__), e' \
  "$work/p_m.txt" "$work/p_tf.txt" "$work/p_mt.txt" || fail "an ensemble of two classifiers"
if "$heed" train --task classify --model transformer --pooling last --train "$sst/stsa.binary.train" \
  --valid "$sst/stsa.binary.dev" --save "$work/y" 2> "$work/err" > /dev/null; then
  fail "--pooling last accepted for a Transformer"; fi
grep -q "pooling last is for the BiLSTM" "$work/err" || fail "no message: $(cat "$work/err")"

# SST from its trees: every phrase of the training trees (SST-2 drops the neutral ones), the dev
# and test roots; the test report counts the 1,821 non-neutral test sentences
head -300 "$sst/trees/train.txt" > "$work/train_trees.txt"
"$heed" --threads 1 train --task classify --train-trees "$work/train_trees.txt" \
  --valid-trees "$sst/trees/dev.txt" --test-trees "$sst/trees/test.txt" --classes 2 --embed 16 \
  --hidden 16 --attn-dim 16 --hops 1 --mlp-hidden 16 --batch 32 --max-steps 10 \
  --save "$work/trees" > "$work/trees.log" 2>&1
phrases=$(python3 -c 'import re, sys
n = 0
for line in open(sys.argv[1]):
    n += sum(1 for l in re.findall(r"\((\d)", line) if l != "2")
print(n)' "$work/train_trees.txt")
grep -q " $phrases training phrases, 2 classes" "$work/trees.log" || fail "trees: not $phrases phrases: $(head -3 "$work/trees.log")"
grep -q "^test .* (1821 sentences, best dev model)" "$work/trees.log" || fail "trees: test roots: $(tail -2 "$work/trees.log")"
# the tree reader lowercases every word: the model says so, and lowercases what it classifies
grep -q '"lowercase": *true' "$work/trees/config.json" || fail "trees: the model does not say it lowercases"
printf 'A Good Film .\nThe Worst Movie\n' | "$heed" classify --model "$work/trees" --probs > "$work/cased"
printf 'a good film .\nthe worst movie\n' | "$heed" classify --model "$work/trees" --probs > "$work/lower"
cmp -s "$work/cased" "$work/lower" || fail "trees: cased input classified unlike lowercased: $(cat "$work/cased" "$work/lower")"
# the convolutional classifiers on the same trees: Kim's CNN (Adadelta, as the paper) and the
# gated dilated stack, each naming its encoder; the Kim model classifies from its directory
for m in kim-cnn conv; do
  "$heed" --threads 1 train --task classify --model $m --train-trees "$work/train_trees.txt" \
    --valid-trees "$sst/trees/dev.txt" --classes 2 --embed 16 --kim-maps 4 --conv-channels 8 \
    --conv-dilations 1,2 --batch 32 --max-steps 10 --adadelta --lr 1 --save "$work/$m" \
    > "$work/$m.log" 2>&1 || fail "--model $m did not train"
done
grep -q "Kim convolutions of widths 3 4 5, 4 maps each" "$work/kim-cnn.log" || fail "kim: $(head -2 "$work/kim-cnn.log")"
grep -q "2-layer centred conv encoder, C 8, k 3, receptive field 7" "$work/conv.log" || fail "conv: $(head -2 "$work/conv.log")"
[ "$(echo "a fine film" | "$heed" classify --model "$work/kim-cnn" | wc -l)" = 1 ] || fail "kim-cnn: classify"
# heed bench conv: the peer's JSON fields, on a small TCN
"$heed" bench conv --threads 1 --steps 1 --channels 8 --layers 3 --batch 2 --len 16 --gen-len 8 \
  > "$work/bench.jsonl" || fail "bench conv"
python3 - "$work/bench.jsonl" <<'PY' || fail "bench conv: $(cat "$work/bench.jsonl")"
import json, sys
kim, tcn = [json.loads(l) for l in open(sys.argv[1])]
assert kim["bench"] == "kim_cnn" and kim["train_sent_per_s"] > 0 and kim["infer_sent_per_s"] > 0
assert tcn["bench"] == "tcn" and tcn["receptive_field"] == 1 + 2 * (1 + 2 + 4)
assert tcn["train_tok_per_s"] > 0 and tcn["gen_tok_per_s"] > 0 and tcn["gen_len"] == 8
PY
printf '(3 (2 fine) (4 good))\n(3 (2 broken) (4 good)\n' > "$work/bad_trees.txt"
if "$heed" train --task classify --train-trees "$work/bad_trees.txt" --valid-trees "$sst/trees/dev.txt" \
  --save "$work/x" 2> "$work/err" > /dev/null; then fail "a malformed tree accepted"; fi
grep -q "bad_trees.txt:2:23: the line ends where ')' was expected" "$work/err" || fail "no message: $(cat "$work/err")"
if "$heed" train --task classify --train "$sst/stsa.binary.train" --valid-trees "$sst/trees/dev.txt" \
  --save "$work/x" 2> "$work/err" > /dev/null; then fail "sentences and trees mixed"; fi
grep -q "need --train-trees and --valid-trees" "$work/err" || fail "no message: $(cat "$work/err")"

# bad input: file and line named, non-zero exit
printf '0 fine\n1 also fine\n7 out of range\n' > "$work/bad_dev.txt"
if "$heed" train --task classify --train "$sst/stsa.binary.train" --valid "$work/bad_dev.txt" \
  --save "$work/x" 2> "$work/err" > /dev/null; then fail "an out-of-range label accepted"; fi
grep -q "bad_dev.txt:3: label 7 is out of range" "$work/err" || fail "no message: $(cat "$work/err")"
printf '0 fine\nno label here\n' > "$work/bad_train.txt"
if "$heed" train --task classify --train "$work/bad_train.txt" --valid "$sst/stsa.binary.dev" \
  --save "$work/x" 2> "$work/err" > /dev/null; then fail "a missing label accepted"; fi
grep -q "bad_train.txt:2: the label 'no'" "$work/err" || fail "no message: $(cat "$work/err")"
printf 'a sentence\n\n' | { if "$heed" classify --model "$work/m" 2> "$work/err" > /dev/null; then
  fail "an empty line classified"; fi; }
grep -q "<stdin>:2: an empty line" "$work/err" || fail "no message: $(cat "$work/err")"
echo "ok"
