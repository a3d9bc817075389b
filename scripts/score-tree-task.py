#!/usr/bin/env python3
"""Scores outputs of the tree-transduction task (scripts/make-tree-task.py) per formula depth:
exact match (% of formulas output exactly) and the paper's average length to failure (Kim et al.
2017, section 4.1: the % of each reference's tokens output correctly before the first error,
averaged over formulas).

    scripts/score-tree-task.py HYP REF DEPTH

HYP, REF: one formula per line; DEPTH: each line's depth (make-tree-task.py's dev.depth or
test.depth). Prints one JSON line per depth and one for all.
"""
import json
import sys


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [line.split() for line in f]
    except OSError as e:
        sys.exit(f"score-tree-task.py: {path}: {e.strerror}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip())
    hyp, ref, depth = (read(p) for p in sys.argv[1:])
    if not len(hyp) == len(ref) == len(depth):
        sys.exit(f"score-tree-task.py: {len(hyp)} outputs, {len(ref)} references and "
                 f"{len(depth)} depths: the files must be line-parallel")
    rows = {}
    for i, (h, r, d) in enumerate(zip(hyp, ref, depth), 1):
        if len(d) != 1 or not d[0].isdigit():
            sys.exit(f"score-tree-task.py: {sys.argv[3]}:{i}: not a depth")
        ok = 0
        while ok < len(r) and ok < len(h) and h[ok] == r[ok]:
            ok += 1
        for key in (int(d[0]), "all"):
            rows.setdefault(key, []).append((h == r, ok / max(len(r), 1)))
    for key in sorted(rows, key=lambda k: (k == "all", k if k != "all" else 0)):
        v = rows[key]
        print(json.dumps({"depth": key, "formulas": len(v),
                          "exact_match": round(100 * sum(e for e, _ in v) / len(v), 2),
                          "length_to_failure": round(100 * sum(f for _, f in v) / len(v), 2)}))


if __name__ == "__main__":
    main()
