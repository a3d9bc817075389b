"""`heed import` on small checkpoints this test writes.

OpenNMT-py (`--format opennmt-py`): checkpoints as OpenNMT-py 3 saves them (torch.save of
{"model", "generator", "vocab", "opt"}, its state dict's names, an argparse.Namespace of options,
the vocabularies with <unk> and <blank> first), through Debian's torch; the imported model's
forced decodings score as OpenNMT-py's Transformer, computed here in numpy from its definition
(onmt/encoders/transformer.py, onmt/decoders/transformer.py, onmt/modules/embeddings.py), does,
and its greedy outputs are the same; options heed does not have are refused by name.

Marian (`--format marian`): a model.npz and vocabulary .yml written with numpy as Marian writes
them, against Marian's Transformer computed in numpy (src/models/transformer.h: sources ending
in </s>, the decoder starting from a zero embedding, its sinusoids, LayerNorm epsilon 1e-9),
post-norm with tied embeddings and pre-norm untied.
"""
import argparse
import collections
import os
import subprocess

import numpy as np
import pytest

import heed

try:  # Debian's python3-torch (scripts/install-deps.sh torchaudio): OpenNMT-py's checkpoints
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="python3-torch is not installed")
BIN = os.environ["HEED_BIN"]

SRC = ["<unk>", "<blank>", "<s>", "</s>", "a", "man", "dog", "runs", "rides", "the", "."]
TGT = ["<unk>", "<blank>", "<s>", "</s>", "ein", "mann", "hund", "läuft", "reitet", "der", "."]


