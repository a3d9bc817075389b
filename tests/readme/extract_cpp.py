"""Writes each ```cpp block of README.md as a program: its #include lines first, then the rest
as the body of main(). Run by CMake at configure time (README.md is a configure dependency), so
that the blocks are built with the library as a user's program is; tests/readme/readme_test.py
runs them.

Usage: extract_cpp.py README.md OUT_DIR   (writes OUT_DIR/readme_block_<k>.cc, k = 1, 2, ...)
"""
import os
import re
import sys

readme, out_dir = sys.argv[1:3]
blocks = re.findall(r"^```cpp\n(.*?)^```", open(readme, encoding="utf-8").read(), re.S | re.M)
os.makedirs(out_dir, exist_ok=True)
for old in os.listdir(out_dir):
    if re.fullmatch(r"readme_block_\d+\.cc", old):
        os.remove(os.path.join(out_dir, old))
for k, block in enumerate(blocks, 1):
    lines = block.splitlines()
    includes = [l for l in lines if l.startswith("#include")]
    body = [l for l in lines if not l.startswith("#include")]
    text = (f"// README.md's C++ block {k}, as written (tests/readme/extract_cpp.py)\n" +
            "\n".join(includes) + "\n\nint main() {\n" +
            "\n".join("  " + l if l else "" for l in body) + "\n  return 0;\n}\n")
    path = os.path.join(out_dir, f"readme_block_{k}.cc")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
print(len(blocks))
