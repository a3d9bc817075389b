// Labelled sentence files (see the header).
#include "heed/data/labeled.h"

#include <algorithm>
#include <charconv>

#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {

int32_t parse_label(std::string_view field) {
  int32_t y = -1;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), y);
  return ec == std::errc() && end == field.data() + field.size() && y >= 0 ? y : -1;
}

LabeledCorpus read_labeled(const std::string& path, int32_t max_classes) {
  LabeledCorpus c;
  std::vector<std::string> lines = read_lines(path);
  int32_t largest = -1;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t no = i + 1;
    const size_t space = line.find_first_of(" \t");
    const std::string_view label = std::string_view(line).substr(0, space);
    check(!label.empty(), path, ":", no,
          ": no label (expected \"<label> <sentence>\", the label an integer)");
    const int32_t y = parse_label(label);
    check(y >= 0, path, ":", no, ": the label '", label,
          "' is not an integer >= 0 (expected \"<label> <sentence>\")");
    check(max_classes == 0 || y < max_classes, path, ":", no, ": label ", y,
          " is out of range: the training data has ", max_classes, " classes (0..", max_classes - 1,
          ")");
    const size_t text =
        space == std::string::npos ? line.size() : line.find_first_not_of(" \t", space);
    check(text != std::string::npos && text < line.size(), path, ":", no,
          ": a label without a sentence");
    c.labels.push_back(y);
    c.texts.push_back(line.substr(text));
    largest = std::max(largest, y);
  }
  c.classes = max_classes > 0 ? max_classes : largest + 1;
  return c;
}

}  // namespace heed
