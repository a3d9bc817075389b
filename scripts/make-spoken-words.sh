#!/usr/bin/env bash
# Spoken CMUdict: CMUdict's words read aloud, one word an utterance, by the voices of
# scripts/make-spoken-corpus.sh (tools/spoken_corpus.cc; deterministic), in OUT (default
# out/spoken-cmudict) — speech to spelling, or to phones:
#   words-train.tsv, words-dev.tsv, words-test.tsv   wav/ID.wav<TAB>the word, lower case
#   words-*.phones.tsv                               the same audio with its (first) pronunciation
#   *.utt2spk, *.align.jsonl, README.md              as the spoken Multi30k's
# The words are CMUdict's G2P split (../shared/data/cmudict): every EVERY-th distinct word of
# train (default 5: about 20,400), every distinct word of dev (5,447) and of test (11,994); test
# words never occur in train.
# Usage: scripts/make-spoken-words.sh [OUT] [JOBS] [EVERY]   (JOBS shards side by side; default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/spoken-corpus-lib.sh"
out=${1:-$here/out/spoken-cmudict}
jobs=${2:-2}
every=${3:-5}
data=${HEED_DATA:-$here/../shared/data}/cmudict
tool=${HEED_SPOKEN_CORPUS:-$here/build/heed-spoken-corpus}
[ -x "$tool" ] || { echo "make-spoken-words: $tool is missing (make; it needs espeak-ng and flite: scripts/install-deps.sh speech-corpus)" >&2; exit 1; }
command -v festival >/dev/null || { echo "make-spoken-words: festival is missing (scripts/install-deps.sh speech-corpus)" >&2; exit 1; }
[[ $every =~ ^[1-9][0-9]*$ ]] || { echo "make-spoken-words: EVERY must be a positive integer, got '$every'" >&2; exit 1; }
mkdir -p "$out"
for spec in train:train-dev-20-21:$every dev:train-dev-1-21:1 test:test:1; do
  IFS=: read -r part file step <<< "$spec"
  name=words-$part
  # each distinct word once (its first pronunciation), every step-th: "word<TAB>PH PH ..."
  awk -v step="$step" 'NF >= 2 && !seen[$1]++ && (n++ % step == 0) {
      w = tolower($1); $1 = ""; sub(/^ +/, ""); print w "\t" $0 }' \
    "$data/cmudict-0.7b.$file" > "$out/$name.words.tmp"
  cut -f1 "$out/$name.words.tmp" > "$out/$name.txt"
  read_part "$tool" "$out/$name.txt" "$part" "$name" "$out" "$jobs"
  paste <(cut -f1 "$out/$name.tsv") <(cut -f2 "$out/$name.words.tmp") > "$out/$name.phones.tsv.tmp"
  mv "$out/$name.phones.tsv.tmp" "$out/$name.phones.tsv"
  rm -f "$out/$name.words.tmp"
done
{
  echo "# Spoken CMUdict (made by heed's scripts/make-spoken-words.sh)"
  echo
  echo "CMUdict 0.7b's words (the CNTK G2P split: every $every-th distinct training word, every"
  echo "distinct dev and test word) read aloud, one word an utterance, by Debian's speech"
  echo "synthesisers; 16 kHz 16-bit mono WAV; half the utterances with white noise at 10-30 dB SNR;"
  echo "rate, pitch and level drawn per utterance (seeded). words-*.tsv transcribe the spelling,"
  echo "words-*.phones.tsv the first pronunciation (ARPAbet without stress). No speaker of dev or"
  echo "test reads training; festival (test only) is an engine training never hears."
  echo
  echo "| part | utterances | hours | engines |"
  echo "| --- | --- | --- | --- |"
  for part in train dev test; do part_row "$out" "words-$part"; done
  echo
  voices_and_licences "CMUdict is BSD-style (Carnegie Mellon University), this split is CNTK's (MIT; see
../shared/data/README.md)"
} > "$out/README.md"
echo "make-spoken-words: $out"
