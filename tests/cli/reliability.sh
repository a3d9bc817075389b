#!/usr/bin/env bash
# Nothing lost, nothing silent (issue 24, first part): a full disk on stdout (/dev/full) stops
# translate, classify, score and split with an error naming <stdout> and a non-zero exit;
# --attention-out is written whole or not at all; heed train refuses to replace a model
# directory unless told to (--resume, --overwrite); absurd sizes, rates and counts are refused
# at the command line, naming the option. Run by ctest: reliability.sh HEED DATA_DIR GOLDEN_DIR
set -euo pipefail
heed=$1 data=$2 golden=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
m=$golden/models/rnn-bahdanau
in=$golden/inputs/cmudict.txt

# a full disk on stdout
for cmd in "translate --model $m" "translate --model $m --beam 3 --n-best 2" \
           "classify --model $golden/models/classifier-attention"; do
  # shellcheck disable=SC2086
  if "$heed" --threads 1 $cmd < "$in" > /dev/full 2> "$work/err"; then fail "$cmd: exit 0 on a full disk"; fi
  grep -qF "<stdout>: write failed" "$work/err" || fail "$cmd: $(cat "$work/err")"
done
if "$heed" score --metric wer --ref "$in" --hyp "$in" > /dev/full 2> "$work/err"; then
  fail "score: exit 0 on a full disk"
fi
grep -qF "<stdout>: write failed" "$work/err" || fail "score: $(cat "$work/err")"
if "$heed" split "$data/anki-spa-eng/spa.txt" --part train > /dev/full 2> "$work/err"; then
  fail "split: exit 0 on a full disk"
fi
grep -qF "<stdout>: write failed" "$work/err" || fail "split: $(cat "$work/err")"

# --attention-out: whole or not at all
echo "an earlier file" > "$work/att.jsonl"
printf 'ABC\n\xff\xfe\n' > "$work/bad.txt"
stdin=$work/bad.txt expect_error "invalid UTF-8" "$heed" --threads 1 translate --model "$m" \
  --attention-out "$work/att.jsonl"
[ "$(cat "$work/att.jsonl")" = "an earlier file" ] || fail "a failed run replaced --attention-out"
[ -z "$(ls "$work" | grep tmp)" ] || fail "a temporary file was left: $(ls "$work")"
stdin=$in expect_error "$work/none/att.jsonl" "$heed" --threads 1 translate --model "$m" \
  --attention-out "$work/none/att.jsonl"
"$heed" --threads 1 translate --model "$m" --attention-out "$work/att.jsonl" < "$in" > /dev/null
[ "$(wc -l < "$work/att.jsonl")" -eq 40 ] || fail "--attention-out: not one line per input"

# heed train over an existing model directory
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21
train=("$heed" --threads 1 train --train-src "$cmu" --valid-src "$cmu" --src-units char
       --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 32 --valid-max 20)
"${train[@]}" --max-steps 5 --save "$work/m" > /dev/null
cp "$work/m/model.safetensors" "$work/kept.safetensors"
expect_error "$work/m already holds a run (model.safetensors, train.jsonl, checkpoint)" \
  "${train[@]}" --max-steps 5 --save "$work/m"
cmp -s "$work/m/model.safetensors" "$work/kept.safetensors" || fail "the refused run touched the model"
rm -rf "$work/m/checkpoint"
expect_error "holds a run (model.safetensors, train.jsonl) but no checkpoint to resume from" \
  "${train[@]}" --max-steps 5 --save "$work/m" --resume
"${train[@]}" --max-steps 5 --save "$work/m" --overwrite > /dev/null
[ "$(wc -l < "$work/m/train.jsonl")" -eq 1 ] || fail "--overwrite kept the old train.jsonl"
# a run killed before its first checkpoint was complete (its log, a partial checkpoint.tmp) saved
# nothing: --resume starts it over, and says so
mkdir -p "$work/early/checkpoint.tmp" && echo '{"step": 3, "loss": 9}' > "$work/early/train.jsonl"
"${train[@]}" --max-steps 5 --save "$work/early" --resume > /dev/null 2> "$work/early.err"
grep -q "killed before its first checkpoint (train.jsonl, checkpoint.tmp): started over" \
  "$work/early.err" || fail "--resume over an unsaved run: $(cat "$work/early.err")"
