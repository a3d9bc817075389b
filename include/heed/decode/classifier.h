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

// A classifier loaded from its directory, as the inference API's one object.
class Classifier {
 public:
  explicit Classifier(const std::string& model_dir) : files_(load_classifier(model_dir)) {}
  std::vector<Prediction> classify(const std::vector<std::string>& lines,
                                   const ClassifyOptions& options = {}) const {
    return heed::classify(*files_, lines, options);
  }
  const ClassifierFiles& files() const { return *files_; }
  const ClassifierConfig& config() const { return files_->model->config(); }

 private:
  std::unique_ptr<ClassifierFiles> files_;
};

}  // namespace heed
