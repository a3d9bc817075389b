"""The Python package against the command line on the same models (tests/golden/models).

Run by ctest (CMakeLists.txt) with PYTHONPATH at build/python and HEED_BIN, HEED_GOLDEN and
HEED_DATA set; every comparison is with what `heed` itself prints for the same input.
"""
import json
import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import heed

BIN = os.environ["HEED_BIN"]
GOLDEN = os.environ["HEED_GOLDEN"]
DATA = os.environ.get("HEED_DATA", "")
MODELS = os.path.join(GOLDEN, "models")
WORDS = os.path.join(GOLDEN, "inputs", "cmudict.txt")
SST = os.path.join(GOLDEN, "inputs", "sst.txt")


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def cli(args, stdin_path=None):
    with open(stdin_path or os.devnull, "rb") as stdin:
        out = subprocess.run([BIN, "--threads", "1", *args], stdin=stdin, check=True,
                             capture_output=True)
    return out.stdout.decode("utf-8").splitlines()


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("model", ["rnn-bahdanau", "transformer", "conv", "ctc"])
def test_translate_batch_equals_cli(model, tmp_path):
    m = os.path.join(MODELS, model)
    att = tmp_path / "att.jsonl"
    nbest = cli(["translate", "--model", m, "--beam", "4", "--n-best", "2", "--attention-out",
                 str(att)], WORDS)
    cli_att = read_jsonl(att)
    t = heed.Translator(m, threads=1)
    results = t.translate_batch(lines(WORDS), beam_size=4, num_hypotheses=2,
                                return_scores=True, return_attention=True)
    assert len(results) == len(lines(WORDS))
    k = 0
    for i, r in enumerate(results):
        assert len(r.hypotheses) == 2
        for h in range(2):
            ident, _, f0, score = (x.strip() for x in nbest[k].split("|||"))
            assert int(ident) == i
            assert f0 == f"F0= {r.log_probs[h]:.5f}"
            assert score == f"{r.scores[h]:.5f}"
            a = cli_att[k]
            assert a["src"] == r.source
            # the CLI names the EOS (or a CTC model's blank) row
            assert a["out"][: len(r.hypotheses[h])] == r.hypotheses[h]
            assert r.attention[h].dtype == np.float32
            assert r.attention[h].shape == (len(a["attention"]), len(r.source))
            np.testing.assert_allclose(r.attention[h], np.array(a["attention"]), rtol=0,
                                       atol=1e-6)
            k += 1
    assert k == len(nbest)


def test_greedy_and_translate_file_equal_cli(tmp_path):
    m = os.path.join(MODELS, "rnn-bahdanau")
    expected = cli(["translate", "--model", m], WORDS)
    t = heed.Translator([m], threads=1)
    out = tmp_path / "out.txt"
    stats = t.translate_file(WORDS, str(out))
    assert lines(out) == expected
    assert stats["sentences"] == len(expected) and stats["tokens"] > 0
    # n-best: the Moses/Marian lines heed translate --n-best writes
    nbest = cli(["translate", "--model", m, "--beam", "3", "--n-best", "2"], WORDS)
    t.translate_file(WORDS, str(out), beam_size=3, num_hypotheses=2)
    assert lines(out) == nbest
    greedy = t.translate_batch(lines(WORDS))
    # a G2P model's line is "WORD  PH PH ...": the units after the word
    assert [r.hypotheses[0] for r in greedy] == [e.split("  ", 1)[1].split() for e in expected]
    assert greedy[0].scores == []  # only with return_scores
    assert greedy[0].attention == []  # only with return_attention
    iterated = list(t.translate_iterable(iter(lines(WORDS)), max_batch_size=4, read_batches=2))
    assert [r.hypotheses for r in iterated] == [r.hypotheses for r in greedy]
    # token lists, as CTranslate2 takes them: the units each result says it read give the same
    # translations; an unknown unit is <unk>, and a mix of the two kinds is a TypeError
    units = t.translate_batch([r.source for r in greedy], beam_size=3)
    assert [r.hypotheses for r in units] == [r.hypotheses for r in
                                             t.translate_batch(lines(WORDS), beam_size=3)]
    assert [r.source for r in units] == [r.source for r in greedy]
    assert t.translate_batch([("A", "B", "C")])[0].hypotheses == \
        t.translate_batch(["ABC"])[0].hypotheses
    assert t.translate_batch([["A", "\u2603", "C"]])[0].source == ["A", "\u2603", "C"]
    with pytest.raises(TypeError, match="list of token lists"):
        t.translate_batch([["A", "B"], "ABC"])
    with pytest.raises(ValueError, match="an empty unit"):
        t.translate_batch([["A", ""]])


