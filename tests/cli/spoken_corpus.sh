#!/usr/bin/env bash
# heed-spoken-corpus (tools/spoken_corpus.cc) as scripts/make-spoken-corpus.sh runs it: two shards
# and a merge give the manifest, utt2spk and timings of every line; its WAVs are 16 kHz audio heed
# reads; the same seed gives the same bytes whatever the shards; a deleted utterance is made again
# identically (resume); the test part is read by festival (an engine training never hears) and
# dev and test by no training speaker; an empty line and a bad --shard are errors naming them;
# a causal recognizer trained on it streams its audio from stdin (heed transcribe --online).
# Run by ctest when the tool is built: spoken_corpus.sh TOOL HEED
set -euo pipefail
tool=$1 heed=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
printf '%s\n' "Two young, White males are outside." "A girl in a pink dress." \
  "Five people sit on a bench." "A dog runs." > "$work/text"

for k in 0 1; do "$tool" --text "$work/text" --part train --out "$work/a" --shard "$k/2"; done
"$tool" --text "$work/text" --part train --out "$work/a" --merge 2> /dev/null
[ "$(wc -l < "$work/a/train.tsv")" = 4 ] || fail "train.tsv: $(cat "$work/a/train.tsv")"
[ "$(wc -l < "$work/a/train.align.jsonl")" = 4 ] || fail "timings"
[ "$(wc -l < "$work/a/train.utt2spk")" = 4 ] || fail "utt2spk"
head -1 "$work/a/train.tsv" | grep -q $'^wav/train-000001.wav\tTwo young, White males are outside.$' ||
  fail "manifest line: $(head -1 "$work/a/train.tsv")"
# heed reads every utterance of the manifest
"$heed" features --data "$work/a/train.tsv" --out "$work/feats" > /dev/null
[ "$(wc -l < "$work/feats/index.tsv")" = 4 ] || fail "features of the corpus"
# train --bench on audio: no dev set needed (it validates nothing), one JSON line
"$heed" --threads 1 train --bench --model ctc --train-src "$work/a/train.tsv" --format audio \
  --embed 16 --hidden 16 --layers 1 --batch 2 --max-steps 2 > "$work/bench.jsonl" 2> "$work/bench.err" ||
  fail "train --bench on audio: $(tail -3 "$work/bench.err")"
python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r)==1 and r[0]["steps"]==2, r' \
  "$work/bench.jsonl" || fail "train --bench on audio: $(cat "$work/bench.jsonl")"
# streaming (heed transcribe --online) on the corpus's audio with a causal model: stdin as WAV
# and as raw PCM give the offline transcript; the finals score against the timings; a
# bidirectional model and a stream that is not WAV are refused, naming why
"$heed" --threads 1 train --model ctc --unidirectional --train-src "$work/a/train.tsv" \
  --valid-src "$work/a/train.tsv" --format audio --embed 16 --hidden 16 --layers 1 --batch 2 \
  --max-steps 2 --save "$work/live" --quiet > /dev/null 2> "$work/live.err" || fail "train a causal model: $(tail -3 "$work/live.err")"
wav1="$work/a/$(head -1 "$work/a/train.tsv" | cut -f1)"
offline=$("$heed" --threads 1 transcribe --model "$work/live" "$wav1")
"$heed" --threads 1 transcribe --model "$work/live" --online < "$wav1" > "$work/wav.jsonl" 2> "$work/err" ||
  fail "--online, WAV on stdin: $(cat "$work/err")"
python3 - "$wav1" > "$work/raw" <<'PY'
import sys, wave
w = wave.open(sys.argv[1]); sys.stdout.buffer.write(w.readframes(w.getnframes()))
PY
rate=$(python3 -c 'import sys, wave; print(wave.open(sys.argv[1]).getframerate())' "$wav1")
"$heed" --threads 1 transcribe --model "$work/live" --online --input-format raw --sample-rate "$rate" \
  --chunk-ms 50 --partial < "$work/raw" > "$work/raw.jsonl" 2> "$work/err" || fail "--online, raw: $(cat "$work/err")"
