// The model families of heed, one row each: its name (--model and config.json's "model"), what
// it is (an encoder-decoder or a classifier), its typed config, a factory, and the training
// defaults it brings (the learning-rate schedule of its paper). Training, loading, the command
// line, viz and bench look a family up here; nothing else switches on the model kind.
// A new encoder-decoder family: its config (with the members RnnSeq2SeqConfig has: kFamily,
// to_json, from_json, describe, set_vocabularies, joint_vocabulary), its model (a
// Seq2SeqModel), one alternative in Seq2SeqConfig and one row in registry.cc; see "Adding a
// model family" in docs/ARCHITECTURE.md.
// Leaves out: reading model directories (models/model_files.h) and training (train/).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "heed/models/conv_seq2seq.h"
#include "heed/models/ctc.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/seq2seq.h"
#include "heed/models/transformer_seq2seq.h"

namespace heed {

// What a family is, and so which task trains it and which API runs it.
enum class ModelRole { Seq2Seq, Classifier };

// The typed config of an encoder-decoder: one alternative per seq2seq family.
using Seq2SeqConfig =
    std::variant<RnnSeq2SeqConfig, TransformerSeq2SeqConfig, ConvSeq2SeqConfig, CtcConfig>;

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
  // seq2seq families: the config with its defaults, the config of a config.json, a model
  Seq2SeqConfig (*default_config)() = nullptr;
  Seq2SeqConfig (*config_from_json)(const nlohmann::json& j) = nullptr;
  std::unique_ptr<Seq2SeqModel> (*make)(const Seq2SeqConfig& config, const Scope& scope) = nullptr;
};

std::span<const ModelFamily> model_families();
// By name; an Error lists the names of that role's families (`what`: the option or file).
const ModelFamily& model_family(std::string_view name, std::string_view what = "model");
// The family of a config.json object (its "model"); `dir` names it in errors.
const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir);
// The same, which must have `role`: an Error names what the model is and what runs it.
const ModelFamily& config_family(const nlohmann::json& config, std::string_view dir,
                                 ModelRole role);
std::string family_names(ModelRole role);  // "rnn | transformer"

// Every seq2seq config, whatever its family
const ModelFamily& family_of(const Seq2SeqConfig& c);
nlohmann::json to_json(const Seq2SeqConfig& c);  // config.json's model part
std::string describe(const Seq2SeqConfig& c);    // for the training log
void set_vocabularies(Seq2SeqConfig& c, int64_t src, int64_t tgt);
bool joint_vocabulary(const Seq2SeqConfig& c);  // one vocabulary (and table) of both sides

// A model of a typed config, with fresh parameters in `scope`.
std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const Seq2SeqConfig& config, const Scope& scope);
// A model from its config.json object, with fresh parameters in `scope`; `dir` names the
// model in errors.
std::unique_ptr<Seq2SeqModel> make_seq2seq_model(const nlohmann::json& config, const Scope& scope,
                                                 std::string_view dir = "config.json");

}  // namespace heed
