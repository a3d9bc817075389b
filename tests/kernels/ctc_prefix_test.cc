// CTC prefix scores (Watanabe et al. 2017) against brute force: over every frame-level path of a
// few frames (V^T of them), psi(h) is the total probability of the paths whose collapse begins
// with h, and full(g) that of the paths whose collapse is g, for every prefix up to 3 labels
// (repeats included); scores() equals extend()'s psi for every class and gives full() at <eos>.
// Truncated at a horizon tau, the scores are those sums over the paths of the first tau frames,
// and add up (psi_tau(g) = sum_c psi_tau(g c) + p_tau(g)). The stream's chain (CtcPrefixChain),
// given its frames in pieces and its labels at any time, scores what the whole-utterance scorer
// does at every horizon, and keeps only a few prefixes live along a long utterance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/kernels/ctc_prefix.h"
#include "heed/kernels/random.h"

namespace heed {
namespace {

constexpr int64_t T = 5, V = 4;  // classes: blank 0, labels 1..3
constexpr int32_t kBlank = 0;

// log-softmax rows of random logits [T, V]; `peak`: class path[t] raised by that much at frame t
std::vector<float> random_frames(Rng& rng, int64_t frames, int64_t classes,
                                 const std::vector<int32_t>& path = {}, float peak = 0.f) {
  std::vector<float> lp(static_cast<size_t>(frames * classes));
  for (int64_t t = 0; t < frames; ++t) {
    float* row = lp.data() + t * classes;
    for (int64_t c = 0; c < classes; ++c) row[c] = rng.uniform(-2.f, 2.f);
    if (!path.empty()) row[path[static_cast<size_t>(t)]] += peak;
    double z = 0;
    for (int64_t c = 0; c < classes; ++c) z += std::exp(row[c]);
    for (int64_t c = 0; c < classes; ++c) row[c] -= static_cast<float>(std::log(z));
  }
  return lp;
}

std::vector<int32_t> collapse(const std::vector<int32_t>& path) {
  std::vector<int32_t> out;
  int32_t prev = -1;
  for (int32_t c : path) {
    if (c != prev && c != kBlank) out.push_back(c);
    prev = c;
  }
  return out;
}

TEST(CtcPrefix, EqualsTheSumOverPaths) {
  Rng rng(3);
  std::vector<float> lp(T * V);
  for (int64_t t = 0; t < T; ++t) {  // log-softmax of random logits
    double z = 0;
    for (int64_t c = 0; c < V; ++c) z += std::exp(lp[t * V + c] = rng.uniform(-2.f, 2.f));
    for (int64_t c = 0; c < V; ++c) lp[t * V + c] -= static_cast<float>(std::log(z));
  }
  // every path's probability and collapse
  std::vector<std::pair<std::vector<int32_t>, double>> paths;
  std::vector<int32_t> path(T, 0);
  for (int64_t n = 0; n < static_cast<int64_t>(std::pow(V, T)); ++n) {
    int64_t k = n;
    double logp = 0;
    for (int64_t t = 0; t < T; ++t, k /= V) {
      path[t] = static_cast<int32_t>(k % V);
      logp += lp[t * V + path[t]];
    }
    paths.emplace_back(collapse(path), std::exp(logp));
  }
  const kernels::CtcPrefixScorer scorer(lp.data(), T, V, kBlank);
  // prefixes up to 3 labels of 1..3
  std::vector<std::vector<int32_t>> prefixes = {{}};
  for (size_t i = 0; i < prefixes.size(); ++i) {
    if (prefixes[i].size() >= 3) continue;
    for (int32_t c = 1; c < V; ++c) {
      auto p = prefixes[i];
      p.push_back(c);
      prefixes.push_back(p);
    }
  }
  int checked = 0;
  for (const auto& g : prefixes) {
    kernels::CtcPrefixScorer::Prefix p = scorer.empty();
    for (int32_t c : g) p = scorer.extend(p, c);
    double begins = 0, exact = 0;
    for (const auto& [labels, prob] : paths) {
      if (labels.size() >= g.size() && std::equal(g.begin(), g.end(), labels.begin()))
        begins += prob;
      if (labels == g) exact += prob;
    }
    if (!g.empty()) {
      EXPECT_NEAR(std::exp(p.psi), begins, 1e-5) << "prefix of " << g.size();
    }
    EXPECT_NEAR(std::exp(scorer.full(p)), exact, 1e-6) << "labelling of " << g.size();
    // scores(): every extension's psi, <eos> (class 3 here, standing in) the full probability
    std::vector<float> out(V);
    scorer.scores(p, /*eos=*/-1, out);
    EXPECT_EQ(out[kBlank], -std::numeric_limits<float>::infinity());
    for (int32_t c = 1; c < V; ++c) {
      const float want = scorer.extend(p, c).psi;  // -inf: no path of 5 frames begins with it
      if (std::isinf(want)) {
        EXPECT_EQ(out[c], want);
      } else {
        EXPECT_NEAR(out[c], want, 1e-5);
      }
    }
    scorer.scores(p, /*eos=*/3, out);
    EXPECT_NEAR(out[3], scorer.full(p), 1e-6);
    ++checked;
  }
  EXPECT_EQ(checked, 1 + 3 + 9 + 27);
}

// psi_tau and p_tau against every path of tau frames, for each horizon tau and every prefix up
// to 2 labels; and the distribution they make over what follows g sums to 1.
TEST(CtcPrefix, TruncatedAtAHorizonEqualsTheSumOverItsPaths) {
  Rng rng(4);
  const std::vector<float> lp = random_frames(rng, T, V);
  const kernels::CtcPrefixScorer scorer(lp.data(), T, V, kBlank);
  for (int64_t tau = 1; tau <= T; ++tau) {
    std::vector<std::pair<std::vector<int32_t>, double>> paths;  // of tau frames
    std::vector<int32_t> path(static_cast<size_t>(tau), 0);
    for (int64_t n = 0; n < static_cast<int64_t>(std::pow(V, tau)); ++n) {
      int64_t k = n;
      double logp = 0;
      for (int64_t t = 0; t < tau; ++t, k /= V) {
        path[static_cast<size_t>(t)] = static_cast<int32_t>(k % V);
        logp += lp[static_cast<size_t>(t * V + path[static_cast<size_t>(t)])];
      }
      paths.emplace_back(collapse(path), std::exp(logp));
    }
    std::vector<std::vector<int32_t>> prefixes = {{}, {1}, {2}, {1, 1}, {1, 3}, {3, 2}};
    for (const auto& g : prefixes) {
      kernels::CtcPrefixScorer::Prefix p = scorer.empty();
      for (int32_t c : g) p = scorer.extend(p, c);
      auto begins = [&](const std::vector<int32_t>& h) {
        double sum = 0;
        for (const auto& [labels, prob] : paths)
          if (labels.size() >= h.size() && std::equal(h.begin(), h.end(), labels.begin()))
            sum += prob;
        return sum;
      };
      double exact = 0;
      for (const auto& [labels, prob] : paths)
        if (labels == g) exact += prob;
      std::vector<float> out(V);
      scorer.scores(p, /*eos=*/1, out, tau);  // label 1's slot stands in for <eos>
      EXPECT_NEAR(std::exp(out[1]), exact, 1e-6) << tau;
      EXPECT_NEAR(std::exp(kernels::CtcPrefixScorer::psi(p, tau)), begins(g), 1e-5) << tau;
      double total = std::exp(out[1]);
      scorer.scores(p, /*eos=*/-1, out, tau);
      for (int32_t c = 1; c < V; ++c) {
        std::vector<int32_t> h = g;
        h.push_back(c);
        EXPECT_NEAR(std::exp(out[c]), begins(h), 1e-5) << tau << " " << c;
        total += std::exp(out[c]);
      }
      EXPECT_NEAR(total, std::exp(kernels::CtcPrefixScorer::psi(p, tau)), 1e-5) << tau;
    }
  }
}

// The chain over frames pushed in pieces, extended at random moments, against the scorer of the
// whole utterance truncated at every horizon heard so far.
TEST(CtcPrefix, AChainOverFramesAsTheyComeScoresAsTheWholeUtterancesScorer) {
  Rng rng(5);
  constexpr int64_t kT = 60, kV = 6;
  const std::vector<float> lp = random_frames(rng, kT, kV);
  const kernels::CtcPrefixScorer whole(lp.data(), kT, kV, kBlank);
  for (int trial = 0; trial < 4; ++trial) {
    kernels::CtcPrefixChain chain(kV, kBlank);
    kernels::CtcPrefixScorer::Prefix g = whole.empty();
    int64_t t = 0, checks = 0;
    while (t < kT) {
      const auto n = std::min<int64_t>(kT - t, rng.below(7));
      chain.push({lp.data() + t * kV, static_cast<size_t>(n * kV)});
      t += n;
      ASSERT_EQ(chain.frames(), t);
      if (t == 0 || rng.below(2) == 0) continue;
      for (int64_t tau = 1; tau <= t; tau += 1 + rng.below(5)) {
        std::vector<float> want(kV), got(kV);
        whole.scores(g, /*eos=*/1, want, tau);
        chain.scores(tau, /*eos=*/1, got);
        // the same log, to 1e-4 relative; -inf (no path of tau frames) exactly
        auto same = [](float a, float b) {
          return std::isinf(b) ? a == b : std::fabs(a - b) <= 1e-4f * std::max(1.f, std::fabs(b));
        };
        for (int64_t c = 0; c < kV; ++c) EXPECT_PRED2(same, got[c], want[c]) << tau << " " << c;
        EXPECT_PRED2(same, chain.psi(tau), kernels::CtcPrefixScorer::psi(g, tau)) << tau;
        ++checks;
      }
      const auto c = static_cast<int32_t>(1 + rng.below(kV - 1));  // a label, repeats included
      chain.extend(c);
      g = whole.extend(g, c);
      EXPECT_EQ(chain.length(), g.length);
    }
    EXPECT_GT(checks, 10);
  }
}

// Along a long utterance whose frames say a labelling clearly (each frame's class raised by 6),
// extended label by label as its frames go by, the chain lets the prefixes behind go: a handful
// stay live (at most 16) of the 400 it holds.
TEST(CtcPrefix, AChainLetsThePrefixesFarBehindGo) {
  Rng rng(6);
  constexpr int64_t kT = 2000, kV = 8;
  std::vector<int32_t> path(kT), labels;
  for (int64_t t = 0; t < kT; ++t)  // a label each 5 frames, blanks between
    path[static_cast<size_t>(t)] = t % 5 == 0 ? static_cast<int32_t>(1 + (t / 5) % (kV - 1)) : 0;
  const std::vector<float> lp = random_frames(rng, kT, kV, path, 6.f);
  kernels::CtcPrefixChain chain(kV, kBlank);
  int64_t most = 0;
  for (int64_t t = 0; t < kT; ++t) {
    chain.push({lp.data() + t * kV, static_cast<size_t>(kV)});
    if (path[static_cast<size_t>(t)] != kBlank) chain.extend(path[static_cast<size_t>(t)]);
    most = std::max(most, chain.live());
  }
  EXPECT_EQ(chain.length(), kT / 5);
  EXPECT_LE(most, 16);  // (11 here: 40 nats are a few labels back)
  // the labelling is still scored: its eos far above any one more label's
  std::vector<float> out(kV);
  chain.scores(kT, /*eos=*/1, out);
  EXPECT_TRUE(std::isfinite(out[1]));
}

}  // namespace
}  // namespace heed
