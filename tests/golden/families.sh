# The families and variants the goldens cover, as `heed train` flags (sourced by make.sh and
# check.sh; needs $data, the shared data folder). Each is small enough to train in seconds.
cmu=$data/cmudict/cmudict-0.7b.train-dev-1-21
sst=$data/sst
g2p="--train-src $cmu --valid-src $cmu --src-units char --tgt-units word --batch 32 --valid-max 40 --seed 7"
rnn="--model rnn --embed 16 --tgt-embed 16 --hidden 16 --dec-hidden 32 --attn-dim 16"
tf="--model transformer --d-model 16 --heads 2 --ff 32 --layers 1 --warmup 50 --lr 0.003"
sa="--task classify --train $sst/stsa.binary.train --valid $sst/stsa.binary.dev --batch 32 --src-vocab-size 1000 --seed 7"
sa_rnn="--embed 8 --hidden 8 --attn-dim 8 --hops 2 --penalty 0.1 --mlp-hidden 8"
sa_tf="--model transformer --pooling cls --d-model 16 --heads 2 --ff 32 --layers 1 --mlp-hidden 8"
declare -A flags=(
  [rnn-bahdanau]="$g2p $rnn --attention bahdanau"
  [rnn-luong-general]="$g2p $rnn --attention luong-general --cell lstm --reverse-source"
  [rnn-local-p]="$g2p $rnn --attention local-p --window 3"
  [rnn-none]="$g2p $rnn --attention none --layers 2"
  [transformer]="$g2p $tf"
  [transformer-pre]="$g2p $tf --norm pre --positions learned --untied-output"
  [ctc]="$g2p --model ctc --embed 16 --hidden 32 --layers 1 --upsample 2 --lr 0.01"
  [classifier-attention]="$sa $sa_rnn"
  [classifier-transformer]="$sa $sa_tf"
)
seq2seq=(rnn-bahdanau rnn-luong-general rnn-local-p rnn-none transformer transformer-pre ctc)
classifiers=(classifier-attention classifier-transformer)
