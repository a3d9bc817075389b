#!/usr/bin/env bash
# CTC's command line end to end on CMUdict: a tiny `heed train --model ctc` (its log names the
# pairs no alignment fits), `heed lm` on the training pronunciations, `heed translate` by best
# path, prefix beam search with --n-best, with the LM, with --attention-out (a row per phone and
# the blank's, each summing to 1) and --score-target, `heed attention` drawing it, and the
# errors: a malformed ARPA line (file:line, exit 2), --lm without a beam or on a model that is
# not a CTC one. Run by ctest: ctc.sh HEED DATA_DIR
set -euo pipefail
heed=$1 d=$2/cmudict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

head -3000 "$d/cmudict-0.7b.train-dev-20-21" > "$work/train"
head -200 "$d/cmudict-0.7b.train-dev-1-21" > "$work/dev"
"$heed" --threads 1 train --model ctc --train-src "$work/train" --valid-src "$work/dev" \
  --src-units char --tgt-units word --embed 32 --hidden 64 --batch 32 --lr 3e-3 --epochs 2 \
  --save "$work/m" > "$work/train.log" 2>&1
grep -q "training pairs cannot be aligned by CTC .*line 14 (AAA -> T R IH P AH L EY)" "$work/train.log" ||
  fail "the unalignable pairs are not named: $(head -2 "$work/train.log")"
grep -q '"model": "ctc"' "$work/m/config.json" || fail "config.json is not a ctc model's"

"$heed" lm --train "$work/train" --order 3 --out "$work/lm.arpa" > "$work/lm.log"
grep -q "^ngram 3=" "$work/lm.arpa" || fail "no trigrams in the ARPA file"

printf 'HELLO\nXEROX\nCAT\n' > "$work/words"
"$heed" --threads 1 translate --model "$work/m" < "$work/words" > "$work/greedy"
[ "$(wc -l < "$work/greedy")" = 3 ] || fail "best path: wrong line count"
grep -q "^HELLO  [A-Z]" "$work/greedy" || fail "best path: not a CMUdict entry: $(cat "$work/greedy")"
"$heed" --threads 1 translate --model "$work/m" --beam 4 --n-best 3 < "$work/words" > "$work/nbest"
[ "$(wc -l < "$work/nbest")" = 9 ] || fail "n-best: wrong line count"
python3 -c 'import sys
rows = [l.split(" ||| ") for l in open(sys.argv[1])]
for i in range(3):
    scores = [float(r[3]) for r in rows if r[0] == str(i)]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True), scores
    assert all(float(r[2].split()[1]) == float(r[3]) for r in rows), "ctc: score = log p"' \
  "$work/nbest" || fail "n-best lines"
"$heed" --threads 1 translate --model "$work/m" --beam 4 --lm "$work/lm.arpa" --lm-weight 0.5 \
  --attention-out "$work/att.jsonl" < "$work/words" > "$work/lm_out"
[ "$(wc -l < "$work/lm_out")" = 3 ] || fail "with the LM: wrong line count"
python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert r["out"][-1] == "<blank>" and len(r["attention"]) == len(r["out"]), r
    assert all(len(a) == len(r["src"]) and abs(sum(a) - 1) < 1e-3 for a in r["attention"]), r
    assert len(r["path"]) == len(r["src"]) and all(0 <= k < len(r["out"]) for k in r["path"]), r' \
  "$work/att.jsonl" || fail "attention-out rows"
cut -d' ' -f3- "$work/greedy" > "$work/targets"
"$heed" --threads 1 translate --model "$work/m" --score-target "$work/targets" < "$work/words" \
  > "$work/scores"
python3 -c 'import sys
assert all(float(l) <= 0 for l in open(sys.argv[1]))' "$work/scores" || fail "scores"
"$heed" --threads 1 attention --model "$work/m" --out "$work/a.svg" < "$work/words" > /dev/null
grep -q "&lt;blank&gt;" "$work/a.svg" || fail "heed attention: no blank row"

# errors
sed 's/^\(-[0-9.]*\)\t\(.*\)$/\1\t\2 extra words here/' "$work/lm.arpa" > "$work/bad.arpa"
set +e
"$heed" translate --model "$work/m" --beam 2 --lm "$work/bad.arpa" < "$work/words" \
  > /dev/null 2> "$work/err"
rc=$?
set -e
[ $rc = 2 ] || fail "malformed ARPA: exit $rc"
grep -q "bad.arpa:[0-9]*: malformed 1-gram line" "$work/err" || fail "malformed ARPA: $(cat "$work/err")"
if "$heed" translate --model "$work/m" --lm "$work/lm.arpa" < "$work/words" > /dev/null 2> "$work/err"; then
  fail "--lm with beam 1 was accepted"
fi
grep -q "needs a beam" "$work/err" || fail "--lm with beam 1: $(cat "$work/err")"
rnn=$(dirname "$0")/../golden/models/rnn-bahdanau
if "$heed" translate --model "$rnn" --beam 2 --lm "$work/lm.arpa" < "$work/words" > /dev/null 2> "$work/err"; then
  fail "--lm on an rnn model was accepted"
fi
grep -q "joins the search of ctc models only" "$work/err" || fail "--lm on rnn: $(cat "$work/err")"
echo "ok"
