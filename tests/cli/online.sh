#!/usr/bin/env bash
# Monotonic attention, MoChA and wait-k on the command line, end to end on CMUdict: tiny models
# with a unidirectional encoder trained by `heed train`, `heed translate --online` writing what
# offline decoding writes (its delays in --latency-out, non-decreasing, one per phone, at most
# the word's letters; wait-k's min(i + k, |x|)), `heed score --metric latency`, `heed attention`
# outlining the monotonic stops, and the refusals: --online with a beam, --latency-out without
# --online, wait-k with monotonic attention; a bidirectional model decodes "read all, then write"
# and says so. Run by ctest: online.sh HEED DATA_DIR
set -euo pipefail
heed=$1 d=$2/cmudict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

head -3000 "$d/cmudict-0.7b.train-dev-20-21" > "$work/train"
head -100 "$d/cmudict-0.7b.train-dev-1-21" > "$work/dev"
printf 'HELLO\nXEROX\n\nCAT\nATTENTION\n' > "$work/words"  # an empty line too
# 4 epochs of 94 updates; r starts at -1, not -4, so that the stops are learned by then
common=(--src-units char --tgt-units word --embed 32 --hidden 64 --dec-hidden 64 --attn-dim 32
        --batch 32 --lr 3e-3 --epochs 4 --encoder-direction forward)
for kind in monotonic mocha waitk; do
  case $kind in
    waitk) flags=(--attention bahdanau --wait-k 2 --wait-k-sample 4) ;;  # multi-path
    mocha) flags=(--attention mocha --chunk 2 --monotonic-bias -1) ;;
    *) flags=(--attention monotonic --monotonic-bias -1) ;;
  esac
  "$heed" --threads 1 train --model rnn "${flags[@]}" "${common[@]}" --train-src "$work/train" \
    --valid-src "$work/dev" --save "$work/$kind" > "$work/$kind.log" 2>&1
  "$heed" --threads 1 translate --model "$work/$kind" < "$work/words" > "$work/$kind.offline"
  "$heed" --threads 1 translate --model "$work/$kind" --online --latency-out "$work/$kind.jsonl" \
    < "$work/words" > "$work/$kind.online"
  cmp -s "$work/$kind.offline" "$work/$kind.online" ||
    fail "$kind: online output differs from offline: $(paste "$work/$kind.offline" "$work/$kind.online")"
  python3 -c 'import json, sys
kind, words = sys.argv[2], [w.strip() for w in open(sys.argv[3])]
hyps = [l.split("  ", 1)[1].split() if "  " in l else [] for l in open(sys.argv[4])]
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == len(words), lines
for r, w, h in zip(lines, words, hyps):
    n = len(w)  # a blank line is no source and an empty output
    assert r["src_len"] == n and r["out"] == h and len(r["delays"]) == len(h), (r, w, h)
    assert n > 0 or h == [], (r, w, h)
    d = r["delays"]
    assert all(1 <= x <= n for x in d) and d == sorted(d), r
    if kind == "waitk":
        assert d == [min(i + 2, n) for i in range(len(d))], r' \
    "$work/$kind.jsonl" "$kind" "$work/words" "$work/$kind.online" || fail "$kind: latency lines"
  "$heed" score --metric latency --hyp "$work/$kind.jsonl" > "$work/$kind.latency"
  grep -q "^AL = [0-9.]* AP = [0-9.]* DAL = [0-9.]* (sentences = [0-9]" \
    "$work/$kind.latency" ||
    fail "$kind: score --metric latency: $(cat "$work/$kind.latency")"
done
"$heed" --threads 1 attention --model "$work/mocha" --out "$work/a.svg" < "$work/words" > /dev/null
grep -q 'stroke="#e61e1e"' "$work/a.svg" || grep -q 'rgb(230,30,30)' "$work/a.svg" ||
  fail "heed attention: the monotonic stops are not outlined"

# a causal convolutional encoder (--encoder conv --conv-causal) decodes online too: its state at
# t is the same whether or not later units were read
"$heed" --threads 1 train --model rnn --attention monotonic --monotonic-bias -1 --encoder conv \
  --conv-causal --conv-kernel 2 --conv-dilations 1,2 --conv-channels 32 "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/conv" > "$work/conv.log" 2>&1
grep -q "2-layer causal conv encoder, C [0-9]*, k [0-9]*, receptive field 4" "$work/conv.log" || fail "conv: $(head -2 "$work/conv.log")"
"$heed" --threads 1 translate --model "$work/conv" < "$work/words" > "$work/conv.offline"
"$heed" --threads 1 translate --model "$work/conv" --online < "$work/words" > "$work/conv.online" 2> "$work/conv.err"
cmp -s "$work/conv.offline" "$work/conv.online" || fail "conv: online output differs from offline"
[ ! -s "$work/conv.err" ] || fail "conv: $(cat "$work/conv.err")"

