#!/usr/bin/env python3
"""How often the parent arcs syntactic attention induces over SST sentences agree with the
SST trees' constituents (issue 69; Kim et al. 2017, section 3.3).

    scripts/tree-agreement.py --sentences TREES > sentences.txt     # the trees' words, a line each
    heed classify --model M --attention-out a.jsonl < sentences.txt > /dev/null
    scripts/tree-agreement.py TREES a.jsonl

An arc h -> m (m's most probable parent h, a word) agrees with a tree when h lies inside the
smallest constituent of two or more words that contains m: the word attaches within its own
phrase. Arcs to the root are counted apart. Printed with the same measure for three baselines
over the same words: each word's left neighbour (the first word: its right one), its right
neighbour (the last: its left one), and a word drawn uniformly (seeded).
"""
import json
import random
import sys


def parse(line, where):
    """PTB brackets with a label on every node -> (words, spans of >= 2 words, [i, j))."""
    tokens = line.replace("(", " ( ").replace(")", " ) ").split()
    words, spans, stack = [], [], []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "(":
            stack.append(len(words))
            i += 2  # the label
            continue
        if t == ")":
            if not stack:
                sys.exit(f"tree-agreement.py: {where}: unbalanced brackets")
            start = stack.pop()
            if len(words) - start >= 2:
                spans.append((start, len(words)))
        else:
            words.append(t)
        i += 1
    if stack or not words:
        sys.exit(f"tree-agreement.py: {where}: not a tree")
    return words, spans


def read_trees(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [parse(l, f"{path}:{n}") for n, l in enumerate(f, 1) if l.strip()]
    except OSError as e:
        sys.exit(f"tree-agreement.py: {path}: {e.strerror}")


def smallest(spans, m):
    return min((s for s in spans if s[0] <= m < s[1]), key=lambda s: s[1] - s[0])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--sentences":
        for words, _ in read_trees(sys.argv[2]):
            print(" ".join(words))
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip())
    trees = read_trees(sys.argv[1])
    try:
        rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
    except (OSError, ValueError) as e:
        sys.exit(f"tree-agreement.py: {sys.argv[2]}: {e}")
    if len(rows) != len(trees):
        sys.exit(f"tree-agreement.py: {len(rows)} classified lines for {len(trees)} trees")
    rng = random.Random(1)
    counts = {k: [0, 0] for k in ("induced", "left neighbour", "right neighbour", "uniform")}
    to_root = 0
    for n, ((words, spans), row) in enumerate(zip(trees, rows), 1):
        if "tree" not in row:
            sys.exit(f"tree-agreement.py: {sys.argv[2]}:{n}: no \"tree\" (a model without "
                     "--syntactic-attention?)")
        tree, k = row["tree"], len(words)
        if len(tree) != k + 1 or any(len(r) != k for r in tree):
            sys.exit(f"tree-agreement.py: {sys.argv[2]}:{n}: a tree over {len(tree) - 1} "
                     f"tokens for {k} words (the classifier split the line otherwise)")
        if k < 2:
            continue
        for m in range(k):
            inside = smallest(spans, m)
            h = max(range(k + 1), key=lambda r: tree[r][m])
            if h == 0:
                to_root += 1
            else:
                counts["induced"][0] += inside[0] <= h - 1 < inside[1]
                counts["induced"][1] += 1
            for name, other in (("left neighbour", m - 1 if m > 0 else 1),
                                ("right neighbour", m + 1 if m + 1 < k else m - 1),
                                ("uniform", rng.choice([w for w in range(k) if w != m]))):
                counts[name][0] += inside[0] <= other < inside[1]
                counts[name][1] += 1
    for name, (agree, total) in counts.items():
        print(json.dumps({"arcs": name, "agree": agree, "of": total,
                          "percent": round(100 * agree / max(total, 1), 2)}))
    print(json.dumps({"arcs": "induced, to the root", "count": to_root}))


if __name__ == "__main__":
    main()
