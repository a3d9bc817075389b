#!/usr/bin/env bash
# A misspelt command line, as a user types it: exit 2, and the subcommand or option meant.
# Usage: usage.sh HEED
set -euo pipefail
heed=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"

expect_error "heed: error: unknown subcommand 'trian'; did you mean 'train'?" "$heed" trian
expect_error "unknown subcommand 'trian'; did you mean 'train'?" "$heed" --threads 1 trian --lr 1
expect_error "unknown subcommand 'xyzzy' (heed's subcommands: demo, train, translate" "$heed" xyzzy
expect_error "unknown option --beam-size of translate; did you mean --beam?" \
  "$heed" translate --beam-size 5
expect_error "unknown option --metrik of score; did you mean --metric?" "$heed" score --metrik bleu
# the help glitches: lm's choices by name (not enum numbers), only the units it supports, and
# the --config paragraph once in a subcommand's help
"$heed" lm --help > "$work/lm"
grep -qF -- "--format TEXT:{auto,cmudict,text,audio}=auto" "$work/lm" || fail "lm --format: $(grep -- --format "$work/lm")"
grep -qF -- "--units TEXT:{word,char}=word" "$work/lm" || fail "lm --units: $(grep -- --units "$work/lm")"
expect_error "--units: spm not in {word,char}" "$heed" lm --train /dev/null --units spm --out "$work/x"
n=$("$heed" translate --help | grep -c -- "--config FILE.toml" || true)
[ "$n" -eq 1 ] || fail "translate --help: --config explained $n times"
set +e
"$heed" trian > /dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "heed trian: exit $rc, expected 2 (a usage error)"
echo "usage: did-you-mean for subcommands and options, exit 2"
