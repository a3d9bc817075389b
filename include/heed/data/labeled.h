// Labelled sentences for classification, in the SST files' published format (Kim 2014's
// `stsa.binary.*` / `stsa.fine.*`): "<label> <sentence>" per line, the label an integer
// 0..C-1, one space, then the tokenised sentence.
// Errors name the file and line: a missing label, a label that is not an integer or is out
// of range, a line without a sentence (and, from data/text.h, invalid UTF-8 or an empty file).
// Leaves out: tokenisation (the sentences are used as published).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed {

struct LabeledCorpus {
  std::vector<int32_t> labels;     // [N], each in 0..classes-1
  std::vector<std::string> texts;  // [N]
  int32_t classes = 0;             // 1 + the largest label seen (or the limit given)
};

// A label field: its value when it is an integer >= 0 written in full, else -1.
int32_t parse_label(std::string_view field);

// max_classes > 0: labels must be below it (dev/test files are read against the training
// file's classes); 0: any label >= 0, and classes = 1 + the largest.
LabeledCorpus read_labeled(const std::string& path, int32_t max_classes = 0);

}  // namespace heed