python3 - "$work/wav.jsonl" "$work/raw.jsonl" "$offline" <<'PY' || fail "online finals"
import json, sys
for path in sys.argv[1:3]:
    lines = [json.loads(l) for l in open(path)]
    finals = [l for l in lines if l["type"] == "final"]
    assert len(finals) == 1 and finals[0]["id"] == "-", lines
    assert finals[0]["text"] == sys.argv[3], (path, finals[0]["text"], sys.argv[3])
PY
"$heed" --threads 1 transcribe --model "$work/live" --online "$work/a/train.tsv" > "$work/all.jsonl" 2> /dev/null
"$heed" score --metric latency --ref "$work/a/train.align.jsonl" --hyp "$work/all.jsonl" > "$work/lat" ||
  fail "score --metric latency: $(cat "$work/lat")"
grep -q "^word delay mean .* (4 utterances)" "$work/lat" || fail "latency: $(cat "$work/lat")"
"$heed" --threads 1 train --model ctc --train-src "$work/a/train.tsv" --valid-src "$work/a/train.tsv" \
  --format audio --embed 16 --hidden 16 --layers 1 --batch 2 --max-steps 1 --save "$work/bi" --quiet > /dev/null 2>&1
if "$heed" transcribe --model "$work/bi" --online < "$wav1" > /dev/null 2> "$work/err"; then
  fail "a bidirectional model streamed"
fi
grep -q -- "--unidirectional" "$work/err" || fail "bidirectional: $(cat "$work/err")"
# --lookahead is the ctc family's: an attention recognizer refuses it, naming it
if "$heed" --threads 1 train --model rnn --lookahead 2 --train-src "$work/a/train.tsv" \
  --valid-src "$work/a/train.tsv" --format audio --max-steps 1 --save "$work/x" > /dev/null 2> "$work/err"; then
  fail "rnn --lookahead: exit 0"
fi
grep -q -- "--upsample and --lookahead are the ctc family's" "$work/err" || fail "rnn --lookahead: $(cat "$work/err")"
if echo "not audio" | "$heed" transcribe --model "$work/live" --online > /dev/null 2> "$work/err"; then
  fail "not a WAV stream: exit 0"
fi
grep -q "<stdin>: not a WAV stream" "$work/err" || fail "not WAV: $(cat "$work/err")"
# the timings: words in order, each start <= end, within the audio
python3 - "$work/a/train.align.jsonl" <<'PY' || fail "timings"
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    assert j["words"], j["id"]
    last = 0.0
    for w in j["words"]:
        assert last - 1e-3 <= w["start"] <= w["end"] <= j["seconds"] + 1e-3, (j["id"], w)
        last = w["start"]
    assert [w["word"].lower().strip(",.") for w in j["words"]][:2] != [], j
