# Shared by scripts/make-spoken-corpus.sh and scripts/make-spoken-words.sh (sourced).

# read_part TOOL TEXT PART NAME OUT JOBS: TEXT's lines read aloud by PART's voices as OUT/NAME.tsv
# (JOBS shards side by side, then the merge: manifest, utt2spk, timings)
read_part() {
  local tool=$1 text=$2 part=$3 name=$4 out=$5 jobs=$6 pids=() k p
  for ((k = 0; k < jobs; k++)); do
    "$tool" --text "$text" --part "$part" --name "$name" --out "$out" --shard "$k/$jobs" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$tool" --text "$text" --part "$part" --name "$name" --out "$out" --merge
}

# part_row OUT NAME: the README table's row of OUT/NAME.tsv (utterances, hours, engines)
part_row() {
  local out=$1 name=$2 n h spk
  n=$(wc -l < "$out/$name.tsv")
  h=$(grep -o '"seconds":[0-9.]*' "$out/$name.align.jsonl" | cut -d: -f2 | awk '{s+=$1} END {printf "%.2f", s/3600}')
  # per engine: its speakers and utterances ("espeak-ng: 54 speakers, 24,894 utterances")
  spk=$(cut -d' ' -f2 "$out/$name.utt2spk" | awk -F: '{n[$1]++; if (!seen[$0]++) s[$1]++}
    END {k = 0; for (e in n) printf "%s%s: %d speakers, %d utterances", (k++ ? "; " : ""), e, s[e], n[e]}')
  echo "| $name | $n | $h | $spk |"
}

# voices_and_licences: the README's closing paragraphs (TEXTS: whose texts are read)
voices_and_licences() {
  echo "Speakers (engine:voice+variant) of each utterance: NAME.utt2spk. Training: espeak-ng's"
  echo "en-us, en-gb, en-gb-scotland, en-gb-x-rp, en-029 and en-us-nyc with variants m1-m5, f1-f3 and"
  echo "klatt, flite's awb and rms; dev: espeak-ng en-gb-x-gbcwmd (m6, f4), flite slt; test: espeak-ng"
  echo "en-gb-x-gbclan (m7, f5), festival kal_diphone."
  echo
  echo "Licences: $1; espeak-ng is GPL-3+ (its output is not covered); flite's CMU"
  echo "voices (awb, rms, slt) are BSD-style; festival's kal_diphone voice is free for any use"
  echo "(festvox-kallpc16k: Debian's copyright file)."
}
