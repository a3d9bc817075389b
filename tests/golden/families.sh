# The families and variants the goldens cover, as `heed train` flags (sourced by make.sh and
# check.sh; needs $data, the shared data folder). Each is small enough to train in seconds.
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21
sst=$data/sst
g2p="--train-src $cmu --valid-src $cmu --src-units char --tgt-units word --batch 32 --valid-max 40 --seed 7"
rnn="--model rnn --embed 16 --tgt-embed 16 --hidden 16 --dec-hidden 32 --attn-dim 16"
tf="--model transformer --d-model 16 --heads 2 --ff 32 --layers 1 --warmup 50 --lr 0.003"
sa="--task classify --train $sst/stsa.binary.train --valid $sst/stsa.binary.dev --batch 32 --src-vocab-size 1000 --seed 7"
sa_rnn="--embed 8 --hidden 8 --attn-dim 8 --hops 2 --penalty 0.1 --mlp-hidden 8"
# --warmup 200: the family's default when these goldens were made (defaults now fit short runs)
sa_tf="--model transformer --pooling cls --d-model 16 --heads 2 --ff 32 --layers 1 --mlp-hidden 8 --warmup 200"
sa_conv="--model conv --embed 8 --conv-channels 8 --conv-dilations 1,2 --mlp-hidden 8 --lr 0.003"
sa_kim="--model kim-cnn --embed 8 --kim-maps 4 --kim-widths 2,3 --lr 0.01"
declare -A flags=(
  [rnn-bahdanau]="$g2p $rnn --attention bahdanau"
  [rnn-luong-general]="$g2p $rnn --attention luong-general --cell lstm --reverse-source"
  [rnn-local-p]="$g2p $rnn --attention local-p --window 3"
  [rnn-none]="$g2p $rnn --attention none --layers 2"
  [transformer]="$g2p $tf"
  [transformer-pre]="$g2p $tf --norm pre --positions learned --untied-output"
  [ctc]="$g2p --model ctc --embed 16 --hidden 32 --layers 1 --upsample 2 --lr 0.01"
  [conv]="$g2p --model conv --embed 16 --conv-channels 16 --layers 2 --lr 0.003"
  [rnn-luong-dot]="$g2p $rnn --attention luong-dot"
  [rnn-luong-concat]="$g2p $rnn --attention luong-concat"
  [rnn-local-m]="$g2p $rnn --attention local-m --window 3"
  [rnn-monotonic]="$g2p $rnn --attention monotonic"
  [rnn-mocha]="$g2p $rnn --attention mocha --chunk 2"
  [rnn-hard-exact]="$g2p $rnn --attention hard --hard-train exact"
  [transformer-monotonic]="$g2p --model transformer --d-model 16 --heads 2 --ff 32 --layers 2 --warmup 50 --lr 0.003 --attention monotonic --monotonic-layers 1"
  [classifier-attention]="$sa $sa_rnn"
  [classifier-transformer]="$sa $sa_tf"
  [classifier-conv]="$sa $sa_conv"
  [classifier-kim]="$sa $sa_kim"
)
seq2seq=(rnn-bahdanau rnn-luong-general rnn-local-p rnn-none transformer transformer-pre ctc conv
         rnn-luong-dot rnn-luong-concat rnn-local-m rnn-monotonic rnn-mocha rnn-hard-exact
         transformer-monotonic)
classifiers=(classifier-attention classifier-transformer classifier-conv classifier-kim)

# A family's golden model (300 updates) into directory $2, without its checkpoint and logs.
golden_model() {
  local name=$1 dir=$2 tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086  # the flags are words
  run train ${flags[$name]} --max-steps 300 --save "$tmp/$name" > /dev/null
  mkdir -p "$dir"
  for f in config.json src.vocab tgt.vocab src.spm tgt.spm model.safetensors; do
    if [ -e "$tmp/$name/$f" ]; then cp "$tmp/$name/$f" "$dir/"; fi
  done
  rm -rf "$tmp"
}
# What outputs.sh and add.sh write for one classifier family: its labels, probabilities and
# attention (hops or pooling weights) into directory $4.
classifier_outputs() {
  local name=$1 model=$2 in=$3 o=$4
  run classify --model "$model" --probs --attention-out "$o/$name.att.jsonl" \
    < "$in/sst.txt" > "$o/$name.txt"
}
# What outputs.sh and add.sh write for one seq2seq family (run: heed with its thread flag):
# its translations (greedy, beam 4 with attention, n-best, int8) into directory $4.
seq2seq_outputs() {
  local name=$1 model=$2 in=$3 o=$4
  run translate --model "$model" < "$in/cmudict.txt" > "$o/$name.greedy.txt"
  run translate --model "$model" --beam 4 --attention-out "$o/$name.beam4.att.jsonl" \
    < "$in/cmudict.txt" > "$o/$name.beam4.txt"
  run translate --model "$model" --beam 4 --n-best 3 --length-penalty 0.6 \
    < "$in/cmudict.txt" > "$o/$name.nbest.txt"
  run translate --model "$model" --compute-type int8 < "$in/cmudict.txt" > "$o/$name.int8.txt"
}
# A family's validation records of a 50-step run into file $3 (train.jsonl's train_loss moving
# average and dev_ce after every update), its model directory in $2.
training_losses() {
  local name=$1 dir=$2 out=$3
  # shellcheck disable=SC2086  # the flags are words
  run train ${flags[$name]} --max-steps 50 --valid-every 1 --save "$dir" > /dev/null
  python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(json.dumps({"step": r["step"], "train_loss": r["train_loss"], "dev_ce": r["dev_ce"]}))' \
    "$dir/train.jsonl" > "$out"
}