# the multi-path wait-k model decodes at another k: offline and online alike, delays min(i + 3, |x|)
"$heed" --threads 1 translate --model "$work/waitk" --wait-k 3 < "$work/words" > "$work/k3.offline"
"$heed" --threads 1 translate --model "$work/waitk" --wait-k 3 --online --latency-out "$work/k3.jsonl" \
  < "$work/words" > "$work/k3.online"
cmp -s "$work/k3.offline" "$work/k3.online" || fail "--wait-k 3: online output differs from offline"
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert r["delays"] == [min(i + 3, r["src_len"]) for i in range(len(r["delays"]))], r' \
  "$work/k3.jsonl" || fail "--wait-k 3: delays"

# heed report: the three online decodings of the dev words as a WER-against-AL curve
for kind in monotonic mocha waitk; do
  "$heed" --threads 1 translate --model "$work/$kind" --online --latency-out "$work/dev.$kind.jsonl" \
    < "$work/dev" > /dev/null
done
"$heed" --threads 1 report --model "$work/waitk" --src "$work/dev" --samples 0 --out "$work/r.html" \
  --latency "$work/dev.monotonic.jsonl" "$work/dev.mocha.jsonl" "$work/dev.waitk.jsonl" 2> /dev/null
python3 -c 'import re, sys
html = open(sys.argv[1]).read()
assert "Quality against latency" in html and "WER against latency" in html, "no latency section"
rows = re.findall(r"<tr><td>dev\.(\w+)</td><td>([0-9.]+)</td><td>([0-9.]+)</td>", html)
assert sorted(r[0] for r in rows) == ["mocha", "monotonic", "waitk"], rows
als = [float(r[2]) for r in rows]
assert als == sorted(als), "rows not ordered by AL"' "$work/r.html" || fail "heed report --latency"

# a bidirectional model reads each line whole, and says so
"$heed" --threads 1 train --model rnn --attention monotonic "${common[@]:0:18}" --train-src "$work/train" \
  --valid-src "$work/dev" --max-steps 20 --save "$work/bi" > /dev/null
"$heed" --threads 1 translate --model "$work/bi" --online --latency-out "$work/bi.jsonl" \
  < "$work/words" > "$work/bi.online" 2> "$work/bi.err"
grep -q "needs the whole source (a bidirectional encoder" "$work/bi.err" || fail "bi: $(cat "$work/bi.err")"
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert all(x == r["src_len"] for x in r["delays"]), r' "$work/bi.jsonl" || fail "bi: delays"

# a Transformer with monotonic heads trained against latency, its heads gathered by a soft
# maximum and kept together by the variance term, heads dropped: the terms and HeadDrop stay in
# its config (a resumed run trains as it began)
"$heed" --threads 1 train --model transformer --attention monotonic --causal-encoder \
  --src-units char --tgt-units word --d-model 32 --heads 2 --ff 64 --layers 1 --batch 32 \
  --epochs 1 --latency-weight 0.1 --latency-gather weighted --latency-var-weight 0.01 \
  --head-drop 0.5 \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/mma" > "$work/mma.log" 2>&1
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
def find(j, k):
    if isinstance(j, dict):
        if k in j: return j[k]
        for v in j.values():
            r = find(v, k)
            if r is not None: return r
c = [find(c, k) for k in ("monotonic_latency", "monotonic_latency_gather", "monotonic_latency_var",
                          "monotonic_head_drop")]
assert c == [0.1, "weighted", 0.01, 0.5], c' "$work/mma/config.json" || fail "mma: latency config"

# a Transformer on one shared policy (--monotonic-policy shared): kept in its config, and online
# decoding writes what offline decoding writes
"$heed" --threads 1 train --model transformer --attention mocha --chunk 1000 --causal-encoder \
  --monotonic-policy shared --src-units char --tgt-units word --d-model 32 --heads 2 --ff 64 \
  --layers 2 --batch 32 --epochs 1 --latency-weight 0.01 \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/tmilk" > "$work/tmilk.log" 2>&1
grep -q "mocha heads w 1000 on one shared policy" "$work/tmilk.log" || fail "tmilk: $(head -1 "$work/tmilk.log")"
python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
assert "\"monotonic_policy\": \"shared\"" in json.dumps(c), c' "$work/tmilk/config.json" ||
  fail "tmilk: monotonic_policy not in config.json"
