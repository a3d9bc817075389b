// Running a trained sentence classifier (models/sentence_classifier.h) on text: labels, class
// probabilities, and the attention over the tokens (the r hops of Lin et al. 2017, or what
// [CLS] attends to), batch by batch. heed classify, attention and report, and later the
// Python package and the server, call this.
// Leaves out: loading (models/model_files.h) and training (train/classifier_trainer.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heed/models/model_files.h"

namespace heed {

struct Prediction {
  std::vector<std::string> tokens;
  int32_t label = 0;
  std::vector<float> probs;                   // [C]
  std::vector<std::vector<float>> attention;  // [r][len(tokens)] (self-attention only)
  double redundancy = 0;                      // ||A A^T - I||_F of this sentence's hops
  // syntactic attention's tree: [len(tokens) + 1][len(tokens)], p(parent(m) = h) at [h][m - 1]
  // with h = 0 the root (nn/syntactic_attention.h); empty without
  std::vector<std::vector<float>> tree;
};

struct ClassifyOptions {
  int64_t batch = 64;            // sentences classified together
  bool attention = true;         // false: no Prediction::attention or redundancy (a [CLS]
                                 // Transformer then skips computing its [CLS] attention)
  std::string name = "<input>";  // what errors call the lines' source
};

// Classifies lines; an empty line gets an Error naming options.name and the line.
std::vector<Prediction> classify(const ClassifierFiles& m, const std::vector<std::string>& lines,
                                 const ClassifyOptions& options = {});

// A classifier loaded from its directory, as the inference API's one object; or an ensemble of
// several (heed classify --model A B): each member reads the text its own way (its vocabulary,
// its lowercasing), the class probabilities are the mean of the members' and the label their
// argmax; tokens, attention and redundancy are the first member's. The members must have the
// same number of classes (checked, naming both directories).
class Classifier {
 public:
  explicit Classifier(const std::string& model_dir)
      : Classifier(std::vector<std::string>{model_dir}) {}
  explicit Classifier(const std::vector<std::string>& model_dirs);
  std::vector<Prediction> classify(const std::vector<std::string>& lines,
                                   const ClassifyOptions& options = {}) const;
  const ClassifierFiles& files() const { return *members_.front(); }
  const ClassifierConfig& config() const { return members_.front()->model->config(); }
  size_t size() const { return members_.size(); }

 private:
  std::vector<std::unique_ptr<ClassifierFiles>> members_;
};

}  // namespace heed
