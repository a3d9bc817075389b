// The sentence classifier's trainer, loader and runner (see the header).
#include "heed/train/classifier_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <ostream>

#include "heed/autograd/ops.h"
#include "heed/data/labeled.h"
#include "heed/data/sst_trees.h"
#include "heed/dist/communicator.h"
#include "heed/io/model_dir.h"
#include "heed/models/model_files.h"
#include "heed/models/registry.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed {

namespace {

using Sentences = std::vector<std::vector<int32_t>>;

Sentences encode_all(const std::vector<std::string>& texts, const Segmenter& seg, const Vocab& v) {
  Sentences out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(v.encode(seg.split(t)));
  return out;
}

// Dev cross-entropy and accuracy (%), on an inference graph.
TrainingTask::Validation evaluate(const SentenceClassifier& model, const Sentences& s,
                                  const std::vector<int32_t>& labels, int64_t batch) {
  double ce = 0;
  int64_t right = 0;
  Graph g(Mode::Inference);
  for (size_t i = 0; i < s.size(); i += static_cast<size_t>(batch)) {
    const size_t n = std::min(s.size() - i, static_cast<size_t>(batch));
    ClassifyBatch b = slice_classify_batch(s, labels, i, n);
    SentenceClassifier::Output o = model.forward(g, b);
    ce += cross_entropy(o.logits, b.labels).value().data()[0] * static_cast<double>(n);
    const float* z = o.logits.value().data();  // [B, C]
    const int64_t C = o.logits.dim(1);
    for (size_t k = 0; k < n; ++k) {
      const float* row = z + static_cast<int64_t>(k) * C;
      right += std::max_element(row, row + C) - row == b.labels[k];
    }
    g.clear();
  }
  const auto N = static_cast<double>(std::max<size_t>(s.size(), 1));
  return {.ce = ce / N, .metric = 100.0 * static_cast<double>(right) / N};
}

// Classification as a task of the shared loop: sentences bucketed by length.
class ClassifyTask final : public TrainingTask {
 public:
  ClassifyTask(const SentenceClassifier& model, Sentences train, std::vector<int32_t> labels,
               Sentences dev, std::vector<int32_t> dev_labels, int64_t batch)
      : model_(model),
        train_(std::move(train)),
        labels_(std::move(labels)),
        dev_(std::move(dev)),
        dev_labels_(std::move(dev_labels)),
        batch_(batch) {
    for (const auto& s : train_) lengths_.push_back(static_cast<int64_t>(s.size()));
  }
  std::span<const int64_t> lengths() const override { return lengths_; }
  std::span<const int64_t> costs() const override { return lengths_; }
  BatchLoss loss(Graph& g, std::span<const size_t> examples, int64_t /*step*/) const override {
    Sentences s;
    std::vector<int32_t> y;
    for (size_t i : examples) {
      s.push_back(train_[i]);
      y.push_back(labels_[i]);
    }
    ClassifyBatch b = make_classify_batch(s, y);
    return {model_.loss(g, b), std::accumulate(b.lengths.begin(), b.lengths.end(), int64_t{0}),
            static_cast<double>(examples.size())};
  }
  Validation validate() const override { return evaluate(model_, dev_, dev_labels_, batch_); }
  std::string metric_name() const override { return "acc"; }
  bool lower_is_better() const override { return false; }
  std::string token_name() const override { return "tok"; }

 private:
  const SentenceClassifier& model_;
  Sentences train_;
  std::vector<int32_t> labels_;
  Sentences dev_;
  std::vector<int32_t> dev_labels_;
  int64_t batch_;
  std::vector<int64_t> lengths_;
};

}  // namespace