def test_ensemble_and_int8_equal_cli():
    ms = [os.path.join(MODELS, n) for n in ("rnn-bahdanau", "transformer")]
    expected = cli(["translate", "--model", *ms, "--beam", "3"], WORDS)
    got = heed.Translator(ms, threads=1).translate_batch(lines(WORDS), beam_size=3)
    assert [" ".join(r.hypotheses[0]) for r in got] == [e.split("  ", 1)[1] for e in expected]
    m = os.path.join(MODELS, "transformer")
    expected = cli(["translate", "--model", m, "--compute-type", "int8"], WORDS)
    got = heed.Translator(m, threads=1, compute_type="int8").translate_batch(lines(WORDS))
    assert [" ".join(r.hypotheses[0]) for r in got] == [e.split("  ", 1)[1] for e in expected]


def test_score_batch_equals_cli(tmp_path):
    m = os.path.join(MODELS, "transformer")
    words = lines(WORDS)
    sources = [w.split("  ")[0] for w in words]
    targets = [w.split("  ")[1] for w in words]
    src, tgt, att = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "att.jsonl"
    src.write_text("\n".join(sources) + "\n")
    tgt.write_text("\n".join(targets) + "\n")
    expected = cli(["translate", "--model", m, "--score-target", str(tgt), "--word-scores",
                    "--attention-out", str(att)], str(src))
    cli_att = read_jsonl(att)
    got = heed.Translator(m, threads=1).score_batch(sources, targets, return_attention=True)
    assert len(got) == len(expected) == len(cli_att) == len(words)
    for r, e, a, target in zip(got, expected, cli_att, targets):
        total, words_scores = e.split("\t")
        assert total == f"{r.log_prob:.5f}"
        assert words_scores.split() == [f"{x:.5f}" for x in r.log_probs]
        assert r.tokens == target.split()
        assert len(r.log_probs) == len(r.tokens) + 1
        assert r.log_prob == pytest.approx(sum(r.log_probs), abs=1e-4)
        assert r.attention.shape == (len(r.tokens) + 1, len(r.source))
        np.testing.assert_allclose(r.attention, np.array(a["attention"]), rtol=0, atol=1e-6)


def test_classifier_equals_cli(tmp_path):
    m = os.path.join(MODELS, "classifier-attention")
    att = tmp_path / "att.jsonl"
    expected = cli(["classify", "--model", m, "--probs", "--attention-out", str(att)], SST)
    cli_att = read_jsonl(att)
    c = heed.Classifier(m, threads=1)
    assert c.num_classes == 2
    got = c.classify(lines(SST), return_attention=True)
    for p, e, a in zip(got, expected, cli_att):
        label, probs = e.split("\t")
        assert p.label == int(label)
        assert p.probabilities.dtype == np.float32 and p.probabilities.shape == (2,)
        assert probs.split() == [f"{x:.4f}" for x in p.probabilities]
        assert p.tokens == a["tokens"]
        np.testing.assert_allclose(p.attention, np.array(a["attention"]), rtol=0, atol=1e-6)
        assert p.redundancy == pytest.approx(a["redundancy"], abs=1e-6)
    assert c.classify(lines(SST)[:2])[0].attention is None


def test_an_ensemble_of_classifiers_equals_cli():
    ms = [os.path.join(MODELS, n) for n in ("classifier-attention", "classifier-transformer")]
    expected = cli(["classify", "--model", *ms, "--probs"], SST)
    c = heed.Classifier(ms, threads=1)
    singles = [heed.Classifier(m, threads=1).classify(lines(SST)) for m in ms]
    for p, e, a, b in zip(c.classify(lines(SST)), expected, *singles):
        label, probs = e.split("\t")
        assert p.label == int(label)
        assert probs.split() == [f"{x:.4f}" for x in p.probabilities]
        np.testing.assert_allclose(p.probabilities, (a.probabilities + b.probabilities) / 2,
                                   rtol=0, atol=1e-6)


