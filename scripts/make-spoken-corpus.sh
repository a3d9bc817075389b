#!/usr/bin/env bash
# Spoken Multi30k: the English captions of Multi30k read aloud by Debian's speech synthesisers
# (tools/spoken_corpus.cc), deterministic, in OUT (default out/spoken-multi30k):
#   train.tsv, dev.tsv, test.tsv         wav/ID.wav<TAB>English caption (29,000 / 1,014 / 1,000)
#   train.de.tsv, dev.de.tsv, test.de.tsv  the same audio with the German caption (speech translation)
#   *.utt2spk, *.align.jsonl             speaker of each utterance; word and phone timings
#   README.md                            voices per part, sizes, licences
# Usage: scripts/make-spoken-corpus.sh [OUT] [JOBS]   (JOBS shards side by side; default 2)
# A killed run resumes where it stopped. Needs build/heed-spoken-corpus (make, after
# scripts/install-deps.sh speech-corpus) and festival with its kal voice.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/spoken-corpus-lib.sh"
out=${1:-$here/out/spoken-multi30k}
jobs=${2:-2}
data=${HEED_DATA:-$here/../shared/data}/multi30k/raw
tool=${HEED_SPOKEN_CORPUS:-$here/build/heed-spoken-corpus}
[ -x "$tool" ] || { echo "make-spoken-corpus: $tool is missing (make; it needs espeak-ng and flite: scripts/install-deps.sh speech-corpus)" >&2; exit 1; }
command -v festival >/dev/null || { echo "make-spoken-corpus: festival is missing (scripts/install-deps.sh speech-corpus)" >&2; exit 1; }
mkdir -p "$out"
for spec in train:train dev:val test:test_2016_flickr; do
  part=${spec%%:*} file=$data/${spec#*:}
  read_part "$tool" "$file.en" "$part" "$part" "$out" "$jobs"
  paste <(cut -f1 "$out/$part.tsv") "$file.de" > "$out/$part.de.tsv.tmp" && mv "$out/$part.de.tsv.tmp" "$out/$part.de.tsv"
done
{
  echo "# Spoken Multi30k (made by heed's scripts/make-spoken-corpus.sh)"
  echo
  echo "Multi30k task 1 English captions (train / val / test_2016_flickr) read aloud by Debian's"
  echo "speech synthesisers; 16 kHz 16-bit mono WAV; half the utterances with white noise at"
  echo "10-30 dB SNR; rate x0.85-1.15, pitch and level drawn per utterance (seeded)."
  echo "No speaker of dev or test reads training; festival (test only) is an engine training never hears."
  echo
  echo "| part | utterances | hours | engines |"
  echo "| --- | --- | --- | --- |"
  for part in train dev test; do part_row "$out" "$part"; done
  echo
  voices_and_licences "the captions are Multi30k's (Elliott et al. 2016; research and education use, see
../shared/data/README.md)"
} > "$out/README.md"
echo "make-spoken-corpus: $out"
