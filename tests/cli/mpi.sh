#!/usr/bin/env bash
# Data-parallel training on MPI, as issue 31 asks, on loopback with 2 ranks:
# 1. 2 ranks with --batch B each end with the parameters of 1 process with --batch 2B after 20
#    steps (dropout off), for the RNN (and with --batch-tokens, for the Transformer): the relative difference of all
#    parameters at most 1e-5 (floating-point sums in another order: one process with 2 threads
#    instead of 1 differs as much), and the same dev cross-entropy;
# 2. a rank killed mid-run: mpirun exits non-zero naming the rank, and the model directory's
#    last checkpoint loads and resumes — in one process, a different N.
# Run by ctest when heed is built with MPI: mpi.sh HEED DATA_DIR MPIRUN
set -euo pipefail
heed=$1 data=$2 mpirun=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# 2 ranks on a 2-core machine (or fewer), over shared memory or TCP on loopback
mpi=("$mpirun" --oversubscribe -np 2 --mca btl self,vader,tcp)
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21
m30k=$data/multi30k/tok
common=(--valid-max 20 --seed 3 --dropout 0 --checkpoint-every 10)
rnn=(train --train-src "$cmu" --valid-src "$cmu" --src-units char --embed 32 --tgt-embed 32
     --hidden 64 --dec-hidden 128 --attn-dim 64 "${common[@]}")
transformer=(train --model transformer --train-src "$m30k/train.lc.norm.tok.en"
             --train-tgt "$m30k/train.lc.norm.tok.de" --valid-src "$m30k/val.lc.norm.tok.en"
             --valid-tgt "$m30k/val.lc.norm.tok.de" --src-vocab-size 2000 --tgt-vocab-size 2000
             --d-model 32 --heads 2 --ff 64 --layers 1 "${common[@]}")

dev_ce() { python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["dev_ce"])' "$1"; }

# 1. the same parameters: the RNN in batches of sentences, the Transformer of tokens
for model in rnn transformer; do
  declare -n args=$model
  if [ "$model" = rnn ]; then
    per_rank=(--batch 16) whole=(--batch 32) said="a global batch of 32 examples"
  else
    per_rank=(--batch-tokens 600) whole=(--batch-tokens 1200) said="a global batch of 1200 padded"
  fi
  "${mpi[@]}" "$heed" --threads 1 "${args[@]}" "${per_rank[@]}" --max-steps 20 --save "$work/$model-2" \
    > "$work/$model-2.log" 2>&1 || { cat "$work/$model-2.log"; fail "$model: mpirun -np 2"; }
  "$heed" --threads 1 "${args[@]}" "${whole[@]}" --max-steps 20 --save "$work/$model-1" \
    > "$work/$model-1.log" 2>&1 || { cat "$work/$model-1.log"; fail "$model: one process"; }
  grep -q "data-parallel: 2 ranks, each step $said" "$work/$model-2.log" \
    || { cat "$work/$model-2.log"; fail "$model: the 2-rank run did not say it was one"; }
  [ "$(grep -c '^heed train:' "$work/$model-2.log")" -eq 1 ] || fail "$model: more than rank 0 logged"
  python3 "$here/safetensors_diff.py" "$work/$model-2/checkpoint/model.safetensors" \
    "$work/$model-1/checkpoint/model.safetensors" 1e-5 || fail "$model: 2 ranks and 1 process differ"
  a=$(dev_ce "$work/$model-2/train.jsonl") b=$(dev_ce "$work/$model-1/train.jsonl")
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-5 * b)" "$a" "$b" \
    || fail "$model: dev cross-entropy $a (2 ranks) against $b (1 process)"
  echo "ok: $model, 2 ranks x ${per_rank[*]} = 1 process x ${whole[*]} (dev ce $a, $b)"
done

# 2. a rank killed mid-run
"${mpi[@]}" "$heed" --threads 1 "${rnn[@]}" --batch 16 --max-steps 400 --save "$work/killed" \
  > "$work/killed.log" 2>&1 &
job=$!
for _ in $(seq 300); do [ -e "$work/killed/checkpoint/trainer_state.json" ] && break; sleep 0.1; done
[ -e "$work/killed/checkpoint/trainer_state.json" ] || { cat "$work/killed.log"; fail "no checkpoint"; }
# rank 1's process, looked for again for up to 5 s (it failed once to show on a loaded machine);
# if it never does, what the job said and which processes there were
victim=""
for _ in $(seq 50); do
  for pid in $(pgrep -f -- "--save $work/killed" || true); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
      victim=$pid
    fi
  done
  [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || { cat "$work/killed.log"; pgrep -af -- "--save $work/killed" >&2 || true
                      fail "rank 1 not found"; }
kill -9 "$victim"
status=0
timeout 60 tail --pid="$job" -f /dev/null || fail "the job hangs after rank 1 was killed"
wait "$job" || status=$?
[ "$status" -ne 0 ] || fail "the job exited 0 after rank 1 was killed"
grep -qi "rank 1" "$work/killed.log" || { cat "$work/killed.log"; fail "no message names rank 1"; }
# the last checkpoint loads and resumes, here in one process with twice the batch
"$heed" --threads 1 "${rnn[@]}" --batch 32 --max-steps 400 --save "$work/killed" --resume \
  > "$work/resumed.log" 2>&1 || { cat "$work/resumed.log"; fail "resume after the kill"; }
grep -q "^resuming from" "$work/resumed.log" || fail "the resumed run did not resume"
grep -q "best dev WER .* at step [0-9]* of 400," "$work/resumed.log" || { cat "$work/resumed.log"; fail "not finished"; }
echo "ok: rank 1 killed (exit $status), resumed in one process: $(grep -m1 '^resuming' "$work/resumed.log")"
