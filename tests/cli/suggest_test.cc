// Did-you-mean: the nearest name within (|word| + 2) / 3 edits (a swap of neighbours is one), a
// name with a dash-separated part more or less, nothing when nothing is near; and on heed's own
// command line, the subcommand or the subcommand's option that a misspelt word meant.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "suggest.h"

namespace heed::cli {
namespace {

TEST(DidYouMean, NearestName) {
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
}

TEST(DidYouMean, SubcommandsAndTheirOptions) {
  CLI::App app{"test"};
  int threads = 0;
  app.add_option("--threads", threads, "");
  int beam = 1;
  std::string model;
  CLI::App* translate = app.add_subcommand("translate", "");
  translate->add_option("--beam", beam, "");
  translate->add_option("--model", model, "");
  app.add_subcommand("train", "")->add_option("--lr", model, "");
  const Suggestion sub = did_you_mean(app, {"--threads", "1", "trian", "--lr", "1"});
  EXPECT_EQ(sub.text, "unknown subcommand 'trian'; did you mean 'train'?");
  EXPECT_TRUE(sub.replaces);
  const Suggestion none = did_you_mean(app, {"xyzzy"});
  EXPECT_EQ(none.text, "unknown subcommand 'xyzzy' (heed's subcommands: translate, train)");
  const Suggestion opt = did_you_mean(app, {"translate", "--model=m", "--beam-size", "5"});
  EXPECT_EQ(opt.text, "unknown option --beam-size of translate; did you mean --beam?");
  EXPECT_FALSE(opt.replaces);
  // options of heed's own are known after the subcommand too; words after -- are not options
  EXPECT_EQ(did_you_mean(app, {"translate", "--threads", "2", "--", "--bem"}).text, "");
  EXPECT_EQ(did_you_mean(app, {"translate", "--bem=4"}).text,
            "unknown option --bem of translate; did you mean --beam?");
}

}  // namespace
}  // namespace heed::cli
