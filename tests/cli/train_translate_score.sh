#!/usr/bin/env bash
# The command line end to end on the shared CMUdict and Multi30k files: a tiny `heed train` (30 steps),
# the same for the Transformer,
# `heed translate` greedy and with --beam 3 and --attention-out, --n-best, an ensemble, `heed score`, `--resume`,
# and clear errors for bad flags. Run by ctest: train_translate_score.sh HEED DATA_DIR
set -euo pipefail
heed=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$heed" --threads 1 train --model rnn --attention luong-general \
  --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --src-units char --tgt-units word --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 \
  --attn-dim 8 --batch 32 --max-steps 30 --valid-max 40 --save "$work/m" > "$work/train.log" 2>&1
grep -q "best dev WER [0-9.]* at step 30 of 30," "$work/train.log" ||
  fail "no training summary naming the best step: $(tail -1 "$work/train.log")"
# the log on stderr (not stdout, which has the closing line alone); --quiet keeps it off the
# terminal while --log FILE still gets it
"$heed" --threads 1 train --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" --src-units char --tgt-units word \
  --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 --attn-dim 8 --batch 32 --max-steps 5 \
  --valid-max 10 --warmup 100 --log-every 2 --save "$work/quiet" --quiet --log "$work/quiet.log" \
  > "$work/quiet.out" \
  2> "$work/quiet.err"
[ "$(wc -l < "$work/quiet.out")" -eq 1 ] && grep -q "^best dev WER" "$work/quiet.out" ||
  fail "stdout is not the closing line alone: $(cat "$work/quiet.out")"
[ ! -s "$work/quiet.err" ] || fail "--quiet wrote to stderr: $(cat "$work/quiet.err")"
grep -q "^heed train: rnn" "$work/quiet.log" && grep -q "^validation  epoch 1  step 5" "$work/quiet.log" ||
  fail "--log has not the log: $(cat "$work/quiet.log")"
# a run that ends inside its warmup says so (issue 68: the README's Transformer stopped there)
grep -qF "warning: training ended inside its warmup (step 5 of 100)" "$work/quiet.log" ||
  fail "no warning of the warmup: $(cat "$work/quiet.log")"
# a family's warmup that would not fit the run (the Transformer's 4,000 in a 40-update run) is
# cut to a tenth of the planned updates, said in the log: the rate peaks at update 4, then falls
"$heed" --threads 1 train --model transformer --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" --src-units char --tgt-units word \
  --d-model 16 --heads 2 --ff 32 --layers 1 --batch 32 --max-steps 40 --valid-max 10 \
  --log-every 1 --save "$work/fitted" > /dev/null 2> "$work/fitted.log"
grep -qF "warmup: 4 updates, a tenth of the 40 planned (the family's 4000 would take the whole run" \
  "$work/fitted.log" || fail "no fitted warmup: $(cat "$work/fitted.log")"
! grep -q "inside its warmup" "$work/fitted.log" || fail "a fitted warmup still warned"
python3 - "$work/fitted/train.jsonl" <<'PY' || fail "the fitted warmup's rates"
import json, sys
# a record's rate is the next update's: update 4 (record 3) at the peak, update 2 at half
lr = {r["step"]: r["lr"] for r in map(json.loads, open(sys.argv[1])) if "lr" in r}
peak = max(lr.values())
assert lr[3] == peak and abs(lr[1] - peak / 2) < 1e-6 * peak and lr[15] < peak, lr
PY
# resumed with a larger budget (which would fit 6), the run keeps the warmup it began with
"$heed" --threads 1 train --model transformer --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" --src-units char --tgt-units word \
  --d-model 16 --heads 2 --ff 32 --layers 1 --batch 32 --max-steps 60 --valid-max 10 \
  --log-every 1 --save "$work/fitted" --resume > /dev/null 2> "$work/fitted2.log"
grep -qF "warmup: 4 updates, as the run began" "$work/fitted2.log" ||
  fail "the resumed run's warmup: $(cat "$work/fitted2.log")"
