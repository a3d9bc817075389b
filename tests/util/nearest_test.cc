// The name a misspelt word meant: the nearest within (|word| + 2) / 3 edits (a swap of neighbours
// is one), a name with a dash- or underscore-separated part more or less, nothing when nothing is
// near.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "heed/util/nearest.h"

namespace heed {
namespace {

TEST(Nearest, SpellingDistance) {
  EXPECT_EQ(spelling_distance("train", "train"), 0);
  EXPECT_EQ(spelling_distance("trian", "train"), 1);  // a swap of neighbours
  EXPECT_EQ(spelling_distance("tran", "train"), 1);
  EXPECT_EQ(spelling_distance("", "abc"), 3);
  EXPECT_EQ(spelling_distance("kitten", "sitting"), 3);
}

TEST(Nearest, NearestName) {
  const std::vector<std::string> commands = {"train", "translate", "transcribe", "score"};
  EXPECT_EQ(nearest_name("trian", commands), "train");  // a swap
  EXPECT_EQ(nearest_name("tran", commands), "train");   // a letter missing
  EXPECT_EQ(nearest_name("translat", commands), "translate");
  EXPECT_EQ(nearest_name("scores", commands), "score");
  EXPECT_EQ(nearest_name("xyzzy", commands), "");
  EXPECT_EQ(nearest_name("s", commands), "");  // one letter: within 1 edit of nothing here
  const std::vector<std::string> options = {"beam", "model", "n-best", "warmup"};
  EXPECT_EQ(nearest_name("beam-size", options), "beam");  // a part too many
  EXPECT_EQ(nearest_name("nbest", options), "n-best");
  EXPECT_EQ(nearest_name("warmup-steps", options), "warmup");
  EXPECT_EQ(nearest_name("lr", options), "");
  EXPECT_EQ(nearest_name("beam_size", options), "beam");  // as a JSON key
  EXPECT_EQ(nearest_name("nbest", {"n_best", "beam"}), "n_best");
}

}  // namespace
}  // namespace heed
