// The families' rows (see the header).
#include "heed/models/registry.h"

#include "heed/models/sentence_classifier.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// A seq2seq family's row from its config and model types.
template <class Config, class Model>
constexpr ModelFamily seq2seq_family(std::string_view summary, TrainingDefaults defaults) {
  return {.name = Config::kFamily,
          .role = ModelRole::Seq2Seq,
          .summary = summary,
          .defaults = defaults,
          .default_config = [] { return Seq2SeqConfig{Config{}}; },
          .config_from_json =
              [](const nlohmann::json& j) { return Seq2SeqConfig{Config::from_json(j)}; },
          .make = [](const Seq2SeqConfig& c, const Scope& s) -> std::unique_ptr<Seq2SeqModel> {
            return std::make_unique<Model>(std::get<Config>(c), s);
          }};
}

const ModelFamily kFamilies[] = {
    seq2seq_family<RnnSeq2SeqConfig, RnnSeq2Seq>(
        "encoder-decoder RNN with --attention (Bahdanau et al. 2015; Luong et al. 2015)", {}),
    seq2seq_family<TransformerSeq2SeqConfig, TransformerSeq2Seq>(
        "the Transformer (Vaswani et al. 2017)",
        {.inverse_sqrt = true, .warmup = 4000, .adam_beta2 = 0.98f}),
    seq2seq_family<ConvSeq2SeqConfig, ConvSeq2Seq>(
        "convolutional encoder-decoder, attention in every decoder layer (Gehring et al. 2017)",
        {}),
    seq2seq_family<CtcConfig, CtcModel>(
        "an encoder and CTC, no decoder: labels read off every position (Graves et al. 2006)", {}),
    {.name = kSelfAttentiveClassifier,
     .role = ModelRole::Classifier,
     .summary = "BiLSTM + self-attention or pooling (Lin et al. 2017)",
     .defaults = {}},
    {.name = kTransformerClassifier,
     .role = ModelRole::Classifier,
     .summary = "a Transformer encoder + pooling or [CLS]",
     .defaults = {.warmup = 200}},
    {.name = kConvClassifier,
     .role = ModelRole::Classifier,
     .summary = "gated dilated convolutions + pooling (WaveNet's blocks)",
     .defaults = {}},
    {.name = kKimCnn,
     .role = ModelRole::Classifier,
     .summary = "convolutions of widths 3, 4, 5 and max over time (Kim 2014)",
     .defaults = {}},
};

}  // namespace

std::span<const ModelFamily> model_families() {
  return kFamilies;
}

std::string family_names(ModelRole role) {
  std::string s;
  for (const auto& f : kFamilies)
    if (f.role == role) s += (s.empty() ? "" : " | ") + std::string(f.name);
  return s;
}

const ModelFamily& model_family(std::string_view name, std::string_view what) {
  for (const auto& f : kFamilies)
    if (f.name == name) return f;
  fail("unknown ", what, " '", name, "' (encoder-decoders: ", family_names(ModelRole::Seq2Seq),
       "; classifiers: ", family_names(ModelRole::Classifier), ")");
}

const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir) {
  const auto it = config.find("model");
  check(it != config.end() && it->is_string(), dir, ": config.json names no \"model\"");
  return model_family(it->get<std::string>(), std::string(dir) + ": config.json's model");
}

const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir,
                                 ModelRole role) {
  const ModelFamily& f = config_family(config, dir);
  if (f.role != role)
    fail(dir, ": a ", f.name, " model is ",
         role == ModelRole::Seq2Seq
             ? "a classifier, not an encoder-decoder (heed classify runs it)"
             : "an encoder-decoder, not a classifier (heed translate runs it)");
  return f;
}

const ModelFamily& family_of(const Seq2SeqConfig& c) {
  return std::visit([](const auto& x) -> const ModelFamily& { return model_family(x.kFamily); }, c);
}

nlohmann::json to_json(const Seq2SeqConfig& c) {
  return std::visit([](const auto& x) { return x.to_json(); }, c);
}

std::string describe(const Seq2SeqConfig& c) {
  return std::visit([](const auto& x) { return x.describe(); }, c);
}

void set_vocabularies(Seq2SeqConfig& c, int64_t src, int64_t tgt) {
  std::visit([&](auto& x) { x.set_vocabularies(src, tgt); }, c);
}

bool joint_vocabulary(const Seq2SeqConfig& c) {
  return std::visit([](const auto& x) { return x.joint_vocabulary(); }, c);
}

std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const Seq2SeqConfig& c, const Scope& scope) {
  return family_of(c).make(c, scope);
}

std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const nlohmann::json& j, const Scope& scope,
                                                 std::string_view dir) {
  const ModelFamily& f = config_family(j, dir, ModelRole::Seq2Seq);
  return f.make(f.config_from_json(j), scope);
}

}  // namespace heed