# --log-every 2: step records at steps 2 and 4 (loss, rate, gradient norm, tokens/s), then the
# validation at 5; heed report draws the gradient's norm from them
python3 - "$work/quiet/train.jsonl" <<'PY' || fail "train.jsonl's step records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["step"] for r in recs] == [2, 4, 5], recs
for r in recs[:2]:
    assert "dev_ce" not in r and r["grad_norm"] > 0 and r["tokens_per_s"] > 0 and r["lr"] > 0, r
assert "dev_ce" in recs[2], recs[2]
PY
"$heed" report --model "$work/quiet" --out "$work/quiet.html" 2> /dev/null
grep -q "Gradient norm" "$work/quiet.html" || fail "the report has no gradient norm curve"
# run.json: the command as parsed, heed's version, parameters, steps, throughput, machine; the
# report's Run section shows it
python3 - "$work/quiet/run.json" <<'PY' || fail "run.json: $(cat "$work/quiet/run.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["command"].startswith("heed train --train-src ") and " --log-every 2 " in r["command"], r
assert " --quiet" in r["command"] and "true" not in r["command"].split(), r["command"]
assert r["parameters"] > 0 and r["steps"] == 5 and r["best_step"] == 5, r
assert r["train_tokens_per_s"] > 0 and r["tokens"] and r["cpu"] and r["threads"] == 1, r
assert r["best_dev"]["metric"] == "WER" and r["heed"], r
PY
grep -q '<h2 id="run">Run</h2>' "$work/quiet.html" && grep -q "<code>heed train --train-src" "$work/quiet.html" ||
  fail "the report has no Run section"
for f in config.json src.vocab tgt.vocab model.safetensors checkpoint/trainer_state.json; do
  [ -s "$work/m/$f" ] || fail "missing $f in the model directory"
done

head -25 "$data/cmudict/cmudict-0.7b.test" > "$work/in.txt"
"$heed" --threads 1 translate --model "$work/m" < "$work/in.txt" > "$work/greedy.txt"
"$heed" --threads 1 translate --model "$work/m" --beam 3 --attention-out "$work/att.jsonl" \
  < "$work/in.txt" > "$work/beam.txt"
[ "$(wc -l < "$work/greedy.txt")" -eq 25 ] || fail "greedy: not one output line per input line"
# batches are formed by source length but the output keeps the input order: a G2P output line
# starts with its input word, and every --batch gives the same lines
cut -d' ' -f1 "$work/in.txt" > "$work/words.txt"
cut -d' ' -f1 "$work/greedy.txt" | cmp -s - "$work/words.txt" || fail "greedy: output order"
"$heed" --threads 1 translate --model "$work/m" --batch 2 < "$work/in.txt" > "$work/greedy2.txt"
cmp -s "$work/greedy.txt" "$work/greedy2.txt" || fail "--batch 2 changed the output"
cut -d' ' -f1 "$work/beam.txt" | cmp -s - "$work/words.txt" || fail "beam: output order"
python3 -c 'import json, sys
words = [l.split()[0] for l in open(sys.argv[1])]
rows = [json.loads(l) for l in open(sys.argv[2])]
assert ["".join(r["src"]) for r in rows] == words, "attention-out lines out of order"' \
  "$work/in.txt" "$work/att.jsonl" || fail "attention-out order"
"$heed" --threads 1 translate --model "$work/m" --compute-type int8 --replace-unk < "$work/in.txt" > "$work/int8.txt"
[ "$(wc -l < "$work/int8.txt")" -eq 25 ] || fail "int8: not one output line per input line"
[ "$(wc -l < "$work/beam.txt")" -eq 25 ] || fail "beam: not one output line per input line"
[ "$(wc -l < "$work/att.jsonl")" -eq 25 ] || fail "attention: not one JSON line per input line"
grep -q '"attention":\[\[' "$work/att.jsonl" || fail "attention rows missing"
grep -q '"out":\[.*"</s>"\]' "$work/att.jsonl" || fail "EOS not the last output row"
"$heed" score --metric wer --ref "$work/in.txt" --hyp "$work/beam.txt" | grep -q "^WER = " \
  || fail "score of the translation"