def test_missing_model_and_bad_options(tmp_path):
    with pytest.raises(FileNotFoundError):
        heed.Translator(str(tmp_path / "no-such-model"))
    with pytest.raises(FileNotFoundError):
        heed.Classifier(str(tmp_path / "no-such-model"))
    # a directory without the model's files: the missing config.json, by name
    with pytest.raises(FileNotFoundError, match="config.json"):
        heed.Translator(str(tmp_path))
    m = os.path.join(MODELS, "rnn-bahdanau")
    with pytest.raises(ValueError, match="compute_type"):
        heed.Translator(m, compute_type="float16")
    with pytest.raises(TypeError):  # keyword-only
        heed.Translator(m, 1)
    # the CLI's load-time overrides, refused (naming the directory) for a model they do not fit
    with pytest.raises(ValueError, match="rnn-bahdanau: --hard-marginal needs a model with hard"):
        heed.Translator(m, hard_marginal=True)
    with pytest.raises(ValueError, match="rnn-bahdanau: --wait-k 3 needs a wait-k model"):
        heed.Translator(m, wait_k=3)
    t = heed.Translator(m, threads=1)
    with pytest.raises(ValueError, match="beam_size"):
        t.translate_batch(["ABC"], beam_size=0)
    with pytest.raises(ValueError, match="num_hypotheses"):
        t.translate_batch(["ABC"], beam_size=2, num_hypotheses=3)
    with pytest.raises(ValueError, match="length_penalty"):
        t.translate_batch(["ABC"], length_penalty=float("nan"))
    with pytest.raises(ValueError, match=r"sources\[1\]"):
        t.translate_batch(["ABC", "A\nB"])
    with pytest.raises(ValueError, match="targets"):
        t.score_batch(["ABC"], ["AH", "B"])
    # the library's one set of decoding limits (decode/limits.h), named as Python names them
    with pytest.raises(ValueError, match=r"beam_size \(--beam\) must be in 1..1024, got 100000"):
        t.translate_batch(["ABC"], beam_size=100000)
    with pytest.raises(ValueError, match=r"max_len_ratio \(--max-len-ratio\) must be in \(0, 1000\]"):
        t.translate_batch(["ABC"], max_len_ratio=1e20)
    with pytest.raises(ValueError, match=r"max_batch_size \(--batch\) must be in 1..4096"):
        t.translate_batch(["ABC"], max_batch_size=100000)
    with pytest.raises(ValueError, match="threads must be in 0..1024"):
        heed.Translator(m, threads=100000)
    with pytest.raises(ValueError, match="threads must be in 0..1024"):
        heed.Classifier(os.path.join(MODELS, "classifier-attention"), threads=100000)
    # a blank line is an empty translation, as CTranslate2's
    blank = t.translate_batch(["ABC", "", "   "])
    assert blank[1].texts == [""] and blank[1].hypotheses == [[]] and blank[2].texts == [""]
    assert blank[0].texts == t.translate_batch(["ABC"])[0].texts
    with pytest.raises(FileNotFoundError):
        t.translate_file(str(tmp_path / "missing.txt"), str(tmp_path / "out.txt"))
    assert not (tmp_path / "out.txt").exists()
    # a truncated model file: heed's message, as ValueError
    broken = tmp_path / "broken"
    shutil.copytree(m, broken)
    data = (broken / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="model.safetensors"):
        heed.Translator(str(broken))


def test_gil_released_while_decoding():
    m = os.path.join(MODELS, "transformer")
    t = heed.Translator(m, threads=1)
    words = lines(WORDS) * 800  # 32,000 sentences: long enough to watch the main thread run
    span = {}

    def work():
        span["start"] = time.perf_counter()
        t.translate_batch(words, beam_size=4)
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    duration = span["end"] - span["start"]
    assert duration > 0.2, f"decoding took only {duration:.3f} s: too short to test"
    during = [x for x in ticks if span["start"] < x < span["end"]]
    # the main thread kept running: samples all through the call, no gap near its length
    assert len(during) > 1000
    gaps = np.diff([span["start"], *during, span["end"]])
    assert gaps.max() < 0.5 * duration


