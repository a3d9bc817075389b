"""README.md's code, as written.

- Its C++ blocks (built by CMake as programs, tests/readme/extract_cpp.py) run.
- Its Python block runs, with two changes said here: heed.train gets max_steps=2 (the README's
  budgets are minutes) and its `save` directories are under the scratch directory.
- Every heed command of its shell blocks (continuation lines joined, comments dropped, the
  variables its blocks set expanded, `mpirun ...` and pipes around it taken away) is parsed by
  heed itself with --dump-config: each flag exists, each value has its flag's type, bounds and
  choices, each recipe is found. What they would then do is tested by the other tests.

The blocks run in a scratch directory laid out as the README assumes (the repository's recipes
beside ../shared/data), where the model directories the blocks name are the golden models' copies
(a wait-k model is trained for `g2p-waitk`) and the inputs they read are a few lines; a file an
earlier command writes (`--out F`, `> F`; the spoken corpus's manifests) is there, empty, for the
commands after it.

Usage: readme_test.py SOURCE_DIR HEED DATA_DIR [README_PROGRAM...]
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

source, heed, data = sys.argv[1:4]
programs = sys.argv[4:]
if not os.path.isdir(os.path.join(data, "multi30k")):
    print("no ../shared/data: the README's commands read it")
    sys.exit(77)
readme = open(os.path.join(source, "README.md"), encoding="utf-8").read()
golden = os.path.join(source, "tests", "golden", "models")

scratch = tempfile.mkdtemp(prefix="heed-readme-")
import atexit  # noqa: E402
atexit.register(shutil.rmtree, scratch, True)
root = os.path.join(scratch, "heed")  # the README's commands run at the repository's root
os.makedirs(root)
os.symlink(os.path.join(source, "recipes"), os.path.join(root, "recipes"))
os.symlink(os.path.dirname(os.path.abspath(data)), os.path.join(scratch, "shared"))
for name, model in {"en-de": "transformer", "g2p-a": "rnn-bahdanau", "g2p-b": "transformer",
                    "g2p-hard": "rnn-hard-exact", "sst2": "classifier-attention"}.items():
    shutil.copytree(os.path.join(golden, model), os.path.join(root, name))
with open(os.path.join(root, "test.en"), "w") as f:
    f.write("a man rides a bike .\ntwo dogs play .\na girl reads a book .\n")
words = os.path.join(source, "tests", "golden", "inputs", "cmudict.txt")
subprocess.run([heed, "--threads", "1", "train", "--model", "rnn", "--attention", "bahdanau",
                "--wait-k", "3", "--unidirectional", "--src-units", "char", "--tgt-units", "word",
                "--embed", "8", "--hidden", "8", "--batch", "8", "--epochs", "1",
                "--train-src", words, "--valid-src", words, "--save",
                os.path.join(root, "g2p-waitk"), "--quiet"], check=True)

if True:
    # C++ blocks
    n_cpp = len(re.findall(r"^```cpp\n", readme, re.M))
    assert len(programs) == n_cpp, f"{n_cpp} C++ blocks in README.md, {len(programs)} built"
    for p in programs:
        r = subprocess.run([p], cwd=root, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{os.path.basename(p)}: exit {r.returncode}\n{r.stderr}"
    # the Python block
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)
    assert len(blocks) == 1, len(blocks)
    prelude = (
        "import heed\n"
        "_train = heed.train\n"
        "def _short(*args, **kw):\n"
        "    kw['max_steps'] = 2\n"
        "    return _train(*args, **kw)\n"
        "heed.train = _short\n")
    r = subprocess.run([sys.executable, "-c", prelude + blocks[0]], cwd=root,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"the Python block: exit {r.returncode}\n{r.stderr[-3000:]}"
    assert os.path.isfile(os.path.join(root, "test.de")), "translate_file wrote nothing"
    for saved in ("g2p", "en-de-tf"):
        assert os.path.isfile(os.path.join(root, saved, "config.json")), saved

    # every heed command of the shell blocks, parsed by heed
    shell = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
    lines, block = [], []
    for line in shell.splitlines() + [""]:
        if line.startswith("    "):
            block.append(line[4:])
        elif block:
            lines.append(block)
            block = []
    env = {}
    checked = []
    for block in lines:
        pending = ""  # a quoted string may run over several lines (curl's JSON)
        for command in re.sub(r"\\\n\s*", " ", "\n".join(block)).splitlines():
            try:
                words_ = shlex.split(pending + command, comments=True)
                pending = ""
            except ValueError:  # no closing quotation yet
                pending += command + "\n"
                continue
            if not words_:
                continue
            if len(words_) == 1 and re.fullmatch(r"[A-Z]+=.*", words_[0]):
                k, v = words_[0].split("=", 1)
                env[k] = v
                continue
            words_ = [re.sub(r"\$([A-Z]+)", lambda m: env[m.group(1)], w) for w in words_]
            if words_[0] == "scripts/make-spoken-corpus.sh":  # its manifests, for what follows
                os.makedirs(os.path.join(root, words_[1]), exist_ok=True)
                for part in ("train", "dev", "test"):  # and their word timings
                    for ext in (".tsv", ".align.jsonl"):
                        open(os.path.join(root, words_[1], part + ext), "w").close()
            # the heed command of a pipeline, without redirections; mpirun's own flags dropped
            for part in " ".join(shlex.quote(w) for w in words_).split(" '|' "):
                ws = shlex.split(part)
                if "heed" not in ws:
                    continue
                ws = ws[ws.index("heed"):]
                out, made, skip = [], [], None
                for w in ws:
                    if skip:
                        if skip == ">":
                            made.append(w)
                        skip = None
                    elif w in ("<", ">", "<<<", "2>"):
                        skip = w
                    else:
                        out.append(w)
                made += [b for a, b in zip(out, out[1:]) if a.startswith("--") and
                         a.endswith("out") and not b.startswith("--")]
                checked.append((out, made))
    assert not pending, pending
    assert len(checked) > 50, len(checked)
    for ws, made in checked:
        flag = [] if ws[1:] in (["--help"], ["--version"]) else ["--dump-config"]
        r = subprocess.run([heed, *ws[1:], *flag], cwd=root, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, f"README: {' '.join(ws)}\n{r.stderr}"
        for f in made:  # what the command writes, later commands read: there for them
            path = os.path.join(root, f)
            if not os.path.exists(path) and os.path.isdir(os.path.dirname(path) or root):
                open(path, "w").close()
    print(f"README: {len(programs)} C++ blocks and the Python block ran; "
          f"{len(checked)} heed commands parse")