# --n-best 3: three lines per input line, `ID ||| output ||| F0= log p ||| score`, IDs in input
# order, three distinct outputs ranked by score, the first being the beam output; one attention
# line per output line
"$heed" --threads 1 translate --model "$work/m" --beam 3 --n-best 3 \
  --attention-out "$work/nbest_att.jsonl" < "$work/in.txt" > "$work/nbest.txt"
python3 -c 'import json, sys
beam = [l.rstrip("\n") for l in open(sys.argv[1])]
nbest = [l.rstrip("\n").split(" ||| ") for l in open(sys.argv[2])]
att = [json.loads(l) for l in open(sys.argv[3])]
assert len(nbest) == 3 * len(beam) == len(att), "not three lines per input line"
for i, b in enumerate(beam):
    group = nbest[3 * i : 3 * i + 3]
    assert [int(g[0]) for g in group] == [i] * 3, f"ids of line {i}: {group}"
    assert group[0][1] == b, f"line {i}: first is not the beam output: {group[0][1]} / {b}"
    assert len({g[1] for g in group}) == 3, f"line {i}: repeated outputs"
    scores = [float(g[3]) for g in group]
    assert scores == sorted(scores, reverse=True), f"line {i}: not ranked: {scores}"
    assert all(g[2].startswith("F0= ") and float(g[2][4:]) <= 0 for g in group), group
    for g, a in zip(group, att[3 * i : 3 * i + 3]):
        assert " ".join(t for t in a["out"] if t != "</s>") == g[1].split("  ", 1)[1], (g, a)' \
  "$work/beam.txt" "$work/nbest.txt" "$work/nbest_att.jsonl" || fail "n-best output"
# --score-target: the log-probability of given outputs (here the n-best's), the F0= of each
python3 -c 'import sys
for l in open(sys.argv[1]):
    f = l.rstrip("\n").split(" ||| ")
    print(f[1].split("  ", 1)[1])' "$work/nbest.txt" > "$work/nbest_out.txt"
awk '{for (i = 0; i < 3; i++) print}' "$work/in.txt" > "$work/in3.txt"
"$heed" --threads 1 translate --model "$work/m" --score-target "$work/nbest_out.txt" --word-scores \
  < "$work/in3.txt" > "$work/scores.txt"
python3 -c 'import sys
nbest = [float(l.split(" ||| ")[2][4:]) for l in open(sys.argv[1])]
scores = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert len(nbest) == len(scores), (len(nbest), len(scores))
for want, (total, words) in zip(nbest, scores):
    assert abs(float(total) - want) < 2e-4, (total, want)
    assert abs(sum(map(float, words.split())) - float(total)) < 1e-3, (total, words)' \
  "$work/nbest.txt" "$work/scores.txt" || fail "--score-target does not give the n-best's log p"
head -3 "$work/nbest_out.txt" > "$work/short.txt"
if "$heed" --threads 1 translate --model "$work/m" --score-target "$work/short.txt" < "$work/in.txt" \
  2> "$work/err" > /dev/null; then fail "--score-target with too few lines accepted"; fi
grep -q "short.txt has 3 lines but <stdin> has 25" "$work/err" || fail "no message for a short --score-target"
if "$heed" --threads 1 translate --model "$work/m" --n-best 2 < "$work/in.txt" 2> "$work/err" \
  > /dev/null; then fail "--n-best 2 accepted with greedy decoding"; fi
grep -q -- "--n-best must be in 1..--beam (1), got 2" "$work/err" || fail "no message for --n-best > --beam"

# --resume continues past the 30 steps already done
"$heed" --threads 1 train --model rnn --attention luong-general \
  --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --src-units char --tgt-units word --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 \
  --attn-dim 8 --batch 32 --max-steps 40 --valid-max 40 --save "$work/m" --resume > "$work/resume.log" 2>&1
grep -q "resuming from .*step 30" "$work/resume.log" || fail "did not resume at step 30"