def test_train_from_dict_and_recipe(tmp_path):
    if not os.path.isdir(DATA):
        pytest.skip(f"no shared data at {DATA}")
    cmu = os.path.join(DATA, "cmudict", "cmudict-0.7b.train-dev-1-21")
    save = tmp_path / "m"
    heed.train({"model": "rnn", "train_src": cmu, "valid_src": cmu, "src-units": "char",
                "tgt-units": "word", "embed": 16, "tgt_embed": 16, "hidden": 16,
                "dec-hidden": 32, "attn-dim": 16, "batch": 32, "valid-max": 20,
                "max-steps": 30, "seed": 7, "save": str(save)}, threads=1)
    # the CLI with the same flags trains the same model
    cli_save = tmp_path / "cli"
    cli(["train", "--model", "rnn", "--train-src", cmu, "--valid-src", cmu, "--src-units", "char",
         "--tgt-units", "word", "--embed", "16", "--tgt-embed", "16", "--hidden", "16",
         "--dec-hidden", "32", "--attn-dim", "16", "--batch", "32", "--valid-max", "20",
         "--max-steps", "30", "--seed", "7", "--save", str(cli_save)])
    assert (save / "model.safetensors").read_bytes() == (cli_save / "model.safetensors").read_bytes()
    expected = cli(["translate", "--model", str(cli_save)], WORDS)
    got = heed.Translator(str(save), threads=1).translate_batch(lines(WORDS))
    assert [" ".join(r.hypotheses[0]) for r in got] == [e.split("  ", 1)[1] for e in expected]
    # a recipe with overrides (flags win), and a flag the recipe file does not know
    recipe = tmp_path / "r.toml"
    recipe.write_text('[train]\nmodel = "transformer"\nd-model = 16\nheads = 2\nff = 32\n'
                      'layers = 1\nmax-steps = 1000\n[translate]\nbeam = 5\n')
    heed.train(str(recipe), train_src=cmu, valid_src=cmu, src_units="char", tgt_units="word",
               max_steps=5, valid_max=10, save=str(tmp_path / "tf"), threads=1)
    log = [json.loads(x) for x in open(tmp_path / "tf" / "train.jsonl")]
    assert log[-1]["step"] == 5
    with pytest.raises(ValueError, match="no-such-flag"):
        heed.train({"no-such-flag": 1, "save": str(tmp_path / "x")})
    with pytest.raises(ValueError, match="heads"):
        heed.train({"model": "transformer", "d-model": 16, "heads": 3, "train-src": cmu,
                    "valid-src": cmu, "save": str(tmp_path / "y")}, threads=1)
    with pytest.raises(FileNotFoundError):
        heed.train(str(tmp_path / "missing.toml"))
    with pytest.raises(FileNotFoundError):
        heed.train({"train-src": str(tmp_path / "missing.txt"), "save": str(tmp_path / "z")})


def test_train_keywords_are_the_flags_typed_and_bounded(tmp_path):
    save = str(tmp_path / "never")
    bad = [({"heads": "2"}, "heads takes an int"),
           ({"dropout": True}, "dropout takes a number"),
           ({"hops": 0}, "--hops: Value 0 not in range 1 to 1024"),
           ({"label_smoothing": 1.5}, "--label-smoothing: Value 1.5 not in range"),
           ({"unidirectional": 1}, "unidirectional is a switch"),
           ({"attention": "nope"}, "unknown --attention 'nope'"),
           ({"kim_widths": [3, "4"]}, "kim-widths takes a list of ints"),
           ({"model": 3}, "model takes a string"),
           ({"bench": True}, "the command line's"),
           ({"no_such_flag": 1}, "unknown option 'no-such-flag'")]
    for options, message in bad:
        with pytest.raises(ValueError, match=message):
            heed.train({**options, "save": save})
    assert not os.path.exists(save)


