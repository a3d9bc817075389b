// The model families of heed, one row each: its name (--model and config.json's "model", and
// an alias the command line also takes), what it is (an encoder-decoder or a classifier), its
// typed config, how the model options make one (configure, in the family's own file beside its
// from_json), a factory, and the training defaults it brings (the learning-rate schedule of its
// paper). Training, loading, the command line, Python, viz and bench look a family up here;
// nothing else switches on the model kind.
// A new encoder-decoder family: its config (with the members RnnSeq2SeqConfig has: kFamily,
// configure, to_json, from_json, describe, set_vocabularies, joint_vocabulary), its model (a
// Seq2SeqModel), one alternative in Seq2SeqConfig and one row in registry.cc; or, outside heed's
// sources (a test's family), a RegisteredConfig and register_model_family. See "Adding a model
// family" in docs/ARCHITECTURE.md.
// Leaves out: reading model directories (models/model_files.h) and training (train/).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "heed/models/conv_seq2seq.h"
#include "heed/models/ctc.h"
#include "heed/models/model_options.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/sentence_classifier.h"
#include "heed/models/seq2seq.h"
#include "heed/models/transformer_seq2seq.h"
#include "heed/util/error.h"

namespace heed {

// What a family is, and so which task trains it and which API runs it.
enum class ModelRole { Seq2Seq, Classifier };

// The config of a family registered at run time, outside Seq2SeqConfig's alternatives (a test's
// family): any config type with the members every seq2seq config offers, behind one interface.
class RegisteredConfig {
 public:
  template <class Config>
  explicit RegisteredConfig(Config c) : self_(std::make_unique<Held<Config>>(std::move(c))) {}
  RegisteredConfig(const RegisteredConfig& o) : self_(o.self_->clone()) {}
  RegisteredConfig& operator=(const RegisteredConfig& o) {
    self_ = o.self_->clone();
    return *this;
  }
  RegisteredConfig(RegisteredConfig&&) noexcept = default;
  RegisteredConfig& operator=(RegisteredConfig&&) noexcept = default;
  ~RegisteredConfig() = default;

  std::string_view family() const { return self_->family(); }
  nlohmann::json to_json() const { return self_->to_json(); }
  std::string describe() const { return self_->describe(); }
  void set_vocabularies(int64_t src, int64_t tgt) { self_->set_vocabularies(src, tgt); }
  bool joint_vocabulary() const { return self_->joint_vocabulary(); }
  // The config as its type (an Error if it is another family's).
  template <class Config>
  const Config& get() const {
    const auto* held = dynamic_cast<const Held<Config>*>(self_.get());
    check(held != nullptr, "a ", family(), " config is not a ", Config::kFamily, " config");
    return held->config;
  }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual std::unique_ptr<Interface> clone() const = 0;
    virtual std::string_view family() const = 0;
    virtual nlohmann::json to_json() const = 0;
    virtual std::string describe() const = 0;
    virtual void set_vocabularies(int64_t src, int64_t tgt) = 0;
    virtual bool joint_vocabulary() const = 0;
  };
  template <class Config>
  struct Held final : Interface {
    Config config;
    explicit Held(Config c) : config(std::move(c)) {}
    std::unique_ptr<Interface> clone() const override { return std::make_unique<Held>(config); }
    std::string_view family() const override { return Config::kFamily; }
    nlohmann::json to_json() const override { return config.to_json(); }
    std::string describe() const override { return config.describe(); }
    void set_vocabularies(int64_t src, int64_t tgt) override { config.set_vocabularies(src, tgt); }
    bool joint_vocabulary() const override { return config.joint_vocabulary(); }
  };
  std::unique_ptr<Interface> self_;
};

// The typed config of an encoder-decoder: one alternative per seq2seq family of heed, and one
// for families registered at run time.
using Seq2SeqConfig = std::variant<RnnSeq2SeqConfig, TransformerSeq2SeqConfig, ConvSeq2SeqConfig,
                                   CtcConfig, RegisteredConfig>;