# checkpoint averaging: --keep-epochs keeps the last 2 epoch snapshots, heed average makes a
# model directory that translates
head -300 "$data/cmudict/cmudict-0.7b.train-dev-1-21" > "$work/small.dict"
"$heed" --threads 1 train --model rnn --train-src "$work/small.dict" --valid-src "$work/small.dict" \
  --src-units char --tgt-units word --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 \
  --attn-dim 8 --batch 64 --epochs 3 --patience 5 --keep-epochs 2 --valid-max 20 \
  --save "$work/kept" > "$work/kept.log" 2>&1
[ "$(ls "$work/kept/epochs")" = "$(printf 'epoch_2.safetensors\nepoch_3.safetensors')" ] \
  || fail "--keep-epochs 2 did not keep exactly epochs 2 and 3: $(ls "$work/kept/epochs")"
"$heed" average --model "$work/kept" --last 2 --out "$work/avg" | grep -q "averaged epochs 2..3" \
  || fail "heed average"
"$heed" --threads 1 translate --model "$work/avg" < "$work/in.txt" > "$work/avg.txt"
[ "$(wc -l < "$work/avg.txt")" -eq 25 ] || fail "averaged model: not one output line per input"

# SentencePiece units on Multi30k (batches by tokens): trained on the training side, stored,
# reused on resume
m30k="$data/multi30k/tok"
for steps in 5 8; do
  extra=(); [ "$steps" = 8 ] && extra=(--resume)
  "$heed" --threads 1 train --model rnn --train-src "$m30k/train.lc.norm.tok.en" \
    --train-tgt "$m30k/train.lc.norm.tok.de" --valid-src "$m30k/val.lc.norm.tok.en" \
    --valid-tgt "$m30k/val.lc.norm.tok.de" --src-units spm --tgt-units spm --spm-vocab-size 2000 \
    --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 --attn-dim 8 --batch-tokens 600 \
    --max-steps "$steps" --valid-max 20 --save "$work/spm" "${extra[@]}" > "$work/spm.log" 2>&1
done
grep -q "resuming from .*step 5" "$work/spm.log" || fail "spm run did not resume at step 5"
for f in src.spm tgt.spm; do [ -s "$work/spm/$f" ] || fail "missing $f"; done
head -5 "$m30k/test_2016_flickr.lc.norm.tok.en" | "$heed" --threads 1 translate --model "$work/spm" \
  --attention-out "$work/spm_att.jsonl" > "$work/spm_out.txt"
[ "$(wc -l < "$work/spm_out.txt")" -eq 5 ] || fail "spm: not one output line per input line"
grep -q '"src":\["▁' "$work/spm_att.jsonl" || fail "spm: attention source is not in pieces"

# the Transformer through the same train / resume / translate: pieces, a joint vocabulary,
# beam search with the cross-attention of one chosen layer and head, int8
# (resumed in mixed precision: a run may change its --precision)
for steps in 6 10; do
  extra=(); [ "$steps" = 10 ] && extra=(--resume --precision bfloat16)
  "$heed" --threads 1 train --model transformer --train-src "$m30k/train.lc.norm.tok.en" \
    --train-tgt "$m30k/train.lc.norm.tok.de" --valid-src "$m30k/val.lc.norm.tok.en" \
    --valid-tgt "$m30k/val.lc.norm.tok.de" --src-units spm --tgt-units spm --spm-vocab-size 2000 \
    --d-model 16 --heads 2 --ff 32 --layers 2 --dec-layers 1 --share-embeddings --warmup 4 \
    --batch-tokens 600 --max-steps "$steps" --valid-max 10 --max-positions 128 \
    --save "$work/tf" "${extra[@]}" > "$work/tf.log" 2>&1
done
grep -q "heed train: transformer 2+1 layers, d 16, 2 heads, ff 32" "$work/tf.log" \
  || fail "transformer: no model line"
grep -q "resuming from .*step 6" "$work/tf.log" || fail "transformer run did not resume at step 6"
grep -q "mixed precision: the products of the linear layers and recurrent cells in bfloat16" "$work/tf.log" \
  || fail "transformer: --precision bfloat16 not reported"
