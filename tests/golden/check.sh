#!/usr/bin/env bash
# Behaviour unchanged: a heed binary on the golden models (made by an older binary, make.sh)
# gives the goldens' outputs and training losses (compare.py says how close).
# Run by ctest: check.sh HEED DATA_DIR
set -euo pipefail
heed=$1 data=$2
golden=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$golden/outputs.sh" "$heed" "$golden" "$work" "$data"
python3 "$golden/compare.py" "$golden" "$work"
