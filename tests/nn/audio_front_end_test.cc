// The speech front end: its output frames are the formula's ((S - 3) / 2 + 1 - 3) / 2 + 1, for
// every S; its normalisation is (x - mu) / sigma of the real frames (a front end with mu and
// sigma on raw frames equals one without them on frames normalised by hand, padding frames
// ignored); an utterance in a batch gets what it gets alone (padding reaches no real output
// frame's value); and its parameters' gradients match finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/nn/audio_front_end.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

AudioFrontEndConfig small() {
  return {.features = 11, .channels = 3, .dim = 5, .mean = {}, .stddev = {}};
}

// frames [S, B, F] time-major of random values
std::vector<float> frames(int64_t S, int64_t B, int64_t F, Rng& rng) {
  std::vector<float> x(static_cast<size_t>(S * B * F));
  for (float& v : x) v = rng.uniform(-2.f, 2.f);
  return x;
}

// y and z [S2, B, 5] agree on every utterance's real output frames (out: their counts)
void expect_real_frames_near(Var y, Var z, const std::vector<int32_t>& out) {
  ASSERT_EQ(y.shape(), z.shape());
  const int64_t B = y.dim(1), D = y.dim(2);
  for (int64_t t = 0; t < y.dim(0); ++t)
    for (int64_t n = 0; n < B; ++n) {
      if (t >= out[static_cast<size_t>(n)]) continue;
      for (int64_t d = 0; d < D; ++d) {
        const int64_t k = (t * B + n) * D + d;
        EXPECT_NEAR(y.value().data()[k], z.value().data()[k], 1e-4) << t << " " << n << " " << d;
      }
    }
}

TEST(AudioFrontEnd, SubsamplesByTheFormula) {
  EXPECT_EQ(AudioFrontEndConfig::subsampled(6), 0);
  EXPECT_EQ(AudioFrontEndConfig::subsampled(7), 1);
  EXPECT_EQ(AudioFrontEndConfig::subsampled(100), 24);  // torch: ((100-3)//2+1-3)//2+1
  ParameterStore store;
  Rng init(1);
  const AudioFrontEnd fe(small(), Scope(store, init));
  Rng rng(2);
  for (int64_t S : {7, 8, 9, 10, 11, 30, 101}) {
    Graph g(Mode::Inference);
    const std::vector<float> x = frames(S, 1, 11, rng);
    std::vector<int32_t> len = {static_cast<int32_t>(S)}, out(1);
    Var y = fe.forward(g, x, S, len, out);
    EXPECT_EQ(y.dim(0), AudioFrontEndConfig::subsampled(S)) << S;
    EXPECT_EQ(y.dim(1), 1);
    EXPECT_EQ(y.dim(2), 5);
    EXPECT_EQ(out[0], AudioFrontEndConfig::subsampled(S)) << S;
  }
}

TEST(AudioFrontEnd, NormalisesBeforeTheConvolutions) {
  AudioFrontEndConfig with = small();
  Rng rng(3);
  for (int64_t f = 0; f < with.features; ++f) {
    with.mean.push_back(rng.uniform(-1.f, 1.f));
    with.stddev.push_back(rng.uniform(0.5f, 2.f));
  }
  ParameterStore s1, s2;
  Rng i1(7), i2(7);  // the same weights
  const AudioFrontEnd a(with, Scope(s1, i1)), b(small(), Scope(s2, i2));
  const int64_t S = 15, B = 2, F = 11;
  std::vector<float> raw = frames(S, B, F, rng), normed = raw;
  for (int64_t t = 0; t < S; ++t)
    for (int64_t n = 0; n < B; ++n)
      for (int64_t f = 0; f < F; ++f) {
        float& v = normed[static_cast<size_t>((t * B + n) * F + f)];
        v = (v - with.mean[static_cast<size_t>(f)]) / with.stddev[static_cast<size_t>(f)];
      }
  std::vector<int32_t> len = {15, 9}, oa(2), ob(2);
  Graph g(Mode::Inference);
  Var ya = a.forward(g, raw, S, len, oa), yb = b.forward(g, normed, S, len, ob);
  EXPECT_EQ(oa, ob);
  expect_real_frames_near(ya, yb, oa);
}

