#!/usr/bin/env bash
# Runs a heed binary on the golden models and inputs: outputs.sh HEED GOLDEN_DIR OUT_DIR DATA_DIR
# OUT_DIR/outputs gets every family's translations (greedy, beam 4 with attention, n-best, int8),
# a Transformer head's attention, an ensemble's n-best with attention, and the classifiers'
# labels, probabilities and hop attention; OUT_DIR/losses the validation records of 50-step
# training runs (train.jsonl's train_loss moving average and dev_ce after every update).
set -euo pipefail
heed=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") golden=$2 out=$3 data=$4
# shellcheck source=families.sh
source "$golden/families.sh"
run() { "$heed" --threads 1 "$@"; }
m=$golden/models in=$golden/inputs o=$out/outputs
mkdir -p "$o" "$out/losses"
for name in "${seq2seq[@]}"; do
  seq2seq_outputs "$name" "$m/$name" "$in" "$o"
done
run translate --model "$m/transformer" --attention-layer 0 --attention-head 1 \
  --attention-out "$o/transformer.head1.att.jsonl" < "$in/cmudict.txt" > /dev/null
run translate --model "$m/rnn-bahdanau" "$m/transformer" "$m/rnn-luong-general" --beam 3 \
  --n-best 2 --attention-out "$o/ensemble.att.jsonl" < "$in/cmudict.txt" > "$o/ensemble.nbest.txt"
# heed attention (heatmaps of a Transformer's every layer and head, an ensemble's mean, a
# classifier's hops) and heed report (the model page, with the inputs decoded and scored)
run attention --max-sentences 5 --model "$m/transformer" --all-heads --all-layers --beam 3 --out "$o/attention.transformer.svg" \
  < "$in/cmudict.txt" > "$o/attention.transformer.txt" 2> /dev/null
run attention --max-sentences 5 --model "$m/rnn-luong-general" "$m/rnn-bahdanau" --out "$o/attention.ensemble.svg" \
  < "$in/cmudict.txt" > "$o/attention.ensemble.txt" 2> /dev/null
run attention --max-sentences 5 --model "$m/classifier-attention" --out "$o/attention.classifier.svg" \
  < "$in/sst.txt" > "$o/attention.classifier.txt" 2> /dev/null
# (the page names its model directory and input: relative paths, as the goldens may move)
(cd "$golden" && run report --model models/rnn-bahdanau --src inputs/cmudict.txt --title golden \
  --out "$o/report.rnn-bahdanau.html" > /dev/null 2>&1)
for name in "${classifiers[@]}"; do
  classifier_outputs "$name" "$m/$name" "$in" "$o"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in "${!flags[@]}"; do
  training_losses "$name" "$tmp/$name" "$out/losses/$name.jsonl"
done
