// CTC decoding against the definition (every labelling's probability by enumerating all paths,
// tests/support/ctc_brute_force.h): best path by hand; prefix beam search exact when nothing is
// pruned, equal to best path with K = 1 when one class has most of every frame's mass, and with
// K > 1 never less probable than best path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "heed/decode/ctc_search.h"
#include "heed/kernels/random.h"
#include "heed/train/kneser_ney.h"
#include "heed/util/error.h"
#include "support/ctc_brute_force.h"

namespace heed {
namespace {

// log_softmax of random logits [T, C], scaled by `sharpness`.
std::vector<float> random_frames(Rng& rng, int64_t T, int64_t C, float sharpness,
                                 std::vector<float>* logits) {
  logits->resize(T * C);
  for (float& v : *logits) v = sharpness * rng.uniform(-1.f, 1.f);
  std::vector<float> lp(T * C);
  for (int64_t t = 0; t < T; ++t) {
    double z = 0;
    for (int64_t c = 0; c < C; ++c) z += std::exp(double{(*logits)[t * C + c]});
    for (int64_t c = 0; c < C; ++c)
      lp[t * C + c] = static_cast<float>((*logits)[t * C + c] - std::log(z));
  }
  return lp;
}

TEST(CtcSearch, BestPathMergesRepeatsAndDropsBlanks) {
  // argmaxes per frame: 1 1 0 1 2 2 0 0 3 -> labels 1 1 2 3
  const int32_t argmax[] = {1, 1, 0, 1, 2, 2, 0, 0, 3};
  const int64_t T = 9, C = 4;
  std::vector<float> lp(T * C, -5.f);
  for (int64_t t = 0; t < T; ++t) lp[t * C + argmax[t]] = -0.1f;
  EXPECT_EQ(ctc_best_path(lp.data(), T, C, 0), std::vector<int32_t>({1, 1, 2, 3}));
}

// With a beam wider than the number of prefixes nothing is pruned: the search's probabilities
// are exact, and its n best are the n most probable labellings.
TEST(CtcSearch, UnprunedBeamGivesExactLabellingProbabilities) {
  Rng rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t T = 5, C = 3;
    std::vector<float> logits;
    const std::vector<float> lp = random_frames(rng, T, C, 2.f, &logits);
    const auto exact = testing::ctc_labellings(logits.data(), T, C);
    const auto hyps = ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = 1000, .n_best = 3});
    ASSERT_EQ(hyps.size(), 3U);
    std::vector<double> probs;
    for (const auto& [labels, p] : exact) probs.push_back(p);
    std::sort(probs.rbegin(), probs.rend());
    for (size_t k = 0; k < hyps.size(); ++k) {
      EXPECT_NEAR(std::exp(hyps[k].log_prob), exact.at(hyps[k].labels), 1e-6) << trial;
      EXPECT_NEAR(std::exp(hyps[k].log_prob), probs[k], 1e-6) << trial << " rank " << k;
    }
  }
}

// When one class holds more than half of every frame's mass, the best prefix after each frame is
// the best path's: K = 1 and best path agree.
TEST(CtcSearch, BeamOfOneIsBestPathWhenFramesArePeaked) {
  Rng rng(2);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t T = 12, C = 5;
    std::vector<float> logits;
    std::vector<float> lp = random_frames(rng, T, C, 1.f, &logits);
    for (int64_t t = 0; t < T; ++t) {  // one class per frame gets p > 1/2
      const auto c = static_cast<int64_t>(rng.below(C));
      for (int64_t k = 0; k < C; ++k) lp[t * C + k] = std::log(k == c ? 0.6f : 0.4f / (C - 1));
    }
    const auto hyps = ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = 1});
    EXPECT_EQ(hyps.at(0).labels, ctc_best_path(lp.data(), T, C, 0)) << trial;
  }
}

// A wider beam never returns a less probable labelling than best path, and its probabilities are
// exact. (On such flat frames the pruning alone loses the best path's labelling in about 2 % of
// the searches, hence the final rescoring with it among the candidates.)
TEST(CtcSearch, WiderBeamNeverWorseThanBestPath) {
  Rng rng(3);
  int better = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t T = 7, C = 4;
    std::vector<float> logits;
    const std::vector<float> lp = random_frames(rng, T, C, 1.5f, &logits);
    const auto exact = testing::ctc_labellings(logits.data(), T, C);
    const double greedy = exact.at(ctc_best_path(lp.data(), T, C, 0));
    for (int K : {2, 4, 8}) {
      const auto hyps = ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = K});
      const double beam = exact.at(hyps.at(0).labels);
      EXPECT_NEAR(std::exp(hyps[0].log_prob), beam, 1e-6);
      EXPECT_GE(beam, greedy * (1 - 1e-9)) << "trial " << trial << " K " << K;
      better += K == 8 && beam > greedy * (1 + 1e-6);
    }
  }
  EXPECT_GT(better, 10);  // and it often finds a more probable one
}

