#!/usr/bin/env bash
# Writes the goldens of tests/golden/ with a given heed binary: make.sh HEED DATA_DIR
# models/: a small model of every family of families.sh (300 updates, kept without its
# checkpoint and logs); inputs/: 40 CMUdict test entries and 40 SST dev sentences; outputs/
# and losses/: what outputs.sh prints with that binary. check.sh runs a newer binary the same
# way and compares. These were made once, with the binary of main before the model registry
# (befc20d); make them again only to change what is covered. (The ctc and conv families' models
# and outputs were added later, by the binary of their issue: a new family joins with its first
# binary's, `add.sh HEED DATA_DIR NAME`.)
set -euo pipefail
heed=$1 data=$2
golden=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=families.sh
source "$golden/families.sh"
rm -rf "$golden/models" "$golden/outputs" "$golden/losses"
mkdir -p "$golden/models" "$golden/inputs"
head -40 "$data/cmudict/cmudict-0.7b.test" > "$golden/inputs/cmudict.txt"
head -40 "$sst/stsa.binary.dev" | cut -d' ' -f2- > "$golden/inputs/sst.txt"
run() { "$heed" --threads 1 "$@"; }
for name in "${!flags[@]}"; do
  golden_model "$name" "$golden/models/$name"
done
bash "$golden/outputs.sh" "$heed" "$golden" "$golden" "$data"
"$heed" --version > "$golden/MADE_BY"
