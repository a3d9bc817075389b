// Training, loading and running of a sentence classifier (models/sentence_classifier.h) from
// labelled files as published (data/labeled.h: SST's "<label> <sentence>"): a vocabulary built
// on the training file, then the shared loop (train/loop.h) with validation by dev
// cross-entropy and accuracy; with a test file, the best model's test accuracy at the end.
// Model directory: config.json (the classifier's config plus "units"), src.vocab,
// model.safetensors, and the loop's checkpoint/, train.jsonl, epochs/.
// Leaves out: the model's equations (models/) and the CLI (cli/classify.cc).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "heed/autograd/parameter.h"
#include "heed/data/segmenter.h"
#include "heed/data/vocab.h"
#include "heed/models/sentence_classifier.h"
#include "heed/train/loop.h"

namespace heed {

struct ClassifyTrainConfig : LoopOptions {
  std::string train, valid, test;  // labelled files; test optional
  Units units = Units::Word;       // word | char
  VocabOptions vocab;
  ClassifierConfig model;  // vocab and classes are filled in from the data
};

struct ClassifyResult {
  LoopResult loop;
  double test_accuracy = -1;  // with a test file: the best model's accuracy, in %
};
ClassifyResult train_classifier(const ClassifyTrainConfig& config, std::ostream& log);

struct ClassifierFiles {
  nlohmann::json config;
  Segmenter seg;
  Vocab vocab;
  ParameterStore params;
  std::unique_ptr<SentenceClassifier> model;
};
std::unique_ptr<ClassifierFiles> load_classifier(const std::string& dir);

struct Prediction {
  std::vector<std::string> tokens;
  int32_t label = 0;
  std::vector<float> probs;                   // [C]
  std::vector<std::vector<float>> attention;  // [r][len(tokens)] (self-attention only)
  double redundancy = 0;                      // ||A A^T - I||_F of this sentence's hops
};
// Classifies lines (batches of `batch` sentences); an empty line gets an Error naming `name`
// and the line. attention = false: no Prediction::attention or redundancy (a [CLS] Transformer
// then skips computing its [CLS] attention).
std::vector<Prediction> classify(const ClassifierFiles& m, const std::vector<std::string>& lines,
                                 const std::string& name, int64_t batch = 64,
                                 bool attention = true);

}  // namespace heed