"$heed" train --model transformer --train-src x --train-tgt y --save z --precision fp16 \
  > /dev/null 2> "$work/prec.err" && fail "--precision fp16 accepted"
grep -q "precision: fp16 not in {float32,bfloat16}" "$work/prec.err" \
  || fail "--precision fp16: unclear error: $(cat "$work/prec.err")"
cmp -s "$work/tf/src.vocab" "$work/tf/tgt.vocab" || fail "transformer: --share-embeddings, two vocabularies"
cmp -s "$work/tf/src.spm" "$work/tf/tgt.spm" \
  || fail "transformer: --share-embeddings, not one SentencePiece model of both sides"
# one joint model of 2000 pieces (plus specials), not the union of two sides' 2000 each
[ "$(wc -l < "$work/tf/src.vocab")" -le 2100 ] || fail "transformer: joint vocabulary too large"
head -5 "$m30k/test_2016_flickr.lc.norm.tok.en" | "$heed" --threads 1 translate --model "$work/tf" \
  --beam 3 --attention-out "$work/tf_att.jsonl" --attention-layer 0 --attention-head 1 \
  > "$work/tf_out.txt"
[ "$(wc -l < "$work/tf_out.txt")" -eq 5 ] || fail "transformer: not one output line per input line"
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    x = json.loads(l)
    assert len(x["attention"]) == len(x["out"]), x
    for row in x["attention"]:
        assert len(row) == len(x["src"]) and abs(sum(row) - 1) < 1e-4, row' "$work/tf_att.jsonl" \
  || fail "transformer: attention rows"
head -5 "$m30k/test_2016_flickr.lc.norm.tok.en" | "$heed" --threads 1 translate --model "$work/tf" \
  --compute-type int8 > "$work/tf_int8.txt"
[ "$(wc -l < "$work/tf_int8.txt")" -eq 5 ] || fail "transformer int8: not one output line per input"
if echo "a man" | "$heed" translate --model "$work/tf" --attention-out "$work/x.jsonl" \
  --attention-head 2 2> "$work/err" > /dev/null; then fail "--attention-head 2 of 2 accepted"; fi
grep -q "attention-head 2: the model has 2 heads" "$work/err" || fail "no message for a bad head"

# an ensemble (--model A B): two copies of one model decode as it, greedy and beam (the mean
# of equal distributions); models with other vocabularies are refused, both directories named
"$heed" --threads 1 translate --model "$work/m" "$work/m" < "$work/in.txt" > "$work/ens.txt"
cmp -s "$work/greedy.txt" "$work/ens.txt" || fail "ensemble of two copies: not the greedy output"
"$heed" --threads 1 translate --model "$work/m" --model "$work/m" --beam 3 < "$work/in.txt" \
  > "$work/ens_beam.txt"
cmp -s "$work/beam.txt" "$work/ens_beam.txt" || fail "ensemble of two copies: not the beam output"
if "$heed" translate --model "$work/m" "$work/tf" < "$work/in.txt" 2> "$work/err" > /dev/null; then
  fail "an ensemble of a G2P model and a translation model accepted"
fi
grep -q "$work/tf and $work/m: src_units differ; an ensemble needs" "$work/err" \
  || fail "no message for an ensemble of different vocabularies: $(cat "$work/err")"

# a single TSV file (Anki es->en, columns 2,1) trains on its documented split without a dev file;
# heed split gives the test sources and references
anki="$data/anki-spa-eng/spa.txt"
"$heed" --threads 1 train --model rnn --train-src "$anki" --tsv-columns 2,1 --src-units char \
  --tgt-units word --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 --attn-dim 8 \
  --max-steps 3 --valid-max 10 --save "$work/anki" > "$work/anki.log" 2>&1
grep -q "split into train/dev/test with every sentence in one part (heed split): 114200 training and 2355 dev pairs" "$work/anki.log" \
  || fail "anki: no train/dev split"
