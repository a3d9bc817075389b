// Kaldi data directories and TSV manifests (data/speech_corpus.h): what they hold, and every
// malformed line refused naming its file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "heed/data/speech_corpus.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(SpeechCorpus, KaldiDirectoryWithAndWithoutSegments) {
  testing::TempDir d;
  write(d / "wav.scp", "r1 audio/r1.wav\nr2 /abs/r2.flac\n");
  write(d / "text", "r1 hello world\nr2 the  encoder\n");
  SpeechCorpus c = read_speech_corpus(d.str());
  ASSERT_EQ(c.utterances.size(), 2u);
  EXPECT_EQ(c.utterances[0].id, "r1");
  EXPECT_EQ(c.utterances[0].path, d / "audio/r1.wav");  // relative: from the directory
  EXPECT_EQ(c.utterances[0].text, "hello world");
  EXPECT_EQ(c.utterances[1].path, "/abs/r2.flac");
  EXPECT_EQ(c.utterances[1].end, -1);
  write(d / "segments", "u1 r1 0.5 1.25\nu2 r2 2 -1\n");
  write(d / "text", "u1 one\nu2 two\n");
  c = read_kaldi_dir(d.str());
  ASSERT_EQ(c.utterances.size(), 2u);
  EXPECT_EQ(c.utterances[0].path, d / "audio/r1.wav");
  EXPECT_DOUBLE_EQ(c.utterances[0].start, 0.5);
  EXPECT_DOUBLE_EQ(c.utterances[0].end, 1.25);
  EXPECT_EQ(c.utterances[1].end, -1);
  EXPECT_EQ(c.utterances[1].where, d / "text:2");
}

TEST(SpeechCorpus, KaldiMistakesNameTheFileAndLine) {
  testing::TempDir d;
  const auto error = [&](const std::string& scp, const std::string& text,
                         const std::string& segments = "") {
    write(d / "wav.scp", scp);
    write(d / "text", text);
    std::filesystem::remove(d / "segments");
    if (!segments.empty()) write(d / "segments", segments);
    return testing::error_of([&] { read_kaldi_dir(d.str()); });
  };
  EXPECT_NE(error("r1 sox a.flac -t wav - |\n", "r1 x\n").find("wav.scp:1: a command"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "r2 x\n").find("text:1: utterance r2 has no recording"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\nr1 b.wav\n", "r1 x\n").find("wav.scp:2: recording r1 is listed twice"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "r1 x\nr1 y\n").find("text:2: utterance r1 is listed twice"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "u1 x\n", "u1 r9 0 1\n").find("segments:1: recording r9"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "u1 x\n", "u1 r1 2 1\n").find("segments:1: the segment"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "u1 x\n", "u1 r1 a b\n").find("'a' is not a number"),
            std::string::npos);
  EXPECT_NE(error("r1 a.wav\n", "u2 x\n", "u1 r1 0 1\n").find("text:1: utterance u2 has no line"),
            std::string::npos);
  EXPECT_NE(error("r1\n", "r1 x\n").find("wav.scp:1: expected"), std::string::npos);
  std::filesystem::remove(d / "text");
  EXPECT_NE(testing::error_of([&] { read_kaldi_dir(d.str()); }).find("needs wav.scp and text"),
            std::string::npos);
}

TEST(SpeechCorpus, ManifestPathsAreFromItsFolder) {
  testing::TempDir d;
  write(d / "m.tsv", "clips/a.wav\tthe first one\n\n/abs/b.ogg\tsecond\n");
  const SpeechCorpus c = read_speech_corpus(d / "m.tsv");
  ASSERT_EQ(c.utterances.size(), 2u);
  EXPECT_EQ(c.utterances[0].path, d / "clips/a.wav");
  EXPECT_EQ(c.utterances[0].text, "the first one");
  EXPECT_EQ(c.utterances[1].path, "/abs/b.ogg");
  EXPECT_EQ(c.utterances[1].id, "3");  // its line
  write(d / "bad.tsv", "a.wav the first\n");
  EXPECT_NE(testing::error_of([&] { read_manifest(d / "bad.tsv"); }).find("bad.tsv:1: expected"),
            std::string::npos);
  write(d / "empty.tsv", "\n");
  EXPECT_NE(testing::error_of([&] { read_manifest(d / "empty.tsv"); }).find("no utterances"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
