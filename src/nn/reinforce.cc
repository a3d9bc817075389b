// REINFORCE's baseline, advantages and surrogate term (see the header).
#include "heed/nn/reinforce.h"

#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/util/error.h"

namespace heed {

void ReinforceBaseline::update(double mean) {
  b_ = std::isnan(b_) ? mean : 0.9 * b_ + 0.1 * mean;
}

Tensor reinforce_advantage(Graph& g, std::span<const float> rewards,
                           std::span<const int32_t> tokens, int32_t pad, int64_t T, int64_t B,
                           double baseline_per_token) {
  check(
      static_cast<int64_t>(rewards.size()) == T * B && static_cast<int64_t>(tokens.size()) == T * B,
      "reinforce_advantage: ", rewards.size(), " rewards and ", tokens.size(), " tokens for [", T,
      ", ", B, "]");
  Tensor a = g.zeros(Shape{T, B});
  for (int64_t b = 0; b < B; ++b) {
    double to_go = 0;
    int64_t left = 0;
    for (int64_t t = T - 1; t >= 0; --t) {
      if (tokens[t * B + b] == pad) continue;
      to_go += rewards[t * B + b];
      ++left;
      a.data()[t * B + b] =
          static_cast<float>(to_go - static_cast<double>(left) * baseline_per_token);
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
