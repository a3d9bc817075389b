// A causal recognizer read as a stream (FrameLabeller::Stream, models/ctc.h): the positions'
// log-probabilities from frames given in pieces of any size equal the whole utterances'
// (decoded together in one padded batch), short utterances included; a bidirectional encoder
// and a per-utterance mean, which need the whole utterance first, are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "heed/autograd/graph.h"
#include "heed/data/vocab.h"
#include "heed/kernels/random.h"
#include "heed/models/ctc.h"
#include "heed/util/error.h"

namespace heed {
namespace {

constexpr int64_t kBins = 13;

CtcConfig recognizer_config(bool bidirectional, bool utterance_mean, int64_t lookahead = 0) {
  CtcConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Lstm,
                               .vocab = 0,
                               .embed = 24,
                               .hidden = 16,
                               .layers = 2,
                               .bidirectional = bidirectional};
  c.tgt_vocab = Vocab::kSpecials + 5;
  c.lookahead = lookahead;
  AudioFrontEndConfig front;
  front.features = kBins;
  front.channels = 4;
  front.dim = 24;
  for (int64_t f = 0; f < kBins; ++f) {
    front.mean.push_back(0.1f * static_cast<float>(f));
    front.stddev.push_back(1.f + 0.05f * static_cast<float>(f));
  }
  front.utterance_mean = utterance_mean;
  c.set_audio(front);
  return c;
}

class CtcStreamLookahead : public ::testing::TestWithParam<int64_t> {};

// without a lookahead, and reading 3 positions ahead (Deep Speech 2's lookahead convolution)
TEST_P(CtcStreamLookahead, PiecesOfAnySizeGiveTheWholeUtterancesScores) {
  ParameterStore store;
  Rng rng(5);
  CtcModel model(recognizer_config(false, false, GetParam()), Scope(store, rng, "m"));
  const FrameLabeller& labeller = *model.frame_labeller();
  // utterances of 1 .. 97 frames: shorter than one window (7), exactly one, and longer
  const std::vector<int64_t> lengths = {1, 6, 7, 8, 11, 40, 97};
  std::vector<std::vector<float>> utts;
  for (int64_t n : lengths) {
    std::vector<float> x(static_cast<size_t>(n * kBins));
    for (float& v : x) v = static_cast<float>(rng.normal()) * 2.f;
    utts.push_back(std::move(x));
  }
  // offline: the whole utterances in one padded batch
  const Seq2SeqBatch batch = make_audio_batch({utts.begin(), utts.end()}, kBins,
                                              std::vector<std::vector<int32_t>>(utts.size()),
                                              AudioFrontEndConfig::kMinFrames);
  Graph g(Mode::Inference);
  const FrameScores whole = labeller.frame_log_probs(g, batch);
  const int64_t T = whole.log_probs.dim(1), V = whole.log_probs.dim(2);
  for (size_t u = 0; u < utts.size(); ++u) {
    const int64_t positions = whole.lengths[u];
    EXPECT_EQ(positions, AudioFrontEndConfig::output_frames(lengths[u]));
    for (int trial = 0; trial < 3; ++trial) {
      std::unique_ptr<FrameLabeller::Stream> s = labeller.stream();
      std::vector<float> got;
      // pieces of 0 .. 12 frames (trial 0: one frame at a time)
      for (int64_t t = 0; t < lengths[u];) {
        const int64_t n = std::min(lengths[u] - t, trial == 0 ? 1 : rng.below(13));
        const std::vector<float> y =
            s->push({utts[u].data() + t * kBins, static_cast<size_t>(n * kBins)});
        EXPECT_EQ(y.size() % static_cast<size_t>(V), 0u);
        got.insert(got.end(), y.begin(), y.end());
        t += n;
      }
      const std::vector<float> rest = s->finish();
      got.insert(got.end(), rest.begin(), rest.end());
      ASSERT_EQ(static_cast<int64_t>(got.size()), positions * V)
          << lengths[u] << " frames, trial " << trial;
      EXPECT_EQ(s->positions(), positions);
      const float* want = whole.log_probs.value().data() + static_cast<int64_t>(u) * T * V;
      for (int64_t i = 0; i < positions * V; ++i)
        ASSERT_NEAR(got[static_cast<size_t>(i)], want[i], 2e-5f)
            << lengths[u] << " frames, position " << i / V << ", class " << i % V;
    }
  }
}

TEST_P(CtcStreamLookahead, PositionsComeAsSoonAsTheirWindowIsWhole) {
  const int64_t N = GetParam();
  ParameterStore store;
  Rng rng(6);
  CtcModel model(recognizer_config(false, false, N), Scope(store, rng, "m"));
  std::unique_ptr<FrameLabeller::Stream> s = model.frame_labeller()->stream();
  std::vector<float> frame(static_cast<size_t>(kBins), 0.5f);
  // position j reads frames 4j .. 4j + 6, and N positions ahead: it comes with frame
  // 4(j + N) + 6, before any later one
  for (int64_t t = 0; t < 30; ++t) {
    const std::vector<float> y = s->push(frame);
    const bool completes = t >= 6 + 4 * N && (t - 6) % 4 == 0;
    EXPECT_EQ(y.size(), completes ? static_cast<size_t>(model.tgt_vocab()) : 0u) << "frame " << t;
  }
  EXPECT_EQ(s->positions(), std::max<int64_t>(6 - N, 0));
  // the last N positions come at the end, with zeros read after them
  EXPECT_EQ(s->finish().size(), static_cast<size_t>(std::min<int64_t>(N, 6) * model.tgt_vocab()));
  EXPECT_EQ(s->positions(), 6);
}

INSTANTIATE_TEST_SUITE_P(Lookahead, CtcStreamLookahead, ::testing::Values(0, 3));

TEST(CtcStream, ModelsThatNeedTheWholeUtteranceAreRefused) {
  for (const auto& [bidirectional, mean, what] :
       {std::tuple{true, false, "--unidirectional"}, std::tuple{false, true, "--utterance-mean"}}) {
    ParameterStore store;
    Rng rng(7);
    CtcModel model(recognizer_config(bidirectional, mean), Scope(store, rng, "m"));
    try {
      model.frame_labeller()->stream();
      ADD_FAILURE() << what << " was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace heed