def test_train_a_classifier_as_the_cli_does(tmp_path):
    if not os.path.isdir(DATA):
        pytest.skip(f"no shared data at {DATA}")
    sst = os.path.join(DATA, "sst")
    common = {"task": "classify", "train": os.path.join(sst, "stsa.binary.dev"),
              "valid": os.path.join(sst, "stsa.binary.dev"), "src-vocab-size": 500,
              "embed": 8, "kim-maps": 4, "batch": 32, "max-steps": 6, "seed": 3}
    # the alias, a list, a switch by its negation's name and a name, from Python
    result = heed.train({**common, "model": "kim-cnn", "kim_widths": [2, 3],
                         "lr_schedule": "inverse-sqrt", "warmup": 2,
                         "save": str(tmp_path / "py")}, threads=1)
    assert result["steps"] == 6 and result["metric"] and result["save"] == str(tmp_path / "py")
    config = json.loads((tmp_path / "py" / "config.json").read_text())
    assert config["model"] == "kim-cnn" and config["encoder"]["widths"] == [2, 3]
    flags = [f"--{k}" if v is True else f"--{k}={v}" for k, v in common.items()]
    cli(["train", *flags, "--model", "kim-cnn", "--kim-widths", "2,3", "--lr-schedule",
         "inverse-sqrt", "--warmup", "2", "--save", str(tmp_path / "cli")])
    assert ((tmp_path / "py" / "model.safetensors").read_bytes()
            == (tmp_path / "cli" / "model.safetensors").read_bytes())
    # a BiLSTM through --task classify's alias-free default, one direction by "unidirectional"
    heed.train({**common, "hidden": 8, "attn-dim": 8, "hops": 2, "unidirectional": True,
                "save": str(tmp_path / "sa")}, threads=1)
    config = json.loads((tmp_path / "sa" / "config.json").read_text())
    assert config["model"] == "self-attentive" and config["bidirectional"] is False


def test_features_are_torchaudios_kaldi_fbank(tmp_path):
    torchaudio = pytest.importorskip("torchaudio")  # scripts/install-deps.sh torchaudio
    import torch
    import wave
    import torchaudio.compliance.kaldi as kaldi
    rng = np.random.default_rng(7)
    t = np.arange(24000) / 16000
    x = 0.2 * np.sin(2 * np.pi * (300 + 1500 * t) * t) + 0.03 * rng.standard_normal(t.size)
    path = tmp_path / "a.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())
    wav, rate = torchaudio.load(str(path))
    ref = kaldi.fbank(wav.to(torch.float64) * 32768, num_mel_bins=80, dither=0.0,
                      energy_floor=0.0, sample_frequency=rate).numpy()
    # float64: the 1e-3; float32 (the default): its rounding in bins far under the peak
    for precision, worst, mean in (("float64", 1e-3, 1e-5), ("float32", 3e-3, 2e-5)):
        out = tmp_path / f"{precision}.npy"
        cli(["features", str(path), "--precision", precision, "--out", str(out)])
        ours = np.load(out)
        assert ours.dtype == np.float32 and ours.shape == ref.shape == (148, 80)
        assert np.abs(ours - ref).max() < worst and np.abs(ours - ref).mean() < mean, precision


def tone_word(word, rng):
    """A "word" of letters a-e spoken as tones: each letter 150 ms at its pitch, 50 ms quiet."""
    hz = {"a": 400, "b": 700, "c": 1100, "d": 1600, "e": 2300}
    parts = []
    for ch in word:
        t = np.arange(int(0.15 * 16000)) / 16000
        parts += [0.3 * np.sin(2 * np.pi * hz[ch] * t), np.zeros(int(0.05 * 16000))]
    x = np.concatenate(parts)
    return (x + 0.01 * rng.standard_normal(x.size)).astype(np.float32)


def write_wav(path, x):
    import wave
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((np.clip(x, -1, 32767 / 32768) * 32768).round().astype("<i2").tobytes())


