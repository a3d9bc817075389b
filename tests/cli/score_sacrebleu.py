"""`heed score` against sacreBLEU 2.6.0's own outputs (../shared/oracles/sacrebleu/scores.jsonl):
each line's score to the fourth decimal, its verbose line and its signature but the version,
through the command line a user types; the human line in sacreBLEU's text format; and the
refusals of options that do not go together.

Usage: score_sacrebleu.py HEED ORACLE_DIR DATA_DIR
"""
import json
import re
import subprocess
import sys

heed, oracle, data = sys.argv[1:4]


def score(args):
    return subprocess.run([heed, "score", *args], capture_output=True, text=True)


lines = [json.loads(line) for line in open(f"{oracle}/scores.jsonl")]
assert len(lines) == 28, len(lines)
for o in lines:
    args = ["--metric", o["metric"], "--ref", f"{data}/{o['ref']}", "--hyp",
            f"{oracle}/{o['hyp']}", "-w", "4", *o["options"].split()]
    j = json.loads(score([*args, "--json"]).stdout)
    where = f"{o['hyp']} {o['metric']} {o['options']}"
    assert f"{j['score']:.4f}" == f"{o['score']:.4f}", (where, j["score"], o["score"])
    sig, version = j["signature"].rsplit("|", 1)
    assert sig == o["signature"].rsplit("|", 1)[0], (where, j["signature"])
    assert re.fullmatch(r"version:heed-\d+\.\d+\.\d+", version), version
    assert j.get("verbose_score", "") == o["verbose_score"], (where, j.get("verbose_score"))
    # the human line is sacreBLEU's text format: NAME|SIGNATURE = SCORE VERBOSE
    human = score(args).stdout.strip()
    name = "BLEU" if o["metric"] == "bleu" else ("chrF2++" if "word-order" in o["options"] else "chrF2")
    want = f"{name}|{j['signature']} = {o['score']:.4f} {o['verbose_score']}".strip()
    assert human == want, (human, want)

ref, hyp = f"{data}/multi30k/raw/test_2016_flickr.de", f"{oracle}/test_2016_flickr.de.hyp1"
for bad, message in [
        (["--metric", "bleu", "--multi-bleu", "--tokenize", "13a"], "takes no --tokenize"),
        (["--metric", "chrf", "--tokenize", "intl"], "are for --metric bleu"),
        (["--metric", "bleu", "--chrf-word-order", "2"], "--chrf-word-order is for --metric chrf"),
        (["--metric", "bleu", "--tokenize", "13b"], "13a")]:
    r = score([*bad, "--ref", ref, "--hyp", hyp])
    assert r.returncode != 0 and message in r.stderr, (bad, r.returncode, r.stderr)
# multi-bleu: the text as given, no signature
r = score(["--metric", "bleu", "--multi-bleu", "--ref", ref, "--hyp", ref])
assert r.returncode == 0 and r.stdout.startswith("BLEU = 100.00 "), r.stdout
print(f"heed score equals sacreBLEU on {len(lines)} oracle lines")
