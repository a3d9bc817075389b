// Did-you-mean on heed's command line: the subcommand or the subcommand's option that a misspelt
// word meant (the nearness of names: tests/util/nearest_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "suggest.h"

namespace heed::cli {
namespace {

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
