#!/usr/bin/env bash
# Runs the libFuzzer targets `make fuzz` built: fuzz.sh BUILD SECONDS JOBS [TARGET ...]
# (no TARGET: every fuzz/*_fuzz.cc). Each starts from its seed corpus (fuzz/corpus/<target>/)
# plus what earlier runs found (BUILD/fuzz-work/<target>/corpus/); crashing inputs go to
# BUILD/fuzz-work/<target>/crashes/. Prints one row per target: time, executions, coverage
# (edges and features), corpus size, crashes; exits 1 when any target found one.
set -uo pipefail
build=$1 seconds=$2 jobs=$3
shift 3
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$src"/fuzz/*_fuzz.cc; do targets+=("$(basename "$f" _fuzz.cc)"); done
fi

run_one() {
  local name=$1 work=$build/fuzz-work/$1
  mkdir -p "$work/corpus" "$work/crashes"
  local start=$SECONDS
  "$build/${name}_fuzz" "$work/corpus" "$src/fuzz/corpus/$name" -max_total_time="$seconds" \
    -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/crashes/" \
    >"$work/log" 2>&1
  local rc=$? took=$((SECONDS - start))
  local execs cov ft crashes files
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$work/log")
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -1 | awk '{print $2}')
  files=$(find "$work/corpus" -type f | wc -l)
  crashes=$(find "$work/crashes" -type f | wc -l)
  printf '%-13s %6ss %12s %8s %8s %7s %7s   exit %s  %s\n' "$name" "$took" "${execs:-?}" \
    "${cov:-?}" "${ft:-?}" "$files" "$crashes" "$rc" "$work/log"
}
export -f run_one
export build seconds src

printf '%-13s %7s %12s %8s %8s %7s %7s\n' target time executions edges features corpus crashes
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
found=$(find "$build/fuzz-work" -path '*/crashes/*' -type f | wc -l)
if [ "$found" -gt 0 ]; then
  echo "fuzz: $found crashing input(s) under $build/fuzz-work/*/crashes/: fix, then copy each to fuzz/regressions/<target>/" >&2
  exit 1
fi