// An n-gram LM over the labels (classes 1..C-1 as the words "1".."C-1").
CtcLm label_lm(const NgramLm& lm, int64_t C, double weight, double bonus) {
  CtcLm m{.lm = &lm, .weight = weight, .bonus = bonus};
  for (int64_t c = 0; c < C; ++c)
    m.ids.push_back(c == 0 ? NgramLm::kUnk : lm.id(std::to_string(c)));
  return m;
}

// With nothing pruned, the search with an LM ranks labellings by log p_ctc + w ln p_lm + b |l|
// exactly: its n best are the brute force's; with w = b = 0 it is the search without an LM.
TEST(CtcSearch, LanguageModelRanksByTheCombinedScore) {
  const NgramLm lm = estimate_kneser_ney({{"1", "2"}, {"1", "1", "2"}, {"2"}, {"2", "1"}}, 2);
  Rng rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t T = 5, C = 3;
    std::vector<float> logits;
    const std::vector<float> lp = random_frames(rng, T, C, 2.f, &logits);
    const CtcLm m = label_lm(lm, C, 0.8, 0.3);
    std::vector<std::pair<double, std::vector<int32_t>>> want;
    for (const auto& [labels, p] : testing::ctc_labellings(logits.data(), T, C))
      want.emplace_back(std::log(p) + ctc_lm_score(&m, labels), labels);
    std::sort(want.rbegin(), want.rend());
    const auto hyps =
        ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = 1000, .n_best = 3, .lm = &m});
    ASSERT_EQ(hyps.size(), 3U);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_NEAR(hyps[k].score, want[k].first, 1e-5) << trial << " rank " << k;
      EXPECT_NEAR(hyps[k].score - hyps[k].log_prob, ctc_lm_score(&m, hyps[k].labels), 1e-9);
    }
    const CtcLm off = label_lm(lm, C, 0, 0);
    const auto plain = ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = 4, .n_best = 2});
    const auto zero =
        ctc_prefix_beam_search(lp.data(), T, C, 0, {.beam = 4, .n_best = 2, .lm = &off});
    for (size_t k = 0; k < plain.size(); ++k) EXPECT_EQ(plain[k].labels, zero[k].labels);
  }
}

// The most probable alignment of given labels is the best of their paths by enumeration; for the
// best path's own labels it is the best path itself.
TEST(CtcSearch, BestAlignmentIsTheMostProbablePathOfTheLabels) {
  Rng rng(6);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t T = 5, C = 3;
    std::vector<float> logits;
    const std::vector<float> lp = random_frames(rng, T, C, 2.f, &logits);
    const std::vector<int32_t> labels =
        trial % 2 ? std::vector<int32_t>{1, 2} : ctc_best_path(lp.data(), T, C, 0);
    double best = -1e300;
    std::vector<int32_t> best_path;
    for (int64_t n = 0; n < 243; ++n) {  // every path of 5 frames over 3 classes
      std::vector<int32_t> path(T), collapsed;
      double score = 0;
      for (int64_t t = 0, k = n; t < T; ++t, k /= C) {
        path[t] = static_cast<int32_t>(k % C);
        score += lp[t * C + path[t]];
      }
      for (int64_t t = 0; t < T; ++t)
        if (path[t] != 0 && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
      if (collapsed == labels && score > best) {
        best = score;
        best_path = path;
      }
    }
    const std::vector<int32_t> states = ctc_best_alignment(lp.data(), T, C, 0, labels);
    ASSERT_EQ(states.size(), static_cast<size_t>(T));
    std::vector<int32_t> classes;
    for (int32_t s : states) classes.push_back(s % 2 == 0 ? 0 : labels[s / 2]);
    EXPECT_EQ(classes, best_path) << trial;
    if (trial % 2 == 0) {  // the best path: every frame's most probable class
      for (int64_t t = 0; t < T; ++t) {
        const float* row = lp.data() + t * C;
        EXPECT_EQ(classes[t], std::max_element(row, row + C) - row) << trial;
      }
    }
  }
  const std::vector<float> lp(2 * 3, std::log(1 / 3.f));
  EXPECT_TRUE(ctc_best_alignment(lp.data(), 2, 3, 0, {1, 1}).empty());  // needs 3 frames
}

TEST(CtcSearch, BadOptionsAreErrors) {
  const std::vector<float> lp(6, std::log(0.5f));
  EXPECT_THROW(ctc_prefix_beam_search(lp.data(), 3, 2, 0, {.beam = 0}), Error);
  EXPECT_THROW(ctc_prefix_beam_search(lp.data(), 3, 2, 0, {.beam = 2, .n_best = 3}), Error);
}

}  // namespace
}  // namespace heed