[ "$(wc -l < "$work/early/train.jsonl")" -eq 1 ] || fail "the started-over run kept the old log"
if grep -q '"loss": 9' "$work/early/train.jsonl"; then fail "the started-over run kept the old record"; fi
# a run whose step budget is spent, resumed: re-evaluates, trains nothing, records nothing
before=$(wc -l < "$work/m/train.jsonl")
"${train[@]}" --max-steps 5 --save "$work/m" --resume > "$work/again.log" 2>&1
grep -qE '"step": 5,?$' "$work/m/checkpoint/trainer_state.json" || fail "a spent budget trained on"
grep -q "nothing trained" "$work/again.log" || fail "no word of the spent budget: $(cat "$work/again.log")"
[ "$(wc -l < "$work/m/train.jsonl")" -eq "$before" ] || fail "a re-evaluation added to train.jsonl"
# train.jsonl after a kill: records of steps past the checkpoint (and a torn line) are dropped
# on resume, so the log keeps one record per event; heed report skips a torn last line
"${train[@]}" --max-steps 5 --save "$work/m" --overwrite > /dev/null
cp "$work/m/train.jsonl" "$work/log.before"
echo '{"epoch": 1, "step": 9, "minutes": 0.1, "dev_ce": 1, "dev_ppl": 2, "metric": "WER", "dev_metric": 50, "train_loss": 1, "lr": 0.001}' >> "$work/m/train.jsonl"
printf '{"epoch": 1, "st' >> "$work/m/train.jsonl"
"$heed" report --model "$work/m" --out "$work/r.html" 2> "$work/report.err" > /dev/null \
  || fail "report on a torn log: $(cat "$work/report.err")"
grep -q "the last line is not a whole record" "$work/report.err" || fail "no warning: $(cat "$work/report.err")"
"${train[@]}" --max-steps 7 --save "$work/m" --resume > /dev/null
head -n "$(wc -l < "$work/log.before")" "$work/m/train.jsonl" | cmp -s - "$work/log.before" \
  || fail "resume changed the records before the checkpoint"
! grep -q '"step": 9' "$work/m/train.jsonl" || fail "a record past the checkpoint was kept"
python3 -c 'import json, sys
for l in open(sys.argv[1]): json.loads(l)' "$work/m/train.jsonl" || fail "train.jsonl holds a torn line"
# heed features: audio in, .npy out; bad audio and ambiguous outputs refused naming them
speech=$golden/audio/speech16k.wav
"$heed" features "$speech" --out "$work/feat.npy" > /dev/null || fail "features: one file"
python3 -c 'import sys
b = open(sys.argv[1], "rb").read()
assert b[:6] == b"\x93NUMPY" and b"(190, 80)" in b[:128], b[:128]' "$work/feat.npy" \
  || fail "features: not a [190, 80] .npy file"
expect_error "$cmu: not an audio file" "$heed" features "$cmu" --out "$work/f"
expect_error "2 inputs need a directory" "$heed" features "$speech" "$speech" --out "$work/two.npy"
mkdir -p "$work/again" && cp "$speech" "$work/again/"
expect_error "two inputs named speech16k" "$heed" features "$speech" "$work/again/speech16k.wav" \
  --out "$work/f"
expect_error "more than the limit of 1 s" "$heed" features "$speech" --max-audio-seconds 1 \
  --out "$work/f"
# --data: a Kaldi directory's segments, each its stretch of the recording (the first second's
# frames are the whole file's first frames), an index, and a segment past the end refused
mkdir -p "$work/kaldi" && cp "$speech" "$work/kaldi/"
printf 'rec1 speech16k.wav\n' > "$work/kaldi/wav.scp"
printf 'u1 rec1 0.0 1.0\nu2 rec1 0.9 -1\n' > "$work/kaldi/segments"
printf 'u1 listen attend\nu2 and spell\n' > "$work/kaldi/text"
"$heed" features --data "$work/kaldi" --out "$work/kf" > /dev/null || fail "features --data"
python3 -c 'import sys
def npy(path):  # (header, data bytes)
    b = open(path, "rb").read()
    n = 10 + b[8] + 256 * b[9]
    return b[10:n].decode(), b[n:]
