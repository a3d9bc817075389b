#!/usr/bin/env bash
# Every --attention on Multi30k en->de under the same budget of updates, one small model each,
# then test2016 BLEU (greedy) overall and by source length. Used for docs/RESULTS.md.
#   scripts/experiments/multi30k_attention_table.sh OUT_DIR [STEPS] [THREADS]
# Environment: ATTENTIONS (default: all seven), VALID_EVERY (dev CE every N updates; 0: epochs).
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [STEPS] [THREADS]} steps=${2:-1000} threads=${3:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
heed=${HEED:-$here/build/heed}
d=${DATA:-$here/../shared/data}/multi30k/tok
mkdir -p "$out"
for a in ${ATTENTIONS:-none bahdanau luong-dot luong-general luong-concat local-m local-p}; do
  start=$(date +%s)
  "$heed" --threads "$threads" train --model rnn --attention "$a" \
    --train-src "$d/train.lc.norm.tok.en" --train-tgt "$d/train.lc.norm.tok.de" \
    --valid-src "$d/val.lc.norm.tok.en" --valid-tgt "$d/val.lc.norm.tok.de" \
    --embed 128 --tgt-embed 128 --hidden 128 --dec-hidden 256 --attn-dim 256 --window 5 \
    --dropout 0.2 --min-freq 2 --batch 64 --max-steps "$steps" --epochs 100 --patience 100 \
    --valid-max 500 --valid-every "${VALID_EVERY:-0}" --seed 1 --save "$out/m_$a" > "$out/train_$a.log" 2>&1
  "$heed" --threads "$threads" translate --model "$out/m_$a" \
    < "$d/test_2016_flickr.lc.norm.tok.en" > "$out/test_$a.de"
  "$heed" score --metric bleu --multi-bleu --ref "$d/test_2016_flickr.lc.norm.tok.de" --hyp "$out/test_$a.de" \
    --by-src-length "$d/test_2016_flickr.lc.norm.tok.en" --buckets 10,15,20 --json \
    > "$out/score_$a.json"
  echo "$a $(( $(date +%s) - start )) s $(head -c 120 "$out/score_$a.json")"
done