"$heed" split "$anki" --part test --side src --tsv-columns 2,1 > "$work/anki_test.es"
"$heed" split "$anki" --part test --side tgt --tsv-columns 2,1 > "$work/anki_test.en"
[ "$(wc -l < "$work/anki_test.es")" -eq 2409 ] || fail "anki: test split size"
# the first test pair: group 50, line 80 ("Beat it." / "Pírate.")
[ "$(sed -n 1p "$work/anki_test.en")" = "$(sed -n 80p "$anki" | cut -f1)" ] \
  || fail "anki: the first test reference is not line 80's English side"
[ "$(sed -n 1p "$work/anki_test.es")" = "$(sed -n 80p "$anki" | cut -f2)" ] \
  || fail "anki: the first test source is not line 80's Spanish side"
if "$heed" train --model rnn --train-src "$m30k/train.lc.norm.tok.en" \
  --train-tgt "$m30k/train.lc.norm.tok.de" --save "$work/x" 2> "$work/err" > /dev/null; then
  fail "parallel text without a dev file accepted"
fi
grep -q "valid-src is required" "$work/err" || fail "no message for a missing dev file"

# BLEU by source-length bucket: a perfect hypothesis scores 100 in every bucket
"$heed" score --metric bleu --ref "$m30k/val.lc.norm.tok.de" --hyp "$m30k/val.lc.norm.tok.de" \
  --by-src-length "$m30k/val.lc.norm.tok.en" --buckets 10,20 --json > "$work/buckets.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); b=j["by_src_length"];
assert [x["src_words"] for x in b]==["1-10","11-20","21+"], b
assert all(abs(x["score"]-100)<1e-9 for x in b) and sum(x["lines"] for x in b)==1014' "$work/buckets.json" \
  || fail "score by source length"

# WER by reference length: one edit in a 2-word line, none in the 3-word one, 2 in the 12-word one
printf 'a b\nc d e\n1 2 3 4 5 6 7 8 9 10 11 12\n' > "$work/wref.txt"
printf 'a x\nc d e\n1 2 3 4 5 6 7 8 9 10\n' > "$work/whyp.txt"
"$heed" score --metric wer --ref "$work/wref.txt" --hyp "$work/whyp.txt" --by-ref-length \
  --buckets 2,10 --json > "$work/wbuckets.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); b=j["by_ref_length"]
assert [(x["ref_words"], x["lines"], x["edits"], x["length"]) for x in b]==[("1-2",1,1,2),("3-10",1,0,3),("11+",1,2,12)], b
assert (j["edits"], j["length"]) == (3, 17), j' "$work/wbuckets.json" || fail "WER by reference length"
if "$heed" score --metric bleu --ref "$work/wref.txt" --hyp "$work/whyp.txt" --by-ref-length \
  2> "$work/err" > /dev/null; then fail "--by-ref-length accepted for BLEU"; fi
grep -q "by-ref-length is for --metric wer|cer" "$work/err" || fail "no message for --by-ref-length"

# heed bench attention: the peer's fields, one line per mode x mask, each from its own process
"$heed" --threads 1 bench attention --shapes 1x2x70x16 --budget 0.02 > "$work/attn.jsonl"
python3 -c 'import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]
assert [(r["mode"], r["mask"]) for r in rows]==[("fwd","none"),("fwd","causal"),("fwdbwd","none"),("fwdbwd","causal")], rows
for r in rows:
    assert (r["bench"], r["B"], r["H"], r["T"], r["d"]) == ("attention", 1, 2, 70, 16), r
    assert r["median_ms"] > 0 and r["peak_delta_mb"] is not None and r["reps"] >= 5, r' "$work/attn.jsonl" \
  || fail "bench attention output"

# heed bench rnn-seq2seq / transformer-seq2seq: the peers' fields (tiny shapes)
for w in rnn-seq2seq transformer-seq2seq; do
  "$heed" --threads 1 bench "$w" --batch 4 --warmup 1 --steps 2 --max-len 5 --decode-batches 1 \
    --decode-single 2 --d-model 16 --heads 2 --ff 32 > "$work/bench_$w.jsonl"
