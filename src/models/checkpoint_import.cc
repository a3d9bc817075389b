// Other toolkits' Transformers as heed model directories (see the header).
#include "heed/models/checkpoint_import.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "heed/data/text.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/io/npy.h"
#include "heed/io/safetensors.h"
#include "heed/io/torch_file.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

using pickle::Object;
using pickle::Value;

// heed's vocabulary from another toolkit's: its specials first (`aliases`: heed's special ->
// the toolkit's name for it), then the other tokens in their order. from[k]: the row of heed's
// token k in the toolkit's tables (-1: absent).
struct Reordered {
  std::vector<std::string> tokens;
  std::vector<int64_t> from;
};

Reordered reorder(const std::vector<std::string>& theirs,
                  const std::map<std::string, std::string>& aliases, const std::string& what) {
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < theirs.size(); ++i) {
    check(theirs[i].find_first_of("\n\r") == std::string::npos, what, ": token ", i,
          " holds a line break");
    check(index.emplace(theirs[i], static_cast<int64_t>(i)).second, what, ": the token '",
          theirs[i], "' twice");
  }
  Reordered r;
  std::set<std::string> special_names;
  for (const char* s : {"<pad>", "<s>", "</s>", "<unk>"}) {
    auto a = aliases.find(s);
    const std::string name = a == aliases.end() ? s : a->second;
    special_names.insert(name);
    auto it = index.find(name);
    r.tokens.emplace_back(s);
    r.from.push_back(it == index.end() ? -1 : it->second);
  }
  for (size_t i = 0; i < theirs.size(); ++i)
    if (!special_names.contains(theirs[i])) {
      r.tokens.push_back(theirs[i]);
      r.from.push_back(static_cast<int64_t>(i));
    }
  return r;
}

// How many of heed's tokens the toolkit's vocabulary has (its tables' rows).
int64_t present(const Reordered& r) {
  return static_cast<int64_t>(
      std::count_if(r.from.begin(), r.from.end(), [](int64_t f) { return f >= 0; }));
}

// The rows of `t` [V, ...] in heed's order (absent rows: `fill`).
Tensor rows(const Tensor& t, const Reordered& r, float fill, const std::string& what) {
  check(t.shape().rank() >= 1 && t.shape().dim(0) == present(r), what, ": ", t.shape().dim(0),
        " rows for a vocabulary of ", present(r));
  std::vector<int64_t> dims = t.shape().dims();
  const int64_t row = t.numel() / dims[0];
  dims[0] = static_cast<int64_t>(r.from.size());
  Tensor out = Tensor::full(Shape(dims), fill);
  for (size_t k = 0; k < r.from.size(); ++k)
    if (r.from[k] >= 0)
      std::copy_n(t.data() + r.from[k] * row, row, out.data() + static_cast<int64_t>(k) * row);
  return out;
}

Tensor concat_rows(const std::vector<Tensor>& parts) {  // [a; b; ...] along the first axis
  std::vector<int64_t> dims = parts.front().shape().dims();
  dims[0] = 0;
  for (const Tensor& p : parts) dims[0] += p.shape().dim(0);
  Tensor out = Tensor::empty(Shape(dims));
  float* at = out.data();
  for (const Tensor& p : parts) at = std::copy_n(p.data(), p.numel(), at);
  return out;
}

std::vector<std::string> string_list(const Value& v, const std::string& what) {
  check(v && v->kind == Object::Kind::List, what, " is not a list of tokens (",
        v ? v->kind_name() : "absent",
        "): heed reads OpenNMT-py 3's vocabularies; OpenNMT-py 2's torchtext fields are not read");
  std::vector<std::string> out;
  for (const Value& t : v->items) {
    check(t->kind == Object::Kind::Str, what, " holds a ", t->kind_name(), ", not a token");
    out.push_back(t->s);
  }
  return out;
}

