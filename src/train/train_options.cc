// Training's one way in (see the header): the model options through the family's row, the
// optimiser's defaults from the family, then the task's trainer.
#include "heed/train/train_options.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "heed/data/corpus.h"
#include "heed/dist/communicator.h"
#include "heed/kernels/bf16.h"
#include "heed/models/registry.h"
#include "heed/util/error.h"

namespace heed {

std::span<const Named<Task>> names(Task) {
  static constexpr Named<Task> kNames[] = {{Task::Translate, "translate"},
                                           {Task::Classify, "classify"}};
  return kNames;
}

std::span<const Named<ScheduleConfig::Kind>> names(ScheduleConfig::Kind) {
  static constexpr Named<ScheduleConfig::Kind> kNames[] = {
      {ScheduleConfig::Kind::ReduceOnPlateau, "plateau"},
      {ScheduleConfig::Kind::InverseSqrt, "inverse-sqrt"}};
  return kNames;
}

namespace {

// "1", "0.5": a bound as the command line prints it
std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

void check_bounds(std::string_view flag, const Bounds& b, double v) {
  using Kind = Bounds::Kind;
  if (b.finite || b.kind == Kind::Probability || b.kind == Kind::Fraction)
    check(std::isfinite(v), flag, ": Value ", number(v), " must be a finite number");
  switch (b.kind) {
    case Kind::Any:
      return;
    case Kind::NonNegative:
      check(v >= 0, flag, ": Value ", number(v), " not in range 0 to inf");
      return;
    case Kind::Positive:
      check(v > 0, flag, ": Value ", number(v), " must be a positive number");
      return;
    case Kind::Members:
      check(v == b.lo || v == b.hi, flag, ": Value ", number(v), " not in {", number(b.lo), ",",
            number(b.hi), "}");
      return;
    case Kind::Size:
    case Kind::Range:
    case Kind::Probability:
    case Kind::Fraction:
      check(v >= b.lo && v <= b.hi, flag, ": Value ", number(v), " not in range ", number(b.lo),
            " to ", number(b.hi));
      return;
  }
}

std::string family_help() {
  std::string s = "The architecture (default: rnn; --task classify: self-attentive): ";
  for (const ModelFamily& f : model_families()) {
    s += std::string(f.name);
    if (!f.alias.empty()) s += " (also " + std::string(f.alias) + " with --task classify)";
    s += f.role == ModelRole::Classifier ? ", classify: " : ": ";
    s += std::string(f.summary) + " | ";
  }
  s.resize(s.size() - 3);
  return s;
}

namespace {

// A config.json object as "key value, key value" (nested objects' keys as "encoder.kind"),
// without the sizes the data fills in.
void flatten(const nlohmann::json& j, const std::string& prefix, std::string& out) {
  for (const auto& [key, value] : j.items()) {
    if (key == "model" || key.find("vocab") != std::string::npos) continue;
    if (value.is_object()) {
      flatten(value, prefix + key + ".", out);
      continue;
    }
    if (!out.empty()) out += ", ";
    out += prefix;
    out += key;
    out += ' ';
    out += value.is_string() ? value.get<std::string>() : value.dump();
  }
}

}  // namespace

std::string family_defaults() {
  std::string s = "Each family's defaults (what --model NAME trains unless told otherwise):";
  for (const ModelFamily& f : model_families()) {
    std::string keys;
    flatten(f.role == ModelRole::Seq2Seq ? to_json(f.configure(ModelOptions{}))
                                         : f.classifier_configure(ModelOptions{}).to_json(),
            "", keys);
    s += "\n  " + std::string(f.name) + ": " + keys;
  }
  return s;
}

std::vector<std::string> family_choices() {
  std::vector<std::string> choices;
  const auto choose = [&choices](std::string_view n) {
    if (!n.empty() && std::find(choices.begin(), choices.end(), n) == choices.end())
      choices.emplace_back(n);
  };
  for (const ModelFamily& f : model_families()) {
    choose(f.name);
    choose(f.alias);
  }
  return choices;
}

namespace {

// The optimiser: the family's recipe (its paper's schedule, warmup and Adam beta2) unless the
// options say otherwise.
void family_optimiser(const TrainOptions& o, const TrainingDefaults& d, LoopOptions& loop) {
  loop.schedule = o.lr_schedule.value_or(d.inverse_sqrt ? ScheduleConfig::Kind::InverseSqrt
                                                        : ScheduleConfig::Kind::ReduceOnPlateau);
  loop.warmup = o.warmup.value_or(d.warmup);
  loop.fit_warmup = !o.warmup.has_value();
  loop.adam_beta2 = o.adam_beta2.value_or(d.adam_beta2);
}

TrainOutcome train_translation(const TrainOptions& o, const ModelFamily& family,
                               std::ostream& log) {
  check(family.role == ModelRole::Seq2Seq, "train: --model ", family.name,
        " is a classifier: add --task classify");
  TrainConfig config = o.seq2seq;
  check(!config.train_src.empty(), "train: --train-src is required (or --task classify --train)");
  config.tsv_columns = parse_tsv_columns(o.tsv_columns);
  config.tgt_vocab.min_freq = config.src_vocab.min_freq;
  check(config.wait_k_sample == 0 || o.shape.wait_k > 0,
        "--wait-k-sample trains a wait-k model at many k: give --wait-k too (the k it decodes "
        "with unless told)");
  ModelOptions shape = o.shape;
  // a recognizer's RNN cells start as PyTorch's unless told (nn/rnn.h RnnInit: measured faster
  // per update on spoken Multi30k)
  // (detected once, here: train_seq2seq reads the format it is given)
  if (config.format == CorpusFormat::Auto) config.format = detect_format(config.train_src);
  if (config.format == CorpusFormat::Audio && !shape.rnn_init) shape.rnn_init = RnnInit::Uniform;
  config.model = family.configure(shape);
  family_optimiser(o, family.defaults, config);
  return {.loop = train_seq2seq(config, log)};
}

TrainOutcome train_classification(const TrainOptions& o, const ModelFamily& family,
                                  std::ostream& log) {
  check(family.role == ModelRole::Classifier, "train --task classify: --model ", family.name,
        " is an encoder-decoder; the classifiers: ",
        family_names(ModelRole::Classifier, /*aliases=*/true));
  ClassifyTrainConfig c = o.classify;
  static_cast<LoopOptions&>(c) = o.seq2seq;
  if (!o.train_trees.empty() || !o.valid_trees.empty() || !o.test_trees.empty()) {
    check(!o.train_trees.empty() && !o.valid_trees.empty(),
          "train --task classify: trees need --train-trees and --valid-trees (--test-trees "
          "optional)");
    check(c.train.empty() && c.valid.empty() && c.test.empty(),
          "train --task classify: give either --train/--valid/--test (labelled sentences) or "
          "--train-trees/--valid-trees/--test-trees (SST trees), not both");
    c.train = o.train_trees;
    c.valid = o.valid_trees;
    c.test = o.test_trees;
    c.trees = o.classes.value_or(2);
  } else {
    check(!o.classes,
          "train --task classify: --classes goes with --train-trees (a labelled file's classes "
          "are its labels)");
  }
  c.units = o.seq2seq.src_units;
  c.vocab = o.seq2seq.src_vocab;
  c.model = family.classifier_configure(o.shape);
  family_optimiser(o, family.defaults, c);
  ClassifyResult r = train_classifier(c, log);
  return {.loop = r.loop, .test_accuracy = r.test_accuracy};
}

}  // namespace

TrainOutcome train(const TrainOptions& o, std::ostream& log) {
  if (o.seq2seq.precision == Precision::bf16 && !kernels::bf16_native() && dist::world().root())
    std::cerr << "warning: this CPU has no AVX512_BF16: --precision bfloat16 is emulated, and "
                 "slower than float32\n";
  check(!o.seq2seq.save_dir.empty(), "train: --save DIR is required");
  const ModelRole role = o.task == Task::Classify ? ModelRole::Classifier : ModelRole::Seq2Seq;
  const ModelFamily& family = [&]() -> const ModelFamily& {
    if (o.model) return model_family(*o.model, role, "--model");
    for (const ModelFamily& f : model_families())
      if (f.role == role) return f;
    fail("train: no family of models for this task");
  }();
  return role == ModelRole::Classifier ? train_classification(o, family, log)
                                       : train_translation(o, family, log);
}

}  // namespace heed
