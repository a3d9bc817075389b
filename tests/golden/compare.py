"""Compares a heed binary's outputs on the golden models (outputs.sh) with the goldens.

compare.py GOLDEN_DIR NEW_DIR: text must be the same to the byte (translations, n-best outputs,
labels, heatmaps' and the report's text), numbers within a tolerance (attention 1e-4; n-best
scores, class probabilities 1e-4, as printed; numbers in SVG and HTML 1e-3 relative; training
losses and dev cross-entropy 1e-4 relative), so that the check holds on another CPU whose GEMMs
round differently. Says which files were byte-identical.
"""
import json
import math
import os
import re
import sys

golden, new = sys.argv[1], sys.argv[2]
failures, identical, close = [], [], []


def near(a, b, tol, rel=False):
    scale = max(1.0, abs(a), abs(b)) if rel else 1.0
    return math.isclose(a, b, rel_tol=0, abs_tol=tol * scale)


def same_json(a, b, tol, where):
    if isinstance(a, float) or isinstance(b, float):
        if not near(float(a), float(b), tol):
            raise AssertionError(f"{where}: {a} != {b}")
    elif isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            raise AssertionError(f"{where}: lengths {len(a)} != {len(b) if isinstance(b, list) else b}")
        for i, (x, y) in enumerate(zip(a, b)):
            same_json(x, y, tol, f"{where}[{i}]")
    elif isinstance(a, dict):
        if set(a) != set(b):
            raise AssertionError(f"{where}: keys {sorted(a)} != {sorted(b)}")
        for k in a:
            same_json(a[k], b[k], tol, f"{where}.{k}")
    elif a != b:
        raise AssertionError(f"{where}: {a!r} != {b!r}")


def compare_lines(name, a_lines, b_lines):
    if len(a_lines) != len(b_lines):
        raise AssertionError(f"{len(b_lines)} lines, the golden has {len(a_lines)}")
    for i, (a, b) in enumerate(zip(a_lines, b_lines)):
        where = f"line {i + 1}"
        if name.endswith(".jsonl"):
            tol = 1e-4
            same_json(json.loads(a), json.loads(b), tol, where)
        elif name.endswith(".nbest.txt"):  # ID ||| output ||| F0= log p ||| score
            fa, fb = a.split(" ||| "), b.split(" ||| ")
            if fa[:2] != fb[:2]:
                raise AssertionError(f"{where}: {b!r}, the golden {a!r}")
            for x, y in zip([fa[2][4:], fa[3]], [fb[2][4:], fb[3]]):
                if not near(float(x), float(y), 1e-4):
                    raise AssertionError(f"{where}: scores {b!r}, the golden {a!r}")
        elif name.startswith("classifier"):  # label TAB probabilities
            la, pa = a.split("\t")
            lb, pb = b.split("\t")
            if la != lb:
                raise AssertionError(f"{where}: label {lb}, the golden {la}")
            same_json([float(x) for x in pa.split()], [float(x) for x in pb.split()], 1e-4, where)
        elif name.endswith((".svg", ".html")):  # drawings: numbers (coordinates, values) close
            ta, tb = re.split(NUMBER, a), re.split(NUMBER, b)
            na, nb = re.findall(NUMBER, a), re.findall(NUMBER, b)
            if ta != tb or len(na) != len(nb):
                raise AssertionError(f"{where}: {b[:200]!r}, the golden {a[:200]!r}")
            for x, y in zip(na, nb):
                if not near(float(x), float(y), 1e-3, rel=True):
                    raise AssertionError(f"{where}: {y}, the golden {x}")
        elif a != b:
            raise AssertionError(f"{where}: {b!r}, the golden {a!r}")


NUMBER = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def compare_losses(name, a_lines, b_lines):
    if len(a_lines) != len(b_lines):
        raise AssertionError(f"{len(b_lines)} records, the golden has {len(a_lines)}")
    for a, b in zip(map(json.loads, a_lines), map(json.loads, b_lines)):
        if a["step"] != b["step"]:
            raise AssertionError(f"step {b['step']}, the golden {a['step']}")
        for k in ("train_loss", "dev_ce"):
            if not near(a[k], b[k], 1e-4, rel=True):
                raise AssertionError(f"step {a['step']}: {k} {b[k]}, the golden {a[k]}")


for sub, check in (("outputs", compare_lines), ("losses", compare_losses)):
    for name in sorted(os.listdir(os.path.join(golden, sub))):
        path_a, path_b = os.path.join(golden, sub, name), os.path.join(new, sub, name)
        if not os.path.exists(path_b):
            failures.append(f"{sub}/{name}: not written")
            continue
        a, b = open(path_a, encoding="utf-8").read(), open(path_b, encoding="utf-8").read()
        if a == b:
            identical.append(f"{sub}/{name}")
            continue
        try:
            check(name, a.splitlines(), b.splitlines())
            close.append(f"{sub}/{name}")
        except AssertionError as e:
            failures.append(f"{sub}/{name}: {e}")

print(f"{len(identical)} files byte-identical to the goldens, {len(close)} within tolerance:"
      f" {' '.join(close) or '-'}")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