// heed's names for one layer's pieces, from the toolkit's tensors (already heed's [out, in]).
// Attention: the projections of Q, K, V and the output with their biases; a self-attention's
// Q, K and V fused into W_qkv, a cross-attention's K and V into W_kv.
struct AttentionWeights {
  Tensor Wq, bq, Wk, bk, Wv, bv, Wo, bo;
};
void put_attention(NamedTensors& out, const std::string& heed, const AttentionWeights& a,
                   bool self) {
  if (self) {
    out.emplace_back(heed + "/W_qkv", concat_rows({a.Wq, a.Wk, a.Wv}));
    out.emplace_back(heed + "/b_qkv", concat_rows({a.bq, a.bk, a.bv}));
  } else {
    out.emplace_back(heed + "/W_q", a.Wq);
    out.emplace_back(heed + "/b_q", a.bq);
    out.emplace_back(heed + "/W_kv", concat_rows({a.Wk, a.Wv}));
    out.emplace_back(heed + "/b_kv", concat_rows({a.bk, a.bv}));
  }
  out.emplace_back(heed + "/W_o", a.Wo);
  out.emplace_back(heed + "/b_o", a.bo);
}
void put_ffn(NamedTensors& out, const std::string& heed, const Tensor& W1, const Tensor& b1,
             const Tensor& W2, const Tensor& b2) {
  out.emplace_back(heed + "/W1", W1);
  out.emplace_back(heed + "/b1", b1);
  out.emplace_back(heed + "/W2", W2);
  out.emplace_back(heed + "/b2", b2);
}
void put_norm(NamedTensors& out, const std::string& heed, const Tensor& gamma, const Tensor& beta) {
  out.emplace_back(heed + "/gamma", gamma);
  out.emplace_back(heed + "/beta", beta);
}

// What an imported Transformer is, in heed's terms.
struct ImportedShape {
  int64_t d, heads, ff, enc_layers, dec_layers, max_positions;
  NormPlacement norm;
  FfnActivation activation;
  float layer_norm_eps;
  bool tied;     // the output layer is the target embedding
  bool src_eos;  // sources end in </s>
  const char* from;
};

// Its config.json: heed's Transformer with a learned position table (the toolkit's, copied),
// word units (the toolkit's tokens, given already split).
nlohmann::json imported_config(const ImportedShape& s, const Reordered& src, const Reordered& tgt) {
  TransformerSeq2SeqConfig c;
  c.src_vocab = static_cast<int64_t>(src.tokens.size());
  c.tgt_vocab = static_cast<int64_t>(tgt.tokens.size());
  c.layer.d_model = s.d;
  c.layer.heads = s.heads;
  c.layer.ff = s.ff;
  c.layer.norm = s.norm;
  c.layer.activation = s.activation;
  c.layer.layer_norm_eps = s.layer_norm_eps;
  c.enc_layers = s.enc_layers;
  c.dec_layers = s.dec_layers;
  c.positions = Positions::Learned;
  c.max_positions = s.max_positions;
  c.tie_output = s.tied;
  nlohmann::json config = c.to_json();
  config["src_units"] = "word";
  config["tgt_units"] = "word";
  config["g2p"] = false;
  if (s.src_eos) config["src_eos"] = true;
  config["imported_from"] = s.from;
  return config;
}

// Writes a heed model directory: config.json, the vocabularies, the weights.
std::vector<std::string> write_model_dir(const std::string& out_dir, const nlohmann::json& config,
                                         const Reordered& src, const Reordered& tgt,
                                         const NamedTensors& weights) {
  new_model_dir(out_dir, {"model.safetensors", "config.json", "src.vocab", "tgt.vocab"}, "import");
  const fs::path out(out_dir);
  auto lines = [](const Reordered& r) {
    std::string s;
    for (const std::string& t : r.tokens) s += t + "\n";
    return s;
  };
  write_file_atomic((out / "src.vocab").string(), lines(src));
  write_file_atomic((out / "tgt.vocab").string(), lines(tgt));
  write_safetensors((out / "model.safetensors").string(), weights, {{"format", "heed"}});
  write_file_atomic((out / "config.json").string(), config.dump(2) + "\n");  // last: complete
  return {"src.vocab", "tgt.vocab", "model.safetensors", "config.json"};
}

}  // namespace