(whole_h, whole), (u1_h, u1) = npy(sys.argv[1]), npy(sys.argv[2] + "/u1.npy")
assert "(98, 80)" in u1_h and u1 == whole[:98 * 80 * 4], u1_h
rows = [l.split("\t") for l in open(sys.argv[2] + "/index.tsv").read().splitlines()]
assert [(r[0], r[2], r[3]) for r in rows] == [("u1", "98", "listen attend"), ("u2", "100", "and spell")], rows' \
  "$work/feat.npy" "$work/kf" || fail "features --data: segments"
printf 'u1 rec1 0.0 5.0\n' > "$work/kaldi/segments"
printf 'u1 x\n' > "$work/kaldi/text"
expect_error "text:1: utterance u1 spans [0, 5] s" "$heed" features --data "$work/kaldi" \
  --out "$work/kf2"
# a family of the other task: each names what runs it (the registry's names and aliases)
expect_error "--model rnn is an encoder-decoder; the classifiers: self-attentive | transformer-classifier (transformer)" \
  "$heed" train --task classify --model rnn --train "$cmu" --valid "$cmu" --save "$work/never"
expect_error "--model kim-cnn is a classifier: add --task classify" \
  "$heed" train --model kim-cnn --train-src "$cmu" --valid-src "$cmu" --save "$work/never"
expect_error "--head-drop masks out heads of monotonic multihead attention" \
  "$heed" train --model rnn --head-drop 0.1 --train-src "$cmu" --valid-src "$cmu" --save "$work/never"
[ -e "$work/never" ] && fail "a refused run made its directory"
# --resume with another seed, data or model: refused, listing the differences
head -2000 "$cmu" > "$work/short.txt"
expect_error '--seed: "9" (the checkpoint: "1")' "${train[@]}" --max-steps 9 --save "$work/m" --resume --seed 9
grep -q "window:" "$work/err" && fail "a difference not made was listed"
expect_error "window: 5 (the checkpoint: 10)" "${train[@]}" --window 5 --max-steps 9 --save "$work/m" --resume
expect_error "train: \"$work/short.txt\" (the checkpoint: \"$cmu\")" \
  "$heed" --threads 1 train --train-src "$work/short.txt" --valid-src "$cmu" --src-units char \
  --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 32 --valid-max 20 \
  --max-steps 9 --save "$work/m" --resume
"${train[@]}" --max-steps 9 --save "$work/m" --resume --seed 9 --force-resume > /dev/null \
  || fail "--force-resume refused"
# a checkpoint caught between the two renames of its swap (only checkpoint.old) resumes
mv "$work/m/checkpoint" "$work/m/checkpoint.old"
"${train[@]}" --max-steps 10 --save "$work/m" --resume --seed 9 > /dev/null \
  || fail "no resume from checkpoint.old"
# a run saved without a moving average of its weights has none to go on from: refused, naming
# the checkpoint's file
expect_error "checkpoint/optimizer.safetensors: the run was saved without exponential smoothing" \
  "${train[@]}" --max-steps 11 --save "$work/m" --resume --seed 9 --exponential-smoothing 0.01
# a directory with only what a run derives from the data (killed before its first checkpoint)
# is no model: a new run starts in it
rm -rf "$work/m/model.safetensors" "$work/m/train.jsonl" "$work/m/checkpoint"
"${train[@]}" --max-steps 5 --save "$work/m" > /dev/null

# absurd options, refused at the command line naming the option
for bad in "--embed 0" "--d-model 0" "--attn-dim 0" "--dec-hidden 0" "--checkpoint-every 0" \
           "--lr nan" "--lr -1" "--epochs 0" "--dropout 1.5" "--batch 0" "--heads 0" \
           "--exponential-smoothing 1"; do
  # shellcheck disable=SC2086
  expect_error "${bad%% *}" "${train[@]}" $bad --save "$work/x"
done
expect_error "--threads 100000: expected 0 (all cores) to" "$heed" --threads 100000 score --ref "$in" --hyp "$in"
stdin=$in expect_error "--max-len-ratio" "$heed" translate --model "$m" --max-len-ratio 0
[ ! -e "$work/x" ] || fail "a refused run made its directory"
# a very long line is cut at --max-input-length, with a warning naming it
python3 -c 'print("ABC"); print("A" * 100000); print("XYZ")' > "$work/long.txt"
"$heed" --threads 1 translate --model "$m" --max-input-length 64 < "$work/long.txt" \
  > "$work/long.out" 2> "$work/long.err"
