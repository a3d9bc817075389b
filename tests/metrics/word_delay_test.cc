// Streaming recognition's latency (metrics/word_delay.h): delays only of the words recognised
// (an edit-distance alignment of the normalised words), their mean and percentiles, AL in ms
// against a hand computation; the two JSON-lines readers, with errors naming the line.
#include <gtest/gtest.h>

#include <fstream>

#include "heed/metrics/word_delay.h"
#include "heed/util/error.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

TEST(WordDelay, DelaysOfTheRecognisedWordsAndAlInMilliseconds) {
  // reference: "a man sat" ending at 0.2, 0.6, 1.0 s, 1.2 s of audio
  const std::vector<TimedUtterance> refs = {
      {.id = "1", .words = {{"A", 0.2, 0}, {"man", 0.6, 0}, {"sat.", 1.0, 0}}, .seconds = 1.2}};
  // heard "a men sat": "men" is a substitution; emitted at 0.35, 0.8, 1.3 s (read 0.32, 0.64,
  // 1.2 s of audio)
  const std::vector<TimedUtterance> hyps = {
      {.id = "1", .words = {{"a", 0.35, 0.32}, {"men", 0.8, 0.64}, {"sat", 1.3, 1.2}}}};
  const WordDelayScore s = word_delays(refs, hyps);
  EXPECT_EQ(s.recognised, 2);  // "a" and "sat"
  EXPECT_NEAR(s.mean, (0.15 + 0.3) / 2, 1e-9);
  EXPECT_NEAR(s.p50, 0.225, 1e-9);
  EXPECT_NEAR(s.p90, 0.15 + 0.9 * 0.15, 1e-9);
  // AL: |X| = 1200 ms, |Y*| = 3, d = 320, 640, 1200; tau = 3 (d_3 = |X|):
  // (320 - 0) + (640 - 400) + (1200 - 800) = 960, / 3
  EXPECT_NEAR(s.al_ms, 320.0, 1e-9);
  EXPECT_EQ(s.ref_words, 3);
  EXPECT_THROW(word_delays(refs, {}), Error);
}

TEST(WordDelay, ReadsTimingsAndStreamOutputNamingBadLines) {
  testing::TempDir dir;
  {
    std::ofstream a(dir / "ref.jsonl");
    a << R"({"id":"u1","seconds":1.5,"words":[{"word":"A","start":0,"end":0.1},)"
      << R"({"word":"dog","start":0.1,"end":0.5}]})"
      << "\n";
    std::ofstream h(dir / "hyp.jsonl");
    h << R"({"id":"1","type":"partial","segment":0,"text":"a","stable":"a","audio":0.2,"emitted":0.21})"
      << "\n"
      << R"({"id":"1","type":"final","segment":0,"text":"a dog","words":[{"word":"a","start":0,)"
      << R"("end":0.12,"emitted":0.3,"read":0.28},{"word":"dog","start":0.2,"end":0.52,)"
      << R"("emitted":0.7,"read":0.68}],"audio":1.5,"emitted":1.51})"
      << "\n";
    std::ofstream bad(dir / "bad.jsonl");
    bad << R"({"id":"u1","seconds":1.5,"words":[]})"
        << "\n{\"id\": 3}\n";
  }
  const auto refs = read_word_timings(dir / "ref.jsonl");
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].words[1].end, 0.5);
  EXPECT_TRUE(is_stream_output(dir / "hyp.jsonl"));
  EXPECT_FALSE(is_stream_output(dir / "ref.jsonl"));
  const auto hyps = read_stream_words(dir / "hyp.jsonl");
  ASSERT_EQ(hyps.size(), 1u);
  ASSERT_EQ(hyps[0].words.size(), 2u);
  EXPECT_EQ(hyps[0].words[1].end, 0.7);  // the emission
  EXPECT_EQ(hyps[0].words[1].read, 0.68);
  const WordDelayScore s = word_delays(refs, hyps);
  EXPECT_EQ(s.recognised, 2);
  EXPECT_NEAR(s.mean, (0.2 + 0.2) / 2, 1e-9);
  try {
    read_word_timings(dir / "bad.jsonl");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heed
