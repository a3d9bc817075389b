"""`heed export --format ctranslate2` read back by a reader written here from CTranslate2's own
specification (python/ctranslate2/specs/model_spec.py: ModelSpec._serialize; transformer_spec.py,
attention_spec.py, common_spec.py), not from heed's writer:

- the file is what TransformerSpec declares, variable for variable, attribute for attribute;
- every tensor equals heed's weight it maps to (fused projections, aliases for tied tables);
- a Transformer computed here in numpy as CTranslate2 defines it (embeddings times sqrt(d)
  plus the position table, post- or pre-norm layers, fused [Q; K; V] and [K; V] projections,
  heads as contiguous slices, the projection layer) from model.bin alone scores forced decodings
  as heed's own score_batch does, on a post-norm model with the sinusoid table and a tied output
  and a pre-norm one with learned positions and an untied output.
"""
import json
import os
import struct
import subprocess

import numpy as np
import pytest

import heed

BIN = os.environ["HEED_BIN"]
MODELS = os.path.join(os.environ["HEED_GOLDEN"], "models")
WORDS = os.path.join(os.environ["HEED_GOLDEN"], "inputs", "cmudict.txt")
DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_model_bin(path):
    """(spec name, revision, {name: array}, {alias: name}) as model_spec.py writes them."""
    data = open(path, "rb").read()
    at = 0

    def get(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def string():
        nonlocal at
        n = get("H")
        s = data[at:at + n - 1].decode("utf-8")
        assert data[at + n - 1] == 0
        at += n
        return s

    assert get("I") == 6  # CURRENT_BINARY_VERSION
    name, revision = string(), get("I")
    variables = {}
    for _ in range(get("I")):
        var = string()
        rank = get("B")
        shape = [get("I") for _ in range(rank)]
        dtype = DTYPES[get("B")]
        nbytes = get("I")
        variables[var] = np.frombuffer(data[at:at + nbytes], dtype=dtype).reshape(shape)
        at += nbytes
    aliases = {}
    for _ in range(get("I")):
        alias = string()
        aliases[alias] = string()
    assert at == len(data)
    return name, revision, variables, aliases


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack_from("<Q", data, 0)[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for k, v in header.items():
        if k != "__metadata__":
            b, e = v["data_offsets"]
            out[k] = np.frombuffer(data[8 + n + b:8 + n + e], dtype=np.float32).reshape(v["shape"])
    return out


def spec_names(layers_enc, layers_dec, pre_norm):
    """The variables TransformerSpec.from_config declares (OPTIONAL ones unset), as visit_spec
    names them: lists as name_i, attributes as scalars."""
    def ln(s):
        return [s + "/gamma", s + "/beta"]

    def lin(s):
        return [s + "/weight", s + "/bias"]

    names = ["encoder/num_heads", "encoder/pre_norm", "encoder/activation",
             "encoder/embeddings_merge", "encoder/multi_query_attention",
             "encoder/scale_embeddings", "encoder/embeddings_0/weight",
             "encoder/position_encodings/encodings"]
    def layer(s, cross):  # TransformerEncoderLayerSpec / TransformerDecoderLayerSpec
        out = ln(s + "/self_attention/layer_norm") + lin(s + "/self_attention/linear_0")
        out += lin(s + "/self_attention/linear_1")
        if cross:
            out += ln(s + "/attention/layer_norm") + lin(s + "/attention/linear_0")
            out += lin(s + "/attention/linear_1") + lin(s + "/attention/linear_2")
        return out + ln(s + "/ffn/layer_norm") + lin(s + "/ffn/linear_0") + lin(s + "/ffn/linear_1")

    names += ln("encoder/layer_norm") if pre_norm else []
    for i in range(layers_enc):
        names += layer(f"encoder/layer_{i}", False)
    names += ["decoder/num_heads", "decoder/pre_norm", "decoder/activation",
              "decoder/alignment_layer", "decoder/alignment_heads", "decoder/scale_embeddings",
              "decoder/alibi", "decoder/alibi_use_positive_positions", "decoder/scale_alibi",
              "decoder/start_from_zero_embedding", "decoder/embeddings/weight",
              "decoder/position_encodings/encodings", "decoder/projection/weight",
              "decoder/projection/bias"]
    names += ln("decoder/layer_norm") if pre_norm else []
    for i in range(layers_dec):
        names += layer(f"decoder/layer_{i}", True)
    return names


class Ct2Transformer:
    """CTranslate2's TransformerSpec computed in numpy from model.bin's variables."""

    def __init__(self, variables, aliases, eps):
        self.v = {**variables, **{a: variables[n] for a, n in aliases.items()}}
        self.eps = eps
        self.heads = int(self.v["encoder/num_heads"])
        self.pre = bool(self.v["encoder/pre_norm"])
        self.gelu = int(self.v["encoder/activation"]) == 1

    def ln(self, x, s):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.v[s + "/gamma"] + self.v[s + "/beta"]

    def lin(self, x, s):
        return x @ self.v[s + "/weight"].T + self.v[s + "/bias"]

    def attend(self, q, k, v, s, causal):
        T, d = q.shape
        dh = d // self.heads
        out = np.zeros_like(q)
        for h in range(self.heads):  # head h: columns h*dh..(h+1)*dh
            sl = slice(h * dh, (h + 1) * dh)
            a = q[:, sl] @ k[:, sl].T / np.sqrt(dh)
            if causal:
                a = a + np.triu(np.full((T, k.shape[0]), -np.inf), 1)
            p = np.exp(a - a.max(-1, keepdims=True))
            out[:, sl] = (p / p.sum(-1, keepdims=True)) @ v[:, sl]
        return self.lin(out, s + "/linear_" + ("1" if s.endswith("self_attention") else "2"))

    def self_attention(self, x, s, causal):
        q, k, v = np.split(self.lin(x, s + "/linear_0"), 3, axis=-1)
        return self.attend(q, k, v, s, causal)

    def cross_attention(self, x, memory, s):
        q = self.lin(x, s + "/linear_0")
        k, v = np.split(self.lin(memory, s + "/linear_1"), 2, axis=-1)
        return self.attend(q, k, v, s, False)

    def ffn(self, x, s):
        h = self.lin(x, s + "/linear_0")
        h = (0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3))) if self.gelu
             else np.maximum(h, 0))
        return self.lin(h, s + "/linear_1")

    def sublayer(self, x, s, f):
        if self.pre:
            return x + f(self.ln(x, s + "/layer_norm"))
        return self.ln(x + f(x), s + "/layer_norm")

    def embed(self, ids, side):
        table = self.v[side + ("/embeddings_0/weight" if side == "encoder" else "/embeddings/weight")]
        d = table.shape[1]
        pe = self.v[side + "/position_encodings/encodings"]
        return table[ids] * np.sqrt(d) + pe[:len(ids)]

    def log_probs(self, src_ids, tgt_ids, bos, eos):
        x = self.embed(src_ids, "encoder").astype(np.float64)
        i = 0
        while f"encoder/layer_{i}/ffn/linear_0/weight" in self.v:
            s = f"encoder/layer_{i}"
            x = self.sublayer(x, s + "/self_attention",
                              lambda y: self.self_attention(y, s + "/self_attention", False))
            x = self.sublayer(x, s + "/ffn", lambda y: self.ffn(y, s + "/ffn"))
            i += 1
        if self.pre:
            x = self.ln(x, "encoder/layer_norm")
        y = self.embed([bos] + tgt_ids, "decoder").astype(np.float64)
        i = 0
        while f"decoder/layer_{i}/ffn/linear_0/weight" in self.v:
            s = f"decoder/layer_{i}"
            y = self.sublayer(y, s + "/self_attention",
                              lambda z: self.self_attention(z, s + "/self_attention", True))
            y = self.sublayer(y, s + "/attention",
                              lambda z: self.cross_attention(z, x, s + "/attention"))
            y = self.sublayer(y, s + "/ffn", lambda z: self.ffn(z, s + "/ffn"))
            i += 1
        if self.pre:
            y = self.ln(y, "decoder/layer_norm")
        logits = self.lin(y, "decoder/projection")
        logp = logits - logits.max(-1, keepdims=True)
        logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
        return [logp[t, w] for t, w in enumerate(tgt_ids + [eos])]