[ "$(wc -l < "$work/long.out")" -eq 3 ] || fail "--max-input-length: not one line per input"
grep -qF "<stdin>:2: longer than 64 units" "$work/long.err" || fail "no warning: $(cat "$work/long.err")"
# scoring does not cut (a cut pair's score is not its own): the long pair is an error
stdin=$work/long.txt expect_error "score: pair 2 has 100000 units on one side, more than the input length limit of 64" \
  "$heed" --threads 1 translate --model "$m" --max-input-length 64 --score-target "$work/long.txt"
# sizes no machine holds, or none at all, in a config.json: refused before allocating
while IFS='|' read -r edit want; do
  rm -rf "$work/huge" && cp -r "$golden/models/transformer" "$work/huge"
  python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); '"$edit"'; json.dump(c, open(sys.argv[1], "w"))' "$work/huge/config.json"
  stdin=$in expect_error "$work/huge/config.json: $want" "$heed" translate --model "$work/huge"
  grep -qE "GiB of memory heed may use here|must be at least 1" "$work/err" || fail "$edit: $(cat "$work/err")"
done <<'EOF'
c["max_positions"] = 10**12|transformer: a position table of max_positions 1000000000000 x d_model 16
c["max_positions"] = -3|transformer: max_positions -3 and d_model 16 must be at least 1
EOF
# a size that disagrees with the weights is refused at its first tensor, before allocating it
rm -rf "$work/huge" && cp -r "$golden/models/transformer" "$work/huge"
sed -i 's/"ff": 32/"ff": 2000000000/' "$work/huge/config.json"
stdin=$in expect_error "$work/huge/model.safetensors: tensor 'encoder/layer_0/ffn/W1' has shape [32, 16], but config.json's model has [2000000000, 16]" \
  "$heed" translate --model "$work/huge"
sed -i 's/"ff": 2000000000/"ff": 32/; s/"d_model": 16/"d_model": 0/' "$work/huge/config.json"
stdin=$in expect_error "model.safetensors: tensor 'encoder/layer_0/self_attn/W_qkv' has shape [48, 16], but config.json's model has [0, 0]" \
  "$heed" translate --model "$work/huge"
# a float where an integer is read (nlohmann-json's cast would be undefined; the fuzzer's find)
rm -rf "$work/huge" && cp -r "$golden/models/transformer" "$work/huge"
sed -i 's/"d_model": 16/"d_model": 1e49/' "$work/huge/config.json"
stdin=$in expect_error "$work/huge/config.json: \"d_model\" is 1e+49, beyond the range heed reads" \
  "$heed" translate --model "$work/huge"
stdin=$in expect_error "--beam: Value 100000 not in range" "$heed" translate --model "$m" --beam 100000
# parser errors in the one format (heed: error: ..., exit 2)
set +e
"$heed" translate --model "$m" --beam x < /dev/null > /dev/null 2> "$work/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a parse error exits $rc, not 2"
grep -q "^heed: error: .*--beam" "$work/err" || fail "parse error format: $(cat "$work/err")"

# messages that say what is wrong
printf 'ABC\nabcd\xffx\n' > "$work/bad2.txt"
stdin=$work/bad2.txt expect_error "<stdin>:2: invalid UTF-8 at byte 5 of the line" \
  "$heed" translate --model "$m"
expect_error "$work: is a directory, not a file" "$heed" score --ref "$work" --hyp "$in"
stdin=$golden/inputs/sst.txt expect_error "a self-attentive model is a classifier, not an encoder-decoder" \
  "$heed" translate --model "$golden/models/classifier-attention"
expect_error "a rnn model is an encoder-decoder, not a classifier" "$heed" classify --model "$m"
# a model whose weights hold a NaN is refused, naming the file and tensor
cp -r "$m" "$work/nan"
python3 -c 'import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-4:] = bytes([0, 0, 0xc0, 0x7f])  # the last float: NaN
open(p, "wb").write(b)' "$work/nan/model.safetensors"
stdin=$in expect_error "$work/nan/model.safetensors: tensor '" "$heed" translate --model "$work/nan"
grep -qF "holds nan" "$work/err" || fail "NaN weights: $(cat "$work/err")"
echo ok