std::vector<std::string> import_opennmt_py(const std::string& checkpoint,
                                           const std::string& out_dir) {
  const TorchFile f = read_torch_file(checkpoint);
  const std::string& cp = checkpoint;
  check(f.root->kind == Object::Kind::Dict, cp, ": the checkpoint is a ", f.root->kind_name(),
        ", not OpenNMT-py's dict of model, generator, vocab and opt");
  const Value model = f.root->get("model"), generator = f.root->get("generator"),
              vocab = f.root->get("vocab"), opt_call = f.root->get("opt");
  check(model && model->kind == Object::Kind::Dict && generator && vocab && opt_call, cp,
        ": not an OpenNMT-py checkpoint (it needs model, generator, vocab and opt)");
  const Value opt = opt_call->kind == Object::Kind::Call ? opt_call->state : opt_call;
  check(opt && opt->kind == Object::Kind::Dict, cp, ": opt is not an options namespace");
  auto option = [&](const char* name) { return opt->get(name); };
  auto str_option = [&](const char* name, const std::string& fallback) {
    const Value v = option(name);
    return v && v->kind == Object::Kind::Str ? v->s : fallback;
  };
  auto int_option = [&](const char* name, int64_t fallback) {
    const Value v = option(name);
    return v && (v->kind == Object::Kind::Int || v->kind == Object::Kind::Bool)
               ? (v->kind == Object::Kind::Bool ? int64_t{v->b} : v->i)
               : fallback;
  };
  // what heed's Transformer is not
  check(str_option("encoder_type", "transformer") == "transformer" &&
            str_option("decoder_type", "transformer") == "transformer",
        cp, ": encoder_type/decoder_type ", str_option("encoder_type", "?"), "/",
        str_option("decoder_type", "?"), " (heed imports OpenNMT-py's transformer)");
  check(int_option("max_relative_positions", 0) == 0, cp,
        ": max_relative_positions (relative, rotary or ALiBi positions) has no heed counterpart");
  check(str_option("self_attn_type", "scaled-dot") == "scaled-dot", cp, ": self_attn_type ",
        str_option("self_attn_type", "?"));
  const std::string act = str_option("pos_ffn_activation_fn", "relu");
  check(act == "relu" || act == "fast_gelu", cp, ": pos_ffn_activation_fn ", act,
        " (heed has relu and the tanh GELU, OpenNMT-py's fast_gelu)");
  check(int_option("num_kv", 0) == 0 && !int_option("multiquery", 0), cp,
        ": multi-query attention (num_kv, multiquery)");
  check(str_option("layer_norm", "standard") == "standard", cp, ": layer_norm ",
        str_option("layer_norm", "?"), " (heed's is the standard LayerNorm)");
  const int64_t heads = int_option("heads", 8);
  const Value eps_v = option("norm_eps");
  const double eps = eps_v && eps_v->kind == Object::Kind::Float ? eps_v->f : 1e-6;

  std::map<std::string, Value> weights;  // the state dict, the generator's under "generator."
  auto add = [&](const Value& dict, const std::string& prefix) {
    check(dict->kind == Object::Kind::Dict, cp, ": ", prefix, " is not a state dict");
    for (const auto& [k, v] : dict->dict)
      if (k->kind == Object::Kind::Str && TorchFile::is_tensor(v)) weights[prefix + k->s] = v;
  };
  add(model, "");
  add(generator, "generator.");
  auto w = [&](const std::string& name) {
    auto it = weights.find(name);
    check(it != weights.end(), cp, ": no ", name, " in the state dict");
    return f.tensor(it->second, name);
  };
  auto has = [&](const std::string& name) { return weights.contains(name); };
  auto bias = [&](const std::string& name, int64_t n) {  // add_qkvbias false: none, zeros
    return has(name) ? w(name) : Tensor::zeros({n});
  };
  int64_t enc_layers = 0, dec_layers = 0;
  while (
      has("encoder.transformer." + std::to_string(enc_layers) + ".self_attn.linear_query.weight"))
    ++enc_layers;
  while (has("decoder.transformer_layers." + std::to_string(dec_layers) +
             ".self_attn.linear_query.weight"))
    ++dec_layers;
  check(enc_layers > 0 && dec_layers > 0, cp,
        ": no encoder.transformer.0 or "
        "decoder.transformer_layers.0 layers: not an OpenNMT-py Transformer");

  const Value src_v = vocab->get("src"), tgt_v = vocab->get("tgt");
  const std::map<std::string, std::string> aliases = {{"<pad>", "<blank>"}};
  const Reordered src =
      reorder(string_list(src_v, cp + ": vocab src"), aliases, cp + ": vocab src");
  const Reordered tgt =
      reorder(string_list(tgt_v, cp + ": vocab tgt"), aliases, cp + ": vocab tgt");
  check(tgt.from[1] >= 0 && tgt.from[2] >= 0, cp, ": the target vocabulary lacks <s> or </s>");

  NamedTensors out;
  const std::string emb = ".embeddings.make_embedding.";
  const Tensor src_embed = w("encoder" + emb + "emb_luts.0.weight");
  const int64_t d = src_embed.shape().dim(1);
  check(d % heads == 0, cp, ": d_model ", d, " is not divisible by ", heads, " heads");
  out.emplace_back("src_embed", rows(src_embed, src, 0.f, "encoder embeddings"));
  out.emplace_back("tgt_embed",
                   rows(w("decoder" + emb + "emb_luts.0.weight"), tgt, 0.f, "decoder embeddings"));
  // the position table (OpenNMT-py's pe buffer [max_len, 1, d]), the same on both sides
  check(has("encoder" + emb + "pe.pe"), cp,
        ": no position table (position_encoding false: "
        "a Transformer without positions, which heed does not have)");
  Tensor pe = w("encoder" + emb + "pe.pe");
  const Tensor dec_pe = w("decoder" + emb + "pe.pe");
  check(
      pe.numel() == dec_pe.numel() && std::equal(pe.data(), pe.data() + pe.numel(), dec_pe.data()),
      cp, ": the encoder's and decoder's position tables differ (heed has one)");
  check(pe.numel() % d == 0, cp, ": a position table of ", pe.shape().str(), " for d_model ", d);
  const int64_t max_positions = pe.numel() / d;
  out.emplace_back("positions", Tensor::from({max_positions, d}, pe.span()));
  out.emplace_back(
      "out/W", rows(w("generator." + std::string(has("generator.weight") ? "" : "0.") + "weight"),
                    tgt, 0.f, "generator weight"));
  out.emplace_back("out/b",
                   rows(has("generator.bias") || has("generator.0.bias")
                            ? w(has("generator.bias") ? "generator.bias" : "generator.0.bias")
                            : Tensor::zeros({present(tgt)}),
                        tgt, -1e9f, "generator bias"));
  int64_t ff = 0;
  auto attention = [&](const std::string& heed, const std::string& onmt, bool self) {
    auto weight = [&](const char* p) { return w(onmt + "." + p + ".weight"); };
    auto b = [&](const char* p) { return bias(onmt + "." + p + ".bias", d); };
    put_attention(out, heed,
                  {.Wq = weight("linear_query"),
                   .bq = b("linear_query"),
                   .Wk = weight("linear_keys"),
                   .bk = b("linear_keys"),
                   .Wv = weight("linear_values"),
                   .bv = b("linear_values"),
                   .Wo = weight("final_linear"),
                   .bo = b("final_linear")},
                  self);
  };
  auto norm = [&](const std::string& heed, const std::string& onmt) {
    put_norm(out, heed, w(onmt + ".weight"), bias(onmt + ".bias", d));
  };
  auto ffn = [&](const std::string& heed, const std::string& onmt) {
    const Tensor W1 = w(onmt + ".w_1.weight");
    ff = W1.shape().dim(0);
    put_ffn(out, heed, W1, bias(onmt + ".w_1.bias", ff), w(onmt + ".w_2.weight"),
            bias(onmt + ".w_2.bias", d));
    norm(heed + "/ln", onmt + ".layer_norm");
  };
  for (int64_t i = 0; i < enc_layers; ++i) {
    const std::string h = "encoder/layer_" + std::to_string(i),
                      o = "encoder.transformer." + std::to_string(i);
    attention(h + "/self_attn", o + ".self_attn", true);
    norm(h + "/self_attn/ln", o + ".layer_norm");
    ffn(h + "/ffn", o + ".feed_forward");
  }
  norm("encoder/final_ln", "encoder.layer_norm");
  for (int64_t i = 0; i < dec_layers; ++i) {
    const std::string h = "decoder/layer_" + std::to_string(i),
                      o = "decoder.transformer_layers." + std::to_string(i);
    attention(h + "/self_attn", o + ".self_attn", true);
    norm(h + "/self_attn/ln", o + ".layer_norm_1");
    attention(h + "/cross_attn", o + ".context_attn", false);
    norm(h + "/cross_attn/ln", o + ".layer_norm_2");
    ffn(h + "/ffn", o + ".feed_forward");
  }
  norm("decoder/final_ln", "decoder.layer_norm");

  const nlohmann::json config =
      imported_config({.d = d,
                       .heads = heads,
                       .ff = ff,
                       .enc_layers = enc_layers,
                       .dec_layers = dec_layers,
                       .max_positions = max_positions,
                       .norm = NormPlacement::Pre,
                       .activation = act == "relu" ? FfnActivation::Relu : FfnActivation::Gelu,
                       .layer_norm_eps = static_cast<float>(eps),
                       .tied = false,
                       .src_eos = false,
                       .from = "opennmt-py"},
                      src, tgt);
  return write_model_dir(out_dir, config, src, tgt, out);
}

