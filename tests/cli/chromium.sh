# Sourced by the browser tests: need_chromium WORKDIR installs Debian's chromium when it is
# missing (its apt log in WORKDIR/apt.log); non-zero when it cannot.
need_chromium() {
  command -v chromium > /dev/null && return 0
  echo "installing Debian's chromium for the browser tests" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends chromium > "$1/apt.log" 2>&1 ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends chromium; } \
      > "$1/apt.log" 2>&1
}
