#!/usr/bin/env bash
# Nothing lost (issue 64): outputs that name a FIFO or a symlink are written through, not
# replaced; one writer per model directory (two trains, an average into a model: refused); heed
# average checks its inputs before writing; --resume compares the data's content, not its name;
# decoding options bounded in one place for translate, attention and report; a blank line is an
# empty translation; options a data format ignores, label sets with gaps and over-long pairs are
# said, not silent; a config.json that disagrees with its weights fails before it is built.
# Run by ctest: reliability_data.sh HEED DATA_DIR GOLDEN_DIR
set -euo pipefail
heed=$1 data=$2 golden=$3
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
m=$golden/models/rnn-bahdanau
in=$golden/inputs/cmudict.txt
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21

# --attention-out through a FIFO with a reader, and through a symlink (the link kept)
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/from_fifo" &
reader=$!
"$heed" --threads 1 translate --model "$m" --attention-out "$work/fifo" < "$in" > /dev/null
wait "$reader"
[ -p "$work/fifo" ] || fail "the FIFO was replaced"
[ "$(wc -l < "$work/from_fifo")" -eq 40 ] || fail "the FIFO's reader got $(wc -l < "$work/from_fifo") lines"
mkdir "$work/real" && echo old > "$work/real/att.jsonl" && ln -s real/att.jsonl "$work/link"
"$heed" --threads 1 translate --model "$m" --attention-out "$work/link" < "$in" > /dev/null
[ -L "$work/link" ] || fail "the symlink was replaced"
[ "$(wc -l < "$work/real/att.jsonl")" -eq 40 ] || fail "the symlink's target was not written"
stdin=$in expect_error "$work/real: is a directory, not a file" \
  "$heed" --threads 1 translate --model "$m" --attention-out "$work/real"

train=("$heed" --threads 1 train --train-src "$cmu" --valid-src "$cmu" --src-units char
       --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 32 --valid-max 20)
# heed average: --out holding a model is refused and untouched; a broken config writes nothing
head -300 "$cmu" > "$work/small.dict"
"$heed" --threads 1 train --train-src "$work/small.dict" --valid-src "$work/small.dict" \
  --src-units char --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 64 \
  --epochs 2 --patience 5 --keep-epochs 2 --valid-max 20 --save "$work/a" > /dev/null
"${train[@]}" --max-steps 5 --save "$work/b" > /dev/null
sum() { (cd "$1" && find . -type f ! -name heed.lock -exec md5sum {} + | sort); }
before=$(sum "$work/b")
expect_error "average: --out $work/b already holds a model (model.safetensors, config.json, train.jsonl" \
  "$heed" average --model "$work/a" --last 2 --out "$work/b"
[ "$(sum "$work/b")" = "$before" ] || fail "average changed the model in --out"
cp -r "$work/a" "$work/broken" && echo '{"model": "rnn", ' > "$work/broken/config.json"
expect_error "$work/broken/config.json: not valid JSON" \
  "$heed" average --model "$work/broken" --last 2 --out "$work/avg_broken"
[ -z "$(ls -A "$work/avg_broken" 2>/dev/null)" ] || fail "a failed average wrote $(ls "$work/avg_broken")"
"$heed" average --model "$work/a" --last 2 --out "$work/avg" > /dev/null
"$heed" --threads 1 translate --model "$work/avg" < "$in" > /dev/null || fail "the average does not load"

# one writer per model directory: a second train into it fails at once naming the first's PID
"${train[@]}" --max-steps 100000 --save "$work/busy" > /dev/null 2>&1 &
first=$!
pids+=("$first")
for _ in $(seq 100); do [ -s "$work/busy/heed.lock" ] && break; sleep 0.1; done
expect_error "train: $work/busy is being written by another process (PID $first," \
  "${train[@]}" --max-steps 5 --save "$work/busy" --overwrite
expect_error "average: $work/busy is being written by another process (PID $first," \
  "$heed" average --model "$work/a" --out "$work/busy"
kill "$first" && wait "$first" 2>/dev/null || true
"${train[@]}" --max-steps 5 --save "$work/busy" --resume > /dev/null || fail "no resume after the lock's holder died"
# killed at any moment (even between saving its first best model and its first checkpoint, the
# window a fresh run's step-0 checkpoint closes), a run resumes
for delay in 0.05 0.15 0.3 0.6; do
  "${train[@]}" --max-steps 100000 --save "$work/killed$delay" > /dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  sleep "$delay"
  kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null || true
  "${train[@]}" --max-steps 5 --save "$work/killed$delay" --resume > /dev/null 2>&1 ||
    fail "a run killed after ${delay}s does not resume ($(ls "$work/killed$delay" | tr '\n' ' '))"
done

# --resume compares the data's content: the same name with other bytes is refused
head -3000 "$cmu" > "$work/data.txt"
small=("$heed" --threads 1 train --train-src "$work/data.txt" --valid-src "$cmu" --src-units char
       --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 32 --valid-max 20)
"${small[@]}" --max-steps 5 --save "$work/r" > /dev/null
sed -i '10s/ OW / AO /' "$work/data.txt"
expect_error "$work/data.txt's content (size:hash)" "${small[@]}" --max-steps 9 --save "$work/r" --resume
"${small[@]}" --max-steps 9 --save "$work/r" --resume --force-resume > /dev/null || fail "--force-resume refused"

