// REINFORCE's baseline, advantages and surrogate term (see the header).
#include "heed/nn/reinforce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "heed/autograd/ops.h"
#include "heed/util/error.h"

namespace heed {

namespace {

double moving_average(double old, double mean) {
  return std::isnan(old) ? mean : 0.9 * old + 0.1 * mean;
}

}  // namespace

ReinforceBaseline::ReinforceBaseline(int64_t words)
    : word_(static_cast<size_t>(std::max<int64_t>(words, 0)),
            std::numeric_limits<double>::quiet_NaN()) {}

std::vector<float> ReinforceBaseline::of(std::span<const int32_t> tokens, int32_t pad) const {
  std::vector<float> b(tokens.size(), 0.f);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == pad) continue;
    const auto w = static_cast<size_t>(tokens[i]);
    const double word = w < word_.size() ? word_[w] : std::numeric_limits<double>::quiet_NaN();
    b[i] = static_cast<float>(std::isnan(word) ? b_ : word);
  }
  return b;
}

void ReinforceBaseline::update(std::span<const float> rewards, std::span<const int32_t> tokens,
                               int32_t pad) {
  check(rewards.size() == tokens.size(), "ReinforceBaseline: ", rewards.size(), " rewards for ",
        tokens.size(), " tokens");
  double total = 0;
  std::vector<std::pair<int32_t, float>> seen;  // this batch's (word, reward), batch order
  seen.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == pad) continue;
    total += rewards[i];
    seen.emplace_back(tokens[i], rewards[i]);
  }
  if (seen.empty()) return;
  b_ = moving_average(b_, total / static_cast<double>(seen.size()));
  if (word_.empty()) return;
  // each word's mean reward in this batch: its entries side by side, in batch order (O(N log N)
  // in the batch's tokens, not O(vocabulary))
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < seen.size();) {
    const int32_t w = seen[i].first;
    double sum = 0;
    size_t k = i;
    for (; k < seen.size() && seen[k].first == w; ++k) sum += seen[k].second;
    if (static_cast<size_t>(w) < word_.size())
      word_[static_cast<size_t>(w)] =
          moving_average(word_[static_cast<size_t>(w)], sum / static_cast<double>(k - i));
    i = k;
  }
}

Tensor reinforce_advantage(Graph& g, std::span<const float> rewards,
                           std::span<const float> baselines, std::span<const int32_t> tokens,
                           int32_t pad, int64_t T, int64_t B, float gamma) {
  check(static_cast<int64_t>(rewards.size()) == T * B &&
            static_cast<int64_t>(baselines.size()) == T * B &&
            static_cast<int64_t>(tokens.size()) == T * B,
        "reinforce_advantage: ", rewards.size(), " rewards, ", baselines.size(), " baselines and ",
        tokens.size(), " tokens for [", T, ", ", B, "]");
  check(gamma >= 0.f && gamma <= 1.f, "reinforce_advantage: discount ", gamma, " is not in [0, 1]");
  Tensor a = g.zeros(Shape{T, B});
  for (int64_t b = 0; b < B; ++b) {
    double to_go = 0;  // sum_{t' >= t} gamma^(t'-t) (r_t' - b_t')
    for (int64_t t = T - 1; t >= 0; --t) {
      const int64_t i = t * B + b;
      if (tokens[i] == pad) continue;
      to_go = static_cast<double>(rewards[i]) - baselines[i] + gamma * to_go;
      a.data()[i] = static_cast<float>(to_go);
    }
  }
  return a;
}

Var reinforce_surrogate(Var log_probs, const Tensor& advantage, float norm) {
  check(log_probs.shape() == advantage.shape(), "reinforce_surrogate: log_probs ",
        log_probs.shape(), " and advantage ", advantage.shape(), " differ");
  check(norm > 0.f, "reinforce_surrogate: norm ", norm);
  Graph& g = log_probs.graph();
  // -(1/norm) sum A log pi, minus its own value: what the loss prints stays the cross-entropy
  Var s = sum_all(log_probs * g.constant(advantage)) * (-1.f / norm);
  Tensor minus = g.alloc(Shape{});
  minus.data()[0] = -s.value().data()[0];
  return s + g.constant(minus);
}

}  // namespace heed