def test_recognizer_equals_cli(tmp_path):
    rng = np.random.default_rng(5)
    words = ["".join(rng.choice(list("abcde"), size=rng.integers(2, 6))) for _ in range(240)]
    for name, part in (("train", words[:200]), ("dev", words[200:])):
        with open(tmp_path / f"{name}.tsv", "w") as f:
            for i, w in enumerate(part):
                write_wav(tmp_path / f"{name}{i}.wav", tone_word(w, rng))
                f.write(f"{name}{i}.wav\t{w}\n")
    heed.train({"model": "ctc", "train-src": str(tmp_path / "train.tsv"),
                "valid-src": str(tmp_path / "dev.tsv"), "embed": 32, "hidden": 32, "layers": 1,
                "num-mel-bins": 23, "front-channels": 4, "max-steps": 40, "lr": 3e-3,
                "save": str(tmp_path / "asr")}, threads=1)
    rec = heed.Recognizer(tmp_path / "asr", threads=1)
    paths = [str(tmp_path / f"dev{i}.wav") for i in range(5)]
    arrays = [tone_word(w, np.random.default_rng(9)) for w in ("abc", "eed")]
    out = rec.transcribe(paths + arrays, timestamps=True)
    assert len(out) == 7 and all(len(n) == 1 and "words" in n[0] for n in out)
    cli_out = cli(["transcribe", "--model", str(tmp_path / "asr"), *paths])
    assert cli_out == [n[0]["text"] for n in out[:5]]
    assert all(isinstance(n[0]["text"], str) for n in out[5:])
    with pytest.raises(ValueError, match="beam"):
        rec.transcribe(paths, n_best=2)
    rec8 = heed.Recognizer(tmp_path / "asr", threads=1, compute_type="int8")
    cli8 = cli(["transcribe", "--model", str(tmp_path / "asr"), "--compute-type", "int8", *paths])
    assert cli8 == [n[0]["text"] for n in rec8.transcribe(paths)]
    with pytest.raises(ValueError, match="compute_type"):
        heed.Recognizer(tmp_path / "asr", compute_type="int4")
    with pytest.raises(ValueError, match="not a speech recognizer"):
        heed.Recognizer(os.path.join(GOLDEN, "models", "rnn-bahdanau"))


def test_translate_flush_answers_each_line_as_it_is_read():
    # issue 68: `heed translate --flush` (on by default for a terminal) writes each line's
    # outputs before the next line is sent, with stdin still open; beam and n-best as batched
    import select
    m = os.path.join(MODELS, "rnn-bahdanau")
    words = lines(WORDS)[:3]
    batched = cli(["translate", "--model", m, "--beam", "3", "--n-best", "2"], WORDS)
    p = subprocess.Popen([BIN, "--threads", "1", "translate", "--model", m, "--beam", "3",
                          "--n-best", "2", "--flush"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)  # select() sees what is unread
    try:
        for i, w in enumerate(words):
            p.stdin.write((w + "\n").encode())
            p.stdin.flush()
            for k in range(2):
                ready, _, _ = select.select([p.stdout], [], [], 60)
                assert ready, f"no answer to line {i + 1} while stdin is open"
                assert p.stdout.readline().decode().rstrip("\n") == batched[2 * i + k]
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        p.kill()


def test_translator_keywords_and_the_lines_of_a_file(tmp_path):
    # issue 68: an unknown keyword is a TypeError naming it and the one meant (pybind11 dumped
    # its signature); translate_iterable takes open(path) as it is (each line's end dropped)
    t = heed.Translator(os.path.join(MODELS, "rnn-bahdanau"), threads=1)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'beam'; did you mean "
                                        r"'beam_size'\? \(its options: beam_size, "):
        t.translate_batch(["ABADI"], beam=2)
    with pytest.raises(TypeError, match="translate_iterable.*'nbest'"):
        list(t.translate_iterable(["ABADI"], nbest=2))
    # every option the check knows reaches the C++ function (the list cannot drift)
    defaults = dict(beam_size=1, num_hypotheses=1, length_penalty=1.0, max_decoding_length=0,
                    max_len_ratio=2.0, max_batch_size=32, max_input_length=1024,
                    return_scores=False, return_attention=False, attention_layer=-1,
                    attention_head=-1, replace_unknowns=False)
    assert set(defaults) == set(heed._TRANSLATE_OPTIONS)
    assert t.translate_batch(["ABADI"], **defaults)[0].hypotheses[0]
    f = tmp_path / "words.txt"
    f.write_bytes(b"ABADI\r\nABATING\nABBA")
    with open(f, encoding="utf-8", newline="") as lines_of_file:
        got = [r.hypotheses[0] for r in t.translate_iterable(lines_of_file)]
    want = [r.hypotheses[0] for r in t.translate_batch(["ABADI", "ABATING", "ABBA"])]
    assert got == want
