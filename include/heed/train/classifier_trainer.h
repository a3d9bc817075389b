// Training of a sentence classifier (models/sentence_classifier.h) from
// labelled files as published (data/labeled.h: SST's "<label> <sentence>"): a vocabulary built
// on the training file, then the shared loop (train/loop.h) with validation by dev
// cross-entropy and accuracy; with a test file, the best model's test accuracy at the end.
// Model directory: config.json (the classifier's config plus "units"), src.vocab,
// model.safetensors, and the loop's checkpoint/, train.jsonl, epochs/.
// Leaves out: the model's equations (models/), loading (models/model_files.h) and running it
// (decode/classifier.h).
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
  // trees > 0: the files are SST trees (data/sst_trees.h), trained on every labelled phrase,
  // selected and tested on the roots, with this many classes (2: SST-2, 5: SST-5)
  int32_t trees = 0;
  Units units = Units::Word;  // word | char
  VocabOptions vocab;
  ClassifierConfig model;  // vocab and classes are filled in from the data
};

struct ClassifyResult {
  LoopResult loop;
  double test_accuracy = -1;  // with a test file: the best model's accuracy, in %
};
ClassifyResult train_classifier(const ClassifyTrainConfig& config, std::ostream& log);

}  // namespace heed
