// The families' rows (see the header).
#include "heed/models/registry.h"

#include <deque>

#include "heed/models/sentence_classifier.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// A seq2seq family's row from its config and model types.
template <class Config, class Model>
ModelFamily seq2seq_family(std::string_view summary, TrainingDefaults defaults) {
  return {.name = Config::kFamily,
          .role = ModelRole::Seq2Seq,
          .summary = summary,
          .defaults = defaults,
          .alias = {},
          .default_config = [] { return Seq2SeqConfig{Config{}}; },
          .config_from_json =
              [](const nlohmann::json& j) { return Seq2SeqConfig{Config::from_json(j)}; },
          .configure = [](const ModelOptions& o) { return Seq2SeqConfig{Config::configure(o)}; },
          .make = [](const Seq2SeqConfig& c, const Scope& s) -> std::unique_ptr<Seq2SeqModel> {
            return std::make_unique<Model>(std::get<Config>(c), s);
          }};
}

// A classifier family's row from its type (models/sentence_classifier.h).
template <class Family>
ModelFamily classifier_family(std::string_view summary, TrainingDefaults defaults,
                              std::string_view alias = {}) {
  return {.name = Family::kFamily,
          .role = ModelRole::Classifier,
          .summary = summary,
          .defaults = defaults,
          .alias = alias,
          .classifier_from_json = &Family::from_json,
          .classifier_configure = &Family::configure,
          .make_classifier = [](const ClassifierConfig& c, const Scope& s) {
            return std::make_unique<SentenceClassifier>(c, s);
          }};
}

std::deque<ModelFamily>& rows() {
  static std::deque<ModelFamily> families = {
      seq2seq_family<RnnSeq2SeqConfig, RnnSeq2Seq>(
          "encoder-decoder RNN with --attention (Bahdanau et al. 2015; Luong et al. 2015)", {}),
      seq2seq_family<TransformerSeq2SeqConfig, TransformerSeq2Seq>(
          "the Transformer (Vaswani et al. 2017)",
          {.inverse_sqrt = true, .warmup = 4000, .adam_beta2 = 0.98f}),
      seq2seq_family<ConvSeq2SeqConfig, ConvSeq2Seq>(
          "convolutional encoder-decoder, attention in every decoder layer (Gehring et al. 2017)",
          {}),
      seq2seq_family<CtcConfig, CtcModel>(
          "an encoder and CTC, no decoder: labels read off every position (Graves et al. 2006)",
          {}),
      classifier_family<SelfAttentiveClassifier>(
          "BiLSTM + self-attention (Lin et al. 2017) or --pooling", {}),
      classifier_family<TransformerClassifier>(
          "a Transformer encoder + --pooling mean (default) or cls", {.warmup = 200},
          TransformerClassifier::kAlias),
      classifier_family<ConvClassifier>(
          "gated dilated convolutions (WaveNet's blocks) + --pooling max (default)", {},
          ConvClassifier::kAlias),
      classifier_family<KimCnn>(
          "convolutions of --kim-widths and max over time, no hidden layer, dropout 0.5 (Kim "
          "2014)",
          {}),
  };
  return families;
}

}  // namespace

const std::deque<ModelFamily>& model_families() {
  return rows();
}

void register_model_family(const ModelFamily& family) {
  for (const auto& f : rows())
    check(f.name != family.name && (family.alias.empty() || f.alias != family.alias),
          "register_model_family: a family named '", family.name, "' is registered already");
  rows().push_back(family);
}

std::string family_names(ModelRole role, bool aliases) {
  std::string s;
  for (const auto& f : rows())
    if (f.role == role) {
      s += (s.empty() ? "" : " | ") + std::string(f.name);
      if (aliases && !f.alias.empty()) s += " (" + std::string(f.alias) + ")";
    }
  return s;
}

const ModelFamily& model_family(std::string_view name, std::string_view what) {
  for (const auto& f : rows())
    if (f.name == name) return f;
  fail("unknown ", what, " '", name, "' (encoder-decoders: ", family_names(ModelRole::Seq2Seq),
       "; classifiers: ", family_names(ModelRole::Classifier), ")");
}

const ModelFamily& model_family(std::string_view name, ModelRole role, std::string_view what) {
  for (const auto& f : rows())
    if (f.role == role && (f.name == name || (!f.alias.empty() && f.alias == name))) return f;
  return model_family(name, what);
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

bool is_classifier_config(const nlohmann::json& config) {
  const auto it = config.find("model");
  if (it == config.end() || !it->is_string()) return false;
  for (const auto& f : rows())
    if (f.role == ModelRole::Classifier && f.name == it->get<std::string>()) return true;
  return false;
}

ClassifierConfig classifier_config(const nlohmann::json& config, std::string_view dir) {
  return config_family(config, dir, ModelRole::Classifier).classifier_from_json(config);
}

std::unique_ptr<SentenceClassifier> make_classifier(const ClassifierConfig& config,
                                                    const Scope& scope) {
  return model_family(config.family()).make_classifier(config, scope);
}

namespace {
// A config's family name: its type's, or a registered family's own.
template <class Config>
std::string_view family_name(const Config& c) {
  if constexpr (std::is_same_v<Config, RegisteredConfig>)
    return c.family();
  else
    return Config::kFamily;
}
}  // namespace

const ModelFamily& family_of(const Seq2SeqConfig& c) {
  return std::visit(
      [](const auto& x) -> const ModelFamily& { return model_family(family_name(x)); }, c);
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

void set_audio(Seq2SeqConfig& c, const AudioFrontEndConfig& front) {
  std::visit(
      [&](auto& x) {
        if constexpr (requires { x.set_audio(front); })
          x.set_audio(front);
        else
          fail("the ", family_of(c).name,
               " family does not read audio (yet): --model ctc, rnn and transformer do");
      },
      c);
}

bool reads_audio(const Seq2SeqConfig& c) {
  return std::visit(
      [](const auto& x) {
        if constexpr (requires { x.audio.has_value(); })
          return x.audio.has_value();
        else
          return false;
      },
      c);
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