namespace {

// Marian's vocabulary file: "token: id" per line, a token quoted "..." (backslash escapes) or
// '...' (a doubled quote) when YAML needs it; the tokens in id order.
std::vector<std::string> read_marian_vocab(const std::string& path) {
  std::map<int64_t, std::string> by_id;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    if (line.empty()) continue;
    const size_t colon = line.rfind(':');
    check(colon != std::string::npos, path, ":", n + 1, ": not a 'token: id' line");
    std::string token = line.substr(0, colon);
    const std::string id_text = line.substr(colon + 1);
    char* end = nullptr;
    const long long id = std::strtoll(id_text.c_str(), &end, 10);
    check(end != id_text.c_str() && id >= 0, path, ":", n + 1, ": '", id_text, "' is not an id");
    if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
      std::string u;
      for (size_t i = 1; i + 1 < token.size(); ++i) {
        if (token[i] == '\\' && i + 2 < token.size()) ++i;
        u += token[i];
      }
      token = u;
    } else if (token.size() >= 2 && token.front() == '\'' && token.back() == '\'') {
      std::string u;
      for (size_t i = 1; i + 1 < token.size(); ++i) {
        u += token[i];
        if (token[i] == '\'' && token[i + 1] == '\'') ++i;
      }
      token = u;
    }
    check(by_id.emplace(id, token).second, path, ":", n + 1, ": id ", id, " twice");
  }
  std::vector<std::string> out;
  for (auto& [id, token] : by_id) {
    check(id == static_cast<int64_t>(out.size()), path, ": no token of id ", out.size());
    out.push_back(std::move(token));
  }
  return out;
}

