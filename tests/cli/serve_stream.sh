#!/usr/bin/env bash
# `heed serve`'s streaming route and the page's microphone, on a causal recognizer of the tone
# task (tests/support/tones.h: "words" of a-e, each letter a tone) trained here: a stream posted
# in 100 ms chunks of 16-bit PCM gives the offline transcript as its final, and partial results
# before its end; float32 at 48 kHz is converted as it comes; bad chunks, parameters and
# sessions get 4xx naming them; the session limit is 503, an idle session is closed; and the page
# in headless Chromium, its microphone Chromium's fake capture device playing a WAV file, shows
# the file's words before the file has ended (the audio read when each was shown); heed report
# --latency draws the dev set's streams in two chunk sizes as WER against word delay. A MoChA
# recognizer streams on the same route and page, its view each unit's attention stop; served
# with --ctc-lookahead it decodes jointly with CTC, and a recognizer that cannot is refused.
# Run by ctest: serve_stream.sh HEED
set -euo pipefail
heed=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $* (in $work)" >&2; exit 1; }
# shellcheck source=serve_start.sh
source "$here/serve_start.sh"

# the tone task: train (400) and dev (30) utterances, and the microphone's file: three words
# apart, then a second of quiet
python3 - "$work" <<'PY'
import json, math, random, struct, sys, wave
work = sys.argv[1]
timings = open(work + "/dev.align.jsonl", "w")
rng = random.Random(1)
HZ = {"a": 400, "b": 700, "c": 1100, "d": 1600, "e": 2300}
def speak(word):
    x = []
    for c in word:
        x += [0.3 * math.sin(2 * math.pi * HZ[c] * k / 16000) + rng.gauss(0, 0.01) for k in range(2400)]
        x += [rng.gauss(0, 0.01) for _ in range(800)]
    return x