def sinusoid(max_len, d):  # OpenNMT-py's PositionalEncoding buffer [max_len, 1, d]
    pos = np.arange(max_len)[:, None]
    div = np.exp(np.arange(0, d, 2) * -(np.log(10000.0) / d))
    pe = np.zeros((max_len, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe[:, None, :]


def checkpoint(path, d=16, heads=2, ff=24, layers=(2, 2), qkv_bias=False, seed=0, **opt):
    rng = np.random.default_rng(seed)
    sd = collections.OrderedDict()

    def t(*shape, scale=0.3):
        return torch.tensor(rng.normal(0, scale, shape), dtype=torch.float32)

    def linear(name, n_out, n_in, bias=True):
        sd[name + ".weight"] = t(n_out, n_in)
        if bias:
            sd[name + ".bias"] = t(n_out, scale=0.1)

    def norm(name):
        sd[name + ".weight"] = 1 + t(d, scale=0.1)
        sd[name + ".bias"] = t(d, scale=0.1)

    def attention(name):
        for p in ("linear_query", "linear_keys", "linear_values", "final_linear"):
            linear(f"{name}.{p}", d, d, bias=qkv_bias)

    for side, vocab in (("encoder", SRC), ("decoder", TGT)):
        sd[f"{side}.embeddings.make_embedding.emb_luts.0.weight"] = t(len(vocab), d)
        sd[f"{side}.embeddings.make_embedding.pe.pe"] = torch.tensor(sinusoid(64, d),
                                                                     dtype=torch.float32)
    for i in range(layers[0]):
        s = f"encoder.transformer.{i}"
        attention(s + ".self_attn")
        norm(s + ".layer_norm")
        linear(s + ".feed_forward.w_1", ff, d)
        linear(s + ".feed_forward.w_2", d, ff)
        norm(s + ".feed_forward.layer_norm")
    norm("encoder.layer_norm")
    for i in range(layers[1]):
        s = f"decoder.transformer_layers.{i}"
        attention(s + ".self_attn")
        norm(s + ".layer_norm_1")
        attention(s + ".context_attn")
        norm(s + ".layer_norm_2")
        linear(s + ".feed_forward.w_1", ff, d)
        linear(s + ".feed_forward.w_2", d, ff)
        norm(s + ".feed_forward.layer_norm")
    norm("decoder.layer_norm")
    generator = collections.OrderedDict(weight=t(len(TGT), d), bias=t(len(TGT), scale=0.1))
    options = dict(encoder_type="transformer", decoder_type="transformer", heads=heads,
                   enc_layers=layers[0], dec_layers=layers[1], position_encoding=True,
                   max_relative_positions=0, pos_ffn_activation_fn="relu",
                   self_attn_type="scaled-dot", norm_eps=1e-6, add_qkvbias=qkv_bias)
    options.update(opt)
    torch.save({"model": sd, "generator": generator, "vocab": {"src": SRC, "tgt": TGT},
                "opt": argparse.Namespace(**options)}, path)
    return {k: v.numpy().astype(np.float64) for k, v in sd.items()}, \
        {k: v.numpy().astype(np.float64) for k, v in generator.items()}, options


class OnmtTransformer:
    """OpenNMT-py's pre-norm Transformer, forward only, in numpy."""

    def __init__(self, sd, gen, opt):
        self.sd, self.gen, self.heads, self.eps = sd, gen, opt["heads"], opt["norm_eps"]

    def ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.sd[name + ".weight"] + self.sd[name + ".bias"]

    def lin(self, x, name):
        return x @ self.sd[name + ".weight"].T + self.sd.get(name + ".bias", 0)

    def mha(self, q_in, kv_in, name, causal):
        q, k, v = (self.lin(x, f"{name}.{p}") for x, p in
                   ((q_in, "linear_query"), (kv_in, "linear_keys"), (kv_in, "linear_values")))
        d = q.shape[1]
        dh = d // self.heads
        ctx = np.zeros_like(q)
        for h in range(self.heads):
            sl = slice(h * dh, (h + 1) * dh)
            a = (q[:, sl] / np.sqrt(dh)) @ k[:, sl].T
            if causal:
                a = a + np.triu(np.full(a.shape, -np.inf), 1)
            p = np.exp(a - a.max(-1, keepdims=True))
            ctx[:, sl] = (p / p.sum(-1, keepdims=True)) @ v[:, sl]
        return self.lin(ctx, name + ".final_linear")

    def ffn(self, x, name):
        h = np.maximum(self.lin(self.ln(x, name + ".layer_norm"), name + ".w_1"), 0)
        return self.lin(h, name + ".w_2") + x

    def embed(self, side, ids):
        e = self.sd[f"{side}.embeddings.make_embedding.emb_luts.0.weight"][ids]
        pe = self.sd[f"{side}.embeddings.make_embedding.pe.pe"][:len(ids), 0]
        return e * np.sqrt(e.shape[1]) + pe

    def greedy(self, src, limit=12):
        out = []
        while len(out) < limit:
            logp = self.distributions(src, out)[-1].copy()
            logp[[TGT.index("<s>"), TGT.index("<blank>")]] = -np.inf  # never written (heed's search)
            w = TGT[int(np.argmax(logp))]
            if w == "</s>":
                break
            out.append(w)
        return out

    def log_probs(self, src, tgt):
        logp = self.distributions(src, tgt)
        return [logp[t, TGT.index(w)] for t, w in enumerate(list(tgt) + ["</s>"])]

    def distributions(self, src, tgt):
        x = self.embed("encoder", [SRC.index(w) for w in src])
        i = 0
        while f"encoder.transformer.{i}.layer_norm.weight" in self.sd:
            s = f"encoder.transformer.{i}"
            h = self.ln(x, s + ".layer_norm")
            x = self.mha(h, h, s + ".self_attn", False) + x
            x = self.ffn(x, s + ".feed_forward")
            i += 1
        memory = self.ln(x, "encoder.layer_norm")
        ids = [TGT.index("<s>")] + [TGT.index(w) for w in tgt]
        y = self.embed("decoder", ids)
        i = 0
        while f"decoder.transformer_layers.{i}.layer_norm_1.weight" in self.sd:
            s = f"decoder.transformer_layers.{i}"
            h = self.ln(y, s + ".layer_norm_1")
            q = self.mha(h, h, s + ".self_attn", True) + y
            y = self.mha(self.ln(q, s + ".layer_norm_2"), memory, s + ".context_attn", False) + q
            y = self.ffn(y, s + ".feed_forward")
            i += 1
        logits = self.ln(y, "decoder.layer_norm") @ self.gen["weight"].T + self.gen["bias"]
        logp = logits - logits.max(-1, keepdims=True)
        return logp - np.log(np.exp(logp).sum(-1, keepdims=True))


def scores_and_decodes_as(model, reference, source_eos):
    """The imported model's forced-decoding scores are the reference's to 1e-5, and heed
    translate's greedy outputs are the reference's greedy outputs."""
    pairs = [("a man rides .", "ein mann reitet ."), ("the dog runs", "der hund läuft"),
             ("dog", "hund hund ."), (". a", "")]
    scored = heed.Translator(str(model), threads=1).score_batch([s for s, _ in pairs],
                                                               [t for _, t in pairs])
    for (s, t), got in zip(pairs, scored):
        assert got.tokens == t.split()
        assert got.source == s.split() + (["</s>"] if source_eos else [])
        np.testing.assert_allclose(got.log_probs, reference.log_probs(s.split(), t.split()),
                                   rtol=0, atol=1e-5, err_msg=f"{s} -> {t}")
    sources = ["a man rides .", "the dog runs", "man man man"]
    out = subprocess.run([BIN, "--threads", "1", "translate", "--model", str(model),
                          "--max-len-ratio", "1", "--max-length", "12"],
                         input="".join(x + "\n" for x in sources), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [" ".join(reference.greedy(x.split())) for x in sources]


def run_import(pt, out):
    return subprocess.run([BIN, "import", "--format", "opennmt-py", "--model", str(pt), "--out",
                           str(out)], capture_output=True, text=True)


@needs_torch
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_opennmt_py_import_scores_as_opennmt_py(tmp_path, qkv_bias):
    sd, gen, opt = checkpoint(tmp_path / "model.pt", qkv_bias=qkv_bias, seed=int(qkv_bias))
    r = run_import(tmp_path / "model.pt", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    # heed's specials first: <pad> (OpenNMT-py's <blank>), <s>, </s>, <unk>
    assert open(tmp_path / "m" / "tgt.vocab", encoding="utf-8").read().split("\n")[:5] == \
        ["<pad>", "<s>", "</s>", "<unk>", "ein"]
    scores_and_decodes_as(tmp_path / "m", OnmtTransformer(sd, gen, opt), source_eos=False)


@needs_torch
def test_opennmt_py_import_refusals(tmp_path):
    for opt, message in ((dict(max_relative_positions=16), "max_relative_positions"),
                         (dict(pos_ffn_activation_fn="gelu"), "pos_ffn_activation_fn gelu"),
                         (dict(encoder_type="rnn"), "encoder_type/decoder_type rnn")):
        checkpoint(tmp_path / "bad.pt", **opt)
        r = run_import(tmp_path / "bad.pt", tmp_path / "bad")
        assert r.returncode != 0 and message in r.stderr, (opt, r.stderr)
        assert not (tmp_path / "bad" / "config.json").exists()
    checkpoint(tmp_path / "ok.pt")
    assert run_import(tmp_path / "ok.pt", tmp_path / "ok").returncode == 0
    r = run_import(tmp_path / "ok.pt", tmp_path / "ok")
    assert r.returncode != 0 and "holds a model already" in r.stderr, r.stderr
    (tmp_path / "junk.pt").write_bytes(b"PK\x03\x04 not really")
    r = run_import(tmp_path / "junk.pt", tmp_path / "junk")
    assert r.returncode != 0 and "junk.pt" in r.stderr, r.stderr


# Marian: a model.npz and vocabulary .yml files as Marian writes them (numpy's savez, its
# parameter names, x W products, special:model.yml), written here with numpy alone

MARIAN_VOCAB = ["</s>", "<unk>", "a", "man", "dog", "runs", "rides", "the", ".", "ein", "mann",
                "hund", "läuft", "reitet", "der", "'quoted'"]


def marian_sinusoids(n, d):  # Marian's: sine then cosine halves, d/2 timescales
    half = d // 2
    v = np.arange(n)[:, None] * np.exp(-np.arange(half) * np.log(10000.0) / (half - 1))[None, :]
    return np.concatenate([np.sin(v), np.cos(v)], axis=1)


def marian_model(path, vocab_path, d=16, heads=2, ff=24, layers=(2, 2), pre_norm=False, tied=True,
                 seed=0, **yml):
    rng = np.random.default_rng(seed)
    w = {}

    def t(*shape, scale=0.3):
        return rng.normal(0, scale, shape).astype(np.float32)

    suffix = "_pre" if pre_norm else ""

    def norm(name):
        w[name + "_ln_scale" + suffix] = (1 + t(1, d, scale=0.1)).astype(np.float32)
        w[name + "_ln_bias" + suffix] = t(1, d, scale=0.1)

    def attention(name):
        for p in "qkvo":
            w[f"{name}_W{p}"], w[f"{name}_b{p}"] = t(d, d), t(1, d, scale=0.1)
        norm(name + "_Wo")

    def ffn(name):
        w[name + "_W1"], w[name + "_b1"] = t(d, ff), t(1, ff, scale=0.1)
        w[name + "_W2"], w[name + "_b2"] = t(ff, d), t(1, d, scale=0.1)
        norm(name + "_ffn")

    w["Wemb"] = t(len(MARIAN_VOCAB), d)
    for i in range(1, layers[0] + 1):
        attention(f"encoder_l{i}_self")
        ffn(f"encoder_l{i}_ffn")
    for i in range(1, layers[1] + 1):
        attention(f"decoder_l{i}_self")
        attention(f"decoder_l{i}_context")
        ffn(f"decoder_l{i}_ffn")
    if pre_norm:
        for side in ("encoder", "decoder"):
            w[side + "_top_ln_scale"] = (1 + t(1, d, scale=0.1)).astype(np.float32)
            w[side + "_top_ln_bias"] = t(1, d, scale=0.1)
    if not tied:
        w["decoder_ff_logit_out_W"] = t(d, len(MARIAN_VOCAB))
    w["decoder_ff_logit_out_b"] = t(1, len(MARIAN_VOCAB), scale=0.1)
    options = {"type": "transformer", "enc-depth": layers[0], "dec-depth": layers[1],
               "transformer-heads": heads, "transformer-dim-ffn": ff,
               "transformer-ffn-activation": "relu",
               "transformer-preprocess": "n" if pre_norm else '""',
               "transformer-postprocess": "da" if pre_norm else "dan",
               "transformer-postprocess-top": "n" if pre_norm else '""',
               "transformer-postprocess-emb": "d", "transformer-decoder-autoreg": "self-attention",
               "transformer-no-projection": "false", "tied-embeddings-all": "true"}
    options.update(yml)
    text = "".join(f"{k}: {v}\n" for k, v in options.items()) + "dim-vocabs:\n  - 16\n  - 16\n"
    w["special:model.yml"] = np.frombuffer(text.encode() + b"\0", dtype=np.int8)
    np.savez(path, **w)
    with open(vocab_path, "w", encoding="utf-8") as f:
        for i, tok in enumerate(MARIAN_VOCAB):
            quoted = "'" + tok.replace("'", "''") + "'" if "'" in tok else \
                ('"' + tok + '"' if tok.startswith("<") else tok)
            f.write(f"{quoted}: {i}\n")
    return {k: v.astype(np.float64) for k, v in w.items() if k != "special:model.yml"}


class MarianTransformer:
    """Marian's Transformer (src/models/transformer.h), forward only, in numpy."""

    def __init__(self, w, heads, pre_norm):
        self.w, self.heads, self.pre = w, heads, pre_norm
        self.sfx = "_pre" if pre_norm else ""

    def ln(self, x, name, sfx=None):
        sfx = self.sfx if sfx is None else sfx
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return ((x - mu) / np.sqrt(var + 1e-9) * self.w[name + "_ln_scale" + sfx][0]
                + self.w[name + "_ln_bias" + sfx][0])

    def mha(self, q_in, kv_in, name, causal):
        q, k, v = (x @ self.w[f"{name}_W{p}"] + self.w[f"{name}_b{p}"][0]
                   for x, p in ((q_in, "q"), (kv_in, "k"), (kv_in, "v")))
        dh = q.shape[1] // self.heads
        ctx = np.zeros_like(q)
        for h in range(self.heads):
            sl = slice(h * dh, (h + 1) * dh)
            a = q[:, sl] @ k[:, sl].T / np.sqrt(dh)
            if causal:
                a = a + np.triu(np.full(a.shape, -np.inf), 1)
            p = np.exp(a - a.max(-1, keepdims=True))
            ctx[:, sl] = (p / p.sum(-1, keepdims=True)) @ v[:, sl]
        return ctx @ self.w[name + "_Wo"] + self.w[name + "_bo"][0]

    def block(self, x, ln_name, f):  # "dan" after, or "n" before and "da" after
        if self.pre:
            return x + f(self.ln(x, ln_name))
        return self.ln(x + f(x), ln_name)

    def ffn(self, x, name):
        h = np.maximum(x @ self.w[name + "_W1"] + self.w[name + "_b1"][0], 0)
        return h @ self.w[name + "_W2"] + self.w[name + "_b2"][0]

    def distributions(self, src, tgt):
        d = self.w["Wemb"].shape[1]
        pe = marian_sinusoids(64, d)
        ids = [MARIAN_VOCAB.index(t) for t in src] + [0]  # the source ends in </s>
        x = self.w["Wemb"][ids] * np.sqrt(d) + pe[:len(ids)]
        i = 1
        while f"encoder_l{i}_self_Wq" in self.w:
            s = f"encoder_l{i}"
            x = self.block(x, s + "_self_Wo", lambda y: self.mha(y, y, s + "_self", False))
            x = self.block(x, s + "_ffn_ffn", lambda y: self.ffn(y, s + "_ffn"))
            i += 1
        if self.pre:
            x = self.ln(x, "encoder_top", "")
        # the decoder starts from a zero embedding
        y = np.vstack([np.zeros((1, d)), self.w["Wemb"][[MARIAN_VOCAB.index(t) for t in tgt]]])
        y = y * np.sqrt(d) + pe[:len(y)]
        i = 1
        while f"decoder_l{i}_self_Wq" in self.w:
            s = f"decoder_l{i}"
            y = self.block(y, s + "_self_Wo", lambda z: self.mha(z, z, s + "_self", True))
            y = self.block(y, s + "_context_Wo", lambda z: self.mha(z, x, s + "_context", False))
            y = self.block(y, s + "_ffn_ffn", lambda z: self.ffn(z, s + "_ffn"))
            i += 1
        if self.pre:
            y = self.ln(y, "decoder_top", "")
        out = self.w.get("decoder_ff_logit_out_W", self.w["Wemb"].T)
        logits = y @ out + self.w["decoder_ff_logit_out_b"][0]
        logp = logits - logits.max(-1, keepdims=True)
        return logp - np.log(np.exp(logp).sum(-1, keepdims=True))

    def log_probs(self, src, tgt):
        logp = self.distributions(src, tgt)
        return [logp[t, MARIAN_VOCAB.index(w)] for t, w in enumerate(list(tgt) + ["</s>"])]

    def greedy(self, src, limit=12):
        out = []
        while len(out) < limit:
            w = MARIAN_VOCAB[int(np.argmax(self.distributions(src, out)[-1]))]
            if w == "</s>":
                break
            out.append(w)
        return out


@pytest.mark.parametrize("pre_norm,tied", [(False, True), (True, False)])
def test_marian_import_scores_as_marian(tmp_path, pre_norm, tied):
    w = marian_model(tmp_path / "model.npz", tmp_path / "vocab.yml", pre_norm=pre_norm, tied=tied,
                     seed=3 + pre_norm)
    r = subprocess.run([BIN, "import", "--format", "marian", "--model", str(tmp_path / "model.npz"),
                        "--vocab", str(tmp_path / "vocab.yml"), "--out", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    vocab = open(tmp_path / "m" / "src.vocab", encoding="utf-8").read().split("\n")
    assert vocab[:5] == ["<pad>", "<s>", "</s>", "<unk>", "a"] and "'quoted'" in vocab
    reference = MarianTransformer(w, 2, pre_norm)
    scores_and_decodes_as(tmp_path / "m", reference, source_eos=True)


def test_marian_import_refusals(tmp_path):
    def run(*extra):
        return subprocess.run([BIN, "import", "--format", "marian", "--model",
                               str(tmp_path / "model.npz"), *extra, "--out", str(tmp_path / "m")],
                              capture_output=True, text=True)
    for yml, message in (({"transformer-ffn-activation": "swish"}, "activation swish"),
                         ({"transformer-postprocess-emb": "nd"}, "postprocess-emb nd"),
                         ({"type": "s2s"}, "type s2s")):
        marian_model(tmp_path / "model.npz", tmp_path / "vocab.yml", **yml)
        r = run("--vocab", str(tmp_path / "vocab.yml"))
        assert r.returncode != 0 and message in r.stderr, (yml, r.stderr)
    r = run()
    assert r.returncode != 0 and "needs --vocab" in r.stderr, r.stderr
