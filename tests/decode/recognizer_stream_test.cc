// Streaming recognition (decode/recognizer_stream.h) with a causal recognizer trained on the tone
// task (tests/support/tones.h): whatever the pieces the audio comes in, each stream's final
// result is what the recognizer gives for the audio whole (text, log-probability, word times),
// by best path and by the prefix beam; a long stream with pauses is cut into segments at its
// pauses, each segment's words given out long before the stream ends; partial results only
// grow their stable part, and the final begins with it; heed transcribe --online prints these.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/decode/recognizer_stream.h"
#include "heed/io/audio.h"
#include "heed/metrics/metrics.h"
#include "support/stream_view.h"
#include "support/temp_dir.h"
#include "support/thread_cpu.h"
#include "support/tones.h"

namespace heed {
namespace {

// One stream of `audio` in pieces of `chunk` seconds; the clock is the audio given so far.
std::vector<StreamResult> stream(const Recognizer& rec, std::span<const float> audio, double chunk,
                                 const StreamOptions& o) {
  double given = 0;
  RecognizerStream s(rec, o, [&] { return given; });
  std::vector<StreamResult> out;
  const auto step = static_cast<size_t>(chunk * kRate);
  for (size_t i = 0; i < audio.size(); i += step) {
    const size_t n = std::min(step, audio.size() - i);
    given = static_cast<double>(i + n) / kRate;
    for (StreamResult& r : s.push(audio.subspan(i, n))) out.push_back(std::move(r));
  }
  for (StreamResult& r : s.finish()) out.push_back(std::move(r));
  return out;
}

class RecognizerStreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    make_set(*dir_, "train", 400, 1);
    make_set(*dir_, "dev", 30, 2);
    TrainOptions o = tone_options(*dir_, "causal", 500);
    o.model = "ctc";
    o.shape.direction = EncoderDirection::Forward;  // --unidirectional
    o.shape.hidden = 64;
    o.shape.embed = 48;
    o.shape.layers = 2;
    log_ = new std::ostringstream;
    train(o, *log_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete log_;
  }
  static testing::TempDir* dir_;
  static std::ostringstream* log_;
};
testing::TempDir* RecognizerStreamTest::dir_ = nullptr;
std::ostringstream* RecognizerStreamTest::log_ = nullptr;

TEST_F(RecognizerStreamTest, EveryChunkingGivesTheWholeUtterancesAnswer) {
  const Recognizer rec(*dir_ / "causal");
  const auto [refs, audio] = tone_words(24, 3);
  for (int beam : {1, 4}) {
    const auto whole =
        rec.transcribe({audio.begin(), audio.end()}, {.beam = beam, .timestamps = true});
    std::vector<std::string> hyps;
    for (size_t i = 0; i < audio.size(); ++i) {
      hyps.push_back(whole[i][0].text);
      for (double chunk : {0.01, 0.16, 0.5, 10.0}) {
        const std::vector<StreamResult> out = stream(rec, audio[i], chunk, {.beam = beam});
        ASSERT_FALSE(out.empty());
        const StreamResult& f = out.back();
        ASSERT_TRUE(f.final);
        EXPECT_EQ(std::count_if(out.begin(), out.end(), [](auto& r) { return r.final; }), 1);
        EXPECT_EQ(f.text, whole[i][0].text) << "beam " << beam << ", chunk " << chunk;
        EXPECT_NEAR(f.log_prob, whole[i][0].log_prob, 1e-3) << "beam " << beam;
        ASSERT_EQ(f.words.size(), whole[i][0].words.size());
        for (size_t k = 0; k < f.words.size(); ++k) {
          EXPECT_EQ(f.words[k].word, whole[i][0].words[k].word);
          EXPECT_DOUBLE_EQ(f.words[k].start, whole[i][0].words[k].start);
          EXPECT_DOUBLE_EQ(f.words[k].end, whole[i][0].words[k].end);
          // given out after its audio ended, at most a chunk and the front end's window later
          EXPECT_GE(f.words[k].emitted, f.words[k].end - 0.041);
        }
      }
    }
    // and the causal model has learned the task
    EXPECT_LT(char_error_rate(hyps, refs).percent(), 15.0) << "beam " << beam << "\n"
                                                           << log_->str();
  }
}

// What the page draws of a CTC recognizer's stream (a StreamView; POST /stream with view=1):
// every filterbank frame once, those of the whole utterance; every position's log-probabilities
// once — the audio's tail's too, which the stream's end computes —, as many as the offline
// alignment's positions; their best path is the final's text; no attention stops.
TEST_F(RecognizerStreamTest, AViewShowsEveryFrameAndPositionOnce) {
  const Recognizer rec(*dir_ / "causal");
  const ModelFiles& m = rec.files();
  const int64_t V = m.model->tgt_vocab();
  const int32_t blank = m.model->frame_labeller()->blank();
  const auto [refs, audio] = tone_words(3, 9);
  const auto whole = rec.transcribe({audio.begin(), audio.end()}, {.alignment = true});
  for (size_t i = 0; i < audio.size(); ++i) {
    for (size_t piece : {160, 2731}) {
      const testing::ViewedStream v = testing::stream_viewed(rec, audio[i], piece);
      EXPECT_EQ(v.view.frames, rec.features(audio[i]));
      EXPECT_EQ(v.view.positions, v.positions);
      EXPECT_EQ(v.positions, static_cast<int64_t>(whole[i].at(0).alignment.at(0).size()));
      ASSERT_EQ(static_cast<int64_t>(v.view.scores.size()), v.positions * V);
      EXPECT_TRUE(v.view.tokens.empty());
      std::vector<int32_t> path;  // the best path: repeats merged, blanks dropped
      int32_t last = blank;
      for (int64_t t = 0; t < v.positions; ++t) {
        const float* y = v.view.scores.data() + t * V;
        const auto top = static_cast<int32_t>(std::max_element(y, y + V) - y);
        if (top != blank && top != last) path.push_back(top);
        last = top;
      }
      EXPECT_EQ(m.tgt_seg.join(m.tgt_vocab.decode(path)), v.results.back().text) << piece;
    }
  }
}

TEST_F(RecognizerStreamTest, PausesEndSegmentsLongBeforeTheStreamEnds) {
  const Recognizer rec(*dir_ / "causal");
  std::mt19937 rng(4);
  std::normal_distribution<float> quiet(0.f, 0.01f);
  std::vector<float> audio;
  std::vector<std::string> refs;
  std::vector<double> ends;  // each word's end in the stream
  for (int i = 0; i < 6; ++i) {
    refs.push_back(random_word(rng));
    const std::vector<float> w = speak(refs.back(), rng);
    audio.insert(audio.end(), w.begin(), w.end());
    ends.push_back(static_cast<double>(audio.size()) / kRate - kGap);
    for (int k = 0; k < kRate; ++k) audio.push_back(quiet(rng));  // a second's pause
  }
  const double total = static_cast<double>(audio.size()) / kRate;
  for (int beam : {1, 4}) {
    const std::vector<StreamResult> out =
        stream(rec, audio, 0.1, {.beam = beam, .endpoint_seconds = 0.5, .partials = true});
    std::vector<const StreamResult*> finals;
    std::string stable;  // the segment's stable part so far
    for (const StreamResult& r : out) {
      if (r.final) {
        // the final begins with what was stable (best path: it is all of it)
        if (beam == 1) {
          EXPECT_EQ(r.text.substr(0, stable.size()), stable);
        }
        finals.push_back(&r);
        stable.clear();
        continue;
      }
      EXPECT_EQ(r.text.substr(0, r.stable.size()), r.stable);  // text begins with stable
      EXPECT_EQ(r.stable.substr(0, stable.size()), stable);    // stable only grows
      stable = r.stable;
    }
    ASSERT_GE(finals.size(), 5u) << "beam " << beam;
    int right = 0, placed = 0;
    for (const StreamResult* f : finals) {
      ASSERT_FALSE(f->words.empty());
      // the word ended at one of the utterances' ends (a label heard in a pause aside); its
      // segment ended within a second of it
      const double end = f->words.back().end;
      const auto near = std::min_element(ends.begin(), ends.end(), [&](double a, double b) {
        return std::abs(a - end) < std::abs(b - end);
      });
      if (std::abs(*near - end) > 0.2) continue;
      ++placed;
      EXPECT_LT(f->audio, *near + 1.0) << "beam " << beam;
      // best path gives a label out with its position; the beam once every kept prefix has it,
      // at the latest when the endpoint ends the segment
      EXPECT_LT(f->words.back().emitted, *near + (beam == 1 ? 0.5 : 0.8)) << "beam " << beam;
      const auto k = static_cast<size_t>(near - ends.begin());
      right += f->text == refs[k] ? 1 : 0;
    }
    EXPECT_GE(placed, 5) << "beam " << beam;
    EXPECT_GE(right, 4) << "beam " << beam;
    EXPECT_LT(finals.front()->audio, total / 2);
  }
}

// A 10-minute stream of words and pauses costs per second of audio what a 10-second one does
// (thread CPU time on one thread, within 1.5x), and holds no more than a segment's positions.
TEST_F(RecognizerStreamTest, LongStreamsCostPerSecondWhatShortOnesDo) {
  const testing::OneThread one_thread;  // (support/thread_cpu.h says why)
  const Recognizer rec(*dir_ / "causal");
  std::mt19937 rng(6);
  std::normal_distribution<float> quiet(0.f, 0.01f);
  std::vector<float> audio;
  while (audio.size() < static_cast<size_t>(600 * kRate)) {
    const std::vector<float> w = speak(random_word(rng), rng);
    audio.insert(audio.end(), w.begin(), w.end());
    for (int k = 0; k < kRate * 3 / 4; ++k) audio.push_back(quiet(rng));
  }
  // seconds of CPU per second of audio over the first `seconds`; the most positions held
  auto run = [&](double seconds, int64_t& held) {
    RecognizerStream s(rec, {.endpoint_seconds = 0.5, .partials = true}, [] { return 0.0; });
    const auto n = static_cast<size_t>(seconds * kRate), step = static_cast<size_t>(0.16 * kRate);
    held = 0;
    const double t0 = testing::thread_cpu_seconds();
    for (size_t i = 0; i < n; i += step) {
      s.push(std::span<const float>(audio).subspan(i, std::min(step, n - i)));
      held = std::max(held, s.held_positions());
    }
    s.finish();
    return (testing::thread_cpu_seconds() - t0) / seconds;
  };
  int64_t held_short = 0, held_long = 0;
  double short_cost = 1e9;
  for (int k = 0; k < 3; ++k) short_cost = std::min(short_cost, run(10, held_short));
  const double long_cost = run(600, held_long);
  EXPECT_LT(long_cost, 1.5 * short_cost) << long_cost << " against " << short_cost;
  EXPECT_LT(held_long, 60) << "positions held (40 ms each)";  // a word and its endpoint's pause
}

// heed transcribe --online: JSON lines, a final per input whose text is heed transcribe's
TEST_F(RecognizerStreamTest, TranscribeOnlinePrintsTheFinalsAndPartials) {
  std::mt19937 rng(5);
  write_wav(*dir_ / "w.wav", speak(random_word(rng), rng), kRate);
  std::vector<std::string> args = {"heed",           "transcribe", "--model",
                                   *dir_ / "causal", "--online",   "--partial",
                                   "--chunk-ms",     "50",         *dir_ / "w.wav"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  const int status = cli::run(static_cast<int>(argv.size()), argv.data());
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 0);
  const Recognizer rec(*dir_ / "causal");
  const Audio wav = read_audio(*dir_ / "w.wav");
  const std::string whole = rec.transcribe({wav.samples}, {}).at(0).at(0).text;
  std::istringstream lines(out);
  std::string line, last;
  int partials = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("id"), *dir_ / "w.wav");
    partials += j.at("type") == "partial" ? 1 : 0;
    last = line;
  }
  EXPECT_GE(partials, 1) << out;
  const nlohmann::json f = nlohmann::json::parse(last);
  EXPECT_EQ(f.at("type"), "final");
  EXPECT_EQ(f.at("text"), whole);
  EXPECT_TRUE(f.at("words").is_array());
}

}  // namespace
}  // namespace heed
