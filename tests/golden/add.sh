#!/usr/bin/env bash
# Adds one new family of families.sh to the goldens with a given heed binary, leaving the others'
# goldens as their older binary made them: add.sh HEED DATA_DIR NAME (NAME in seq2seq=(...)
# or classifiers=(...)).
# Its model (300 updates), its outputs as outputs.sh writes them, and its 50-step losses.
set -euo pipefail
# shellcheck disable=SC2034  # data: families.sh reads it
heed=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") data=$2 name=$3
golden=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=families.sh
source "$golden/families.sh"
[[ " ${seq2seq[*]} ${classifiers[*]} " == *" $name "* ]] \
  || { echo "add.sh: $name is not in seq2seq=(...) or classifiers=(...)" >&2; exit 1; }
run() { "$heed" --threads 1 "$@"; }
m=$golden/models in=$golden/inputs o=$golden/outputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
golden_model "$name" "$m/$name"
if [[ " ${classifiers[*]} " == *" $name "* ]]; then
  classifier_outputs "$name" "$m/$name" "$in" "$o"
else
  seq2seq_outputs "$name" "$m/$name" "$in" "$o"
fi
training_losses "$name" "$tmp/$name.losses" "$golden/losses/$name.jsonl"
