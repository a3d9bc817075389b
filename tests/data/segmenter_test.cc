// Segmenter: words, characters and SentencePiece pieces, each back to the same text.
#include "heed/data/segmenter.h"

#include <gtest/gtest.h>

#include <set>

#include "heed/util/error.h"
#include "support/errors.h"

namespace heed {
namespace {

std::vector<std::string> corpus() {
  // a small English-like corpus with shared stems, so subwords have something to find
  std::vector<std::string> lines;
  const char* stems[] = {"walk", "talk", "jump", "play", "look", "climb", "paint", "kick"};
  const char* ends[] = {"", "s", "ed", "ing", "er", "ers"};
  for (int r = 0; r < 40; ++r)
    for (const char* s : stems) {
      std::string line = "the man " + std::string(s) + ends[r % 6] + " near a " + s +
                         ends[(r + 2) % 6] + " in the park .";
      lines.push_back(line);
    }
  return lines;
}

TEST(Segmenter, WordsAndCharactersRoundTrip) {
  Segmenter w(Units::Word), c(Units::Char);
  EXPECT_EQ(w.split("a  man ."), (std::vector<std::string>{"a", "man", "."}));
  EXPECT_EQ(w.join(w.split("a man .")), "a man .");
  EXPECT_EQ(c.split("ab c").size(), 4u);
  EXPECT_EQ(c.join(c.split("größer ok")), "größer ok");
  EXPECT_EQ(parse_units("spm"), Units::Spm);
  EXPECT_STREQ(units_name(Units::Char), "char");
  EXPECT_THROW(parse_units("bpe"), Error);
  EXPECT_THROW(Segmenter{Units::Spm}, Error);  // needs its model
}

TEST(Segmenter, SentencePieceLearnsSubwordsAndRoundTrips) {
  auto lines = corpus();
  for (SpmType type : {SpmType::Unigram, SpmType::Bpe}) {
    std::string model = Segmenter::train_spm(lines, {.vocab_size = 60, .model_type = type});
    Segmenter s = Segmenter::from_spm(model, "test.spm");
    EXPECT_EQ(s.units(), Units::Spm);
    std::set<std::string> pieces;
    for (const auto& l : lines) {
      auto p = s.split(l);
      ASSERT_EQ(s.join(p), l) << name_of(type);
      pieces.insert(p.begin(), p.end());
    }
    // a word outside the training text is still covered, by smaller pieces
    auto unseen = s.split("the walkers climbing");
    EXPECT_GT(unseen.size(), 3u) << name_of(type);
    EXPECT_EQ(s.join(unseen), "the walkers climbing") << name_of(type);
    EXPECT_LE(pieces.size(), 60u) << name_of(type);
    EXPECT_GT(pieces.size(), 20u) << name_of(type);
    // the same lines give the same model: a run can be reproduced
    EXPECT_EQ(Segmenter::train_spm(lines, {.vocab_size = 60, .model_type = type}), model);
    // equal: the same units and SentencePiece model (what an ensemble's members need)
    EXPECT_TRUE(Segmenter::from_spm(model, "other.spm") == s) << name_of(type);
    const std::string smaller = Segmenter::train_spm(lines, {.vocab_size = 50, .model_type = type});
    EXPECT_FALSE(Segmenter::from_spm(smaller, "smaller.spm") == s) << name_of(type);
    EXPECT_FALSE(Segmenter(Units::Char) == s) << name_of(type);
  }
  EXPECT_TRUE(Segmenter(Units::Char) == Segmenter(Units::Char));
  EXPECT_FALSE(Segmenter(Units::Char) == Segmenter(Units::Word));
}

TEST(Segmenter, SentencePieceErrorsAreClear) {
  EXPECT_THROW(
      {
        try {
          Segmenter::from_spm("not a model", "m/src.spm");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("m/src.spm: not a SentencePiece model"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(Segmenter::train_spm({}, {}), Error);
  EXPECT_NE(testing::error_of([] {
              parse_name<SpmType>("word", "--spm-type");
            }).find("unknown --spm-type 'word' (expected unigram | bpe)"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
