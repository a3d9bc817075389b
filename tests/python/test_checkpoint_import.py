"""`heed import --format opennmt-py` on small checkpoints this test writes as OpenNMT-py 3 saves
them (torch.save of {"model", "generator", "vocab", "opt"}, its state dict's names, an
argparse.Namespace of options, the vocabularies with <unk> and <blank> first), through Debian's
torch: the imported model's forced decodings score as a reference computation of OpenNMT-py's
Transformer, written here in numpy from its definition (onmt/encoders/transformer.py,
onmt/decoders/transformer.py, onmt/modules/embeddings.py), does; options heed does not have
are refused by name.
"""
import argparse
import collections
import os
import subprocess

import numpy as np
import pytest

import heed

torch = pytest.importorskip("torch")  # Debian's python3-torch (scripts/install-deps.sh torchaudio)
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


def run_import(pt, out):
    return subprocess.run([BIN, "import", "--format", "opennmt-py", "--model", str(pt), "--out",
                           str(out)], capture_output=True, text=True)


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_opennmt_py_import_scores_as_opennmt_py(tmp_path, qkv_bias):
    sd, gen, opt = checkpoint(tmp_path / "model.pt", qkv_bias=qkv_bias, seed=int(qkv_bias))
    r = run_import(tmp_path / "model.pt", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    # heed's specials first: <pad> (OpenNMT-py's <blank>), <s>, </s>, <unk>
    assert open(tmp_path / "m" / "tgt.vocab", encoding="utf-8").read().split("\n")[:5] == \
        ["<pad>", "<s>", "</s>", "<unk>", "ein"]
    pairs = [("a man rides .", "ein mann reitet ."), ("the dog runs", "der hund läuft"),
             ("dog", "hund hund ."), (". a", "")]
    reference = OnmtTransformer(sd, gen, opt)
    scored = heed.Translator(str(tmp_path / "m"), threads=1).score_batch(
        [s for s, _ in pairs], [t for _, t in pairs])
    for (s, t), got in zip(pairs, scored):
        assert got.tokens == t.split()
        np.testing.assert_allclose(got.log_probs, reference.log_probs(s.split(), t.split()),
                                   rtol=0, atol=1e-4, err_msg=f"{s} -> {t}")
    # and it decodes as a heed model: heed translate's greedy output is the reference's
    sources = ["a man rides .", "the dog runs", "man man man"]
    out = subprocess.run([BIN, "--threads", "1", "translate", "--model", str(tmp_path / "m"),
                          "--max-len-ratio", "1", "--max-length", "12"],
                         input="".join(x + "\n" for x in sources), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [" ".join(reference.greedy(x.split())) for x in sources]


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
