// CTC prefix scores (Watanabe et al. 2017) against brute force: over every frame-level path of a
// few frames (V^T of them), psi(h) is the total probability of the paths whose collapse begins
// with h, and full(g) that of the paths whose collapse is g, for every prefix up to 3 labels
// (repeats included); scores() equals extend()'s psi for every class and gives full() at <eos>.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/kernels/ctc_prefix.h"
#include "heed/kernels/random.h"

namespace heed {
namespace {

constexpr int64_t T = 5, V = 4;  // classes: blank 0, labels 1..3
constexpr int32_t kBlank = 0;

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

}  // namespace
}  // namespace heed
