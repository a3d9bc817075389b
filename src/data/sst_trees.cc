// The SST tree reader (see the header): a recursive descent over each line's brackets.
#include "heed/data/sst_trees.h"

#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {
namespace {

class TreeParser {
 public:
  TreeParser(const std::string& line, const std::string& path, size_t lineno)
      : s_(line), path_(path), lineno_(lineno) {}

  SstTree parse() {
    SstTree t;
    skip_spaces();
    node(t);
    skip_spaces();
    if (i_ < s_.size()) fail_here("text after the tree's closing bracket");
    return t;
  }

 private:
  // (label word) or (label child child ...): appends the node, then its subtree's nodes
  void node(SstTree& t) {
    expect('(');
    const size_t label_at = i_;
    std::string label = token();
    if (label.size() != 1 || label[0] < '0' || label[0] > '4')
      fail_at(label_at, "the label '" + label + "' is not 0..4");
    const size_t me = t.nodes.size();
    t.nodes.push_back({label[0] - '0', static_cast<int32_t>(t.words.size()), 0});
    skip_spaces();
    if (i_ < s_.size() && s_[i_] == '(') {
      while (i_ < s_.size() && s_[i_] == '(') {
        node(t);
        skip_spaces();
      }
    } else {
      const size_t word_at = i_;
      std::string w = token();
      if (w.empty()) fail_at(word_at, "a node with neither a word nor children");
      lowercase_ascii(w);
      t.words.push_back(std::move(w));
      skip_spaces();
    }
    expect(')');
    t.nodes[me].end = static_cast<int32_t>(t.words.size());
  }

  std::string token() {
    skip_spaces();
    const size_t b = i_;
    while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\t' && s_[i_] != '(' && s_[i_] != ')')
      ++i_;
    return s_.substr(b, i_ - b);
  }
  void skip_spaces() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    skip_spaces();
    if (i_ >= s_.size()) fail_here(std::string("the line ends where '") + c + "' was expected");
    if (s_[i_] != c) fail_here(std::string("'") + c + "' expected, found '" + s_[i_] + "'");
    ++i_;
  }
  [[noreturn]] void fail_here(const std::string& what) const { fail_at(i_, what); }
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    fail(path_, ":", lineno_, ":", at + 1, ": ", what,
         " (expected a PTB tree, \"(label child ...)\")");
  }

  const std::string& s_;
  const std::string& path_;
  size_t lineno_;
  size_t i_ = 0;
};

}  // namespace

std::vector<SstTree> read_sst_trees(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<SstTree> trees;
  trees.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string::npos) continue;  // blank lines
    trees.push_back(TreeParser(lines[i], path, i + 1).parse());
  }
  check(!trees.empty(), path, ": no trees");
  return trees;
}

LabeledCorpus sst_examples(const std::vector<SstTree>& trees, TreeExamples which, int32_t classes) {
  check(classes == 2 || classes == 5, "SST: --classes is 2 (SST-2) or 5 (SST-5), got ", classes);
  LabeledCorpus c;
  c.classes = classes;
  for (const SstTree& t : trees) {
    const size_t n = which == TreeExamples::Roots ? 1 : t.nodes.size();
    for (size_t k = 0; k < n; ++k) {
      const SstTree::Node& node = t.nodes[k];
      int32_t y = node.label;
      if (classes == 2) {
        if (y == 2) continue;  // neutral: not in SST-2
        y = y < 2 ? 0 : 1;
      }
      std::string text;
      for (int32_t w = node.begin; w < node.end; ++w) {
        if (w > node.begin) text += ' ';
        text += t.words[w];
      }
      c.labels.push_back(y);
      c.texts.push_back(std::move(text));
    }
  }
  return c;
}

}  // namespace heed
