// A heed Transformer as a CTranslate2 model directory (see the header).
#include "heed/models/ctranslate2_export.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "heed/data/vocab.h"
#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/nn/transformer.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

// CTranslate2's Activation enum (python/ctranslate2/specs/common_spec.py)
constexpr int8_t kRelu = 0, kGeluTanh = 1;

struct Builder {
  const Safetensors& weights;
  const std::string& dir;
  ct2::ModelBin& out;

  const Tensor& tensor(const std::string& name) const {
    auto it = weights.tensors.find(name);
    check(it != weights.tensors.end(), dir, "/model.safetensors: no tensor ", name);
    return it->second;
  }
  void put(const std::string& name, const Tensor& t) {
    std::vector<uint32_t> shape;
    for (int64_t d : t.shape().dims()) shape.push_back(static_cast<uint32_t>(d));
    out.variables[name] = ct2::float_tensor(shape, t.data());
  }
  void put(const std::string& name, const std::string& heed_name) { put(name, tensor(heed_name)); }
  void linear(const std::string& scope, const std::string& W, const std::string& b) {
    put(scope + "/weight", W);
    put(scope + "/bias", b);
  }
  void layer_norm(const std::string& scope, const std::string& heed_scope) {
    put(scope + "/gamma", heed_scope + "/gamma");
    put(scope + "/beta", heed_scope + "/beta");
  }
  // A layer's self-attention (heed: self_attn, with its fused [Q; K; V]) and feed-forward; the
  // layer's scope is the same in both ("encoder/layer_0").
  void self_attention_and_ffn(const std::string& s) {
    layer_norm(s + "/self_attention/layer_norm", s + "/self_attn/ln");
    linear(s + "/self_attention/linear_0", s + "/self_attn/W_qkv", s + "/self_attn/b_qkv");
    linear(s + "/self_attention/linear_1", s + "/self_attn/W_o", s + "/self_attn/b_o");
    ffn(s + "/ffn", s + "/ffn");
  }
  void ffn(const std::string& scope, const std::string& heed_scope) {
    layer_norm(scope + "/layer_norm", heed_scope + "/ln");
    linear(scope + "/linear_0", heed_scope + "/W1", heed_scope + "/b1");
    linear(scope + "/linear_1", heed_scope + "/W2", heed_scope + "/b2");
  }
  // The scalars every Transformer{Encoder,Decoder}Spec declares.
  void side(const std::string& scope, const TransformerSeq2SeqConfig& c) {
    out.variables[scope + "/num_heads"] = ct2::int16_scalar(static_cast<int16_t>(c.layer.heads));
    out.variables[scope + "/pre_norm"] = ct2::int8_scalar(c.layer.norm == NormPlacement::Pre);
    out.variables[scope + "/activation"] =
        ct2::int8_scalar(c.layer.activation == FfnActivation::Gelu ? kGeluTanh : kRelu);
    out.variables[scope + "/scale_embeddings"] = ct2::int8_scalar(1);
  }
};

void refuse_what_ctranslate2_cannot_run(const TransformerSeq2SeqConfig& c, const std::string& dir) {
  check(!c.audio, dir, ": a speech recognizer (CTranslate2's TransformerSpec reads tokens)");
  check(c.ctc_weight == 0, dir, ": joint CTC-attention (--ctc-weight) has no CTranslate2 spec");
  check(!c.layer.monotonic, dir,
        ": monotonic cross-attention (--attention monotonic|mocha) has no CTranslate2 spec");
  check(!c.layer.causal_encoder, dir,
        ": a causal encoder (--causal-encoder): CTranslate2's encoder attends both ways");
  check(c.layer.wait_k == 0, dir,
        ": a wait-k model (--wait-k): CTranslate2 decodes with the whole source");
  check(c.layer.heads <= 0x7fff, dir, ": ", c.layer.heads, " heads");
}

// A heed Transformer's config, refused by name when CTranslate2 cannot run it.
TransformerSeq2SeqConfig exportable_config(const std::string& dir) {
  const nlohmann::json config = read_config(dir);
  check(config.value("model", std::string()) == TransformerSeq2SeqConfig::kFamily, dir,
        ": config.json says --model ", config.value("model", std::string("?")),
        "; CTranslate2 export is for --model transformer");
  TransformerSeq2SeqConfig c = TransformerSeq2SeqConfig::from_json(config);
  refuse_what_ctranslate2_cannot_run(c, dir);
  return c;
}