// What a family's paper trains it with, unless the command line says otherwise.
struct TrainingDefaults {
  bool inverse_sqrt = false;  // the rate: inverse-sqrt after warmup (else reduce on plateau)
  int64_t warmup = 0;         // steps of linear warmup to the peak rate
  float adam_beta2 = 0.999f;  // Adam's second-moment decay
};

struct ModelFamily {
  std::string_view name;  // --model and config.json's "model"
  ModelRole role;
  std::string_view summary;  // one line for --help
  TrainingDefaults defaults;
  std::string_view alias;  // another name --model takes for it (within its role), or empty
  // seq2seq families: the config with its defaults, the config of a config.json, the config of
  // the model options, a model
  Seq2SeqConfig (*default_config)() = nullptr;
  Seq2SeqConfig (*config_from_json)(const nlohmann::json& j) = nullptr;
  Seq2SeqConfig (*configure)(const ModelOptions& options) = nullptr;
  std::unique_ptr<Seq2SeqModel> (*make)(const Seq2SeqConfig& config, const Scope& scope) = nullptr;
  // classifier families: the config of a config.json, and of the model options, a model
  ClassifierConfig (*classifier_from_json)(const nlohmann::json& j) = nullptr;
  ClassifierConfig (*classifier_configure)(const ModelOptions& options) = nullptr;
  std::unique_ptr<SentenceClassifier> (*make_classifier)(const ClassifierConfig& config,
                                                         const Scope& scope) = nullptr;
};

// Every row, heed's in their order, then the registered ones (references to rows stay valid).
const std::deque<ModelFamily>& model_families();
// A family of its own (a test's): one more row, found by name from then on. Its name must be
// new; its config a RegisteredConfig (seq2seq). Not thread-safe: before any lookup runs beside it.
void register_model_family(const ModelFamily& family);
// By name; an Error lists the names of that role's families (`what`: the option or file).
const ModelFamily& model_family(std::string_view name, std::string_view what = "model");
// By name or alias among the families of `role` (--model under --task).
const ModelFamily& model_family(std::string_view name, ModelRole role, std::string_view what);
// The family of a config.json object (its "model"); `dir` names it in errors.
const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir);
// The same, which must have `role`: an Error names what the model is and what runs it.
const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir,
                                 ModelRole role);
// "rnn | transformer"; with `aliases`, each alias after its name: "conv-classifier (conv)"
std::string family_names(ModelRole role, bool aliases = false);

// Whether a config.json object is a classifier's (its "model" a classifier family).
bool is_classifier_config(const nlohmann::json& config);
// A classifier's config from its config.json object (its family's from_json); `dir` names it.
ClassifierConfig classifier_config(const nlohmann::json& config, std::string_view dir);
// A classifier of a typed config (its family's factory), with fresh parameters in `scope`.
std::unique_ptr<SentenceClassifier> make_classifier(const ClassifierConfig& config,
                                                    const Scope& scope);

// Every seq2seq config, whatever its family
const ModelFamily& family_of(const Seq2SeqConfig& c);
nlohmann::json to_json(const Seq2SeqConfig& c);  // config.json's model part
std::string describe(const Seq2SeqConfig& c);    // for the training log
void set_vocabularies(Seq2SeqConfig& c, int64_t src, int64_t tgt);
bool joint_vocabulary(const Seq2SeqConfig& c);  // one vocabulary (and table) of both sides
// A speech recognizer: the source is audio through `front` (an Error for a family that has no
// front end yet); reads_audio says whether a config's source is audio.
void set_audio(Seq2SeqConfig& c, const AudioFrontEndConfig& front);
bool reads_audio(const Seq2SeqConfig& c);

// A model of a typed config, with fresh parameters in `scope`.
std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const Seq2SeqConfig& config, const Scope& scope);
// A model from its config.json object, with fresh parameters in `scope`; `dir` names the
// model in errors.
std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const nlohmann::json& config, const Scope& scope,
                                                 std::string_view dir = "config.json");

}  // namespace heed
