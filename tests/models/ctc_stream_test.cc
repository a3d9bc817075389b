// A causal recognizer read as a stream (FrameLabeller::Stream, models/ctc.h): the positions'
// log-probabilities from frames given in pieces of any size equal the whole utterances'
// (decoded together in one padded batch), short utterances included, for a unidirectional LSTM
// and for chunked Transformer encoders (chunks of 4 positions, 2 to the left, pre- and post-LN,
// with and without the first layer's lookahead); a bidirectional encoder, a Transformer that is
// not chunked and a per-utterance mean, which need the whole utterance first, are refused.
#include <gtest/gtest.h>

#include <cmath>

#include "heed/autograd/graph.h"
#include "heed/data/vocab.h"
#include "heed/kernels/random.h"
#include "heed/models/ctc.h"
#include "heed/util/error.h"
#include "support/thread_cpu.h"

namespace heed {
namespace {

constexpr int64_t kBins = 13;

// The encoders: a 2-layer LSTM, or a 2-layer Transformer (d 24, 2 heads), chunked or not.
struct Encoder {
  bool transformer = false;
  int64_t chunk = 4;  // the Transformer's chunks (0: whole-utterance attention)
  NormPlacement norm = NormPlacement::Pre;
};

CtcConfig recognizer_config(bool bidirectional, bool utterance_mean, int64_t lookahead = 0,
                            Encoder e = {}) {
  CtcConfig c;
  if (e.transformer) {
    TransformerLayerConfig layer{.d_model = 24, .heads = 2, .ff = 32, .dropout = 0.f};
    layer.norm = e.norm;
    layer.encoder_chunk = e.chunk;
    layer.left_chunks = e.chunk > 0 ? 2 : 0;
    layer.lookahead = lookahead;  // the chunked attention's, not the output layer's
    c.encoder = TransformerEncoderConfig{.layer = layer, .layers = 2};
  } else {
    c.encoder = RnnEncoderConfig{.cell = CellKind::Lstm,
                                 .vocab = 0,
                                 .embed = 24,
                                 .hidden = 16,
                                 .layers = 2,
                                 .bidirectional = bidirectional};
    c.lookahead = lookahead;
  }
  c.tgt_vocab = Vocab::kSpecials + 5;
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

void expect_stream_equals_whole(const CtcConfig& config);

// without a lookahead, and reading 3 positions ahead (Deep Speech 2's lookahead convolution)
TEST_P(CtcStreamLookahead, PiecesOfAnySizeGiveTheWholeUtterancesScores) {
  expect_stream_equals_whole(recognizer_config(false, false, GetParam()));
}

// chunks of 4 positions with 2 chunks to the left (so that 97 frames, 23 positions, run past
// the window), the first layer reading 0 or 3 positions past each chunk
TEST_P(CtcStreamLookahead, ChunkedTransformerPiecesGiveTheWholeUtterancesScores) {
  for (NormPlacement norm : {NormPlacement::Pre, NormPlacement::Post})
    expect_stream_equals_whole(
        recognizer_config(false, false, GetParam(), {.transformer = true, .norm = norm}));
}

void expect_stream_equals_whole(const CtcConfig& config) {
  ParameterStore store;
  Rng rng(5);
  CtcModel model(config, Scope(store, rng, "m"));
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

// Chunk c (positions 4c .. 4c + 3) comes once position 4c + 3 + N is there: with frame
// 4(4c + 3 + N) + 6, its 4 positions together.
TEST_P(CtcStreamLookahead, ChunksComeAsSoonAsTheirLookaheadIsThere) {
  const int64_t N = GetParam();
  ParameterStore store;
  Rng rng(8);
  CtcModel model(recognizer_config(false, false, N, {.transformer = true}), Scope(store, rng, "m"));
  std::unique_ptr<FrameLabeller::Stream> s = model.frame_labeller()->stream();
  std::vector<float> frame(static_cast<size_t>(kBins), 0.5f);
  for (int64_t t = 0; t < 80; ++t) {  // positions 0..18, each with frame 4j + 6
    const std::vector<float> y = s->push(frame);
    const int64_t j = (t - 6) / 4;  // the position frame t completes, if it completes one
    const bool completes = t >= 6 && (t - 6) % 4 == 0 && j >= 3 + N && (j - 3 - N) % 4 == 0;
    EXPECT_EQ(y.size(), completes ? static_cast<size_t>(4 * model.tgt_vocab()) : 0u)
        << "frame " << t;
  }
  // chunks c with 4c + 3 + N <= 18 came; the rest come at the end, the last of 3 positions
  const int64_t given = s->positions();
  EXPECT_EQ(given, 4 * ((18 - 3 - N) / 4 + 1));
  EXPECT_EQ(s->finish().size(), static_cast<size_t>((19 - given) * model.tgt_vocab()));
}

INSTANTIATE_TEST_SUITE_P(Lookahead, CtcStreamLookahead, ::testing::Values(0, 3));

TEST(CtcStream, ModelsThatNeedTheWholeUtteranceAreRefused) {
  for (const auto& [bidirectional, mean, chunk, what] :
       {std::tuple{true, false, int64_t{-1}, "--unidirectional"},
        std::tuple{false, true, int64_t{-1}, "--utterance-mean"},
        std::tuple{false, false, int64_t{0}, "--encoder-chunk"}}) {
    ParameterStore store;
    Rng rng(7);
    CtcModel model(
        recognizer_config(bidirectional, mean, 0,
                          {.transformer = chunk >= 0, .chunk = std::max<int64_t>(chunk, 0)}),
        Scope(store, rng, "m"));
    try {
      model.frame_labeller()->stream();
      ADD_FAILURE() << what << " was not refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

// A chunked encoder's stream, without any endpoint to restart it: 10 minutes of frames cost per
// second what the first 10 seconds do (thread CPU time on one thread, within 1.5x), its left
// context bounded (2 chunks), whereas attending to the whole prefix would cost more each chunk.
TEST(CtcStream, AChunkedEncodersLongStreamCostsPerSecondWhatAShortOneDoes) {
  const testing::OneThread one_thread;
  ParameterStore store;
  Rng rng(9);
  CtcModel model(recognizer_config(false, false, 2, {.transformer = true}), Scope(store, rng, "m"));
  std::vector<float> frames(static_cast<size_t>(60000 * kBins));  // 10 minutes of 10 ms frames
  for (float& v : frames) v = static_cast<float>(rng.normal());
  // CPU seconds per second of audio over the first `seconds`, in pieces of 160 ms
  auto run = [&](int64_t seconds) {
    std::unique_ptr<FrameLabeller::Stream> s = model.frame_labeller()->stream();
    const double t0 = testing::thread_cpu_seconds();
    for (int64_t t = 0; t < seconds * 100; t += 16)
      s->push({frames.data() + t * kBins,
               static_cast<size_t>(std::min<int64_t>(16, seconds * 100 - t) * kBins)});
    s->finish();
    EXPECT_EQ(s->positions(), AudioFrontEndConfig::output_frames(seconds * 100));
    return (testing::thread_cpu_seconds() - t0) / static_cast<double>(seconds);
  };
  double short_cost = 1e9;
  for (int k = 0; k < 3; ++k) short_cost = std::min(short_cost, run(10));
  const double long_cost = run(600);
  EXPECT_LT(long_cost, 1.5 * short_cost) << long_cost << " against " << short_cost;
}

}  // namespace
}  // namespace heed
