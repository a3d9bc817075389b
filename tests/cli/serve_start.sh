# Sourced by the server tests: serve_start LOG HEED ARGS... starts `HEED --threads 1 serve
# --port 0 ARGS...` in the background, its stderr in LOG, and sets pid and port once it listens
# (port 0: the system picks a free one, read back from the "listening on" line). It calls the
# sourcing script's fail() when the server exits first or does not listen within 10 s.
serve_start() {
  local log=$1 heed=$2
  shift 2
  # the file exists before the server's shell opens it, so the first sed below cannot race it
  : > "$log"
  "$heed" --threads 1 serve --port 0 "$@" 2> "$log" &
  pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log")
    [ -n "$port" ] && return 0
    kill -0 "$pid" 2> /dev/null || fail "the server exited: $(cat "$log")"
    sleep 0.1
  done
  fail "the server did not start: $(cat "$log")"
}
