#!/usr/bin/env python3
"""The tree-transduction task of Kim, Denton, Hoang & Rush 2017 ("Structured Attention
Networks", section 4.1), rebuilt: random arithmetic formulas in prefix notation (the source)
are to be rewritten in infix notation (the target), the paper's example being

    source:  ( + ( + 15 7 ) 1 8 )          target:  ( ( 15 + 7 ) + 1 + 8 )

Each operator (+ - * /) takes 2 or 3 arguments, numbers are 1..20; a formula of depth d grows
one argument to depth d - 1 and the others to a random depth below. The output reorders its
input along the tree, farther the deeper the formula: what syntactic attention (a latent
dependency tree over the source) is for. Depths 2..4 drawn uniformly (the paper's table has a
column per depth), no formula in more than one part. Deterministic (--seed); a second or so.

    scripts/make-tree-task.py OUT_DIR [--train 20000 --dev 1000 --test 1000 --seed 1]

writes OUT_DIR/{train,dev,test}.{src,tgt} (one formula per line, tokens split by spaces) and
OUT_DIR/{dev,test}.depth (each line's depth, for scores per depth).
"""
import argparse
import os
import random
import sys

OPS = ["+", "-", "*", "/"]


def formula(rng, depth):
    """A tree of exactly `depth` operator levels: (op, [arguments]) or a number."""
    if depth == 0:
        return str(rng.randint(1, 20))
    args = [formula(rng, rng.randint(0, depth - 1)) for _ in range(rng.randint(2, 3) - 1)]
    args.insert(rng.randint(0, len(args)), formula(rng, depth - 1))
    return (rng.choice(OPS), args)


def prefix(t):
    if isinstance(t, str):
        return [t]
    return ["(", t[0]] + [u for a in t[1] for u in prefix(a)] + [")"]


def infix(t):
    if isinstance(t, str):
        return [t]
    out = ["("]
    for i, a in enumerate(t[1]):
        if i:
            out.append(t[0])
        out += infix(a)
    return out + [")"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--train", type=int, default=20000)
    ap.add_argument("--dev", type=int, default=1000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--min-depth", type=int, default=2)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 1 <= a.min_depth <= a.max_depth or min(a.train, a.dev, a.test) < 1:
        sys.exit("make-tree-task.py: 1 <= --min-depth <= --max-depth, and sizes >= 1")
    rng = random.Random(a.seed)
    seen = set()
    parts = {}
    for name, n in (("test", a.test), ("dev", a.dev), ("train", a.train)):
        rows = []
        tries = 0
        while len(rows) < n:
            tries += 1
            if tries > 100 * n:
                sys.exit(f"make-tree-task.py: cannot draw {n} distinct {name} formulas")
            depth = rng.randint(a.min_depth, a.max_depth)
            t = formula(rng, depth)
            src = " ".join(prefix(t))
            if src in seen:
                continue
            seen.add(src)
            rows.append((src, " ".join(infix(t)), depth))
        parts[name] = rows
    os.makedirs(a.out_dir, exist_ok=True)
    for name, rows in parts.items():
        for ext, col in (("src", 0), ("tgt", 1)) + ((("depth", 2),) if name != "train" else ()):
            path = os.path.join(a.out_dir, f"{name}.{ext}")
            if os.path.lexists(path) and not os.path.isfile(path):
                sys.exit(f"make-tree-task.py: {path} exists and is not a regular file")
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                for r in rows:
                    f.write(f"{r[col]}\n")
            os.replace(tmp, path)
    print(f"{a.out_dir}: train {a.train}, dev {a.dev}, test {a.test} formulas of depth "
          f"{a.min_depth}..{a.max_depth}")


if __name__ == "__main__":
    main()