"$heed" --threads 1 translate --model "$work/tmilk" < "$work/dev" > "$work/tmilk.offline"
"$heed" --threads 1 translate --model "$work/tmilk" --online < "$work/dev" > "$work/tmilk.online"
cmp -s "$work/tmilk.offline" "$work/tmilk.online" || fail "tmilk: online output differs from offline"
# a config.json with another policy name is refused, naming the file
cp -r "$work/tmilk" "$work/tbad"
sed -i 's/"monotonic_policy": *"shared"/"monotonic_policy": "bogus"/' "$work/tbad/config.json"
set +e
"$heed" translate --model "$work/tbad" < "$work/words" > /dev/null 2> "$work/err"
rc=$?
set -e
[ $rc != 0 ] && grep -q 'config.json.*monotonic_policy is "bogus"' "$work/err" ||
  fail "a bogus monotonic_policy: exit $rc, $(cat "$work/err")"

# an RNN trained as MILk (MoChA with an unbounded chunk) against its latency: the weight and its
# warm-up stay in its config
"$heed" --threads 1 train --model rnn --attention mocha --chunk 1000 --latency-weight 0.01 \
  --latency-warmup 20 "${common[@]}" --train-src "$work/train" --valid-src "$work/dev" \
  --save "$work/milk" > "$work/milk.log" 2>&1
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert (c["chunk"], c["monotonic_latency"], c["monotonic_latency_warmup"]) == (1000, 0.01, 20), c
' "$work/milk/config.json" || fail "milk: latency config"

# refusals
set +e
"$heed" train --model rnn --attention mocha --latency-warmup 100 "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/bad4" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "latency-warmup ramps up" "$work/err" || fail "--latency-warmup alone: $(cat "$work/err")"
"$heed" translate --model "$work/mocha" --online --beam 3 < "$work/words" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "decodes greedily" "$work/err" || fail "--online --beam: $(cat "$work/err")"
"$heed" translate --model "$work/mocha" --latency-out "$work/x.jsonl" < "$work/words" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "latency-out goes with --online" "$work/err" || fail "--latency-out: $(cat "$work/err")"
"$heed" train --model rnn --attention monotonic --wait-k 2 "${common[@]}" --train-src "$work/train" \
  --valid-src "$work/dev" --save "$work/bad" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "wait-k works with bahdanau" "$work/err" || fail "wait-k + monotonic: $(cat "$work/err")"
"$heed" train --model ctc --wait-k 2 --train-src "$work/train" --save "$work/bad2" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "wait-k is for encoder-decoders" "$work/err" || fail "ctc --wait-k: $(cat "$work/err")"
"$heed" translate --model "$work/mocha" --wait-k 3 < "$work/words" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "mocha: --wait-k 3 needs a wait-k model" "$work/err" || fail "translate --wait-k on mocha: $(cat "$work/err")"
"$heed" train --model rnn --wait-k-sample 4 "${common[@]}" --train-src "$work/train" \
  --valid-src "$work/dev" --save "$work/bad3" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "give --wait-k too" "$work/err" || fail "--wait-k-sample alone: $(cat "$work/err")"
echo '{"src_len": 3, "out": ["A"], "delays": [4]}' > "$work/bad.jsonl"
"$heed" score --metric latency --hyp "$work/bad.jsonl" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "bad.jsonl:1: delay 4 outside 0..3" "$work/err" || fail "bad delays: $(cat "$work/err")"
"$heed" train --model rnn --attention monotonic --latency-var-weight 0.1 "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/bad4" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "an rnn's monotonic attention is one head" "$work/err" || fail "rnn --latency-var-weight: $(cat "$work/err")"
"$heed" train --model rnn --attention bahdanau --latency-weight 0.1 "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/bad6" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "weigh the delays of monotonic attention" "$work/err" || fail "bahdanau --latency-weight: $(cat "$work/err")"
"$heed" train --model transformer --attention monotonic --latency-gather weighted \
  --train-src "$work/train" --save "$work/bad5" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "latency-gather gathers the heads for --latency-weight" "$work/err" || fail "--latency-gather alone: $(cat "$work/err")"
"$heed" train --model rnn --attention monotonic --head-drop 0.5 "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/bad7" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "head-drop masks out heads of monotonic multihead attention" "$work/err" || fail "rnn --head-drop: $(cat "$work/err")"
"$heed" train --model transformer --attention monotonic --layers 1 --monotonic-layers 2 \
  --train-src "$work/train" --save "$work/bad8" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "monotonic-layers 2: the decoder has 1 layers" "$work/err" || fail "--monotonic-layers 2 of 1: $(cat "$work/err")"
"$heed" train --model rnn --attention mocha --monotonic-policy shared "${common[@]}" \
  --train-src "$work/train" --valid-src "$work/dev" --save "$work/bad9" > /dev/null 2> "$work/err"
[ $? = 2 ] && grep -q "monotonic-policy chooses how monotonic multihead attention stops" "$work/err" || fail "rnn --monotonic-policy: $(cat "$work/err")"
set -e
echo "online: ok"
