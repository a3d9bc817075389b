# Sourced by the CLI tests: fail MESSAGE stops the test; expect_error MESSAGE COMMAND... runs
# the command (stdin from $stdin, or /dev/null) and requires it to fail (exit != 0) saying
# MESSAGE on stderr, which it leaves in $work/err.
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_error() {
  local want=$1
  shift
  if "$@" > /dev/null 2> "$work/err" < "${stdin:-/dev/null}"; then fail "accepted: $*"; fi
  grep -qF -- "$want" "$work/err" || fail "$*: expected '$want', got: $(cat "$work/err")"
}
