#!/usr/bin/env bash
# `heed report` as a user sees it: the page rendered by headless Chromium (Debian's chromium,
# installed here when missing), and the screenshot checked to be non-blank and to show the
# heatmaps (cells in the viridis colours) and the training curves.
# Run by ctest: report_browser.sh HEED DATA_DIR
set -euo pipefail
heed=$1 cmu=$2/cmudict
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# shellcheck source=chromium.sh
source "$here/chromium.sh"
need_chromium "$work" || fail "could not install chromium: $(tail -3 "$work/apt.log")"

"$heed" --threads 1 train --train-src "$cmu/cmudict-0.7b.train-dev-20-21" \
  --valid-src "$cmu/cmudict-0.7b.train-dev-1-21" --src-units char --tgt-units word \
  --embed 16 --hidden 32 --max-steps 60 --valid-every 10 --valid-max 20 \
  --save "$work/g2p" > "$work/train.log" 2>&1
"$heed" --threads 1 report --model "$work/g2p" --src "$cmu/cmudict-0.7b.test" --beam 1 \
  --samples 2 --out "$work/report.html" 2> "$work/report.log"
# no network: nothing the page needs comes from elsewhere
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1000,3600 --screenshot="$work/shot.png" "file://$work/report.html" \
  > "$work/chromium.log" 2>&1 || fail "chromium: $(tail -3 "$work/chromium.log")"
python3 - "$work/shot.png" "$work/report.html" <<PY || fail "the screenshot"
import sys
sys.path.insert(0, "$here")
from png import read_png, viridis_pixels
w, h, rows = read_png(sys.argv[1])
assert (w, h) == (1000, 3600), (w, h)  # the whole page: run, curves, samples
pixels = [px for row in rows for px in row]
white = sum(px == (255, 255, 255) for px in pixels)
assert white < 0.98 * len(pixels), "blank page"
# the heatmaps: cells in viridis colours
cells = viridis_pixels(pixels)
# every heatmap cell of the page (16 x 16 px) drawn, give or take the grid lines
want = open(sys.argv[2], encoding="utf-8").read().count('class="cell"') * 16 * 16 * 0.8
assert want > 0 and cells >= want, "no heatmap on the page: %d viridis pixels, want %d" % (cells, want)
# the curves: the train-loss line is drawn in blue (31, 119, 180)
blue = sum(abs(p[0] - 31) + abs(p[1] - 119) + abs(p[2] - 180) < 30 for p in pixels)
assert blue > 100, "no training curve: %d blue pixels" % blue
print("screenshot %dx%d: %d heatmap pixels, %d curve pixels" % (w, h, cells, blue))
PY
echo ok
