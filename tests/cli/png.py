"""A PNG reader for the CLI tests (8-bit RGB/RGBA, non-interlaced: what cairo and Chromium
write), so that they need no imaging library: python3 png.py FILE prints "WIDTH HEIGHT",
read_png(path) returns (width, height, rows of (r, g, b) tuples), and viridis_pixels(pixels)
counts the pixels of heed's heatmap cells."""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(kind + chunk) == crc, path + ": bad CRC in " + kind.decode()
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    w, h, depth, color, _, _, interlace = ihdr
    assert depth == 8 and color in (2, 6) and interlace == 0, ihdr
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    assert len(raw) == h * (stride + 1), path + ": pixel data does not match the size"
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


# viridis, the heatmaps' scale (viz/figure.h), sampled finely: a cell's colour is near one
_STOPS = [(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
          (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)]
_RAMP = [tuple(a + (b - a) * t / 8 for a, b in zip(s0, s1))
         for s0, s1 in zip(_STOPS, _STOPS[1:]) for t in range(8)]


def viridis_pixels(pixels):
    """How many pixels are heatmap cells: near viridis and saturated (unlike text, rules and
    greys)."""
    def near(p):
        return max(p) - min(p) > 40 and any(
            sum((x - y) ** 2 for x, y in zip(p, q)) < 150 for q in _RAMP)
    colours = {p: near(p) for p in set(pixels)}
    return sum(colours[p] for p in pixels)


if __name__ == "__main__":
    w, h, _ = read_png(sys.argv[1])
    print(w, h)
