#!/usr/bin/env bash
# The layer check: no file includes a header of a higher layer. The order is that of
# docs/ARCHITECTURE.md, bottom to top; a folder's headers (include/heed/<layer>/) and sources
# (src/<layer>/) are its layer, then python/ (the package: the library, never the command line),
# cli/ and, on top, tools/ (programs beside heed). Run by ctest (and by hand): layers.sh SOURCE_DIR
set -euo pipefail
cd "$1"
order=(util tensor kernels autograd nn io data metrics models decode viz dist train bench serve python cli tools)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
bad=0
while IFS= read -r file; do
  case $file in
    include/heed/*/*) layer=${file#include/heed/}; layer=${layer%%/*} ;;
    src/*/*) layer=${file#src/}; layer=${layer%%/*} ;;
    cli/*) layer=cli ;;
    tools/*) layer=tools ;;
    python/*) layer=python ;;
    *) continue ;;
  esac
  [ -n "${rank[$layer]:-}" ] || { echo "$file: folder '$layer' is in no layer (tests/layers.sh)"; bad=1; continue; }
  while IFS=: read -r line inc; do
    dep=${inc#*\"heed/}; dep=${dep%%/*}
    [ -n "${rank[$dep]:-}" ] || continue  # heed/version.h and the like
    if [ "${rank[$dep]}" -gt "${rank[$layer]}" ]; then
      echo "$file:$line: $layer includes ${inc//[[:space:]]/ } of the higher layer $dep"
      bad=1
    fi
  done < <(grep -n '^#include "heed/[a-z_]*/' "$file" | sed 's/^\([0-9]*\):\(.*\)$/\1:\2/')
  # the command line's own headers (cli/*.h, included by their bare names) are the top layer's
  if [ "$layer" != cli ]; then
    while IFS=: read -r line inc; do
      name=${inc#*\"}; name=${name%\"*}
      if [ -e "cli/$name" ]; then
        echo "$file:$line: $layer includes the command line's $name (cli/, the top layer)"
        bad=1
      fi
    done < <(grep -n '^#include "[a-z_]*\.h"' "$file")
  fi
done < <(git ls-files --cached --others --exclude-standard 'include/heed/*.h' 'src/*.cc' 'src/*.h' 'cli/*.cc' 'cli/*.h' 'python/*.cc' 'tools/*.cc' 2>/dev/null ||
         find include src cli python tools -name '*.h' -o -name '*.cc')
if [ "$bad" -ne 0 ]; then
  echo "layer order (bottom to top): ${order[*]}" >&2
  exit 1
fi
echo "layers: every include points down (${order[*]})"
