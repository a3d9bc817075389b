#!/usr/bin/env bash
# A killed run resumes exactly: heed train is killed with SIGKILL at random moments (checkpoint
# writes included, every 9 steps), resumed each time with --resume, and finishes with weights,
# optimizer state and checkpoint byte-identical to an uninterrupted run's; its train.jsonl has
# the uninterrupted run's records. Run by ctest: kill_resume.sh HEED DATA_DIR
set -euo pipefail
heed=$1 data=$2
work=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21
train=("$heed" --threads 1 train --train-src "$cmu" --valid-src "$cmu" --src-units char
       --embed 32 --tgt-embed 32 --hidden 64 --dec-hidden 128 --attn-dim 64 --batch 32
       --valid-max 20 --max-steps 500 --checkpoint-every 9 --valid-every 100 --seed 3)
"${train[@]}" --save "$work/straight" > /dev/null
# the killed run: started, killed after a random 0.05-0.8 s, resumed, ... then finished
kills=0
for round in 1 2 3 4 5; do
  "${train[@]}" --save "$work/killed" --resume > "$work/round$round.log" 2>&1 &
  pid=$!
  sleep "0.$(( (RANDOM % 16) * 5 + 5 ))"
  if kill -9 "$pid" 2> /dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2> /dev/null || true
done
"${train[@]}" --save "$work/killed" --resume > "$work/last.log" 2>&1
[ "$kills" -ge 1 ] || fail "no run was killed (too fast a machine?)"
for f in model.safetensors checkpoint/model.safetensors checkpoint/optimizer.safetensors; do
  cmp -s "$work/straight/$f" "$work/killed/$f" || fail "$f differs after $kills kills"
done
python3 -c 'import json, sys
def records(p):
    return [{k: v for k, v in json.loads(l).items() if k not in ("minutes", "tokens_per_s")}
            for l in open(p)]
a, b = records(sys.argv[1]), records(sys.argv[2])
assert a == b, (len(a), len(b))' "$work/straight/train.jsonl" "$work/killed/train.jsonl" \
  || fail "train.jsonl differs after $kills kills"
echo "ok: $kills kills"
