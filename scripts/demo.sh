#!/usr/bin/env bash
# `make demo`: heed's main job on the CMUdict split bundled in data/cmudict/ (BSD, see its
# LICENSE). Trains a Bahdanau-attention BiGRU grapheme-to-phoneme model for a fixed budget on all
# cores, scores it on the test words (none seen in training), pronounces a few words no
# dictionary has, draws their attention, and writes an HTML report. Every step is a plain heed
# command, printed before it runs. Re-running resumes an interrupted run (the budget counts the
# minutes already trained) and then only evaluates again.
# Usage: scripts/demo.sh [HEED] [OUT_DIR] [MINUTES]
set -euo pipefail
heed=${1:-build/heed}
out=${2:-build/demo}
minutes=${3:-7}
data=$(cd "$(dirname "$0")/../data/cmudict" && pwd)
mkdir -p "$out"
start=$(date +%s)
run() { echo "+ $*" >&2; "$@"; }
# run_io IN OUT CMD...: CMD < IN > OUT, printed as it runs; "-" for no redirection; an OUT
# ending in .log gets stderr too
run_io() {
  local in=$1 out=$2 shown="+ ${*:3}"
  shift 2
  [ "$in" = - ] || shown+=" < $in"
  [ "$out" = - ] || shown+=" > $out"
  echo "$shown" >&2
  [ "$in" != - ] || in=/dev/stdin
  if [ "$out" = - ]; then
    "$@" < "$in"
  elif [[ $out == *.log ]]; then
    "$@" < "$in" > "$out" 2>&1
  else
    "$@" < "$in" > "$out"
  fi
}

echo "== heed demo: grapheme-to-phoneme with attention (Bahdanau et al. 2015) on CMUdict"
echo "   train $data/cmudict-0.7b.train-dev-20-21 (108,952 entries), dev ...-1-21, test 11,994 unseen words"
echo "   training budget: $minutes minutes on $(nproc) cores"
run_io - "$out/train.log" "$heed" train --model rnn --attention bahdanau \
  --train-src "$data/cmudict-0.7b.train-dev-20-21" --valid-src "$data/cmudict-0.7b.train-dev-1-21" \
  --src-units char --tgt-units word --embed 64 --tgt-embed 64 --hidden 256 --dec-hidden 256 \
  --attn-dim 128 --dropout 0.2 --label-smoothing 0.1 --batch 64 --lr 2e-3 --lr-patience 0 \
  --valid-max 1000 --epochs 100 --max-minutes "$minutes" --save "$out/g2p" --resume ||
  { tail -5 "$out/train.log"; exit 1; }
grep -E "^validation" "$out/train.log" | tail -3
tail -1 "$out/train.log"

echo "== test: $data/cmudict-0.7b.test, beam 5"
run_io "$data/cmudict-0.7b.test" "$out/test.hyp" "$heed" translate --model "$out/g2p" --beam 5
run "$heed" score --metric wer --ref "$data/cmudict-0.7b.test" --hyp "$out/test.hyp"

echo "== words no dictionary has"
printf 'BAHDANAU\nVASWANI\nTOKENIZER\nSELFIE\nGOOGLING\n' > "$out/new_words.txt"
run_io "$out/new_words.txt" "$out/new_words.hyp" "$heed" translate --model "$out/g2p" --beam 5
sed 's/^/   /' "$out/new_words.hyp"
run_io "$out/new_words.txt" /dev/null "$heed" attention --model "$out/g2p" --beam 5 --out "$out/attention.svg"

run "$heed" report --model "$out/g2p" --src "$data/cmudict-0.7b.test" --hyp "$out/test.hyp" \
  --samples 8 --title "heed demo: CMUdict G2P with Bahdanau attention" --out "$out/report.html"
echo "== done in $(( $(date +%s) - start )) s: the report is $out/report.html (open it in a browser;"
echo "   it needs no network), the heatmaps of the new words $out/attention.svg"