// utterance_mean: each utterance's own mean per bin, over its real frames only, goes before mu and
// sigma: the same output as the plain front end on frames centred by hand, and a constant added
// to a bin of one utterance (a channel's tilt) changes nothing
TEST(AudioFrontEnd, SubtractsEachUtterancesOwnMean) {
  AudioFrontEndConfig with = small();
  with.utterance_mean = true;
  Rng rng(8);
  for (int64_t f = 0; f < with.features; ++f) {
    with.mean.push_back(rng.uniform(-0.2f, 0.2f));
    with.stddev.push_back(rng.uniform(0.5f, 2.f));
  }
  AudioFrontEndConfig plain = with;
  plain.utterance_mean = false;
  ParameterStore s1, s2;
  Rng i1(9), i2(9);
  const AudioFrontEnd a(with, Scope(s1, i1)), b(plain, Scope(s2, i2));
  const int64_t S = 17, B = 2, F = 11;
  const std::vector<int32_t> len = {17, 10};
  std::vector<float> raw = frames(S, B, F, rng);
  for (int64_t t = 10; t < S; ++t)  // padding of utterance 1: large, and never averaged
    for (int64_t f = 0; f < F; ++f) raw[static_cast<size_t>((t * B + 1) * F + f)] = 100.f;
  std::vector<float> centred = raw, shifted = raw;
  for (int64_t n = 0; n < B; ++n)
    for (int64_t f = 0; f < F; ++f) {
      double m = 0;
      for (int64_t t = 0; t < len[static_cast<size_t>(n)]; ++t)
        m += raw[static_cast<size_t>((t * B + n) * F + f)];
      m /= len[static_cast<size_t>(n)];
      for (int64_t t = 0; t < len[static_cast<size_t>(n)]; ++t) {
        const auto k = static_cast<size_t>((t * B + n) * F + f);
        centred[k] = static_cast<float>(raw[k] - m);
        shifted[k] = raw[k] + 3.f * static_cast<float>(f) - 5.f;
      }
    }
  std::vector<int32_t> oa(2), ob(2), oc(2);
  Graph g(Mode::Inference);
  Var ya = a.forward(g, raw, S, len, oa), yb = b.forward(g, centred, S, len, ob),
      yc = a.forward(g, shifted, S, len, oc);
  EXPECT_EQ(oa, ob);
  EXPECT_EQ(oa, oc);
  expect_real_frames_near(ya, yb, oa);
  expect_real_frames_near(ya, yc, oa);
  // stored with the model; a config without the key (an older model) reads as false
  EXPECT_TRUE(AudioFrontEndConfig::from_json(with.to_json()).utterance_mean);
  nlohmann::json old = plain.to_json();
  old.erase("utterance_mean");
  EXPECT_FALSE(AudioFrontEndConfig::from_json(old).utterance_mean);
  const std::vector<float> m = bin_means(std::vector<float>{1, 2, 3, 6}, 2);
  EXPECT_EQ(m, (std::vector<float>{2, 4}));
}

TEST(AudioFrontEnd, AnUtteranceInABatchIsAsAlone) {
  ParameterStore store;
  Rng init(4), rng(5);
  const AudioFrontEnd fe(small(), Scope(store, init));
  const int64_t S = 23, F = 11;
  const std::vector<int32_t> len = {23, 12};
  std::vector<float> x = frames(S, 2, F, rng);
  Graph g(Mode::Inference);
  std::vector<int32_t> out(2);
  Var y = fe.forward(g, x, S, len, out);
  // utterance 1 alone: its 12 frames
  std::vector<float> alone(static_cast<size_t>(12 * F));
  for (int64_t t = 0; t < 12; ++t)
    for (int64_t f = 0; f < F; ++f)
      alone[static_cast<size_t>(t * F + f)] = x[static_cast<size_t>((t * 2 + 1) * F + f)];
  std::vector<int32_t> l1 = {12}, o1(1);
  Var y1 = fe.forward(g, alone, 12, l1, o1);
  ASSERT_EQ(out[1], o1[0]);
  // a real output frame's window reads real input frames only: equal; the padding of the
  // batch is zero, and so are the frames past 12 that the windows of frames < out[1] never read
  for (int64_t t = 0; t < o1[0]; ++t)
    for (int64_t d = 0; d < 5; ++d)
      EXPECT_NEAR(y.value().data()[(t * 2 + 1) * 5 + d], y1.value().data()[t * 5 + d], 1e-5) << t;
}

TEST(AudioFrontEnd, Gradients) {
  ParameterStore store;
  Rng init(6), rng(8);
  const AudioFrontEnd fe(small(), Scope(store, init));
  const int64_t S = 13, B = 2, F = 11;
  const std::vector<float> x = frames(S, B, F, rng);
  const std::vector<int32_t> len = {13, 10};
  const std::vector<Parameter*> params = store.all();
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>&) {
        std::vector<int32_t> out(2);
        return fe.forward(g, x, S, len, out);
      },
      {}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 2e-3f}, {}, params);
}

}  // namespace
}  // namespace heed