ClassifyResult train_classifier(const ClassifyTrainConfig& cfg_in, std::ostream& log) {
  ClassifyTrainConfig cfg = cfg_in;
  check(!cfg.save_dir.empty(), "train: --save DIR is required");
  check(!cfg.train.empty() && !cfg.valid.empty(),
        "train --task classify: --train and --valid are required");
  // 1. data, as published; dev and test labels must be classes of the training file. Trees:
  // every phrase of the training trees, the roots (sentences) of the others
  auto read = [&](const std::string& path, TreeExamples which, int32_t max_classes) {
    return cfg.trees > 0 ? sst_examples(read_sst_trees(path), which, cfg.trees)
                         : read_labeled(path, max_classes);
  };
  LabeledCorpus train = read(cfg.train, TreeExamples::Phrases, 0);
  check(train.classes >= 2, cfg.train, ": only one class (", train.classes - 1,
        ") in the training labels");
  if (cfg.trees == 0) {  // a labelled file's classes are 0..largest: each must occur
    std::vector<bool> seen(static_cast<size_t>(train.classes), false);
    for (int32_t y : train.labels) seen[static_cast<size_t>(y)] = true;
    std::string missing;
    int32_t gaps = 0;
    for (int32_t y = 0; y < train.classes; ++y)
      if (!seen[static_cast<size_t>(y)] && ++gaps <= 10)
        missing += (missing.empty() ? "" : ", ") + std::to_string(y);
    check(gaps == 0, cfg.train, ": the labels go up to ", train.classes - 1, " but ", gaps,
          gaps == 1 ? " of them never occurs (" : " of them never occur (", missing,
          gaps > 10 ? ", ..." : "",
          "): a model would have classes no example teaches; number the labels 0..N-1");
  }
  LabeledCorpus valid = read(cfg.valid, TreeExamples::Roots, train.classes);
  // 2. units and vocabulary: built on the training file, or the run's own on resume
  const SaveDir save = prepare_save_dir(cfg);  // locked until the run is over
  const bool resumed = save.resumes;
  const fs::path dir(cfg.save_dir);
  // data-parallel: rank 0 builds and writes the vocabulary, the others read it once written
  dist::Communicator& comm = dist::world();
  const bool derive = !resumed && comm.root();
  if (!comm.root()) comm.barrier();
  Segmenter seg = classifier_segmenter(cfg.units);
  std::vector<std::vector<std::string>> units;
  for (const auto& t : train.texts) units.push_back(seg.split(t));
  Vocab vocab = derive ? Vocab::build(units, cfg.vocab) : Vocab::load((dir / "src.vocab").string());
  if (derive) vocab.save((dir / "src.vocab").string());
  if (comm.root()) comm.barrier();
  Sentences train_ids;
  train_ids.reserve(units.size());
  for (const auto& u : units) train_ids.push_back(vocab.encode(u));
  cfg.model.set_vocab(vocab.size());
  cfg.model.classes = train.classes;
  cfg.model.lowercase = cfg.trees > 0;  // read_sst_trees lowercases: so must whoever runs the model
  // 3. the model, then the shared loop
  nlohmann::json config = cfg.model.to_json();
  config["units"] = units_name(cfg.units);
  ParameterStore params;
  Rng init_rng(cfg.seed);
  const std::unique_ptr<SentenceClassifier> model =
      make_classifier(cfg.model, Scope(params, init_rng));
  char penalty_text[32];
  std::snprintf(penalty_text, sizeof penalty_text, "%g", static_cast<double>(cfg.model.penalty));
  log << "heed train: " << cfg.model.describe() << " classifier ("
      << pooling_name(cfg.model.pooling)
      << (cfg.model.pooling == Pooling::Attention
              ? ", r " + std::to_string(cfg.model.hops) + ", penalty " + penalty_text
              : std::string())
      << "), " << train.texts.size()
      << (cfg.trees > 0 ? " training phrases, " : " training sentences, ") << train.classes
      << " classes, vocab " << vocab.size() << ", " << params.numel() << " parameters\n"
      << std::flush;
  ClassifyTask task(*model, std::move(train_ids), train.labels, encode_all(valid.texts, seg, vocab),
                    valid.labels, cfg.batch_size);
  ClassifyResult result;
  cfg.data = {{"train", cfg.train}, {"valid", cfg.valid}, {"training_sentences", units.size()}};
  if (cfg.trees > 0) cfg.data["trees_classes"] = cfg.trees;
  cfg.data["fingerprints"] = data_fingerprints({cfg.train, cfg.valid});
  result.loop = run_training(cfg, task, params, config, log);
  if (!cfg.test.empty() && !cfg.measure &&
      comm.root()) {  // the selected (best dev) model on the test file
    LabeledCorpus test = read(cfg.test, TreeExamples::Roots, train.classes);
    load_weights((dir / "model.safetensors").string(), params);
    auto v = evaluate(*model, encode_all(test.texts, seg, vocab), test.labels, cfg.batch_size);
    result.test_accuracy = v.metric;
    char line[160];
    std::snprintf(line, sizeof line,
                  "test  %s  acc %.2f  ce %.4f  (%zu sentences, best dev model)\n",
                  cfg.test.c_str(), v.metric, v.ce, test.texts.size());
    log << line << std::flush;
  }
  return result;
}

}  // namespace heed