PY
# one shard gives the same bytes as two; a deleted utterance comes back identical
"$tool" --text "$work/text" --part train --out "$work/b" 2> /dev/null
for f in "$work"/a/wav/*.wav; do cmp -s "$f" "$work/b/wav/$(basename "$f")" || fail "$f differs"; done
cmp -s "$work/a/train.tsv" "$work/b/train.tsv" || fail "manifests differ"
rm "$work/b/wav/train-000003.wav"
"$tool" --text "$work/text" --part train --out "$work/b" 2> /dev/null
cmp -s "$work/a/wav/train-000003.wav" "$work/b/wav/train-000003.wav" || fail "resumed utterance differs"
# dev and test: no training speaker; test reads with festival when it is installed
"$tool" --text "$work/text" --part dev --out "$work/a" 2> /dev/null
if command -v festival > /dev/null; then
  "$tool" --text "$work/text" --part test --out "$work/a" --seed 3 2> /dev/null
  cut -d' ' -f2 "$work/a/test.utt2spk" | grep -q '^festival:' ||
    echo "note: no festival utterance among 4 test lines (seeded draw)" >&2
  if sort -u <(cut -d' ' -f2 "$work/a/train.utt2spk") | grep -qxFf <(cut -d' ' -f2 "$work/a/test.utt2spk"); then
    fail "a test speaker reads training"
  fi
fi
if sort -u <(cut -d' ' -f2 "$work/a/train.utt2spk") | grep -qxFf <(cut -d' ' -f2 "$work/a/dev.utt2spk"); then
  fail "a dev speaker reads training"
fi
# refusals
printf 'one\n\nthree\n' > "$work/bad"
if "$tool" --text "$work/bad" --part train --out "$work/c" 2> "$work/err"; then fail "empty line: exit 0"; fi
grep -q "bad:2: an empty line" "$work/err" || fail "empty line: $(cat "$work/err")"
if "$tool" --text "$work/text" --part train --out "$work/c" --shard 2/2 2> "$work/err"; then
  fail "--shard 2/2: exit 0"
fi
grep -q -- "--shard: '2/2'" "$work/err" || fail "--shard: $(cat "$work/err")"
# the two corpus scripts on small copies of their data: spoken Multi30k (captions and the German
# side) and spoken CMUdict (distinct words, every EVERY-th of train; spelling and phones)
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
if command -v festival > /dev/null; then
  mkdir -p "$work/data/multi30k/raw" "$work/data/cmudict"
  for f in train val test_2016_flickr; do
    printf 'A dog runs.\nTwo men sit.\n' > "$work/data/multi30k/raw/$f.en"
    printf 'Ein Hund rennt.\nZwei Männer sitzen.\n' > "$work/data/multi30k/raw/$f.de"
  done
  HEED_DATA="$work/data" HEED_SPOKEN_CORPUS="$tool" "$scripts/make-spoken-corpus.sh" "$work/m30k" 2 \
    > /dev/null 2>&1 || fail "make-spoken-corpus.sh"
  [ "$(cut -f2 "$work/m30k/test.de.tsv")" = "$(printf 'Ein Hund rennt.\nZwei Männer sitzen.')" ] ||
    fail "test.de.tsv: $(cat "$work/m30k/test.de.tsv")"
  grep -q '^| test | 2 | ' "$work/m30k/README.md" || fail "README: $(cat "$work/m30k/README.md")"
  printf 'ABLE  EY B AH L\nABLE  EY B AH L\nACT  AE K T\nADD  AE D\nAGE  EY JH\n' \
    > "$work/data/cmudict/cmudict-0.7b.train-dev-20-21"
  printf "BE  B IY\nBEE'S  B IY Z\n" > "$work/data/cmudict/cmudict-0.7b.train-dev-1-21"
  printf 'CAT  K AE T\nCAT  K AE1 T\n' > "$work/data/cmudict/cmudict-0.7b.test"
  HEED_DATA="$work/data" HEED_SPOKEN_CORPUS="$tool" "$scripts/make-spoken-words.sh" "$work/w" 2 2 \
    > /dev/null 2>&1 || fail "make-spoken-words.sh"
  # every 2nd distinct training word (able, add), the dev words, the test word once
  [ "$(cut -f2 "$work/w/words-train.tsv" | tr '\n' ' ')" = "able add " ] ||
    fail "words-train.tsv: $(cat "$work/w/words-train.tsv")"
  [ "$(cut -f2 "$work/w/words-dev.phones.tsv" | tr '\n' ',')" = "B IY,B IY Z," ] ||
    fail "words-dev.phones.tsv: $(cat "$work/w/words-dev.phones.tsv")"
  [ "$(cut -f2 "$work/w/words-dev.tsv" | tr '\n' ' ')" = "be bee's " ] || fail "words-dev.tsv"
  [ "$(wc -l < "$work/w/words-test.tsv")" = 1 ] || fail "words-test.tsv"
  cmp -s <(cut -f1 "$work/w/words-test.tsv") <(cut -f1 "$work/w/words-test.phones.tsv") ||
    fail "phones and spelling manifests name different audio"
  "$heed" features --data "$work/w/words-train.tsv" --out "$work/wfeats" > /dev/null
  if HEED_DATA="$work/data" HEED_SPOKEN_CORPUS="$tool" "$scripts/make-spoken-words.sh" "$work/w" 2 x \
    2> "$work/err"; then fail "EVERY x: exit 0"; fi
  grep -q "EVERY must be a positive integer" "$work/err" || fail "EVERY: $(cat "$work/err")"
fi
echo "spoken_corpus: ok"