@pytest.mark.parametrize("name", ["transformer", "transformer-pre"])
def test_ctranslate2_export_reads_back_and_scores_as_heed(name, tmp_path):
    model = os.path.join(MODELS, name)
    out = tmp_path / "ct2"
    subprocess.run([BIN, "export", "--format", "ctranslate2", "--model", model, "--out", str(out)],
                   check=True, capture_output=True)
    config = json.load(open(os.path.join(model, "config.json")))
    weights = read_safetensors(os.path.join(model, "model.safetensors"))
    spec, revision, variables, aliases = read_model_bin(out / "model.bin")
    assert (spec, revision) == ("TransformerSpec", 7)
    pre = config["norm"] == "pre"
    want = spec_names(config["enc_layers"], config["dec_layers"], pre)
    assert sorted(set(variables) | set(aliases)) == sorted(want)
    assert not set(variables) & set(aliases)
    assert list(variables) == sorted(variables)  # written in name order, as _serialize does
    # attributes
    for side in ("encoder", "decoder"):
        assert variables[side + "/num_heads"].dtype == np.int16
        assert int(variables[side + "/num_heads"]) == config["heads"]
        assert int(variables[side + "/pre_norm"]) == pre
        assert int(variables[side + "/activation"]) == (1 if config["activation"] == "gelu" else 0)
        assert int(variables[side + "/scale_embeddings"]) == 1
    assert int(variables["decoder/alignment_layer"]) == -1
    # tensors: each equals heed's weight under the mapping
    full = {**variables, **{a: variables[n] for a, n in aliases.items()}}
    mapping = {"encoder/embeddings_0/weight": "src_embed",
               "decoder/embeddings/weight": "tgt_embed",
               "decoder/projection/weight": "tgt_embed" if config["tie_output"] else "out/W",
               "decoder/projection/bias": "out/b"}
    if pre:
        for side in ("encoder", "decoder"):
            mapping[side + "/layer_norm/gamma"] = side + "/final_ln/gamma"
            mapping[side + "/layer_norm/beta"] = side + "/final_ln/beta"
    heed_name = {"self_attention/linear_0": "self_attn/{}_qkv", "self_attention/linear_1":
                 "self_attn/{}_o", "attention/linear_0": "cross_attn/{}_q",
                 "attention/linear_1": "cross_attn/{}_kv", "attention/linear_2": "cross_attn/{}_o",
                 "ffn/linear_0": "ffn/{}1", "ffn/linear_1": "ffn/{}2"}
    for var in want:
        parts = var.split("/")
        if len(parts) >= 4 and parts[1].startswith("layer_"):
            rest = "/".join(parts[2:-1])
            if rest in heed_name:
                mapping[var] = "/".join(parts[:2]) + "/" + heed_name[rest].format(
                    "W" if parts[-1] == "weight" else "b")
            else:  # a layer norm
                sub = {"self_attention": "self_attn", "attention": "cross_attn", "ffn": "ffn"}
                mapping[var] = "/".join(parts[:2]) + f"/{sub[parts[2]]}/ln/{parts[-1]}"
    for var, w in mapping.items():
        np.testing.assert_array_equal(full[var], weights[w], err_msg=var)
    table = full["encoder/position_encodings/encodings"]
    assert table.shape == (config["max_positions"], config["d_model"])
    if config["positions"] == "learned":
        np.testing.assert_array_equal(table, weights["positions"])
    else:  # the sinusoid table, sine and cosine interleaved
        pos, i = np.arange(table.shape[0])[:, None], np.arange(0, table.shape[1], 2)[None, :]
        np.testing.assert_allclose(table[:, 0::2], np.sin(pos / 10000 ** (i / table.shape[1])),
                                   atol=1e-6)
        np.testing.assert_allclose(table[:, 1::2], np.cos(pos / 10000 ** (i / table.shape[1])),
                                   atol=1e-6)
    ct2_config = json.load(open(out / "config.json"))
    assert ct2_config["layer_norm_epsilon"] == 1e-5 and ct2_config["add_source_eos"] is False
    src_vocab = json.load(open(out / "source_vocabulary.json"))
    tgt_vocab = json.load(open(out / "target_vocabulary.json"))
    assert len(src_vocab) == full["encoder/embeddings_0/weight"].shape[0]
    assert len(tgt_vocab) == full["decoder/embeddings/weight"].shape[0]

    # model.bin alone, computed as CTranslate2 defines it, scores as heed does
    net = Ct2Transformer(variables, aliases, ct2_config["layer_norm_epsilon"])
    t = heed.Translator(model, threads=1)
    entries = [l.split("  ", 1) for l in open(WORDS, encoding="utf-8").read().splitlines()[:8]]
    scored = t.score_batch([w for w, _ in entries], [p for _, p in entries])
    for r in scored:
        src = [src_vocab.index(u) if u in src_vocab else src_vocab.index("<unk>") for u in r.source]
        tgt = [tgt_vocab.index(u) for u in r.tokens]
        ref = net.log_probs(src, tgt, tgt_vocab.index(ct2_config["bos_token"]),
                            tgt_vocab.index(ct2_config["eos_token"]))
        np.testing.assert_allclose(r.log_probs, ref, rtol=0, atol=1e-5)


def test_ctranslate2_export_refusals(tmp_path):
    def export(model, out):
        return subprocess.run([BIN, "export", "--model", os.path.join(MODELS, model), "--out",
                               str(out)], capture_output=True, text=True)

    r = export("rnn-bahdanau", tmp_path / "a")
    assert r.returncode != 0 and "export is for --model transformer" in r.stderr, r.stderr
    r = export("transformer-monotonic", tmp_path / "b")
    assert r.returncode != 0 and "monotonic cross-attention" in r.stderr, r.stderr
    assert not (tmp_path / "b").exists()  # nothing written
    assert export("transformer", tmp_path / "c").returncode == 0
    r = export("transformer", tmp_path / "c")
    assert r.returncode != 0 and "holds a model already" in r.stderr, r.stderr
