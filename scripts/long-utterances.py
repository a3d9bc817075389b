#!/usr/bin/env python3
"""Long utterances from a spoken corpus, to test recognizers beyond the lengths they trained on
(Chorowski et al. 2015, section 5.1: attention trained on short utterances, tested on
concatenations). Reads a manifest (path<TAB>transcript, 16-bit PCM WAV) and its utt2spk (the
manifest's stem + .utt2spk, utterance ids = the WAV names' stems); joins each run of N
consecutive utterances of one speaker, in manifest order, with 0.3 s of silence between them,
and writes OUT/long-K.wav and OUT/long.tsv (the transcripts joined with spaces). Deterministic:
the same input gives the same bytes.

    scripts/long-utterances.py out/spoken-multi30k/test.tsv 4 out/long4
"""
import os
import sys
import wave


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    manifest, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if n < 1:
        sys.exit(f"long-utterances: N must be at least 1, got {n}")
    base = os.path.dirname(os.path.abspath(manifest))
    spk = {}
    with open(os.path.splitext(manifest)[0] + ".utt2spk", encoding="utf-8") as f:
        for line in f:
            utt, s = line.split()
            spk[utt] = s
    groups = {}  # speaker -> [(path, text)], in manifest order
    with open(manifest, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2:
                sys.exit(f"{manifest}:{number}: not path<TAB>transcript")
            path, text = fields
            utt = os.path.splitext(os.path.basename(path))[0]
            if utt not in spk:
                sys.exit(f"{manifest}:{number}: {utt} is not in the utt2spk file")
            groups.setdefault(spk[utt], []).append((os.path.join(base, path), text))
    os.makedirs(out, exist_ok=True)
    rows = []
    for speaker in sorted(groups):
        utts = groups[speaker]
        for start in range(0, len(utts) - n + 1, n):
            frames, texts, rate = [], [], None
            for path, text in utts[start:start + n]:
                with wave.open(path, "rb") as w:
                    if w.getsampwidth() != 2 or w.getnchannels() != 1:
                        sys.exit(f"{path}: not 16-bit mono PCM")
                    if rate not in (None, w.getframerate()):
                        sys.exit(f"{path}: a rate of {w.getframerate()} after {rate}")
                    rate = w.getframerate()
                    if frames:
                        frames.append(b"\0\0" * int(0.3 * rate))
                    frames.append(w.readframes(w.getnframes()))
                texts.append(text)
            name = f"long-{len(rows) + 1:05d}.wav"
            with wave.open(os.path.join(out, name + ".tmp"), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(rate)
                w.writeframes(b"".join(frames))
            os.replace(os.path.join(out, name + ".tmp"), os.path.join(out, name))
            rows.append(f"{name}\t{' '.join(texts)}\n")
    with open(os.path.join(out, "long.tsv.tmp"), "w", encoding="utf-8") as f:
        f.writelines(rows)
    os.replace(os.path.join(out, "long.tsv.tmp"), os.path.join(out, "long.tsv"))
    print(f"long-utterances: {len(rows)} utterances of {n} in {out}/long.tsv", file=sys.stderr)


if __name__ == "__main__":
    main()
