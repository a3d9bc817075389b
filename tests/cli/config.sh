#!/usr/bin/env bash
# --config FILE.toml and --dump-config: a training from a file equals the same training from
# flags (the same config.json and weights), the command line wins over the file, a dump reads
# back as itself, misspelt keys and unknown sections are errors naming file and line, and every
# recipe in recipes/ reads. Run by ctest: config.sh HEED DATA_DIR RECIPES_DIR
set -euo pipefail
heed=$1 data=$2 recipes=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
g2p=$data/cmudict/cmudict-0.7b.train-dev-1-21

"$heed" --threads 1 train --model rnn --attention bahdanau --train-src "$g2p" --valid-src "$g2p" \
  --src-units char --tgt-units word --embed 8 --tgt-embed 8 --hidden 8 --dec-hidden 16 \
  --attn-dim 8 --batch 16 --max-steps 4 --valid-max 20 --seed 3 --save "$work/flags" > /dev/null
cat > "$work/tiny.toml" <<'TOML'
# the same options as a file
[train]
model = "rnn"
attention = "bahdanau"
src-units = "char"
tgt-units = "word"
embed = 8
tgt-embed = 8
hidden = 8
dec-hidden = 16
attn-dim = 8
batch = 16
max-steps = 4
valid-max = 20
seed = 3
TOML
"$heed" --threads 1 train --config "$work/tiny.toml" --train-src "$g2p" --valid-src "$g2p" \
  --save "$work/file" > /dev/null
cmp -s "$work/flags/config.json" "$work/file/config.json" \
  || fail "config.json differs: $(diff "$work/flags/config.json" "$work/file/config.json")"
cmp -s "$work/flags/model.safetensors" "$work/file/model.safetensors" \
  || fail "the same training from flags and from --config gave other weights"

# the command line wins over the file, also with --config after the subcommand's flags
"$heed" --threads 1 train --train-src "$g2p" --valid-src "$g2p" --hidden 12 --save "$work/wins" \
  --config "$work/tiny.toml" > /dev/null
grep -q '"enc_hidden": 12' "$work/wins/config.json" || fail "--hidden 12 did not win over the file"
grep -q '"dec_hidden": 16' "$work/wins/config.json" || fail "the file's dec-hidden was not read"

# a dump reads back as itself, [sections] and lists included
"$heed" --threads 1 train --config "$work/tiny.toml" --save x --lr 0.5 --dump-config > "$work/d.toml"
grep -q '^\[train\]$' "$work/d.toml" || fail "dump: no [train] section"
grep -q '^lr = 0.5$' "$work/d.toml" || fail "dump: no lr line"
grep -q '^threads = 1$' "$work/d.toml" || fail "dump: no top-level threads line"
"$heed" train --config "$work/d.toml" --dump-config | cmp -s - "$work/d.toml" || fail "dump round trip"
"$heed" translate --model a b --beam 3 --dump-config > "$work/t.toml"
"$heed" translate --config "$work/t.toml" --dump-config | cmp -s - "$work/t.toml" \
  || fail "translate dump round trip"

# a metric is dumped by its name, not its enum's number
"$heed" score --metric wer --ref a --hyp b --dump-config | grep -q '^metric = "wer"$' \
  || fail "score: the metric is not dumped by name"

# every enum option is dumped by its name (one name table per enum: parsing, --help, dump)
"$heed" train --attention LUONG-dot --norm pre --precision bfloat16 --src-units char --save x \
  --dump-config > "$work/enums.toml"
for want in 'attention = "luong-dot"' 'norm = "pre"' 'precision = "bfloat16"' 'src-units = "char"'; do
  grep -qF "$want" "$work/enums.toml" || fail "train --dump-config: no $want in $(cat "$work/enums.toml")"
done
"$heed" translate --model x --compute-type int8 --dump-config | grep -q '^compute-type = "int8"$' \
  || fail "translate: the compute type is not dumped by name"

# errors name the file and line
expect_error() {  # message, file
  if "$heed" train --config "$2" --save x > /dev/null 2> "$work/err"; then fail "accepted: $1"; fi
  grep -qF -- "$1" "$work/err" || fail "expected '$1', got: $(cat "$work/err")"
}
printf '[train]\nmodel = "rnn"\n  hiden = 3\n' > "$work/typo.toml"
expect_error "$work/typo.toml:3: \`hiden\` is not an option of \`heed train\`" "$work/typo.toml"
printf '# x\n[trian]\nhidden = 3\n' > "$work/section.toml"
expect_error "$work/section.toml:2: [trian] is not a subcommand of heed" "$work/section.toml"
printf 'hidden = 3\n' > "$work/top.toml"
expect_error "$work/top.toml:1: \`hidden\` is outside a section" "$work/top.toml"
expect_error "$work/none.toml was not readable" "$work/none.toml"
printf '[train]\nhidden = "abc"\n' > "$work/value.toml"
expect_error "--hidden: Value abc not in range" "$work/value.toml"

# every recipe reads, for training and for translation, and its training options are as pinned
# (tests/golden/recipes/, pinned when the model options moved to the families: the same bytes as
# the binary before that dumped; a new recipe adds its file there)
pinned=$(dirname "$0")/../golden/recipes
for r in "$recipes"/*.toml; do
  "$heed" train --config "$r" --save x --dump-config > "$work/dump.toml" 2> "$work/err" \
    || fail "$r: $(cat "$work/err")"
  cmp -s "$work/dump.toml" "$pinned/$(basename "$r")" \
    || fail "$r: --dump-config changed: $(diff "$pinned/$(basename "$r")" "$work/dump.toml")"
  "$heed" translate --config "$r" --model x --dump-config | grep -q '^beam = ' \
    || fail "$r: no [translate] beam"
done
echo ok