// The flat "key: value" lines of Marian's model.yml (lists and nesting are skipped).
std::map<std::string, std::string> marian_options(const std::string& yml) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at < yml.size()) {
    size_t end = yml.find('\n', at);
    if (end == std::string::npos) end = yml.size();
    const std::string line = yml.substr(at, end - at);
    at = end + 1;
    if (line.empty() || line[0] == ' ' || line[0] == '-' || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    out[line.substr(0, colon)] = value;
  }
  return out;
}

// Marian's sinusoidal positions (src/graph/node_initializers.cpp): for the dimEmb / 2 timescales
// i, v = pos exp(-i ln(10000) / (dimEmb / 2 - 1)); sin(v) in column i, cos(v) in dimEmb / 2 + i.
Tensor marian_sinusoids(int64_t positions, int64_t d) {
  Tensor t = Tensor::zeros({positions, d});
  const int64_t half = d / 2;
  const double increment = std::log(10000.0) / std::max<double>(static_cast<double>(half) - 1, 1);
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double v = static_cast<double>(p) * std::exp(-static_cast<double>(i) * increment);
      t.data()[p * d + i] = static_cast<float>(std::sin(v));
      t.data()[p * d + half + i] = static_cast<float>(std::cos(v));
    }
  return t;
}

}  // namespace

