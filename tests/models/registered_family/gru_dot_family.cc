// The test-only family's config, model and row (see the header).
#include "models/registered_family/gru_dot_family.h"

#include "heed/util/error.h"

namespace heed::testing {

GruDotConfig GruDotConfig::configure(const ModelOptions& o) {
  GruDotConfig c;
  c.embed = o.embed.value_or(c.embed);
  c.hidden = o.hidden.value_or(c.hidden);
  return c;
}

nlohmann::json GruDotConfig::to_json() const {
  return {{"model", kFamily},
          {"src_vocab", src_vocab},
          {"tgt_vocab", tgt_vocab},
          {"embed", embed},
          {"hidden", hidden}};
}

GruDotConfig GruDotConfig::from_json(const nlohmann::json& j) {
  GruDotConfig c;
  try {
    c.src_vocab = j.at("src_vocab").get<int64_t>();
    c.tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    c.embed = j.at("embed").get<int64_t>();
    c.hidden = j.at("hidden").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed ", kFamily, " config (", e.what(), ")");
  }
  return c;
}

std::string GruDotConfig::describe() const {
  return std::string(kFamily) + ", E " + std::to_string(embed) + ", H " + std::to_string(hidden);
}

void GruDotConfig::set_vocabularies(int64_t src, int64_t tgt) {
  src_vocab = src;
  tgt_vocab = tgt;
}

RnnSeq2SeqConfig GruDotConfig::rnn() const {
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Gru,
                               .vocab = src_vocab,
                               .embed = embed,
                               .hidden = hidden,
                               .bidirectional = false};
  c.tgt_vocab = tgt_vocab;
  c.tgt_embed = embed;
  c.dec_hidden = hidden;
  c.attention = AttentionKind::LuongDot;
  return c;
}

GruDotModel::GruDotModel(const GruDotConfig& config, const Scope& scope)
    : inner_(config.rnn(), scope) {}

Var GruDotModel::loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing) const {
  return inner_.loss(g, batch, label_smoothing);
}

std::unique_ptr<IncrementalDecoder> GruDotModel::start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                                int64_t max_len,
                                                                const AttentionChoice& attention,
                                                                int64_t rows_per_source) const {
  return inner_.start_decoding(g, batch, max_len, attention, rows_per_source);
}

void register_gru_dot_family() {
  for (const ModelFamily& f : model_families())
    if (f.name == GruDotConfig::kFamily) return;
  register_model_family(
      {.name = GruDotConfig::kFamily,
       .role = ModelRole::Seq2Seq,
       .summary = "a test's GRU encoder-decoder with dot attention (tests/models/)",
       .defaults = {},
       .alias = {},
       .default_config = [] { return Seq2SeqConfig{RegisteredConfig(GruDotConfig{})}; },
       .config_from_json =
           [](const nlohmann::json& j) {
             return Seq2SeqConfig{RegisteredConfig(GruDotConfig::from_json(j))};
           },
       .configure =
           [](const ModelOptions& o) {
             return Seq2SeqConfig{RegisteredConfig(GruDotConfig::configure(o))};
           },
       .make = [](const Seq2SeqConfig& c, const Scope& s) -> std::unique_ptr<Seq2SeqModel> {
         return std::make_unique<GruDotModel>(std::get<RegisteredConfig>(c).get<GruDotConfig>(), s);
       }});
}

}  // namespace heed::testing