def write(path, x):
    w = wave.open(path, "wb"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes(b"".join(struct.pack("<h", max(-32768, min(32767, int(v * 32767)))) for v in x))
    w.close()
def word():
    return "".join(rng.choice("abcde") for _ in range(rng.randint(2, 5)))
quiet = lambda s: [rng.gauss(0, 0.01) for _ in range(int(s * 16000))]
for part, n in (("train", 400), ("dev", 30)):  # 1-3 words, 0.5 s of quiet between them
    with open("%s/%s.tsv" % (work, part), "w") as m:
        for i in range(n):
            ws = [word() for _ in range(rng.randint(1, 3))]
            x = speak(ws[0])
            for w in ws[1:]:
                x += quiet(0.5) + speak(w)
            write("%s/%s-%d.wav" % (work, part, i), x)
            m.write("%s-%d.wav\t%s\n" % (part, i, " ".join(ws)))
            if part == "dev":  # each word's end: its last tone's (the quiet after it aside)
                words, t = [], 0.0
                for k, w in enumerate(ws):
                    t += (0.5 if k else 0) + 0.2 * len(w)
                    words.append({"word": w, "start": t - 0.2 * len(w), "end": t - 0.05})
                timings.write(json.dumps({"id": str(i + 1), "seconds": len(x) / 16000,
                                          "words": words}) + "\n")
words = ["abc", "dea", "cbd"]
mic = quiet(0.3)
for w in words:
    mic += speak(w) + quiet(0.5)
write(work + "/mic.wav", mic + quiet(1.0))
open(work + "/mic.txt", "w").write(" ".join(words) + "\n")
PY
"$heed" --threads 1 train --model ctc --unidirectional --train-src "$work/train.tsv" \
  --valid-src "$work/dev.tsv" --num-mel-bins 23 --front-channels 8 --embed 48 --hidden 64 \
  --layers 2 --batch 16 --lr 3e-3 --max-steps 500 --epochs 100 --patience 100 --valid-every 250 \
  --valid-max 20 \
  --save "$work/tones" > "$work/train.log" 2>&1 || fail "training: $(tail -3 "$work/train.log")"
"$heed" --threads 1 train --model ctc --train-src "$work/train.tsv" --valid-src "$work/dev.tsv" \
  --num-mel-bins 23 --front-channels 8 --embed 8 --hidden 8 --layers 1 --batch 16 \
  --max-steps 1 --save "$work/bi" > "$work/bi.log" 2>&1 || fail "training: $(tail -3 "$work/bi.log")"
# a joint CTC-MoChA recognizer over a causal listener: by attention alone it streams its first
# word long before the end (and stops there: the quiet after it ends its output)
"$heed" --threads 1 train --model rnn --attention mocha --chunk 4 --monotonic-noise 4 \
  --monotonic-bias -2 --ctc-weight 0.3 --dropout 0.2 --unidirectional --train-src "$work/train.tsv" \
  --valid-src "$work/dev.tsv" --num-mel-bins 23 --front-channels 8 --embed 48 --hidden 64 \
  --layers 2 --attn-dim 32 --tgt-embed 16 --dec-hidden 64 --batch 16 --lr 3e-3 --max-steps 1500 \
  --epochs 1000 --patience 100 --lr-patience 1000 --valid-every 250 --valid-max 20 \
  --save "$work/mocha" > "$work/mocha.log" 2>&1 || fail "training: $(tail -3 "$work/mocha.log")"

# starts the server with the given flags; sets pid and port
start() {
  serve_start "$work/serve.err" "$heed" --model tones="$work/tones" --model bi="$work/bi" \
    --model mocha="$work/mocha" "$@"
}
start --max-streams 2 --stream-idle-ms 1500

offline=$("$heed" --threads 1 transcribe --model "$work/tones" "$work/mic.wav")
# (a space unit may follow the last word: the quiet after it)
[ "$(echo $offline)" = "$(cat "$work/mic.txt")" ] || fail "the tone model did not learn: '$offline'"
python3 - "$port" "$work" "$offline" <<'PY' || fail "the streaming route"
import json, struct, sys, time, urllib.request, urllib.error, wave
port, work, offline = sys.argv[1], sys.argv[2], sys.argv[3]
def call(path, data=b"", method="POST"):
    r = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), data=data, method=method)
    try:
        with urllib.request.urlopen(r) as f:
            return f.status, json.loads(f.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
w = wave.open(work + "/mic.wav")
pcm = w.readframes(w.getnframes())
seconds = w.getnframes() / 16000
# 16-bit PCM in 100 ms chunks: partials before the end, the final = the offline transcript
st, a = call("/stream?model=tones&encoding=s16&view=1")
assert st == 200 and a["results"] == [] and len(a["units"]) > 5 and a["bins"] == 23, (st, a)
sid, step, results, frames, probs = a["session"], 3200, [], 0, 0
for i in range(0, len(pcm), step):
    last = i + step >= len(pcm)
    st, r = call("/stream/%s%s" % (sid, "?end=1" if last else ""), pcm[i:i + step])
    assert st == 200, r
    results += r["results"]
    frames += len(r["frames"])
    probs += len(r["probs"])
    assert all(len(f) == 23 for f in r["frames"]) and all(len(p) == len(a["units"]) for p in r["probs"])
finals = [x for x in results if x["type"] == "final"]
assert len(finals) == 1 and finals[0]["text"] == offline, finals
assert [x["word"] for x in finals[0]["words"]] == offline.split(), finals
partials = [x for x in results if x["type"] == "partial"]
first = next(x for x in partials if x["stable"].startswith("abc"))
assert first["audio"] < 1.5, first  # "abc" ends at 0.9 s
assert abs(frames - round(seconds * 100)) <= 3 and abs(probs - frames / 4) <= 3, (frames, probs)
assert r.get("closed") is True
st, r = call("/stream/" + sid, pcm[:3200])
assert st == 404 and "no open stream" in r["error"], (st, r)
# float32 at 48 kHz (each sample three times: the same sound), converted as it comes
x = [v / 32768 for v in struct.unpack("<%dh" % (len(pcm) // 2), pcm)]
f32 = struct.pack("<%df" % (3 * len(x)), *[v for v in x for _ in range(3)])
st, a = call("/stream?model=tones&sample_rate=48000", f32[:48000])
assert st == 200, a
st, r = call("/stream/%s?end=1" % a["session"], f32[48000:])
assert st == 200 and r["results"][-1]["type"] == "final", r
assert r["results"][-1]["text"] == offline, r["results"][-1]
# refusals, each naming what is wrong
def refused(status, path, data, words):
    st, r = call(path, data)
    assert st == status and words in r["error"], (path, st, r)
refused(400, "/stream?model=tones&encoding=u8", b"", "encoding must be f32")
refused(400, "/stream?model=tones&sample_rate=5", b"", "sample_rate must be an integer")
refused(400, "/stream?model=tones&beem=4", b"", "beem")
refused(400, "/stream?model=tones", b"abc", "not whole float32 samples")
refused(400, "/stream?model=tones", struct.pack("<f", float("nan")), "not a number")
refused(400, "/stream?model=bi", b"", "--unidirectional")
refused(404, "/stream?model=nope", b"", "no recognizer named 'nope'")
refused(404, "/stream/0123abcd", b"", "no open stream")
st, r = call("/stream", method="GET")
assert st == 405, (st, r)
# two sessions at most (--max-streams 2); closing one makes room; an idle one is closed
ids = [call("/stream?model=tones&encoding=s16")[1]["session"] for _ in range(2)]
refused(503, "/stream?model=tones", b"", "--max-streams")
assert call("/stream/" + ids[0], method="DELETE")[0] == 200
assert call("/stream/" + ids[0], method="DELETE")[0] == 404
st, a = call("/stream?model=tones&encoding=s16")
assert st == 200, a
time.sleep(2)  # --stream-idle-ms 1500
st, r = call("/stream/" + a["session"], pcm[:3200])
assert st == 404 and "idle" in r["error"], (st, r)
assert call("/stream?model=tones")[0] == 200  # the idle ones made room
print("stream route: %d partials, final '%s'" % (len(partials), finals[0]["text"]))
PY
curl -s "http://127.0.0.1:$port/metrics" | grep -q 'route="/stream"' || fail "no /stream series in /metrics"

# an attention recognizer's stream: the view has each unit written and the position its
# attention stopped on, heard by then and never behind the last; the final is the offline one
mocha=$("$heed" --threads 1 transcribe --model "$work/mocha" --ctc-weight 0 "$work/mic.wav")
python3 - "$port" "$work" "$mocha" <<'PY' || fail "the streaming route on an attention recognizer"
import json, sys, urllib.request, wave
port, work, offline = sys.argv[1], sys.argv[2], sys.argv[3]
def call(path, data=b""):
    with urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%s%s" % (port, path), data=data, method="POST")) as f:
        return json.loads(f.read())
w = wave.open(work + "/mic.wav")
pcm = w.readframes(w.getnframes())
a = call("/stream?model=mocha&encoding=s16&view=1")
assert a["alignment"] == "attention" and a["blank"] == -1, a
sid, step, heard, stops, finals, early = a["session"], 3200, 0, [], [], 0
for i in range(0, len(pcm), step):
    last = i + step >= len(pcm)
    r = call("/stream/%s%s" % (sid, "?end=1" if last else ""), pcm[i:i + step])
    assert r["probs"] == [] and len(r["frames"]) > 0, r
    heard += r["positions"]
    for unit, stop in r["stops"]:
        assert (stops[-1][1] if stops else 0) <= stop < heard, (stops, unit, stop, heard)
        stops.append((unit, stop))
        early += not last
    finals += [x for x in r["results"] if x["type"] == "final"]
assert len(finals) == 1 and finals[0]["text"] == offline, (finals, offline)
assert "".join(a["units"][u] for u, _ in stops).replace("\u2581", " ") == offline, (stops, offline)
assert offline.strip() and early > 0, (offline, early)
print("attention stream: '%s', %d of %d units before the end" % (offline, early, len(stops)))
PY

# segments: with --endpoint-ms an attention recognizer's segment ends when its decoder writes
# </s> before the audio's end, or 400 ms after its last unit's stop with none since; a new
# decoder starts after it, the listener going on. Three words apart: three finals at least (one
# decoder, offline, writes one line), in order, each with words, each word inside its span
for how in "--ctc-weight 0" "--ctc-lookahead 0"; do
  # shellcheck disable=SC2086
  "$heed" --threads 1 transcribe --model "$work/mocha" $how --online --endpoint-ms 400 \
    "$work/mic.wav" > "$work/seg.jsonl" 2> "$work/err" || fail "transcribe --online: $(cat "$work/err")"
  python3 - "$work/seg.jsonl" <<'PY' || fail "an attention recognizer's segments ($how): $(cat "$work/seg.jsonl")"
import json, sys
finals = [json.loads(l) for l in open(sys.argv[1])]
assert len(finals) >= 3 and all(f["type"] == "final" and f["text"].strip() for f in finals)
assert finals[-1]["end"] <= finals[-1]["audio"], finals[-1]
for a, b in zip(finals, finals[1:]):
    assert b["segment"] == a["segment"] + 1 and b["start"] >= a["end"], (a, b)
for f in finals:
    assert all(f["start"] <= w["start"] <= w["end"] <= f["end"] for w in f["words"]), f
print("attention segments: " + " | ".join(f["text"] for f in finals))
PY
done

# heed report --latency: the dev set streamed in 40 and 640 ms chunks, WER against word delay
for c in 40 640; do
  "$heed" --threads 1 transcribe --model "$work/tones" --online --chunk-ms $c "$work/dev.tsv" \
    > "$work/c$c.jsonl" 2> /dev/null
done
"$heed" score --metric latency --ref "$work/dev.align.jsonl" --hyp "$work/c40.jsonl" > "$work/lat40"
"$heed" report --model "$work/tones" --src "$work/dev.tsv" --timings "$work/dev.align.jsonl" \
  --latency "$work/c640.jsonl" "$work/c40.jsonl" --out "$work/r.html" 2> "$work/err" ||
  fail "report --latency: $(cat "$work/err")"
python3 - "$work/r.html" "$work/lat40" <<'PY' || fail "report --latency: $(grep -A3 latency "$work/r.html")"
import re, sys
html = open(sys.argv[1]).read()
section = html[html.index('<h2 id="latency"'):html.index("</table>", html.index('<h2 id="latency"'))]
assert "WER against word delay" in section and section.count("<circle") == 2, "no two points"
rows = re.findall(r"<tr><td>(c\d+)</td><td>([\d.]+)</td><td>([-\d.]+)</td>", section)
assert [r[0] for r in rows] == ["c40", "c640"], rows  # ordered by delay: 40 ms chunks first
assert rows[0][1] == rows[1][1] and float(rows[0][1]) < 20, rows  # the same finals, learned
delay40, delay640 = float(rows[0][2]), float(rows[1][2])
assert -0.05 < delay40 < 0.2 and delay640 > delay40 + 0.1, rows
# the mean delay heed score --metric latency gives for the same file
assert "word delay mean %.3f s" % delay40 in open(sys.argv[2]).read(), open(sys.argv[2]).read()
PY
if "$heed" report --model "$work/tones" --src "$work/dev.tsv" --latency "$work/c40.jsonl" \
  --out "$work/r2.html" 2> "$work/err"; then fail "report --latency without --timings: exit 0"; fi
grep -q -- "--timings" "$work/err" || fail "report without --timings: $(cat "$work/err")"

# the page: the fake microphone plays mic.wav (looping), the page listens for 6 s; every word
# of the file is on the page before the file's 6.2 s have been read
# shellcheck source=chromium.sh
source "$here/chromium.sh"
need_chromium "$work" || fail "could not install chromium: $(tail -3 "$work/apt.log")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$work/chrome" --autoplay-policy=no-user-gesture-required
       --use-fake-ui-for-media-stream --use-fake-device-for-media-stream
       --use-file-for-fake-audio-capture="$work/mic.wav")
# what the page showed: its log of results, its words, the spectrogram's lit pixels and the
# alignment's yellow ones (an attention unit's cell at its stop)
shown='[...document.querySelectorAll("#stream-log li")].map(li => [li.dataset.type, +li.dataset.audio, li.dataset.text])
  .concat([["words", 0, document.getElementById("words").textContent],
           ["pixels", 0, String(document.getElementById("spectrogram").getContext("2d")
              .getImageData(0, 0, 800, 23).data.filter((v, i) => i % 4 == 1 && v > 0).length)],
           ["cells", 0, String(document.getElementById("alignment").getContext("2d")
              .getImageData(0, 0, 800, 96).data.filter((v, i, d) => i % 4 == 0 && v == 253 &&
                 d[i + 1] == 231 && d[i + 2] == 37).length)]])'
# listen_page MODEL: the page listening with MODEL for 6 s, what it showed in $work/page-MODEL.json
listen_page() {
  python3 "$here/cdp.py" "${flags[@]/#/--flag=}" --timeout 60 \
    --until 'document.body.dataset.listening === "done"' --eval "$shown" \
    "http://127.0.0.1:$port/?model=$1&mic=1&seconds=6" > "$work/page-$1.json" \
    2> "$work/chromium-$1.log" || fail "the page on $1: $(grep -v dbus "$work/chromium-$1.log" | tail -3)"
}
listen_page tones
python3 - "$work/page-tones.json" "$offline" <<'PY' || fail "the page: $(cat "$work/page-tones.json")"
import json, sys
rows = json.load(open(sys.argv[1]))
log = [r for r in rows if r[0] in ("partial", "final")]
words = sys.argv[2].split()
for w in words:  # each word shown while the file (6.2 s) was still playing
    when = [a for t, a, text in log if w in text.split()]
    assert when and min(when) < 6.2, (w, log)
page = next(r[2] for r in rows if r[0] == "words")
assert page.split()[:3] == words, page
pixels = int(next(r[2] for r in rows if r[0] == "pixels"))
assert pixels > 200 * 23, pixels  # the spectrogram drawn
print("page: %s, first word at %.2f s" % (page, min(a for t, a, text in log if words[0] in text.split())))
PY
# the page on the attention recognizer: its units shown long before the file's end, its words
# its stream's final, and under the spectrogram each unit's mark at its attention's stop (the
# yellow cells of the alignment)
listen_page mocha
python3 - "$work/page-mocha.json" <<'PY' || fail "the page on mocha: $(cat "$work/page-mocha.json")"
import json, sys
# the microphone's audio is the file's through the browser's resampling: the units may differ
# from the file's offline transcript, so the page is held to its own stream's
rows = json.load(open(sys.argv[1]))
log = [r for r in rows if r[0] in ("partial", "final")]
final = [text for t, a, text in log if t == "final"][-1]
first = min(a for t, a, text in log if text.strip())
assert first < 3.0, log  # the first unit on the page long before the file's 6.2 s end
page = next(r[2] for r in rows if r[0] == "words")
assert final.strip() and page.strip() == final.strip(), (page, final)
cells = int(next(r[2] for r in rows if r[0] == "cells"))
assert cells >= 40 * len(final.strip()), cells  # a cell per unit (4 x 12 px) at least
print("page on mocha: %s, its first unit at %.2f s, %d stop pixels" % (page, first, cells))
PY

# --ctc-lookahead: every recognizer served decodes joint CTC-MoChA, /transcribe as transcribe
# with the flag; a recognizer that cannot is refused at the start, named
kill "$pid"
wait "$pid" || fail "serve exited non-zero after SIGTERM"
pid=
serve_start "$work/serve2.err" "$heed" --model mocha="$work/mocha" --ctc-lookahead 0
joint=$("$heed" --threads 1 transcribe --model "$work/mocha" --ctc-lookahead 0 "$work/mic.wav")
served=$(curl -s --data-binary @"$work/mic.wav" "http://127.0.0.1:$port/transcribe?model=mocha" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["text"])')
[ "$served" = "$joint" ] && [ "$joint" != "$mocha" ] ||
  fail "serve --ctc-lookahead 0: '$served', transcribe: '$joint', attention alone: '$mocha'"
if "$heed" --threads 1 serve --port 0 --model tones="$work/tones" --ctc-lookahead 0 \
  2> "$work/refused.err"; then fail "serve --ctc-lookahead on a CTC model: exit 0"; fi
grep -q "tones: --ctc-lookahead needs a joint" "$work/refused.err" ||
  fail "serve --ctc-lookahead on a CTC model: $(cat "$work/refused.err")"

kill "$pid"
wait "$pid" || fail "serve exited non-zero after SIGTERM"
pid=
echo "serve_stream: ok"