// model.bin's variables for the Transformer `c` of `dir`.
ct2::ModelBin model_bin(const std::string& dir, const TransformerSeq2SeqConfig& c) {
  const Safetensors weights = read_safetensors((fs::path(dir) / "model.safetensors").string());
  ct2::ModelBin m{.spec = "TransformerSpec", .revision = 7, .variables = {}, .aliases = {}};
  Builder b{weights, dir, m};
  const bool pre = c.layer.norm == NormPlacement::Pre;

  // the encoder (TransformerEncoderSpec): one source embedding, position table, layers
  b.side("encoder", c);
  m.variables["encoder/embeddings_merge"] = ct2::int8_scalar(0);
  m.variables["encoder/multi_query_attention"] = ct2::int8_scalar(0);
  b.put("encoder/embeddings_0/weight", "src_embed");
  const Tensor table = c.positions == Positions::Learned
                           ? b.tensor("positions")
                           : sinusoidal_positions(c.max_positions, c.layer.d_model);
  b.put("decoder/position_encodings/encodings", table);  // the encoder's is an alias of it
  m.aliases["encoder/position_encodings/encodings"] = "decoder/position_encodings/encodings";
  if (pre) b.layer_norm("encoder/layer_norm", "encoder/final_ln");
  for (int64_t i = 0; i < c.enc_layers; ++i)
    b.self_attention_and_ffn("encoder/layer_" + std::to_string(i));

  // the decoder (TransformerDecoderSpec): embeddings, layers with cross-attention, projection
  b.side("decoder", c);
  m.variables["decoder/alignment_layer"] = ct2::int16_scalar(-1);
  m.variables["decoder/alignment_heads"] = ct2::int16_scalar(1);
  for (const char* off :
       {"alibi", "alibi_use_positive_positions", "scale_alibi", "start_from_zero_embedding"})
    m.variables[std::string("decoder/") + off] = ct2::int8_scalar(0);
  if (c.share_embeddings) {  // one table: the decoder's name sorts first, the encoder's aliases it
    m.variables["decoder/embeddings/weight"] = m.variables["encoder/embeddings_0/weight"];
    m.variables.erase("encoder/embeddings_0/weight");
    m.aliases["encoder/embeddings_0/weight"] = "decoder/embeddings/weight";
  } else {
    b.put("decoder/embeddings/weight", "tgt_embed");
  }
  if (c.tie_output)
    m.aliases["decoder/projection/weight"] = "decoder/embeddings/weight";
  else
    b.put("decoder/projection/weight", "out/W");
  b.put("decoder/projection/bias", "out/b");
  if (pre) b.layer_norm("decoder/layer_norm", "decoder/final_ln");
  for (int64_t i = 0; i < c.dec_layers; ++i) {
    const std::string s = "decoder/layer_" + std::to_string(i);
    b.self_attention_and_ffn(s);
    b.layer_norm(s + "/attention/layer_norm", s + "/cross_attn/ln");
    b.linear(s + "/attention/linear_0", s + "/cross_attn/W_q", s + "/cross_attn/b_q");
    b.linear(s + "/attention/linear_1", s + "/cross_attn/W_kv", s + "/cross_attn/b_kv");
    b.linear(s + "/attention/linear_2", s + "/cross_attn/W_o", s + "/cross_attn/b_o");
  }
  return m;
}

}  // namespace

ct2::ModelBin ctranslate2_model_bin(const std::string& dir) {
  return model_bin(dir, exportable_config(dir));
}

std::vector<std::string> export_ctranslate2(const std::string& model_dir,
                                            const std::string& out_dir) {
  const TransformerSeq2SeqConfig c = exportable_config(model_dir);
  const ct2::ModelBin m = model_bin(model_dir, c);  // every check before any write
  // the float's shortest decimal (1e-05, not 9.99999974737875e-06)
  const nlohmann::json eps = json_number(c.layer.layer_norm_eps);
  const fs::path src(model_dir), out(out_dir);
  const Vocab src_vocab = Vocab::load((src / "src.vocab").string());
  const Vocab tgt_vocab = Vocab::load((src / "tgt.vocab").string());
  new_model_dir(out_dir,
                {"model.bin", "config.json", "shared_vocabulary.json", "source_vocabulary.json",
                 "target_vocabulary.json"},
                "export");

  std::vector<std::string> written;
  auto write = [&](const std::string& name, const std::string& bytes) {
    write_file_atomic((out / name).string(), bytes);
    written.push_back(name);
  };
  write("model.bin", ct2::encode_model_bin(m));
  // TransformerConfig's fields (SequenceToSequenceModelConfig's, sorted as CTranslate2 saves)
  const nlohmann::json config = {
      {"add_source_bos", false},        {"add_source_eos", false}, {"bos_token", "<s>"},
      {"decoder_start_token", "<s>"},   {"eos_token", "</s>"},     {"layer_norm_epsilon", eps},
      {"multi_query_attention", false}, {"unk_token", "<unk>"}};
  write("config.json", config.dump(2) + "\n");
  auto tokens = [](const Vocab& v) {
    nlohmann::json list = nlohmann::json::array();
    for (int32_t i = 0; i < v.size(); ++i) list.push_back(v.token(i));
    return list;
  };
  const nlohmann::json s = tokens(src_vocab), t = tokens(tgt_vocab);
  if (s == t) {
    write("shared_vocabulary.json", s.dump(2) + "\n");
  } else {
    write("source_vocabulary.json", s.dump(2) + "\n");
    write("target_vocabulary.json", t.dump(2) + "\n");
  }
  for (const char* spm : {"src.spm", "tgt.spm"})  // what splits text into the units it reads
    if (fs::exists(src / spm)) write(spm, read_file((src / spm).string()));
  return written;
}

}  // namespace heed
