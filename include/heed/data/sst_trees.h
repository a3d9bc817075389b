// The Stanford Sentiment Treebank as published (Socher et al. 2013, `trainDevTestTrees_PTB`):
// one tree per line in PTB brackets, `(label child child)` or `(label word)`, a sentiment label
// 0..4 on every node, the root's being the sentence's. Training on every labelled phrase and
// evaluating on the roots is how the published SST results are obtained (Socher et al. 2013;
// Kim 2014; Tai et al. 2015).
// Phrases are the leaves under a node joined by spaces and lower-cased (ASCII), as in the
// sentence-level `stsa.*` files: `-LRB-` becomes `-lrb-`, `\/` stays.
// Errors name the file, line and column: an unbalanced bracket, a label that is not 0..4, a
// node without children, text after the tree.
// Leaves out: tokenisation (the words as published) and tree-structured models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heed/data/labeled.h"

namespace heed {

struct SstTree {
  std::vector<std::string> words;  // the leaves, lower-cased
  struct Node {
    int32_t label;       // 0..4
    int32_t begin, end;  // its phrase: words[begin, end)
  };
  std::vector<Node> nodes;  // every node, the root first (pre-order)
};

std::vector<SstTree> read_sst_trees(const std::string& path);

// Which nodes become examples: every labelled phrase (training) or the roots (evaluation).
enum class TreeExamples { Phrases, Roots };

// Classification examples of the trees: classes 5 keeps the labels 0..4; classes 2 (SST-2)
// maps 0-1 to 0 (negative) and 3-4 to 1 (positive) and drops the neutral 2.
LabeledCorpus sst_examples(const std::vector<SstTree>& trees, TreeExamples which, int32_t classes);

}  // namespace heed
