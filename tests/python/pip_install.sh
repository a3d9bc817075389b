#!/usr/bin/env bash
# `pip install .` as a Python user runs it, offline: a venv (with Debian's numpy through
# --system-site-packages), pip building the package through setup.py's CMake on this build tree
# (HEED_BUILD_DIR: incremental), then `import heed` from the venv's python3 outside the source,
# and numpy declared as its dependency. Exit 77 (skipped) without python3-venv or pip.
# Run by ctest (RUN_SERIAL: it reconfigures the build tree): pip_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
/usr/bin/python3 -m venv --system-site-packages "$work/venv" 2> "$work/venv.err" || exit 77
"$work/venv/bin/python3" -m pip --version > /dev/null 2>&1 || exit 77
# pip builds in the source tree (setup.cfg: build-pip/); the installed package is the venv's
HEED_BUILD_DIR=$build HEED_BUILD_JOBS=1 "$work/venv/bin/python3" -m pip install --no-index \
  --no-build-isolation --no-cache-dir "$src" > "$work/pip.log" 2>&1 ||
  fail "pip install: $(tail -20 "$work/pip.log")"
cd "$work"
"$work/venv/bin/python3" - <<'PY' || fail "import heed from the venv"
import importlib.metadata as md, os, sys
import heed
site = os.path.realpath(sys.prefix)
assert os.path.realpath(heed.__file__).startswith(site), (heed.__file__, site)
assert any(r.split(";")[0].strip() == "numpy" for r in md.requires("heed")), md.requires("heed")
assert md.version("heed") == heed.__version__, (md.version("heed"), heed.__version__)
t = heed.Translator(os.path.join(os.environ["HEED_GOLDEN"], "models", "rnn-bahdanau"), threads=1)
out = t.translate_batch(["ABADI"])
assert out[0].hypotheses[0], out
print("pip install: heed", md.version("heed"), "in", site)
PY