done
python3 -c 'import json,sys
for f, bench in ((sys.argv[1], "bahdanau_seq2seq"), (sys.argv[2], "transformer_seq2seq")):
    rows = [json.loads(l) for l in open(f)]
    assert [r["what"] for r in rows] == ["params", "train", "greedy_decode", "greedy_decode"], rows
    assert all(r["bench"] == bench for r in rows), rows
    assert rows[1]["tgt_tokens_per_s"] > 0 and rows[1]["steps"] == 2, rows[1]
    assert rows[2]["batch"] == 4 and rows[3]["batch"] == 1 and rows[3]["tokens_per_s"] > 0, rows
    assert ("kv_cache" in rows[2]) == (bench == "transformer_seq2seq"), rows[2]' \
  "$work/bench_rnn-seq2seq.jsonl" "$work/bench_transformer-seq2seq.jsonl" || fail "bench seq2seq output"
# heed bench decode: a trained model's eight cells (greedy and beam, batch 1 and batched,
# float32 and int8), each with its rate, its outputs' hash and, batched, its gain over batch 1
head -30 "$data/cmudict/cmudict-0.7b.test" > "$work/words.txt"
"$heed" --threads 1 bench decode --model "$work/fitted" --src "$work/words.txt" --rounds 2 \
  --beam 3 --batch 8 > "$work/decode.jsonl"
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cells = [(r["compute"], r["decoding"], r["beam"], r["batch"]) for r in rows]
assert cells == [(c, d, k, b) for c in ("float32", "int8") for d, k in (("greedy", 1), ("beam", 3))
                 for b in (1, 8)], cells
for r in rows:
    assert r["bench"] == "decode" and r["sentences"] == 30 and r["rounds"] == 2, r
    assert r["sent_per_s"] > 0 and r["sent_per_s_best"] >= r["sent_per_s"] and r["tgt_tokens"] >= 30, r
    assert len(r["outputs_fnv1a"]) == 16 and r["sgemm_gflops"] > 0, r
    assert ("batch_gain" in r) == (r["batch"] == 8) and ("same_outputs_as_batch_1" in r) == (r["batch"] == 8), r' \
  "$work/decode.jsonl" || fail "bench decode output: $(cat "$work/decode.jsonl")"
# the translations of a cell are those of heed translate with the same options
"$heed" --threads 1 translate --model "$work/fitted" --beam 3 --batch 8 < "$work/words.txt" > "$work/beam.txt"
python3 -c 'import json,sys
h = 0xcbf29ce484222325
for b in open(sys.argv[2], "rb").read():
    h = ((h ^ b) * 0x100000001b3) % (1 << 64)
row = [json.loads(l) for l in open(sys.argv[1])][3]
assert (row["compute"], row["beam"], row["batch"]) == ("float32", 3, 8), row
assert row["outputs_fnv1a"] == "%016x" % h, (row, "%016x" % h)' "$work/decode.jsonl" "$work/beam.txt" \
  || fail "bench decode translates otherwise than heed translate"
if "$heed" bench decode --model "$work/fitted" --src "$work/nothing.txt" 2> "$work/err" > /dev/null; then
  fail "bench decode read a missing file"
fi
grep -q "nothing.txt" "$work/err" || fail "bench decode: no file named: $(cat "$work/err")"
if "$heed" bench ctc --src "$work/words.txt" 2> "$work/err" > /dev/null; then
  fail "bench ctc took --src"
fi
grep -q "bench ctc: --src is for decode" "$work/err" || fail "bench ctc --src: $(cat "$work/err")"
# every bench line names its machine
python3 -c 'import json,sys
for f in sys.argv[1:]:
    for r in map(json.loads, open(f)):
        assert r["sgemm_gflops"] > 0 and r["cpu_family"] >= -1 and r["cpu"] and r["threads"] == 1, r' \
  "$work/attn.jsonl" "$work/bench_rnn-seq2seq.jsonl" || fail "bench lines without the machine"