std::vector<std::string> import_marian(const std::string& npz,
                                       const std::vector<std::string>& vocabs,
                                       const std::string& out_dir) {
  check(vocabs.size() == 1 || vocabs.size() == 2,
        "import marian: one --vocab (joint) or two "
        "(source, target), got ",
        vocabs.size());
  const std::map<std::string, NpyArray> arrays = read_npz(npz);
  auto yml = arrays.find("special:model.yml");
  check(yml != arrays.end(), npz, ": no special:model.yml: not a Marian model");
  std::map<std::string, std::string> o =
      marian_options(yml->second.bytes.substr(0, yml->second.bytes.find('\0')));  // to its NUL
  auto opt = [&](const std::string& key, const std::string& fallback) {
    auto it = o.find(key);
    return it == o.end() ? fallback : it->second;
  };
  check(opt("type", "?") == "transformer", npz, ": type ", opt("type", "?"),
        " (heed imports Marian's transformer)");
  check(opt("transformer-decoder-autoreg", "self-attention") == "self-attention", npz,
        ": transformer-decoder-autoreg ", opt("transformer-decoder-autoreg", "?"));
  check(opt("transformer-no-projection", "false") == "false", npz, ": transformer-no-projection");
  check(opt("transformer-ffn-activation", "relu") == "relu", npz, ": transformer-ffn-activation ",
        opt("transformer-ffn-activation", "?"), " (heed imports relu)");
  const std::string emb_post = opt("transformer-postprocess-emb", "d");
  check(emb_post == "d" || emb_post.empty(), npz, ": transformer-postprocess-emb ", emb_post,
        " (a LayerNorm on the embeddings, which heed's Transformer has not)");
  const std::string pre = opt("transformer-preprocess", ""),
                    post = opt("transformer-postprocess", "dan"),
                    top = opt("transformer-postprocess-top", "");
  const bool pre_norm = pre == "n";
  check((pre_norm && post == "da" && top == "n") || (pre.empty() && post == "dan" && top.empty()),
        npz, ": transformer-preprocess '", pre, "', -postprocess '", post, "', -postprocess-top '",
        top, "' (heed has post-norm: '', 'dan', ''; pre-norm: 'n', 'da', 'n')");
  const int64_t heads = std::stoll(opt("transformer-heads", "8"));

  auto w = [&](const std::string& name) {
    auto it = arrays.find(name);
    check(it != arrays.end(), npz, ": no ", name);
    const std::vector<float> v = it->second.floats();
    return Tensor::from(Shape(it->second.shape), v);
  };
  auto has = [&](const std::string& name) { return arrays.contains(name); };
  auto flat = [&](const std::string& name) {  // a [1, n] bias as [n]
    Tensor t = w(name);
    return Tensor::from({t.numel()}, t.span());
  };
  auto transposed = [&](const std::string& name) {  // Marian's [in, out] as heed's [out, in]
    const Tensor t = w(name);
    check(t.shape().rank() == 2, npz, ": ", name, " is not a matrix");
    const int64_t r = t.shape().dim(0), c = t.shape().dim(1);
    Tensor out = Tensor::empty({c, r});
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) out.data()[j * r + i] = t.data()[i * c + j];
    return out;
  };
  int64_t enc_layers = 0, dec_layers = 0;
  while (has("encoder_l" + std::to_string(enc_layers + 1) + "_self_Wq")) ++enc_layers;
  while (has("decoder_l" + std::to_string(dec_layers + 1) + "_self_Wq")) ++dec_layers;
  check(enc_layers > 0 && dec_layers > 0, npz, ": no encoder_l1_self_Wq or decoder_l1_self_Wq");

  const std::vector<std::string> src_tokens = read_marian_vocab(vocabs.front());
  const std::vector<std::string> tgt_tokens = read_marian_vocab(vocabs.back());
  const Reordered src = reorder(src_tokens, {}, vocabs.front());
  const Reordered tgt = reorder(tgt_tokens, {}, vocabs.back());
  check(tgt.from[2] >= 0, vocabs.back(), ": no </s>");

  NamedTensors out;
  const Tensor src_emb = w(has("Wemb") ? "Wemb" : "encoder_Wemb");
  const Tensor tgt_emb = w(has("Wemb") ? "Wemb" : has("decoder_Wemb") ? "decoder_Wemb" : "Wemb");
  const int64_t d = src_emb.shape().dim(1);
  check(d % heads == 0 && d % 2 == 0, npz, ": dim-emb ", d, " and ", heads, " heads");
  out.emplace_back("src_embed", rows(src_emb, src, 0.f, "encoder embeddings"));
  out.emplace_back("tgt_embed", rows(tgt_emb, tgt, 0.f, "decoder embeddings"));
  const int64_t max_positions = has("Wpos") ? w("Wpos").shape().dim(0) : 2048;
  out.emplace_back("positions", has("Wpos") ? w("Wpos") : marian_sinusoids(max_positions, d));
  const bool tied = !has("decoder_ff_logit_out_W");
  if (!tied)
    out.emplace_back("out/W", rows(transposed("decoder_ff_logit_out_W"), tgt, 0.f, "output"));
  out.emplace_back("out/b", rows(flat("decoder_ff_logit_out_b"), tgt, -1e9f, "output bias"));
  const std::string suffix = pre_norm ? "_pre" : "";
  int64_t ff = 0;
  auto norm = [&](const std::string& heed, const std::string& marian) {
    put_norm(out, heed, flat(marian + "_ln_scale" + suffix), flat(marian + "_ln_bias" + suffix));
  };
  auto attention = [&](const std::string& heed, const std::string& m, bool self) {
    put_attention(out, heed,
                  {.Wq = transposed(m + "_Wq"),
                   .bq = flat(m + "_bq"),
                   .Wk = transposed(m + "_Wk"),
                   .bk = flat(m + "_bk"),
                   .Wv = transposed(m + "_Wv"),
                   .bv = flat(m + "_bv"),
                   .Wo = transposed(m + "_Wo"),
                   .bo = flat(m + "_bo")},
                  self);
    norm(heed + "/ln", m + "_Wo");
  };
  auto ffn = [&](const std::string& heed, const std::string& m) {
    const Tensor W1 = transposed(m + "_W1");
    ff = W1.shape().dim(0);
    put_ffn(out, heed, W1, flat(m + "_b1"), transposed(m + "_W2"), flat(m + "_b2"));
    norm(heed + "/ln", m + "_ffn");
  };
  for (int64_t i = 0; i < enc_layers; ++i) {
    const std::string h = "encoder/layer_" + std::to_string(i),
                      m = "encoder_l" + std::to_string(i + 1);
    attention(h + "/self_attn", m + "_self", true);
    ffn(h + "/ffn", m + "_ffn");
  }
  for (int64_t i = 0; i < dec_layers; ++i) {
    const std::string h = "decoder/layer_" + std::to_string(i),
                      m = "decoder_l" + std::to_string(i + 1);
    attention(h + "/self_attn", m + "_self", true);
    attention(h + "/cross_attn", m + "_context", false);
    ffn(h + "/ffn", m + "_ffn");
  }
  if (pre_norm) {
    put_norm(out, "encoder/final_ln", flat("encoder_top_ln_scale"), flat("encoder_top_ln_bias"));
    put_norm(out, "decoder/final_ln", flat("decoder_top_ln_scale"), flat("decoder_top_ln_bias"));
  }

  const nlohmann::json config =
      imported_config({.d = d,
                       .heads = heads,
                       .ff = ff,
                       .enc_layers = enc_layers,
                       .dec_layers = dec_layers,
                       .max_positions = max_positions,
                       .norm = pre_norm ? NormPlacement::Pre : NormPlacement::Post,
                       .activation = FfnActivation::Relu,
                       .layer_norm_eps = 1e-9f,
                       .tied = tied,
                       .src_eos = true,
                       .from = "marian"},
                      src, tgt);
  return write_model_dir(out_dir, config, src, tgt, out);
}

}  // namespace heed
