// The SST tree reader: a small tree read node by node (spans, labels, lower-cased leaves), the
// SST-2 and SST-5 examples of phrases and roots; on the shared files, the published counts
// (8,544 / 1,101 / 2,210 trees, 318,582 labelled nodes in train) and the roots equal to the
// sentence-level stsa.* files, labels included (SST-2 test: the 1,821 non-neutral roots);
// malformed trees rejected naming file, line and column.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "heed/data/sst_trees.h"
#include "heed/util/error.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

using testing::error_of;

std::string write(const testing::TempDir& dir, const std::string& text) {
  const std::string path = dir / "trees.txt";
  std::ofstream(path) << text;
  return path;
}

TEST(SstTrees, ReadsEveryNodeWithItsPhrase) {
  testing::TempDir dir;
  const auto trees = read_sst_trees(
      write(dir, "(3 (2 The) (4 (3 Good) (2 -LRB-film-RRB-)))\n(1 (1 Bad\\/worse))\n"));
  ASSERT_EQ(trees.size(), 2u);
  EXPECT_EQ(trees[0].words, (std::vector<std::string>{"the", "good", "-lrb-film-rrb-"}));
  ASSERT_EQ(trees[0].nodes.size(), 5u);
  const std::vector<std::tuple<int, int, int>> want = {
      {3, 0, 3}, {2, 0, 1}, {4, 1, 3}, {3, 1, 2}, {2, 2, 3}};
  for (size_t k = 0; k < want.size(); ++k) {
    const auto& n = trees[0].nodes[k];
    EXPECT_EQ(std::make_tuple(n.label, n.begin, n.end), want[k]) << k;
  }
  const LabeledCorpus five = sst_examples(trees, TreeExamples::Phrases, 5);
  EXPECT_EQ(five.texts.size(), 7u);
  EXPECT_EQ(five.texts[0], "the good -lrb-film-rrb-");
  EXPECT_EQ(five.texts[5], "bad\\/worse");
  const LabeledCorpus two = sst_examples(trees, TreeExamples::Phrases, 2);  // the 2s dropped
  EXPECT_EQ(two.texts, (std::vector<std::string>{"the good -lrb-film-rrb-", "good -lrb-film-rrb-",
                                                 "good", "bad\\/worse", "bad\\/worse"}));
  EXPECT_EQ(two.labels, (std::vector<int32_t>{1, 1, 1, 0, 0}));
  const LabeledCorpus roots = sst_examples(trees, TreeExamples::Roots, 5);
  EXPECT_EQ(roots.labels, (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(roots.classes, 5);
}

TEST(SstTrees, MalformedTreesNameFileLineAndColumn) {
  testing::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"(2 (2 a) (2 b)\n", ":1:15: the line ends where ')' was expected"},
      {"(2 (2 a))\n(7 (2 b))\n", ":2:2: the label '7' is not 0..4"},
      {"(2 (2 a)) x\n", ":1:11: text after the tree"},
      {"(2 (2 ))\n", ":1:7: a node with neither a word nor children"},
      {"2 (2 a)\n", ":1:1: '(' expected, found '2'"},
  };
  for (const auto& [text, want] : cases) {
    const std::string path = write(dir, text);
    EXPECT_NE(error_of([&] { read_sst_trees(path); }).find(path + want), std::string::npos)
        << text << " -> " << error_of([&] { read_sst_trees(path); });
  }
  EXPECT_NE(error_of([] { sst_examples({}, TreeExamples::Roots, 3); }).find("2 (SST-2) or 5"),
            std::string::npos);
}

fs::path sst() {
  return fs::path(HEED_SOURCE_DIR) / ".." / "shared" / "data" / "sst";
}

// (sentence, label) pairs, sorted: a multiset to compare
std::vector<std::pair<std::string, int32_t>> pairs(const LabeledCorpus& c) {
  std::vector<std::pair<std::string, int32_t>> p;
  for (size_t i = 0; i < c.texts.size(); ++i) p.emplace_back(c.texts[i], c.labels[i]);
  std::sort(p.begin(), p.end());
  return p;
}

TEST(SstTrees, SharedFilesMatchThePublishedCountsAndSentences) {
  if (!fs::exists(sst() / "trees")) GTEST_SKIP() << "no ../shared/data/sst/trees";
  const auto train = read_sst_trees((sst() / "trees" / "train.txt").string());
  const auto dev = read_sst_trees((sst() / "trees" / "dev.txt").string());
  const auto test = read_sst_trees((sst() / "trees" / "test.txt").string());
  EXPECT_EQ(train.size(), 8544u);
  EXPECT_EQ(dev.size(), 1101u);
  EXPECT_EQ(test.size(), 2210u);
  size_t nodes = 0;
  for (const auto& t : train) nodes += t.nodes.size();
  EXPECT_EQ(nodes, 318582u);
  EXPECT_EQ(sst_examples(train, TreeExamples::Phrases, 5).texts.size(), 318582u);
  for (const auto& [trees, name] : {std::pair{&train, "train"}, {&dev, "dev"}, {&test, "test"}}) {
    EXPECT_EQ(pairs(sst_examples(*trees, TreeExamples::Roots, 5)),
              pairs(read_labeled((sst() / ("stsa.fine." + std::string(name))).string())))
        << name;
  }
  const LabeledCorpus sst2 = sst_examples(test, TreeExamples::Roots, 2);
  EXPECT_EQ(sst2.texts.size(), 1821u);
  EXPECT_EQ(pairs(sst2), pairs(read_labeled((sst() / "stsa.binary.test").string())));
}

}  // namespace
}  // namespace heed