# heed bench train (= heed train --bench): a recipe's steps timed, nothing kept, one JSON line
# on stdout (the progress on stderr); the FLOPs per target token of this Transformer, 2 x its
# products' weights a token forward and twice that backward, so about 6 x parameters
"$heed" --threads 1 bench train --model transformer --d-model 16 --heads 2 --ff 32 --layers 1 \
  --train-src "$data/multi30k/tok/train.lc.norm.tok.en" --train-tgt "$data/multi30k/tok/train.lc.norm.tok.de" \
  --valid-src "$data/multi30k/tok/val.lc.norm.tok.en" --valid-tgt "$data/multi30k/tok/val.lc.norm.tok.de" \
  --min-freq 5 --batch-tokens 600 --max-steps 6 > "$work/bench_train.jsonl" 2> "$work/bench_train.err" \
  || fail "bench train: $(tail -3 "$work/bench_train.err")"
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 1, rows
r = rows[0]
assert r["bench"] == "train" and r["steps"] == 6 and r["train_tgt_tok_per_s"] > 0, r
assert r["updates_per_s"] > 0 and r["peak_rss_mb"] > 0 and r["sgemm_gflops"] > 0, r
assert 0 < r["mfu"] < 1.5 and r["mfu_against"] == "sgemm_gflops", r
# per target token: the output layer alone is 6 x 16 x |V_tgt| (|V_tgt| >= 1000 here)
assert 6 * 16 * 1000 / 1e9 < r["gflop_per_token"] < 6 * r["params"] / 1e9 * 3, r' \
  "$work/bench_train.jsonl" || fail "bench train output: $(cat "$work/bench_train.jsonl")"
grep -q "validation" "$work/bench_train.err" && fail "bench train validated"
# without --valid-src: --bench validates nothing, so it needs no dev files
"$heed" --threads 1 bench train --model transformer --d-model 16 --heads 2 --ff 32 --layers 1 \
  --train-src "$data/multi30k/tok/train.lc.norm.tok.en" --train-tgt "$data/multi30k/tok/train.lc.norm.tok.de" \
  --min-freq 5 --batch-tokens 600 --max-steps 2 > "$work/bench_train2.jsonl" 2> "$work/err" ||
  fail "bench train without --valid-src: $(tail -3 "$work/err")"
[ "$(wc -l < "$work/bench_train2.jsonl")" = 1 ] || fail "bench train without --valid-src: $(cat "$work/bench_train2.jsonl")"
if "$heed" train --bench --model rnn --train-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" \
  --valid-src "$data/cmudict/cmudict-0.7b.train-dev-1-21" 2> "$work/err" > /dev/null; then
  fail "train --bench without a budget accepted"
fi
grep -q -- "--max-minutes" "$work/err" || fail "train --bench without a budget: $(cat "$work/err")"

# bad input: clear errors, non-zero exit
if "$heed" translate --model "$work/m" --beam 0 < "$work/in.txt" 2> "$work/err" > /dev/null; then
  fail "--beam 0 accepted"
fi
grep -q -- "--beam: Value 0 not in range 1 to 1024" "$work/err" || fail "no message for --beam 0"
if "$heed" train --model rnn --attention luong --train-src "$work/in.txt" --valid-src "$work/in.txt" \
  --save "$work/x" 2> "$work/err" > /dev/null; then fail "unknown attention accepted"; fi
grep -q -- "--attention: luong not in {none,bahdanau," "$work/err" || fail "no message for an unknown attention"
if "$heed" translate --model "$work/m" --compute-type int4 < "$work/in.txt" 2> "$work/err" > /dev/null; then
  fail "--compute-type int4 accepted"
fi
grep -q -- "--compute-type: int4 not in {float32,int8}" "$work/err" || fail "no message for an unknown compute type"
if "$heed" score --ref "$m30k/val.lc.norm.tok.de" --hyp "$m30k/val.lc.norm.tok.de" \
  --by-src-length "$work/in.txt" 2> "$work/err" > /dev/null; then fail "short source file accepted"; fi
grep -q "has 1014 lines but .*in.txt has 25" "$work/err" || fail "no message for a short source file"
echo "ok"
