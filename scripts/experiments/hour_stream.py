#!/usr/bin/env python3
"""An hour of audio in one stream: the utterances of a speech manifest (test2016's 1,000) joined
with PAUSE seconds of quiet (noise at -60 dBFS), piped as raw 16-bit PCM into one
`heed transcribe --online` as fast as it reads. Prints the real-time factor per 10-minute window
(from the partial lines' "audio" and wall-clock "emitted"), the resident memory sampled every
10 s, the segments, and the WER of the joined finals against the joined transcripts (heed score
--normalise). Used for docs/RESULTS.md.

  scripts/experiments/hour_stream.py HEED MANIFEST OUT_DIR [-- transcribe flags...]

e.g. hour_stream.py build/heed $S/test.tsv out -- --model mocha --ctc-lookahead 0 --endpoint-ms 600
"""
import json
import os
import random
import struct
import subprocess
import sys
import threading
import time
import wave


def read_pcm(path):
    with wave.open(path) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1 or w.getframerate() != 16000:
            sys.exit("hour_stream: %s is not 16 kHz 16-bit mono" % path)
        return w.readframes(w.getnframes())


def main():
    argv = sys.argv[1:]
    flags = argv[argv.index("--") + 1:] if "--" in argv else []
    args = argv[:argv.index("--")] if "--" in argv else argv
    if len(args) != 3:
        sys.exit(__doc__)
    heed, manifest, out = args
    pause = float(os.environ.get("PAUSE", "0.5"))
    os.makedirs(out, exist_ok=True)
    base = os.path.dirname(os.path.abspath(manifest))
    rng = random.Random(1)
    audio, refs = bytearray(), []
    with open(manifest, encoding="utf-8") as m:
        for line in m:
            wav, text = line.rstrip("\n").split("\t", 1)
            audio += read_pcm(wav if os.path.isabs(wav) else os.path.join(base, wav))
            quiet = int(pause * 16000)
            audio += struct.pack("<%dh" % quiet, *(int(rng.gauss(0, 32.767)) for _ in range(quiet)))
            refs.append(text)
    seconds = len(audio) / 32000
    with open(os.path.join(out, "ref.txt"), "w", encoding="utf-8") as f:
        f.write(" ".join(refs) + "\n")
    cmd = [heed, "--threads", "1", "transcribe", "--online", "--input-format", "raw",
           "--sample-rate", "16000", "--partial"] + flags
    lines = open(os.path.join(out, "stream.jsonl"), "w", encoding="utf-8")
    err = open(os.path.join(out, "stream.err"), "w", encoding="utf-8")
    start = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=lines, stderr=err)
    rss = []

    def sample():
        while p.poll() is None:
            try:
                with open("/proc/%d/status" % p.pid) as s:
                    for row in s:
                        if row.startswith("VmRSS:"):
                            rss.append((time.time() - start, int(row.split()[1]) / 1024))
            except OSError:
                break
            time.sleep(10)

    threading.Thread(target=sample, daemon=True).start()
    p.stdin.write(bytes(audio))
    p.stdin.close()
    code = p.wait()
    wall = time.time() - start
    lines.close()
    if code != 0:
        sys.exit("hour_stream: heed exited %d: %s" % (code, open(err.name).read()))
    results = [json.loads(l) for l in open(lines.name, encoding="utf-8")]
    finals = [r for r in results if r["type"] == "final"]
    with open(os.path.join(out, "hyp.txt"), "w", encoding="utf-8") as f:
        f.write(" ".join(r["text"].strip() for r in finals) + "\n")
    score = subprocess.run([heed, "score", "--metric", "wer", "--normalise", "--json", "--ref",
                            os.path.join(out, "ref.txt"), "--hyp", os.path.join(out, "hyp.txt")],
                           check=True, capture_output=True, text=True).stdout
    # each window's RTF: the wall-clock moments the stream had read its start and its end
    marks = [(r["audio"], r["emitted"]) for r in results]
    print("audio %.1f s, wall %.1f s, %d segments" % (seconds, wall, len(finals)))
    print("real-time factor per 10-minute window:")
    for w0 in range(0, int(seconds), 600):
        inside = [(a, e) for a, e in marks if w0 <= a <= w0 + 600]
        if len(inside) >= 2:
            (a0, e0), (a1, e1) = inside[0], inside[-1]
            print("  %5d-%5d s: %.4f" % (w0, min(w0 + 600, seconds), (e1 - e0) / (a1 - a0)))
    print("resident memory (MB) at (s):", ", ".join("%.0f: %.1f" % x for x in rss))
    print("WER (normalised):", score.strip())
    print(open(err.name).read().strip())


if __name__ == "__main__":
    main()
