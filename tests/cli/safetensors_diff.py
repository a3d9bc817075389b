"""How far apart two safetensors files (float32, read without numpy) are: the relative difference
||a - b|| / ||b|| of all their values as one vector, and the tensor where it is largest.
`safetensors_diff.py A B [TOLERANCE]` prints them and exits 1 when the files hold different
tensors or the whole vectors' difference is above TOLERANCE."""
import array
import json
import math
import struct
import sys


def tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (path, name, t["dtype"])
        begin, end = t["data_offsets"]
        values = array.array("f")
        values.frombytes(body[begin:end])
        out[name] = values
    return out


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    if a.keys() != b.keys():
        print(f"different tensors: {sorted(a.keys() ^ b.keys())}")
        return 1
    worst, where, diff2, norm2 = 0.0, "", 0.0, 0.0
    for name in a:
        d2 = sum((x - y) ** 2 for x, y in zip(a[name], b[name]))
        n2 = sum(y * y for y in b[name])
        diff2, norm2 = diff2 + d2, norm2 + n2
        d = math.sqrt(d2 / max(n2, 1e-60))
        if d > worst:
            worst, where = d, name
    whole = math.sqrt(diff2 / max(norm2, 1e-60))
    print(f"relative difference {whole:.3g} over {len(a)} tensors; largest in one tensor "
          f"{worst:.3g} ({where or 'none'})")
    return 1 if whole > tolerance else 0


sys.exit(main())
