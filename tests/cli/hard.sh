#!/usr/bin/env bash
# Hard attention on the command line, end to end on CMUdict: a tiny model trained by each
# `--hard-train` (exact, reinforce, gumbel) through `heed train`, translated with one-hot
# `--attention-out` rows (one source position per output phone, the EOS row included) and
# beam search, and with `--attention-distribution` alpha_i, whose argmax is the one-hot row; its
# config.json keeps the choice; the exact model with `--hard-marginal` (alpha_i rows), and with
# the deep output for every position (`--readout maxout`); a score
# function without energies, an absurd --hard-mix and --hard-marginal on a model not trained
# exactly are refused. Run by ctest: hard.sh HEED DATA_DIR
set -euo pipefail
heed=$1 d=$2/cmudict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# alpha_rows FILE [one-hot]: every --attention-out row sums to 1 over the source's positions
# (and, with one-hot, puts all of it on one)
alpha_rows() {
  python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    for row in r["attention"]:
        assert abs(sum(row) - 1) < 1e-4 and len(row) == len(r["src"]), row
        assert sys.argv[2:] != ["one-hot"] or sorted(row)[-1] == 1.0, row' "$@"
}

head -2000 "$d/cmudict-0.7b.train-dev-20-21" > "$work/train"
head -50 "$d/cmudict-0.7b.train-dev-1-21" > "$work/dev"
printf 'HELLO\nXEROX\nCAT\n' > "$work/words"
common=(--src-units char --tgt-units word --embed 16 --hidden 32 --dec-hidden 32 --attn-dim 16
        --batch 32 --max-steps 30 --train-src "$work/train" --valid-src "$work/dev")
for mode in exact reinforce gumbel; do
  "$heed" --threads 1 train --model rnn --attention hard --hard-train $mode "${common[@]}" \
    --save "$work/$mode" > "$work/$mode.log" 2>&1
  grep -q "\"hard_train\": *\"$mode\"" "$work/$mode/config.json" || fail "$mode: config.json"
  for beam in 1 3; do
    "$heed" --threads 1 translate --model "$work/$mode" --beam $beam \
      --attention-out "$work/$mode.$beam.jsonl" < "$work/words" > "$work/$mode.$beam.out"
    [ "$(wc -l < "$work/$mode.$beam.out")" = 3 ] || fail "$mode beam $beam: output lines"
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert len(r["attention"]) in (len(r["out"]), len(r["out"]) + 1), r  # (+ EOS, unless cut)
    for row in r["attention"]:
        assert sorted(row)[-1] == 1.0 and sum(row) == 1.0 and len(row) == len(r["src"]), row' \
      "$work/$mode.$beam.jsonl" || fail "$mode beam $beam: attention rows are not one-hot"
  done
  # --attention-distribution: alpha_i instead, a distribution whose argmax is the chosen row
  "$heed" --threads 1 translate --model "$work/$mode" --attention-distribution \
    --attention-out "$work/$mode.alpha.jsonl" < "$work/words" > "$work/$mode.alpha.out"
  cmp -s "$work/$mode.alpha.out" "$work/$mode.1.out" || fail "$mode: --attention-distribution changed the output"
  python3 -c 'import json, sys
for la, lh in zip(open(sys.argv[1]), open(sys.argv[2])):
    a, h = json.loads(la)["attention"], json.loads(lh)["attention"]
    assert len(a) == len(h)
    for ra, rh in zip(a, h):
        assert abs(sum(ra) - 1) < 1e-4 and min(ra) >= 0, ra
        assert ra.index(max(ra)) == rh.index(1.0), (ra, rh)' \
    "$work/$mode.alpha.jsonl" "$work/$mode.1.jsonl" || fail "$mode: alpha rows"
done

# --hard-marginal: the exact model decodes with the marginal it was trained on, alpha_i reported
"$heed" --threads 1 translate --model "$work/exact" --hard-marginal --beam 3 \
  --attention-out "$work/marginal.jsonl" < "$work/words" > "$work/marginal.out"
[ "$(wc -l < "$work/marginal.out")" = 3 ] || fail "--hard-marginal: output lines"
alpha_rows "$work/marginal.jsonl" || fail "--hard-marginal: alpha rows"

# the exact model with the deep output for every position (--readout maxout): saved, reloaded,
# decoded with one-hot rows and with the marginal
"$heed" --threads 1 train --model rnn --attention hard --hard-train exact --readout maxout \
  --readout-dim 8 "${common[@]}" --save "$work/deep" > "$work/deep.log" 2>&1
grep -q '"readout": *"maxout"' "$work/deep/config.json" || fail "deep: config.json"
for flag in "" --hard-marginal; do
  "$heed" --threads 1 translate --model "$work/deep" $flag --beam 3 \
    --attention-out "$work/deep.jsonl" < "$work/words" > "$work/deep.out"
  [ "$(wc -l < "$work/deep.out")" = 3 ] || fail "deep $flag: output lines"
  alpha_rows "$work/deep.jsonl" ${flag:-one-hot} || fail "deep $flag: attention rows"
done

set +e
"$heed" translate --model "$work/reinforce" --hard-marginal < "$work/words" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "$work/reinforce: --hard-marginal needs a model with hard attention trained with --hard-train exact" "$work/err" ||
  fail "--hard-marginal on a reinforce model: $(cat "$work/err")"
"$heed" train --model rnn --attention hard --hard-score mocha "${common[@]}" --save "$work/bad" \
  > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "hard attention scores with bahdanau or luong-\*, not mocha" "$work/err" ||
  fail "--hard-score mocha: $(cat "$work/err")"
"$heed" train --model rnn --attention hard --hard-mix 1.5 "${common[@]}" --save "$work/bad2" \
  > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "hard-mix" "$work/err" || fail "--hard-mix 1.5: $(cat "$work/err")"
set -e
echo "hard: ok"