# decoding limits, one set for translate, attention and report; other absurd values refused
for bad in "--beam 100000" "--batch 100000" "--max-len-ratio 1e19" "--max-length -5"; do
  # shellcheck disable=SC2086
  stdin=$in expect_error "${bad%% *}" "$heed" --threads 1 translate --model "$m" $bad
done
stdin=$in expect_error "--beam: Value 100000 not in range" "$heed" report --model "$m" --src "$in" --beam 100000 --out "$work/r.html"
stdin=$in expect_error "--samples: Value -3 not in range" "$heed" report --model "$m" --src "$in" --samples -3 --out "$work/r.html"
for bad in "--beam 100000" "--cell -5" "--max-sentences -1" "--columns -3"; do
  # shellcheck disable=SC2086
  stdin=$in expect_error "${bad%% *}" "$heed" --threads 1 attention --model "$m" --out "$work/a.svg" $bad
done
stdin=$in expect_error "max_batch_size (--batch) 4096 times beam_size (--beam) 1024 must be at most 65536" \
  "$heed" --threads 1 translate --model "$m" --batch 4096 --beam 1024

# a benchmark whose training step would not fit in memory is refused before any length runs
expect_error "bench monotonic: a training step of --batch 64 at source length 2000 (about) would take" \
  timeout 20 "$heed" --threads 1 bench monotonic --attn monotonic --src-lens 20,500,2000
expect_error "--src-lens takes lengths >= 2, got 'x'" "$heed" --threads 1 bench monotonic --src-lens 20,x
# a workload's own option given to another is refused, not silently ignored
expect_error "bench asr: --warmup is for the seq2seq workloads" "$heed" --threads 1 bench asr --warmup 3
expect_error "bench ctc: --las-decode-steps is for asr and features" "$heed" bench ctc --las-decode-steps 5

# a blank or space-only line is an empty translation (as CTranslate2's), the others unchanged
printf 'ABC\n\n   \nXYZ\n' > "$work/blank.txt"
"$heed" --threads 1 translate --model "$m" < "$work/blank.txt" > "$work/blank.out"
[ "$(sed -n 2p "$work/blank.out")" = "" ] && [ "$(sed -n 3p "$work/blank.out")" = "" ] \
  || fail "blank lines were translated: $(cat "$work/blank.out")"
printf 'ABC\nXYZ\n' | "$heed" --threads 1 translate --model "$m" > "$work/plain.out"
[ "$(sed -n 1p "$work/blank.out")" = "$(sed -n 1p "$work/plain.out")" ] &&
  [ "$(sed -n 4p "$work/blank.out")" = "$(sed -n 2p "$work/plain.out")" ] || fail "blank lines changed the others"
"$heed" --threads 1 translate --model "$m" --beam 3 < "$work/blank.txt" | sed -n 2p | grep -qx "" \
  || fail "a blank line with a beam"

# silent meaning changes, said: a target file beside a TSV/CMUdict file, a label set with gaps,
# a pair longer than --max-len (left out of the vocabularies as of training)
expect_error "--train-tgt/--valid-tgt are for parallel text; $cmu is a CMUdict file" \
  "${train[@]}" --train-tgt "$cmu" --max-steps 1 --save "$work/t"
printf '0 a good film\n1 a bad film\n7 an odd one\n0 fine\n' > "$work/labels.txt"
expect_error "$work/labels.txt: the labels go up to 7 but 5 of them never occur (2, 3, 4, 5, 6)" \
  "$heed" --threads 1 train --task classify --train "$work/labels.txt" --valid "$work/labels.txt" \
  --save "$work/c"
{ head -500 "$cmu"; python3 -c 'print("9" * 300 + "  " + " ".join(["AH"] * 300))'; } > "$work/long.txt"
"$heed" --threads 1 train --train-src "$work/long.txt" --valid-src "$cmu" --src-units char \
  --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 8 --attn-dim 8 --batch 32 --valid-max 20 \
  --max-steps 1 --save "$work/l" > "$work/l.log" 2>&1
grep -qF "$work/long.txt: 1 training pairs longer than --max-len 100 units skipped" "$work/l.log" \
  || fail "no word of the long pair: $(cat "$work/l.log")"
! grep -qx "9" "$work/l/src.vocab" || fail "the skipped pair's units entered the vocabulary"

# a config.json that disagrees with its weights fails at its first extra tensor, at once
rm -rf "$work/hostile" && cp -r "$golden/models/transformer" "$work/hostile"
python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c["enc_layers"] = 100000; json.dump(c, open(sys.argv[1], "w"))' \
  "$work/hostile/config.json"
stdin=$in expect_error "$work/hostile/model.safetensors: missing tensor 'encoder/layer_" \
  timeout 20 "$heed" translate --model "$work/hostile"
# an integer field given a fraction is refused, not truncated (it read "ff": 32.5 as 32)
rm -rf "$work/frac" && cp -r "$golden/models/transformer" "$work/frac"
sed -i 's/"ff": 32/"ff": 32.5/' "$work/frac/config.json"
stdin=$in expect_error "$work/frac/config.json: \"ff\" is 32.5, not an integer" "$heed" translate --model "$work/frac"
rm -rf "$work/frac" && cp -r "$golden/models/classifier-attention" "$work/frac"
python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c["hops"] = c["hops"] + 0.5; json.dump(c, open(sys.argv[1], "w"))' "$work/frac/config.json"
stdin=$golden/inputs/sst.txt expect_error "\"hops\" is" "$heed" classify --model "$work/frac"
echo ok
